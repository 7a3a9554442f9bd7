/* inspect.c: the description of one table version (see inspect.h): one
 * JSON document built from the manifest, the version list, the refs and the
 * sidecar directories. One data model, so that the JSON and the text
 * `brictl inspect` prints from it cannot disagree. */
#include "ops/inspect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lance/core/schema.h"
#include "lance/table/bri.h"
#include "compact/optin.h"
#include "lance/table/flags.h"
#include "lance/table/fields.h"
#include "lance/table/frag_reuse.h"
#include "lance/table/roaring_strict.h"
#include "lance/table/rowids.h"
#include "lance/table/sidecar.h"
#include "lance/table/table.h"
#include "util/fsutil.h"

static json_t *iso_time(const Google__Protobuf__Timestamp *ts) {
  if (!ts) return json_null();
  time_t s = (time_t)ts->seconds;
  struct tm tm;
  char buf[64];
  if (!gmtime_r(&s, &tm)) return json_null();
  size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof buf - n, ".%06dZ", ts->nanos / 1000);
  return json_string(buf);
}

static json_t *flag_names(uint64_t flags) {
  json_t *a = json_array();
  for (int i = 0; i < 64; i++) {
    uint64_t bit = (uint64_t)1 << i;
    if (!(flags & bit)) continue;
    const char *n = bri_flag_name(bit);
    json_array_append_new(a, n ? json_string(n) : json_sprintf("bit%d", i));
  }
  return a;
}

static json_t *int_array(const int32_t *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(a, json_integer(v[i]));
  return a;
}

static json_t *schema_json(const Lance__Table__Manifest *m) {
  json_t *a = json_array();
  for (size_t i = 0; i < m->n_fields; i++) {
    const Lance__File__Field *f = m->fields[i];
    char *path = bri_field_path(m->fields, m->n_fields, i);
    json_array_append_new(
        a, json_pack("{s:i, s:i, s:s, s:s, s:s, s:b, s:b}", "id", f->id, "parent_id",
                     f->parent_id, "name", f->name ? f->name : "", "path", path ? path : "",
                     "type", f->logical_type ? f->logical_type : "", "nullable", f->nullable,
                     "blob_v2", bri_field_is_blob_v2(f)));
    free(path);
  }
  return a;
}

static bool schema_has_blob_v2(const Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->n_fields; i++)
    if (bri_field_is_blob_v2(m->fields[i])) return true;
  return false;
}

/* Counts files and bytes of one sidecar directory (absent = 0 files), on
 * the store that reaches it (the table's, or a base path's). */
static json_t *sidecars_json(const bri_table *t, const Lance__Table__Manifest *m, const char *dir, const char *rel,
                             json_int_t *files_out, json_int_t *bytes_out) {
  bri_store *st;
  bri_store_entry *e = NULL;
  size_t n = 0;
  bri_error err;
  json_int_t files = 0, bytes = 0;
  if (bri_table_store_of(t, m, dir, &st, &err) == 0 && bri_store_list(st, dir, BRI_LIST_STAT, &e, &n, &err) == 0) {
    for (size_t i = 0; i < n; i++)
      if (e[i].info.kind == BRI_ENTRY_FILE) {
        files++;
        bytes += (json_int_t)e[i].info.size;
      }
    bri_store_entries_free(e, n);
  }
  *files_out += files;
  *bytes_out += bytes;
  return json_pack("{s:s, s:I, s:I}", "dir", rel, "files", files, "bytes", bytes);
}

/* A data file's size: the manifest's, else what the store says. */
static uint64_t datafile_size(const bri_table *t, const Lance__Table__Manifest *m, const Lance__Table__DataFile *df,
                              const char *path) {
  bri_store *st;
  bri_store_info info;
  bri_error err;
  if (df->file_size_bytes) return df->file_size_bytes;
  if (bri_table_store_of(t, m, path, &st, &err) || bri_store_stat(st, path, &info, &err)) return 0;
  return info.size;
}

static json_t *bri_json(const Lance__Table__DataFile *df, const char *mpath, bri_error *err,
                        int *rc) {
  Lance__Table__BlobReuseIndex *b;
  *rc = bri_datafile_get_bri(df, mpath, &b, err);
  if (*rc <= 0) {
    if (*rc == 0) return json_null();
    return NULL;
  }
  *rc = 0;
  json_t *sources = json_array();
  for (size_t i = 0; i < b->n_sources; i++) {
    const Lance__Table__BlobReuseSource *s = b->sources[i];
    uint64_t n = 0;
    if (s->local_ids) bri_u64seq_count(s->local_ids, &n, NULL);
    json_array_append_new(sources, json_pack("{s:o, s:s, s:I}", "base_id",
                                             s->has_base_id ? json_integer(s->base_id) : json_null(),
                                             "blob_dir", s->blob_dir ? s->blob_dir : "",
                                             "entries", (json_int_t)n));
  }
  lance__table__blob_reuse_index__free_unpacked(b, NULL);
  return json_pack("{s:o}", "sources", sources);
}

typedef struct totals {
  json_int_t files, data_bytes, physical, deleted, sidecar_files, sidecar_bytes;
} totals;

static json_t *fragments_json(const bri_table *t, const bri_manifest *bm, totals *tot,
                              bri_error *err, int *rc) {
  const Lance__Table__Manifest *m = bm->pb;
  bool blobs = schema_has_blob_v2(m);
  json_t *frags = json_array();
  *rc = 0;
  for (size_t i = 0; i < m->n_fragments && !*rc; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    json_t *files = json_array();
    for (size_t k = 0; k < f->n_files && !*rc; k++) {
      const Lance__Table__DataFile *df = f->files[k];
      char *abs = NULL, *side = NULL;
      if ((*rc = bri_table_datafile_path(t, m, df, &abs, err)) != 0) break;
      uint64_t size = datafile_size(t, m, df, abs);
      json_t *bj = bri_json(df, bm->path, err, rc);
      if (*rc) {
        free(abs);
        break;
      }
      json_t *side_j = json_null();
      if (blobs && (*rc = bri_table_sidecar_dir(t, m, df, &side, err)) == 0) {
        json_decref(side_j);
        char *stem = bri_datafile_stem(df->path);
        char *rel = bri_strdupf("data/%s", stem);
        side_j = sidecars_json(t, m, side, df->has_base_id ? side : rel, &tot->sidecar_files, &tot->sidecar_bytes);
        free(rel), free(stem), free(side);
      }
      json_t *fj = json_object();
      json_object_set_new(fj, "path", json_string(df->path));
      json_object_set_new(fj, "fields", int_array(df->fields, df->n_fields));
      json_object_set_new(fj, "column_indices", int_array(df->column_indices, df->n_column_indices));
      json_object_set_new(fj, "file_version",
                          json_sprintf("%u.%u", df->file_major_version, df->file_minor_version));
      json_object_set_new(fj, "size_bytes", json_integer((json_int_t)size));
      json_object_set_new(fj, "base_id", df->has_base_id ? json_integer(df->base_id) : json_null());
      json_object_set_new(fj, "blob_reuse_index", bj);
      json_object_set_new(fj, "sidecars", side_j);
      json_array_append_new(files, fj);
      tot->files++;
      tot->data_bytes += (json_int_t)size;
      free(abs);
    }
    if (*rc) {
      json_decref(files);
      break;
    }
    json_t *del = json_null();
    const Lance__Table__DeletionFile *d = f->deletion_file;
    if (d) {
      char *dp = NULL;
      bri_table_deletion_path(t, m, f, &dp, NULL);
      const char *slash = dp ? strrchr(dp, '/') : NULL;
      del = json_pack("{s:s, s:s+, s:I}", "type",
                      d->file_type == LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP ? "bin" : "arrow",
                      "path", "_deletions/", slash ? slash + 1 : "",
                      "num_deleted_rows", (json_int_t)d->num_deleted_rows);
      free(dp);
    }
    json_int_t deleted = d ? (json_int_t)d->num_deleted_rows : 0;
    const char *row_ids =
        f->row_id_sequence_case == LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS ? "inline"
        : f->row_id_sequence_case == LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_COLUMN_ROW_IDS ? "column"
        : NULL;
    json_array_append_new(
        frags, json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o}", "id", (json_int_t)f->id,
                         "physical_rows", (json_int_t)f->physical_rows, "deleted_rows", deleted,
                         "rows", (json_int_t)bri_fragment_live_rows(f), "deletion_file", del,
                         "row_ids", row_ids ? json_string(row_ids) : json_null(), "files", files));
    tot->physical += (json_int_t)f->physical_rows;
    tot->deleted += deleted;
  }
  if (*rc) {
    json_decref(frags);
    return NULL;
  }
  return frags;
}

static json_t *indices_json(const bri_manifest *bm, bri_error *err, int *rc) {
  json_t *a = json_array();
  if (!bm->indices) return a;
  for (size_t i = 0; i < bm->indices->n_indices && !*rc; i++) {
    const Lance__Table__IndexMetadata *x = bm->indices->indices[i];
    char uuid[37] = "";
    if (x->uuid && x->uuid->uuid.len == 16) bri_uuid_format(x->uuid->uuid.data, uuid);
    json_t *frags = json_null();
    if (x->has_fragment_bitmap) {
      roaring_bitmap_t *r;
      if ((*rc = bri_index_bitmap_read(x, bm->path, &r, err)) == 0) {
        frags = json_array();
        roaring_uint32_iterator_t *it = roaring_create_iterator(r);
        for (; it->has_value; roaring_advance_uint32_iterator(it))
          json_array_append_new(frags, json_integer(it->current_value));
        roaring_free_uint32_iterator(it);
        roaring_bitmap_free(r);
      }
    }
    json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:I, s:o}", "name", x->name ? x->name : "",
                                       "uuid", uuid, "fields", int_array(x->fields, x->n_fields),
                                       "dataset_version", (json_int_t)x->dataset_version,
                                       "fragment_ids", frags));
  }
  if (*rc) {
    json_decref(a);
    return NULL;
  }
  return a;
}

static json_t *refs_json(const bri_ref *r, size_t n, bool tags) {
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(a, json_pack("{s:s, s:o, s:I}", "name", r[i].name, tags ? "branch" : "parent_branch",
                                       r[i].branch ? json_string(r[i].branch) : json_null(),
                                       tags ? "version" : "parent_version", (json_int_t)r[i].version));
  return a;
}

static json_t *versions_json(const bri_table *t) {
  json_t *list = json_array();
  for (size_t i = 0; i < t->n_versions; i++) {
    bri_manifest *bm;
    bri_error err;
    json_t *e = json_pack("{s:I}", "version", (json_int_t)t->versions[i].version);
    if (bri_table_load_opts(t, t->versions[i].version, BRI_MANIFEST_ANY_FEATURES, &bm, &err) == 0) {
      json_object_set_new(e, "timestamp", iso_time(bm->pb->timestamp));
      bri_manifest_free(bm);
    } else {
      json_object_set_new(e, "error", json_string(err.msg));
    }
    json_array_append_new(list, e);
  }
  return json_pack("{s:I, s:I, s:I, s:s, s:o}", "count", (json_int_t)t->n_versions, "oldest",
                   (json_int_t)t->versions[0].version, "latest",
                   (json_int_t)bri_table_latest_version(t), "naming",
                   t->naming == BRI_NAMING_V1 ? "v1" : "v2", "list", list);
}

static json_t *config_json(const Lance__Table__Manifest *m) {
  json_t *o = json_object();
  for (size_t i = 0; i < m->n_config; i++)
    json_object_set_new(o, m->config[i]->key, json_string(m->config[i]->value ? m->config[i]->value : ""));
  return o;
}

/* The Lance releases brid is tested with (tests/interop), oldest first. */
static const struct {
  int major;
  const char *name;
} TESTED[] = {
    {12, "Lance 12.0.0 (LanceDB 0.39.0, npm)"},
    {13, "Lance 13.0.0 (LanceDB 0.40.0, Python)"},
    {14, "Lance 14.0.3 (pylance 14.0.3)"},
};

/* What decides which Lance reads a version: its reader flags, and whether
 * a data file is of version 2.3 (Lance 12 and 13 open such a table and
 * fail at its first page: "expected /lance.encodings21.PageLayout"). */
typedef struct shape {
  uint64_t reader_flags;
  bool v23;
} shape;

/* The oldest Lance that reads a version of that shape: 14 for Managed
 * blobs (Lance 12 and 13 refuse flag 16384) or 2.3 files, none (0) for a
 * Blob Reuse Index (every Lance refuses bit 40), else 12, the oldest tested. */
static int oldest_reader(shape s) {
  if (s.reader_flags & BRI_FLAG_BLOB_REUSE_INDEX) return 0;
  if ((s.reader_flags & BRI_FLAG_MANAGED_BLOBS) || s.v23) return 14;
  return 12;
}

json_t *bri_lance_releases_below(unsigned major) {
  json_t *a = json_array();
  for (size_t i = 0; i < sizeof TESTED / sizeof TESTED[0]; i++)
    if ((unsigned)TESTED[i].major < major) json_array_append_new(a, json_string(TESTED[i].name));
  return a;
}

/* The tested Lance releases that read a version of that shape. */
static json_t *readers(shape s) {
  json_t *a = json_array();
  int oldest = oldest_reader(s);
  for (size_t i = 0; oldest && i < sizeof TESTED / sizeof TESTED[0]; i++)
    if (TESTED[i].major >= oldest) json_array_append_new(a, json_string(TESTED[i].name));
  return a;
}

/* {"ok": true, "readers": [...]} or {"ok": false, "reason": msg} from one
 * check's verdict; readers: who reads the table after the operation (a
 * reader flag word), or none for an operation that writes nothing. */
static json_t *verdict(int rc, const bri_error *e, const shape *after) {
  if (rc) return json_pack("{s:b, s:s}", "ok", 0, "reason", e->msg);
  json_t *v = json_pack("{s:b, s:n}", "ok", 1, "reason");
  if (after) json_object_set_new(v, "readers", readers(*after));
  return v;
}

static void add_unique(json_t *a, json_t *v) {
  size_t i;
  json_t *e;
  json_array_foreach(a, i, e) if (json_equal(e, v)) {
    json_decref(v);
    return;
  }
  json_array_append_new(a, v);
}

/* The tested releases in readers(now) and not in readers(after). */
static json_t *locked_out(shape now, shape after) {
  json_t *a = json_array(), *b = readers(now), *k = readers(after);
  size_t i;
  json_t *e;
  json_array_foreach(b, i, e) {
    bool kept = false;
    size_t j;
    json_t *x;
    json_array_foreach(k, j, x) kept |= json_equal(e, x);
    if (!kept) json_array_append(a, e);
  }
  json_decref(b), json_decref(k);
  return a;
}

/* compact --strategy managed (compact/optin.h): {ok, reason, switches (it
 * would commit the opt-in first), readers after, locks_out: the tested
 * releases that read the table now and would not}. rc/e: compact's own
 * verdict, before the switch's checks. */
static json_t *managed_verdict(const bri_manifest *bm, int rc, const bri_error *e, shape now) {
  bri_error me = *e;
  bool switches = bri_managed_optin_applies(bm->pb);
  if (!rc && switches && bri_manifest_has_bri(bm->pb))
    rc = bri_error_set(&me, BRI_EUNSUPPORTED, "the table carries a Blob Reuse Index; materialize --managed "
                       "turns its references into Managed descriptors");
  if (!rc) rc = bri_managed_optin_check(bm->path, bm, &me);
  shape after = {now.reader_flags | (switches ? BRI_FLAG_MANAGED_BLOBS : 0), now.v23};
  json_t *v = verdict(rc, &me, &after);
  json_object_set_new(v, "switches", json_boolean(!rc && switches));
  json_object_set_new(v, "locks_out", rc ? json_array() : locked_out(now, after));
  return v;
}

json_t *bri_inspect_declared(const json_t *report, unsigned min_reader) {
  const json_t *m = json_object_get(json_object_get(report, "compatibility"), "compact_managed");
  bool managed = min_reader >= BRI_MANAGED_MIN_READER && json_is_true(json_object_get(m, "switches"));
  return json_pack("{s:I, s:o, s:s, s:o}", "min_reader", (json_int_t)min_reader, "older_than_declared",
                   bri_lance_releases_below(min_reader),
                   "compact_auto", managed ? "managed" : "auto", "locks_out",
                   managed ? json_deep_copy(json_object_get(m, "locks_out")) : json_array());
}

/* What brid can do with this version, and the Lance features it uses: the
 * same checks the operations make before they write (flags.h, fields.h),
 * so the answer cannot drift from what they do. */
static json_t *compat_json(const bri_manifest *bm) {
  const Lance__Table__Manifest *m = bm->pb;
  json_t *files = json_array(), *kinds = json_array();
  bool v23 = false;
  for (size_t i = 0; i < m->n_fragments; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->fragments[i]->files[k];
      add_unique(files, json_sprintf("%u.%u", df->file_major_version, df->file_minor_version));
      v23 |= df->file_major_version == 2 && df->file_minor_version == 3;
    }
  for (size_t i = 0; bm->indices && i < bm->indices->n_indices; i++) {
    const Google__Protobuf__Any *d = bm->indices->indices[i]->index_details;
    add_unique(kinds, json_string(d && d->type_url ? d->type_url : ""));
  }
  bri_error e = {0}, c = {0}, cl = {0}, cu = {0};
  int base = bm->unsupported[0] ? BRI_EUNSUPPORTED : 0;
  if (base) snprintf(e.msg, sizeof e.msg, "%s", bm->unsupported);
  int rc_c = base, rc_cl = base, rc_cu = base;
  if (base) c = cl = cu = e;
  for (size_t i = 0; !rc_c && i < m->n_fragments; i++) rc_c = bri_fields_check_removed(m->fragments[i], bm->path, &c);
  if (!rc_c && bm->indices) rc_c = bri_fields_check_fri(bri_fri_find(bm->indices), bm->path, &c);
  if (!rc_cl) rc_cl = bri_fields_check_files(m, bm->indices, BRI_FIELDS_CLONE, bm->path, &cl);
  if (!rc_cu) rc_cu = bri_fields_check_files(m, bm->indices, BRI_FIELDS_CLEANUP, bm->path, &cu);
  uint64_t used = m->reader_feature_flags | m->writer_feature_flags, flags = m->reader_feature_flags;
  /* what each operation leaves: a Managed table stays Managed whatever the
   * strategy; auto keeps a BRI table on bri; materialize removes the BRI */
  bool managed = bri_manifest_blobs_managed(m), bri = flags & BRI_FLAG_BLOB_REUSE_INDEX;
  shape now = {flags, v23};
  shape compacted = {managed ? flags | BRI_FLAG_MANAGED_BLOBS : flags, v23};
  shape with_bri = {managed ? compacted.reader_flags : flags | BRI_FLAG_BLOB_REUSE_INDEX, v23};
  shape materialized = {flags & ~BRI_FLAG_BLOB_REUSE_INDEX, v23};
  json_t *tested = json_array();
  for (size_t i = 0; i < sizeof TESTED / sizeof TESTED[0]; i++) json_array_append_new(tested, json_string(TESTED[i].name));
  json_t *cj = verdict(rc_c, &c, bri ? &with_bri : &compacted);
  if (!rc_c) json_object_set_new(cj, "readers_bri", readers(with_bri));
  return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "tested_with", tested,
                   "readers", readers(now), "features", flag_names(used), "file_versions", files,
                   "index_kinds", kinds, "compact", cj, "compact_managed", managed_verdict(bm, rc_c, &c, now),
                   "materialize", verdict(base, &e, &materialized),
                   "clone", verdict(rc_cl, &cl, &now), "cleanup", verdict(rc_cu, &cu, &now), "verify",
                   verdict(base, &e, NULL));
}

int bri_inspect_table(const char *root, uint64_t version, json_t **out, bri_error *err) {
  *out = NULL;
  bri_table *t;
  bri_manifest *bm = NULL;
  bri_ref *tags = NULL, *branches = NULL;
  size_t n_tags = 0, n_branches = 0;
  int rc = bri_table_open(root, &t, err);
  if (rc) return rc;
  if ((rc = bri_table_load_opts(t, version, BRI_MANIFEST_ANY_FEATURES, &bm, err)) == 0 &&
      (rc = bri_table_tags(t, &tags, &n_tags, err)) == 0)
    rc = bri_table_branches(t, &branches, &n_branches, err);
  totals tot = {0};
  json_t *frags = rc ? NULL : fragments_json(t, bm, &tot, err, &rc);
  json_t *idx = rc ? NULL : indices_json(bm, err, &rc);
  if (rc) json_decref(frags);
  if (!rc) {
    const Lance__Table__Manifest *m = bm->pb;
    const Lance__Table__Manifest__WriterVersion *w = m->writer_version;
    *out = json_pack(
        "{s:s, s:o, s:I, s:o, s:o, s:o, s:{s:I, s:I, s:o, s:o}, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:I, "
        "s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
        "table", t->root, "versions", versions_json(t), "version", (json_int_t)m->version,
        "timestamp", iso_time(m->timestamp), "writer",
        w ? json_pack("{s:s, s:s}", "library", w->library ? w->library : "", "version",
                      w->version ? w->version : "")
          : json_null(),
        "data_format",
        m->data_format && m->data_format->version ? json_string(m->data_format->version) : json_null(),
        "flags", "reader", (json_int_t)m->reader_feature_flags, "writer",
        (json_int_t)m->writer_feature_flags, "reader_names", flag_names(m->reader_feature_flags),
        "writer_names", flag_names(m->writer_feature_flags), "config", config_json(m), "schema",
        schema_json(m), "fragments", frags, "indices", idx, "tags",
        refs_json(tags, n_tags, true), "branches", refs_json(branches, n_branches, false),
        "totals", "fragments", (json_int_t)m->n_fragments, "data_files", tot.files,
        "physical_rows", tot.physical, "deleted_rows", tot.deleted, "rows",
        tot.physical - tot.deleted, "data_bytes", tot.data_bytes, "sidecar_files",
        tot.sidecar_files, "sidecar_bytes", tot.sidecar_bytes);
    if (*out) json_object_set_new(*out, "compatibility", compat_json(bm));
    if (!*out) rc = bri_error_set(err, BRI_ENOMEM, "out of memory building the report");
  }
  bri_refs_free(tags, n_tags);
  bri_refs_free(branches, n_branches);
  bri_manifest_free(bm);
  bri_table_close(t);
  return rc;
}

