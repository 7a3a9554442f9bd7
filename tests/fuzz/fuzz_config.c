/* fuzz_config.c: libFuzzer harness for brid's configuration file. The input
 * is the whole file; it takes the path of `brid --config F --check-config`
 * (svc_config_load_text is what svc_config_load calls after reading F):
 * parse, validate, dump as JSON, then build the policy of every table the
 * file names and of a few other roots, and free it all.
 *
 * Main design choice: a configuration that loads must also dump: the JSON
 * of --check-config and of the status call cannot be NULL or miss a root
 * or a section (jansson refuses strings that are not UTF-8), so either is
 * reported as a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "brid/1_leaves/svc_config.h"
#include "brid/1_leaves/svc_log.h"

static void need(json_t *j, const char *what) {
  if (!j) {
    fprintf(stderr, "fuzz_config: a loaded configuration has no JSON %s\n", what);
    abort();
  }
  char *s = json_dumps(j, JSON_COMPACT);
  if (!s) {
    fprintf(stderr, "fuzz_config: cannot serialize the JSON %s\n", what);
    abort();
  }
  free(s);
  json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int quiet;
  if (!quiet) svc_log_set_level(LOG_ERR), quiet = 1;
  svc_overrides ov = {.config_file = "fuzz.conf", .debounce_sec = -1};
  svc_config c;
  bri_error err;
  if (svc_config_load_text(&c, &ov, (const char *)data, size, &err) != 0) return 0;
  json_t *dump = svc_config_to_json(&c);
  /* jansson drops an array element it cannot build without failing */
  if (dump && (json_array_size(json_object_get(dump, "roots")) != c.n_roots ||
               json_array_size(json_object_get(dump, "tables")) != c.n_sections)) {
    fprintf(stderr, "fuzz_config: the JSON dump lost a root or a [table] section\n");
    abort();
  }
  need(dump, "dump");
  static const char *const others[] = {"/", "/tmp", "/data/t.lance", "/data/a/b/c.lance"};
  svc_policy p;
  for (size_t i = 0; i < c.n_sections + c.n_roots + 4; i++) {
    const char *root = i < c.n_sections ? c.sections[i].pattern
                       : i < c.n_sections + c.n_roots ? c.roots[i - c.n_sections]
                                                      : others[i - c.n_sections - c.n_roots];
    svc_config_policy_for(&c, root, &p);
    need(svc_policy_to_json(&p), "policy");
  }
  svc_config_dispose(&c);
  return 0;
}
