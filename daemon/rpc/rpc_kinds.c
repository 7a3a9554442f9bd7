/* rpc_kinds.c: the descriptor table of the job kinds (rpc_kinds.h). */
#include "rpc_kinds.h"

#include <pthread.h>
#include <string.h>

static const rpc_kind KINDS[] = {
#define RPC_KIND_ENTRY(id, name, params, prio, ro, stamp) {BRI_JOB_##id, name, params, prio, ro, stamp},
    BRI_JOB_KINDS(RPC_KIND_ENTRY)
#undef RPC_KIND_ENTRY
};
_Static_assert(sizeof KINDS / sizeof KINDS[0] == BRI_JOB_NKINDS, "one descriptor per kind");

const rpc_kind *rpc_kind_of(bri_job_kind k) {
  return k >= 1 && k <= BRI_JOB_NKINDS ? &KINDS[k - 1] : NULL;
}

const rpc_kind *rpc_kind_named(const char *name) {
  for (size_t i = 0; name && i < BRI_JOB_NKINDS; i++)
    if (strcmp(KINDS[i].name, name) == 0) return &KINDS[i];
  return NULL;
}

const rpc_kind *rpc_kind_at(size_t i) { return i < BRI_JOB_NKINDS ? &KINDS[i] : NULL; }

/* "a, b, c or d", built from the table once. */
static char kind_list[256];

static void build_list(void) {
  size_t n = 0;
  for (size_t i = 0; i < BRI_JOB_NKINDS; i++) {
    const char *sep = i == 0 ? "" : i + 1 == BRI_JOB_NKINDS ? " or " : ", ";
    size_t a = strlen(sep), b = strlen(KINDS[i].name);
    if (n + a + b + 1 > sizeof kind_list) break;
    memcpy(kind_list + n, sep, a);
    memcpy(kind_list + n + a, KINDS[i].name, b);
    n += a + b;
  }
  kind_list[n] = '\0';
}

const char *rpc_kind_list(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, build_list);
  return kind_list;
}
