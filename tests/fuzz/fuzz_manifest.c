/* fuzz_manifest.c: libFuzzer harness for the manifest parser and what brid
 * reads from a manifest's index section. The input is a whole manifest
 * file; a parse that succeeds must also re-serialize, since brid rewrites
 * manifests it has read. Then, as inspect, verify and compaction do: every
 * index's fragment bitmap through the strict decoder, Lance's invariants
 * (bri_rules_check_manifest), and inline fragment reuse index details
 * through the checks of bri_fri_load, the remap of each bitmap and the trim
 * rule. A refusal must name the manifest. Seeds: tests/fuzz/corpus/manifest
 * (LanceDB-written tables, with indexes, and brid's compactions of them
 * with fragment reuse index versions). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lance/table/frag_reuse.h"
#include "lance/table/manifest.h"
#include "lance/table/roaring_strict.h"
#include "lance/table/rules.h"

#define NAME "fuzz.manifest"

static void named(const bri_error *err) {
  if (!strstr(err->msg, NAME)) {
    fprintf(stderr, "fuzz_manifest: a refusal does not name the manifest: %s\n", err->msg);
    abort();
  }
}

/* The inline FRI details of x, checked; NULL when absent or refused. */
static bri_fri_content *fri_details(const Lance__Table__IndexMetadata *x) {
  if (!x->index_details) return NULL;
  Lance__Table__FragmentReuseIndexDetails *d = lance__table__fragment_reuse_index_details__unpack(
      NULL, x->index_details->value.len, x->index_details->value.data);
  if (!d) return NULL;
  bri_fri_content *c = NULL;
  if (d->content_case == LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE) {
    c = d->inline_;
    d->inline_ = NULL;
    d->content_case = LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT__NOT_SET;
  }
  lance__table__fragment_reuse_index_details__free_unpacked(d, NULL);
  bri_error err;
  if (c && bri_fri_check(c, NAME, &err) != 0) {
    named(&err);
    bri_fri_content_free(c);
    c = NULL;
  }
  return c;
}

static void indices(const bri_manifest *m) {
  const Lance__Table__IndexSection *sec = m->indices;
  const Lance__Table__IndexMetadata *fx = bri_fri_find(sec);
  bri_fri_content *fri = fx ? fri_details(fx) : NULL;
  for (size_t k = 0; sec && k < sec->n_indices; k++) {
    const Lance__Table__IndexMetadata *x = sec->indices[k];
    if (!x->has_fragment_bitmap) continue;
    roaring_bitmap_t *b;
    bri_error err;
    if (bri_index_bitmap_read(x, NAME, &b, &err) != 0) {
      named(&err);
      continue;
    }
    bri_fri_remap_bitmap(fri, b);
    roaring_bitmap_free(b);
  }
  for (size_t v = 0; fri && v < fri->n_versions; v++) (void)bri_fri_version_caught_up(fri->versions[v], sec);
  bri_fri_content_free(fri);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bri_manifest *m;
  bri_error err;
  if (bri_manifest_parse(data, size, NAME, &m, &err) != 0) return 0;
  uint8_t *out;
  size_t len;
  if (bri_manifest_serialize(m->pb, m->txn, m->indices, &out, &len, &err) == 0) free(out);
  indices(m);
  (void)bri_rules_check_manifest(m->pb, m->indices, NULL, NULL);
  bri_manifest_free(m);
  return 0;
}
