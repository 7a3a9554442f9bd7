/* svc_kinds.c: compact, cleanup, materialize and verify jobs (see
 * svc_kinds.h). Each kind has a parse function (parameters over the
 * table's policy) and a run function (the library call, its log line, the
 * job's end); the table at the bottom is what the rest of brid sees. */
#include "svc_kinds.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "bri/ops.h"
#include "bri/util.h"
#include "svc_log.h"

/* ------------------------------------------------------------ parameters */

typedef struct args {
  const json_t *params;
  json_t *norm;
  char *msg;
  size_t cap;
} args;

static int bad(args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(args *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->msg, a->cap, fmt, ap);
  va_end(ap);
  return -1;
}

static void keep(args *a, const char *name, json_t *v) {
  if (a->norm) json_object_set_new(a->norm, name, v);
  else json_decref(v);
}

/* true or false; a false flag is not stored (it is the default). */
static int flag(args *a, const char *name, bool *out) {
  json_t *v = json_object_get(a->params, name);
  if (!v) return 0;
  if (!json_is_boolean(v)) return bad(a, "params.%s must be true or false", name);
  *out = json_is_true(v);
  if (*out) keep(a, name, json_true());
  return 0;
}

/* An integer >= min. */
static int integer(args *a, const char *name, json_int_t min, uint64_t *out) {
  json_t *v = json_object_get(a->params, name);
  if (!v) return 0;
  if (!json_is_integer(v) || json_integer_value(v) < min)
    return bad(a, "params.%s must be an integer >= %lld", name, (long long)min);
  *out = (uint64_t)json_integer_value(v);
  keep(a, name, json_integer(json_integer_value(v)));
  return 0;
}

/* A duration: seconds as an integer, or a string such as "7d"; stored in seconds. */
static int duration(args *a, const char *name, int64_t *out) {
  json_t *v = json_object_get(a->params, name);
  if (!v) return 0;
  int64_t s = -1;
  bri_error err;
  if (json_is_integer(v) && json_integer_value(v) >= 0) s = json_integer_value(v);
  else if (json_is_string(v) && bri_duration_parse(json_string_value(v), name, &s, &err) != 0) s = -1;
  if (s < 0) return bad(a, "params.%s must be a duration (seconds, or a string like \"90s\", \"7d\")", name);
  *out = s;
  keep(a, name, json_integer(s));
  return 0;
}

/* ---------------------------------------------------------------- compact */

/* (a counter the workers add to and /metrics reads: one atomic, no lock) */
static _Atomic uint64_t managed_switches;

uint64_t svc_kinds_managed_switches(void) { return atomic_load(&managed_switches); }

static int compact_parse(const json_t *params, const svc_policy *pol, svc_opts *o, json_t *norm, char *msg,
                         size_t cap) {
  args a = {params, norm, msg, cap};
  bri_compact_request *q = &o->compact;
  bri_compact_request_default(q);
  q->options = pol->compact;
  q->strategy = pol->strategy;
  q->batch_rows = pol->batch_rows;
  q->min_reader = (unsigned)pol->min_reader;
  json_t *v = json_object_get(params, "strategy");
  bri_error err;
  if (v && (!json_is_string(v) || bri_strategy_parse(json_string_value(v), &q->strategy, &err)))
    return bad(&a, "params.strategy must be auto, bri, link, copy or managed");
  if (v) keep(&a, "strategy", json_string(json_string_value(v)));
  if (flag(&a, "dry_run", &q->dry_run)) return -1;
  if (integer(&a, "target_fragment_bytes", 1, &q->options.target_fragment_bytes)) return -1;
  return integer(&a, "target_rows_per_fragment", 1, &q->options.target_rows_per_fragment);
}

static void compact_run(const svc_job *j, svc_opts *o) {
  const bri_compact_request *q = &o->compact;
  bri_compact_report rep;
  bri_error err = {0};
  j->phase(j->hooks.user, "planning");
  int rc = bri_compact_table(j->root, q, &j->hooks, &rep, &err);
  if (rc) {
    json_decref(rep.plan);
    j->unsucceeded(j->hooks.user, rc, &err);
    return;
  }
  uint64_t written = rep.data_bytes_written + rep.payload_bytes_copied;
  if (rep.version)
    log_notice("job %lld: compacted %s: version %llu, %llu -> %llu fragments, %llu rows, "
               "%llu bytes written, %llu reused (%.2fs)",
               (long long)j->id, j->root, (unsigned long long)rep.version,
               (unsigned long long)rep.fragments_before, (unsigned long long)rep.fragments_after,
               (unsigned long long)rep.rows, (unsigned long long)written,
               (unsigned long long)rep.payload_bytes_reused, rep.seconds);
  else
    log_info("job %lld: %s: %s", (long long)j->id, j->root,
             q->dry_run ? "dry run planned" : "nothing to compact");
  if (rep.managed_switch_version) {
    atomic_fetch_add(&managed_switches, 1);
    log_notice("job %lld: switched %s to Managed blobs (version %llu, strategy %s, min_reader %u): Lance 12 "
               "and 13 refuse it from now on", (long long)j->id, j->root,
               (unsigned long long)rep.managed_switch_version, bri_strategy_name(q->strategy), q->min_reader);
  }
  if (rep.version) j->committed(j->hooks.user);
  json_t *res = bri_compact_report_json(j->root, q, &rep);
  json_decref(rep.plan);
  j->succeed(j->hooks.user, res, written, rep.payload_bytes_reused);
}

/* ---------------------------------------------------------------- cleanup */

static int cleanup_parse(const json_t *params, const svc_policy *pol, svc_opts *o, json_t *norm, char *msg,
                         size_t cap) {
  args a = {params, norm, msg, cap};
  bri_cleanup_policy *p = &o->cleanup;
  *p = pol->cleanup;
  if (duration(&a, "older_than", &p->older_than_sec) || duration(&a, "grace", &p->grace_sec) ||
      integer(&a, "retain_versions", 0, &p->retain_versions))
    return -1;
  return flag(&a, "dry_run", &p->dry_run);
}

typedef struct clean_ctx {
  const svc_job *j;
  uint64_t files;
} clean_ctx;

static void on_clean(void *user, int kind, const char *path, uint64_t bytes) {
  clean_ctx *c = user;
  log_debug("job %lld: cleanup %s %s (%llu bytes)", (long long)c->j->id, bri_cleanup_kind_name(kind), path,
            (unsigned long long)bytes);
  c->j->count(c->j->hooks.user, ++c->files);
}

static bool on_clean_cancelled(void *user) {
  const clean_ctx *c = user;
  return c->j->hooks.cancelled(c->j->hooks.user);
}

static void cleanup_run(const svc_job *j, svc_opts *o) {
  bri_cleanup_policy *p = &o->cleanup;
  j->phase(j->hooks.user, "cleaning");
  clean_ctx c = {j, 0};
  const bri_hooks hooks = {.deleted = on_clean, .cancelled = on_clean_cancelled, .user = &c};
  bri_cleanup_stats st;
  bri_error err = {0};
  int rc = bri_cleanup_run(j->root, p, &hooks, &st, &err);
  if (rc) {
    j->unsucceeded(j->hooks.user, rc, &err);
    return;
  }
  json_t *res = bri_cleanup_report_json(j->root, p, &st);
  log_notice("job %lld: cleanup of %s %s %lld files, %lld bytes (%llu versions retained)", (long long)j->id,
             j->root, p->dry_run ? "would delete" : "deleted",
             (long long)json_integer_value(json_object_get(res, "files")),
             (long long)json_integer_value(json_object_get(res, "bytes")), (unsigned long long)st.versions_retained);
  j->succeed(j->hooks.user, res, 0, 0);
}

/* ------------------------------------------------------------ materialize */

static int materialize_parse(const json_t *params, const svc_policy *pol, svc_opts *o, json_t *norm, char *msg,
                             size_t cap) {
  (void)pol;
  args a = {params, norm, msg, cap};
  bri_materialize_options_default(&o->materialize);
  if (flag(&a, "dry_run", &o->materialize.dry_run)) return -1;
  if (flag(&a, "no_links", &o->materialize.no_links)) return -1;
  return flag(&a, "managed", &o->materialize.managed);
}

static void materialize_run(const svc_job *j, svc_opts *o) {
  bri_materialize_options *m = &o->materialize;
  const bri_hooks hooks = {.journal = j->hooks.journal, .cancelled = j->hooks.cancelled, .user = j->hooks.user};
  j->phase(j->hooks.user, "materializing");
  bri_materialize_report rep;
  bri_error err = {0};
  int rc = bri_materialize_table(j->root, m, &hooks, &rep, &err);
  if (rc) {
    j->unsucceeded(j->hooks.user, rc, &err);
    return;
  }
  if (rep.commits) j->committed(j->hooks.user);
  log_notice("job %lld: materialized %s: %llu data files, %llu links, %llu copies (%.2fs)", (long long)j->id,
             j->root, (unsigned long long)rep.data_files, (unsigned long long)rep.links,
             (unsigned long long)rep.copies, rep.seconds);
  j->succeed(j->hooks.user, bri_materialize_report_json(j->root, m, &rep), rep.bytes_copied, rep.bytes_linked);
}

/* ----------------------------------------------------------------- verify */

static int verify_parse(const json_t *params, const svc_policy *pol, svc_opts *o, json_t *norm, char *msg,
                        size_t cap) {
  (void)pol;
  args a = {params, norm, msg, cap};
  memset(&o->verify, 0, sizeof o->verify);
  o->verify.max_problems = 100;
  if (flag(&a, "all_versions", &o->verify.all_versions)) return -1;
  return flag(&a, "skip_blobs", &o->verify.skip_blobs);
}

/* A verify job succeeds when the table is whole and fails (with the first
 * problem as its error) when it is not, so "failed" in the job list means
 * what an operator expects. A table that cannot be opened fails it at once:
 * verify changes nothing, so there is nothing to retry for. */
static void verify_run(const svc_job *j, svc_opts *o) {
  j->phase(j->hooks.user, "verifying");
  bri_verify_report rep;
  memset(&rep, 0, sizeof rep);
  bri_error err = {0};
  if (bri_verify_table(j->root, &o->verify, &rep, &err)) {
    j->fail(j->hooks.user, NULL, err.msg);
  } else if (rep.problems_total == 0) {
    log_notice("job %lld: verified %s: %llu version(s), %llu data files, %llu blobs: no problem",
               (long long)j->id, j->root, (unsigned long long)rep.versions_checked,
               (unsigned long long)rep.data_files, (unsigned long long)rep.blobs);
    j->succeed(j->hooks.user, bri_verify_report_json(j->root, &o->verify, &rep), 0, 0);
  } else {
    char msg[1024];
    snprintf(msg, sizeof msg, "%llu problem(s); first: %s: %s", (unsigned long long)rep.problems_total,
             rep.n_problems ? rep.problems[0].file : "?", rep.n_problems ? rep.problems[0].what : "?");
    j->fail(j->hooks.user, bri_verify_report_json(j->root, &o->verify, &rep), msg);
  }
  bri_verify_report_dispose(&rep);
}

static bool compact_writes(const svc_opts *o) { return !o->compact.dry_run; }
static bool cleanup_writes(const svc_opts *o) { return !o->cleanup.dry_run; }
static bool materialize_writes(const svc_opts *o) { return !o->materialize.dry_run; }

/* ------------------------------------------------------------------ table */

static const svc_kind KINDS[] = {
    {BRI_JOB_COMPACT, compact_writes, compact_parse, compact_run},
    {BRI_JOB_CLEANUP, cleanup_writes, cleanup_parse, cleanup_run},
    {BRI_JOB_MATERIALIZE, materialize_writes, materialize_parse, materialize_run},
    {BRI_JOB_VERIFY, NULL, verify_parse, verify_run},
};

const svc_kind *svc_kind_of(bri_job_kind k) {
  for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
    if (KINDS[i].kind == k) return &KINDS[i];
  return NULL;
}

const svc_kind *svc_kind_named(const char *name) {
  const rpc_kind *d = rpc_kind_named(name);
  return d ? svc_kind_of(d->kind) : NULL;
}
