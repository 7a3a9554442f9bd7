/* materialize.c: replacing BRI-carrying DataFiles by stock-readable ones
 * (see materialize.h).
 *
 * One round per group of DataFiles with the same field list (Lance's
 * DataReplacement requires all new files of one transaction to store the
 * same fields): place the new data files and sidecar directories, then
 * commit against the latest version. Lance's conflict rules for a
 * DataReplacement (lance/table/conflict.h) are applied to every version
 * committed since the plan, and as a second line
 * of defence each replaced DataFile must still be present, unchanged, in
 * the version we build on. A conflict rolls the round back and plans again
 * from the latest version; committed rounds stay committed. Files are
 * linked or copied through the stores that reach them (the table's, and a
 * base's for sources there), which refuse symbolic links on the way: the
 * directory checks give the early message, the resolution the safety. */
#include "ops/materialize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "blob/sizes.h"
#include "blob/walk.h"
#include "compact/execute.h"
#include "compact/optin.h"
#include "lance/table/bri.h"
#include "lance/table/sidecar.h"
#include "lance/table/commit.h"
#include "lance/table/conflict.h"
#include "lance/table/fields.h"
#include "lance/table/rowids.h"
#include "lance/table/table.h"
#include "util/bytes.h"
#include "util/failpoint.h"
#include "util/fsutil.h"
#include "storage/outputs.h"
#include "util/pbcheck.h"

void bri_materialize_options_default(bri_materialize_options *o) {
  memset(o, 0, sizeof *o);
  o->max_attempts = 20;
}

/* ------------------------------------------------------------ run state */

typedef struct run {
  const bri_materialize_options *o;
  bri_materialize_report *rep;
  bri_error *err;
  bri_table *t;                    /* new files are made through its store */
  const Lance__Table__Manifest *m; /* the version being planned (bases of sources) */
  bri_outputs out;                 /* what this round created */
  bri_sidecar_sizes *sizes;        /* the sources' sizes, as checked (blob/sizes.h) */
} run;

static int journal(run *r, const char *path) { return bri_outputs_add(&r->out, path, 0, r->err); }

/* ------------------------------------------------------------ file placement */

/* Places one file (or, in a dry run, only counts it: a link is expected
 * where the source is in the table's own store and links exist). src lies
 * in the table or one of its bases, dst in the table; neither is reached
 * through a symbolic link. A missing source is BRI_ENOTFOUND: the caller
 * says what the manifest expected. A link gets the time of now (store.h:
 * a concurrent cleanup never takes it for an abandoned file). */
static int place(run *r, const char *src, const char *dst) {
  uint64_t bytes;
  bool linked;
  bri_store *st;
  int rc = bri_table_store_of(r->t, r->m, src, &st, r->err);
  if (rc) return rc;
  if (r->o->dry_run) {
    bri_store_info info;
    if (bri_store_stat(st, src, &info, NULL) != 0 || info.kind != BRI_ENTRY_FILE)
      return bri_error_set(r->err, BRI_ENOTFOUND, "%s: no such file", src);
    bytes = info.size;
    linked = !r->o->no_links && st == r->t->store && (bri_store_caps(st) & BRI_STORE_CAP_LINK);
  } else {
    if (bri_hooks_cancelled(r->out.hooks))
      return bri_error_set(r->err, BRI_ECANCELLED, "%s: materialize cancelled", r->t->root);
    if ((rc = journal(r, dst)) != 0 ||
        (rc = bri_store_copy(st, src, r->t->store, dst, r->o->no_links ? 0 : BRI_COPY_TRY_LINK,
                             &linked, &bytes, r->err)) != 0)
      return rc;
  }
  /* the bytes placed are the bytes checked (build), or the source changed */
  if (!r->o->dry_run && (rc = bri_sidecar_sizes_copied(r->sizes, src, bytes, r->err)) != 0) return rc;
  if (linked) r->rep->links++, r->rep->bytes_linked += bytes;
  else r->rep->copies++, r->rep->bytes_copied += bytes;
  return r->o->dry_run ? 0 : bri_failpoint("materialize.after_place", r->err);
}

/* ------------------------------------------------------------ one DataFile */

typedef struct repl {
  uint64_t frag_id;
  const Lance__Table__DataFile *old; /* borrowed from the planning manifest */
  Lance__Table__DataFile *nw;        /* owned */
} repl;

/* --managed: the replacement of fragment f's one data file is a new one
 * whose descriptors name the sidecars the old one's resolve to, as
 * Managed ones (compact/execute.h: every physical row, no payload byte
 * read); nothing else is placed. A dry run only counts it. */
static int build_managed(run *r, const bri_manifest *bm, const Lance__Table__DataFragment *f, const char *stem,
                         repl *out) {
  r->rep->data_files++;
  if (r->o->dry_run) return 0;
  bri_compact_report cr = {0};
  int rc = bri_compact_refile_managed(r->t, bm, f, stem, r->sizes, &r->out, &out->nw, &cr, r->err);
  r->rep->values_adopted += cr.managed_adopted;
  r->rep->bytes_adopted += cr.payload_bytes_reused;
  return rc ? rc : bri_failpoint("materialize.after_place", r->err);
}

/* Builds the replacement of df (which carries a BRI, in fragment f): the
 * new data file and its sidecar directory, and the DataFile message naming
 * them (with --managed: build_managed). */
static int build(run *r, const bri_manifest *bm, const Lance__Table__DataFragment *f,
                 const Lance__Table__DataFile *df, repl *out) {
  bri_error *err = r->err;
  const Lance__Table__Manifest *m = bm->pb;
  r->m = m;
  char *old_path = NULL, *old_dir = NULL, *data = NULL, *new_path = NULL, *new_dir = NULL;
  char *src_dir = NULL;
  uint64_t *locals = NULL, *loc = NULL, *phys = NULL;
  size_t n_locals = 0, n_loc = 0, n_phys = 0;
  bri_store_entry *names = NULL;
  size_t n_names = 0;
  Lance__Table__BlobReuseIndex *b = NULL;
  char stem[BRI_STEM_LEN];
  int rc;
  bri_store *old_st = NULL;
  if ((rc = bri_table_datafile_path(r->t, m, df, &old_path, err)) ||
      (rc = bri_table_sidecar_dir(r->t, m, df, &old_dir, err)) ||
      (rc = bri_table_store_of(r->t, m, old_path, &old_st, err)))
    goto out;
  /* the new file lives in this table's own data directory, whatever base the old one had */
  data = bri_path_join(r->t->root, "data");
  bri_new_datafile_stem(stem);
  new_path = bri_strdupf("%s/%s.lance", data, stem);
  new_dir = bri_path_join(data, stem);
  if (!data || !new_path || !new_dir) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  /* nothing is read from or written into a directory reached through a
   * symbolic link: it could lie outside the table */
  if ((rc = bri_store_check_dir(r->t->store, data, true, err)) ||
      (rc = bri_store_check_dir(old_st, old_dir, true, err)))
    goto out;
  bri_store_info old;
  if (bri_store_stat(old_st, old_path, &old, NULL) != 0 || old.kind != BRI_ENTRY_FILE) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: data file of fragment %llu is missing (or not a "
                       "regular file)", old_path, (unsigned long long)out->frag_id);
    goto out;
  }
  if (df->file_size_bytes && df->file_size_bytes != old.size) {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: has %llu bytes, the manifest records %llu",
                       old_path, (unsigned long long)old.size,
                       (unsigned long long)df->file_size_bytes);
    goto out;
  }
  bri_store_info di;
  if (!r->o->dry_run && bri_store_stat(r->t->store, data, &di, NULL) == BRI_ENOTFOUND) {
    /* a table whose files all live under other bases may have no data/ yet */
    if ((rc = journal(r, data)) != 0) goto out;
    if ((rc = bri_store_mkdir(r->t->store, data, err)) != 0 && rc != BRI_ETAKEN) goto out;
    rc = 0;
  }
  if (r->o->managed) {
    rc = build_managed(r, bm, f, stem, out);
    goto out;
  }
  /* a damaged source is refused before anything is placed: every value
   * the replacement references must lie within the sidecar it reads now */
  if ((rc = bri_blob_check_fragment(r->t, bm, f, df, r->sizes, err)) != 0) goto out;
  if ((rc = place(r, old_path, new_path)) != 0) goto out;
  if (!r->o->dry_run &&
      ((rc = journal(r, new_dir)) != 0 || (rc = bri_store_mkdir(r->t->store, new_dir, err)) != 0))
    goto out;
  /* every BRI target, under its local id (docs/format/bri.md 4: a hit names
   * data_dir(effective base)/blob_dir/name(physical)) */
  if ((rc = bri_datafile_get_bri(df, bm->path, &b, err)) < 0) goto out;
  rc = 0;
  for (size_t i = 0; b && i < b->n_sources && !rc; i++) {
    const Lance__Table__BlobReuseSource *s = b->sources[i];
    bool has_base = s->has_base_id || df->has_base_id;
    uint32_t base = s->has_base_id ? s->base_id : df->base_id;
    char *dir = NULL;
    if ((rc = bri_table_data_dir(r->t, m, has_base, base, &dir, err)) != 0) break;
    free(src_dir);
    src_dir = bri_path_join(dir, s->blob_dir);
    free(dir);
    bri_store *src_st;
    if (!src_dir) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      break;
    }
    if ((rc = bri_table_store_of(r->t, m, src_dir, &src_st, err)) != 0 ||
        (rc = bri_store_check_dir(src_st, src_dir, false, err)) != 0) {
      if (rc == BRI_ENOTFOUND)
        rc = bri_error_set(err, BRI_ECORRUPT, "%s: the BRI of data file %s names this directory, "
                           "which is missing", src_dir, old_path);
      break;
    }
    free(loc), free(phys);
    loc = phys = NULL;
    if ((rc = bri_u64seq_decode(s->local_ids, BRI_MAX_IDS_PER_FILE, &loc, &n_loc, err)) ||
        (rc = bri_u64array_decode(s->physical_ids, BRI_MAX_IDS_PER_FILE, &phys, &n_phys, err)))
      break;
    if (n_loc != n_phys) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: data file %s: BRI source %zu maps %zu local ids "
                         "to %zu physical ids", bm->path, df->path, i, n_loc, n_phys);
      break;
    }
    uint64_t *g = realloc(locals, (n_locals + n_loc + 1) * sizeof *g);
    if (!g) {
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
      break;
    }
    locals = g;
    for (size_t k = 0; k < n_loc && !rc; k++) {
      char sname[BRI_BLOB_NAME_LEN], dname[BRI_BLOB_NAME_LEN];
      bri_blob_file_name((uint32_t)phys[k], sname);
      bri_blob_file_name((uint32_t)loc[k], dname);
      locals[n_locals++] = loc[k];
      char *sp = bri_path_join(src_dir, sname), *dp = bri_path_join(new_dir, dname);
      rc = sp && dp ? place(r, sp, dp) : bri_error_set(err, BRI_ENOMEM, "out of memory");
      if (rc == BRI_ENOTFOUND)
        rc = bri_error_set(err, BRI_ECORRUPT, "%s: sidecar that the BRI of data file %s names for "
                           "local blob id %llu is missing", sp, old_path, (unsigned long long)loc[k]);
      free(sp), free(dp);
    }
  }
  if (rc) goto out;
  if (locals) qsort(locals, n_locals, sizeof *locals, bri_cmp_u64);
  /* the old file's own sidecars (ids the BRI does not redirect, e.g. repacked packs) */
  rc = bri_store_list(old_st, old_dir, 0, &names, &n_names, err);
  if (rc == BRI_ENOTFOUND) rc = 0;
  for (size_t i = 0; i < n_names && !rc; i++) {
    uint32_t id;
    uint64_t id64;
    if (bri_blob_file_id(names[i].name, &id) && (id64 = id, locals) &&
        bsearch(&id64, locals, n_locals, sizeof *locals, bri_cmp_u64))
      continue; /* shadowed: reads of this id go through the BRI */
    char *sp = bri_path_join(old_dir, names[i].name), *dp = bri_path_join(new_dir, names[i].name);
    if (!sp || !dp) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    else if (names[i].info.kind == BRI_ENTRY_FILE) rc = place(r, sp, dp);
    else /* skipping it would leave the new file without a blob the old one reads */
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: not a regular file (symbolic links and special "
                         "files are never followed)", sp);
    free(sp), free(dp);
  }
  if (rc) goto out;
  if (!r->o->dry_run && ((rc = bri_store_sync(r->t->store, new_dir, err)) ||
                         (rc = bri_store_sync(r->t->store, data, err))))
    goto out;
  /* the DataFile: same fields, columns and bytes; new path, own root, no BRI */
  if (!(out->nw = (Lance__Table__DataFile *)bri_pb_copy(&df->base))) {
    rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    goto out;
  }
  free(out->nw->path);
  out->nw->path = bri_strdupf("%s.lance", stem);
  out->nw->has_base_id = 0, out->nw->base_id = 0;
  out->nw->file_size_bytes = old.size, out->nw->has_file_size_bytes = 1;
  if (!out->nw->path) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) rc = bri_datafile_set_bri(out->nw, NULL, err);
  r->rep->data_files++;
out:
  if (b) lance__table__blob_reuse_index__free_unpacked(b, NULL);
  bri_store_entries_free(names, n_names);
  free(old_path), free(old_dir), free(data), free(new_path), free(new_dir), free(src_dir);
  free(locals), free(loc), free(phys);
  return rc;
}

/* ------------------------------------------------------------ commit */

typedef struct slot {
  Lance__Table__DataFile **where;
  Lance__Table__DataFile *was;
} slot;

/* One attempt: check what was committed since read_version with Lance's
 * rules for our DataReplacement (lance/table/conflict.h), build on the latest
 * version, commit it + 1. */
static int attempt(run *r, uint64_t read_version, repl *g, size_t n, uint64_t *version) {
  bri_error *err = r->err;
  uint64_t latest = bri_table_latest_version(r->t);
  slot *slots = calloc(n + 1, sizeof *slots);
  Lance__Table__Transaction__DataReplacementGroup *gs = calloc(n + 1, sizeof *gs);
  Lance__Table__Transaction__DataReplacementGroup **gps = calloc(n + 1, sizeof *gps);
  size_t n_slots = 0;
  bri_manifest *m = NULL;
  int rc = slots && gs && gps ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  Lance__Table__Transaction txn;
  Lance__Table__Transaction__DataReplacement dr;
  lance__table__transaction__init(&txn);
  lance__table__transaction__data_replacement__init(&dr);
  for (size_t k = 0; !rc && k < n; k++) {
    lance__table__transaction__data_replacement_group__init(&gs[k]);
    gs[k].has_fragment_id = 1, gs[k].fragment_id = g[k].frag_id;
    gs[k].new_file = g[k].nw;
    gps[k] = &gs[k];
  }
  dr.replacements = gps, dr.n_replacements = n;
  txn.has_read_version = 1, txn.read_version = read_version;
  txn.operation_case = LANCE__TABLE__TRANSACTION__OPERATION_DATA_REPLACEMENT;
  txn.data_replacement = &dr;
  for (uint64_t v = read_version + 1; !rc && v <= latest; v++) {
    Lance__Table__Transaction *theirs;
    rc = bri_table_load_transaction(r->t, v, &theirs, err);
    if (!rc) rc = bri_fields_check_txn(theirs, r->t->root, err);
    if (!rc) rc = bri_conflict_check(&txn, NULL, 0, theirs, v, err);
    if (theirs) lance__table__transaction__free_unpacked(theirs, NULL);
  }
  if (!rc) rc = bri_table_load(r->t, latest, &m, err);
  /* the second line of defence: each replaced DataFile still there, unchanged */
  for (size_t k = 0; k < n && !rc; k++) {
    Lance__Table__DataFile **where = NULL;
    for (size_t i = 0; i < m->pb->n_fragments && !where; i++) {
      Lance__Table__DataFragment *f = m->pb->fragments[i];
      if (f->id != g[k].frag_id) continue;
      for (size_t j = 0; j < f->n_files && !where; j++)
        if (bri_pb_equal(&f->files[j]->base, &g[k].old->base)) where = &f->files[j];
    }
    if (!where) {
      rc = bri_error_set(err, BRI_ECONFLICT, "%s: data file %s of fragment %llu is no longer in "
                         "version %llu as planned", r->t->root, g[k].old->path,
                         (unsigned long long)g[k].frag_id, (unsigned long long)latest);
      break;
    }
    slots[n_slots].where = where;
    slots[n_slots++].was = *where;
    *where = g[k].nw;
  }
  if (!rc) {
    rc = bri_commit(r->t, m->pb, &txn, m->indices, latest + 1, NULL, err);
    if (!rc) *version = latest + 1;
  }
  free(txn.uuid);
  for (size_t i = 0; i < n_slots; i++) *slots[i].where = slots[i].was;
  free(slots), free(gs), free(gps);
  bri_manifest_free(m);
  return rc;
}

/* ------------------------------------------------------------ rounds */

#define BRI_MATERIALIZE_MAX_ROUNDS 4096

static bool same_layout(const Lance__Table__DataFile *a, const Lance__Table__DataFile *b) {
  if (a->n_fields != b->n_fields || a->file_major_version != b->file_major_version ||
      a->file_minor_version != b->file_minor_version)
    return false;
  return !a->n_fields || !memcmp(a->fields, b->fields, a->n_fields * sizeof *a->fields);
}

static int has_bri(const Lance__Table__DataFile *df) {
  for (size_t i = 0; i < df->base.n_unknown_fields; i++)
    if (df->base.unknown_fields[i].tag == BRI_DATAFILE_FIELD &&
        df->base.unknown_fields[i].wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED)
      return 1;
  return 0;
}

static void free_group(repl *g, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (g[i].nw) lance__table__data_file__free_unpacked(g[i].nw, NULL);
  free(g);
}

/* Plans one round on the latest version: the BRI files that share the
 * layout of the first one (all of them in a dry run). *n = 0: none left. */
static int round_once(run *r, int *attempts) {
  bri_error *err = r->err;
  bri_manifest *m;
  int rc = bri_table_load(r->t, 0, &m, err);
  if (rc) return rc;
  uint64_t read_version = m->pb->version;
  if (!r->rep->read_version) r->rep->read_version = read_version;
  const Lance__Table__DataFile *first = NULL;
  size_t n = 0;
  for (size_t i = 0; i < m->pb->n_fragments; i++)
    for (size_t k = 0; k < m->pb->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->pb->fragments[i]->files[k];
      if (!has_bri(df)) continue;
      if (!first) first = df;
      if (r->o->dry_run || same_layout(df, first)) n++;
    }
  r->rep->bri_files_left = 0;
  if (!n) {
    bri_manifest_free(m);
    return 1;
  }
  repl *g = calloc(n, sizeof *g);
  size_t k = 0;
  bri_materialize_report before = *r->rep; /* counters of a round that does not commit are undone */
  if (!g) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < m->pb->n_fragments; i++)
    for (size_t j = 0; !rc && j < m->pb->fragments[i]->n_files; j++) {
      const Lance__Table__DataFile *df = m->pb->fragments[i]->files[j];
      if (!has_bri(df) || !(r->o->dry_run || same_layout(df, first))) continue;
      g[k].frag_id = m->pb->fragments[i]->id;
      g[k].old = df;
      rc = build(r, m, m->pb->fragments[i], df, &g[k]);
      k++;
    }
  if (!rc && !r->o->dry_run) rc = bri_failpoint("materialize.before_commit", err);
  if (!rc && !r->o->dry_run) {
    uint64_t v = 0;
    for (int a = 0; a < r->o->max_attempts; a++) {
      rc = attempt(r, read_version, g, n, &v);
      if (rc != BRI_ETAKEN) break;
      (void)bri_table_refresh(r->t, NULL); /* lost the race for the version name: rebase again */
    }
    if (!rc) {
      bri_outputs_clear(&r->out);
      r->rep->commits++;
      r->rep->version = v;
    } else if (rc == BRI_ECONFLICT && ++*attempts < r->o->max_attempts) {
      /* plan again from whatever is latest now */
      bri_outputs_roll_back(&r->out);
      *r->rep = before;
      (void)bri_table_refresh(r->t, NULL);
      rc = 0;
    }
  }
  if (rc) {
    bri_outputs_roll_back(&r->out);
    uint64_t rv = r->rep->read_version;
    *r->rep = before;
    r->rep->read_version = rv;
  }
  free_group(g, n);
  bri_manifest_free(m);
  if (!rc && r->o->dry_run) {
    r->rep->bri_files_left = n;
    return 1;
  }
  return rc;
}

/* --managed: the switch to Managed blobs (compact/optin.h) before the
 * first round, when the latest version carries a BRI (a table without one
 * is left alone, as without --managed). A fragment whose BRI file is not
 * its only data file (a column added since) is refused first, before
 * anything is committed: the replacement rewrites one whole file of every
 * field (compact/execute.h). */
static int switch_first(run *r, const bri_hooks *hooks) {
  bri_manifest *m;
  int rc = bri_table_load(r->t, 0, &m, r->err);
  if (rc) return rc;
  for (size_t i = 0; !rc && i < m->pb->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->pb->fragments[i];
    for (size_t k = 0; !rc && f->n_files > 1 && k < f->n_files; k++)
      if (has_bri(f->files[k]))
        rc = bri_error_set(r->err, BRI_EUNSUPPORTED, "%s: fragment %llu holds %zu data files, one with a BRI; "
                           "materialize --managed rewrites only a fragment's one data file (materialize "
                           "without --managed handles it)", m->path, (unsigned long long)f->id, f->n_files);
  }
  if (!rc && bri_manifest_has_bri(m->pb) && bri_managed_optin_applies(m->pb)) {
    r->rep->managed_switch = true;
    rc = bri_managed_optin_check(r->t->root, m, r->err);
    if (!rc && !r->o->dry_run) rc = bri_managed_optin(r->t, &m, hooks, r->o->max_attempts, &r->rep->managed_switch_version, r->err);
  }
  bri_manifest_free(m);
  return rc;
}

int bri_materialize_table(const char *root, const bri_materialize_options *o,
                          const bri_hooks *hooks, bri_materialize_report *rep, bri_error *err) {
  memset(rep, 0, sizeof *rep);
  bri_materialize_options def;
  if (!o) {
    bri_materialize_options_default(&def);
    o = &def;
  }
  bri_materialize_options opts = *o;
  if (opts.max_attempts <= 0) opts.max_attempts = 20;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  run r = {.o = &opts, .rep = rep, .err = err};
  r.out.hooks = hooks;
  int rc = bri_sidecar_sizes_new(&r.sizes, err);
  if (!rc) rc = bri_table_open(root, &r.t, err);
  if (rc) {
    bri_sidecar_sizes_free(r.sizes);
    return rc;
  }
  r.out.store = r.t->store; /* output paths are built from its uri */
  int attempts = 0, rounds = 0;
  if (opts.managed) rc = switch_first(&r, hooks);
  /* each round commits one layout group or re-plans after a conflict (which
   * attempts bounds); only writers adding BRI files as fast as we remove
   * them could keep it going, hence the cap */
  while (!rc && (rc = round_once(&r, &attempts)) == 0)
    if (++rounds >= BRI_MATERIALIZE_MAX_ROUNDS) {
      rc = bri_error_set(err, BRI_ECONFLICT, "%s: still finding data files with a BRI after %d "
                         "commits; stopped", root, rounds);
      break;
    }
  if (rc == 1) rc = 0;
  bri_outputs_dispose(&r.out);
  bri_sidecar_sizes_free(r.sizes);
  bri_table_close(r.t);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  rep->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  return rc;
}
