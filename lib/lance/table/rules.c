/* rules.c: Lance's manifest invariants (see rules.h).
 *
 * Every check is a pass over the fragment list (or the index section) that
 * reports the first offending fragment of its rule, so a manifest that breaks
 * a rule everywhere yields one line per rule, not one per fragment. Row id
 * and version sequences are checked without expanding them (ranges are
 * counted, not materialized), which keeps a commit of a large table cheap. */
#include "lance/table/rules.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lance/table/flags.h"
#include "lance/table/manifest.h"
#include "lance/table/roaring_strict.h"
#include "lance/table/rowids.h"
#include "util/bytes.h"

typedef struct checker {
  bri_rule_report report;
  void *user;
  size_t broken;
} checker;

static void broke(checker *c, const char *rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void broke(checker *c, const char *rule, const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  c->broken++;
  if (c->report) c->report(c->user, rule, what);
}

#define U(x) ((unsigned long long)(x))

/* Lance: build_manifest sorts by id; check_fragment_ids relies on it. */
static void check_ids(checker *c, const Lance__Table__Manifest *m) {
  bool sorted = true, unique = true, small = true, below_max = true;
  for (size_t i = 0; i < m->n_fragments; i++) {
    uint64_t id = m->fragments[i]->id;
    if (i && sorted && id < m->fragments[i - 1]->id) {
      sorted = false;
      broke(c, BRI_RULE_FRAGMENTS_SORTED, "fragment %llu follows fragment %llu (Lance keeps the fragment list "
            "in ascending id order)", U(id), U(m->fragments[i - 1]->id));
    }
    if (i && unique && id == m->fragments[i - 1]->id) {
      unique = false;
      broke(c, BRI_RULE_FRAGMENT_IDS, "two fragments have id %llu", U(id));
    }
    if (small && id > UINT32_MAX) {
      small = false;
      broke(c, BRI_RULE_FRAGMENT_IDS, "fragment id %llu does not fit the 32 bits of a row address", U(id));
    }
    if (below_max && m->has_max_fragment_id && id > m->max_fragment_id) {
      below_max = false;
      broke(c, BRI_RULE_MAX_FRAGMENT_ID, "fragment %llu is above max_fragment_id %u", U(id), m->max_fragment_id);
    }
  }
  /* unsorted lists hide duplicates from the neighbour test: sort a copy */
  if (!sorted && unique && m->n_fragments > 1) {
    uint64_t *ids = malloc(m->n_fragments * sizeof *ids);
    if (!ids) return;
    for (size_t i = 0; i < m->n_fragments; i++) ids[i] = m->fragments[i]->id;
    qsort(ids, m->n_fragments, sizeof *ids, bri_cmp_u64);
    for (size_t i = 1; i < m->n_fragments && unique; i++)
      if (ids[i] == ids[i - 1]) {
        unique = false;
        broke(c, BRI_RULE_FRAGMENT_IDS, "two fragments have id %llu", U(ids[i]));
      }
    free(ids);
  }
}

/* Lance: physical_rows is required (manifest_needs_migration), a row
 * address holds the offset in 32 bits, and a fragment whose rows are all
 * deleted is removed (Delete's deleted_fragment_ids), never kept. */
static void check_rows(checker *c, const Lance__Table__Manifest *m) {
  bool rows_ok = true, del_ok = true;
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    if (rows_ok && (!f->physical_rows || f->physical_rows > UINT32_MAX)) {
      rows_ok = false;
      broke(c, BRI_RULE_PHYSICAL_ROWS, "fragment %llu records %llu physical rows (needs 1 to 2^32-1)",
            U(f->id), U(f->physical_rows));
    }
    const Lance__Table__DeletionFile *d = f->deletion_file;
    if (del_ok && d && (!d->num_deleted_rows || d->num_deleted_rows >= f->physical_rows)) {
      del_ok = false;
      broke(c, BRI_RULE_DELETIONS, "fragment %llu: deletion file records %llu deleted rows of %llu (needs at "
            "least 1, and fewer than all: Lance removes a fragment whose rows are all deleted)",
            U(f->id), U(d->num_deleted_rows), U(f->physical_rows));
    }
  }
}

static bool truthy(const ProtobufCBinaryData *v) {
  static const char *const yes[] = {"true", "1", "yes", "on"};
  for (size_t i = 0; i < 4; i++)
    if (v->len == strlen(yes[i]) && !strncasecmp((const char *)v->data, yes[i], v->len)) return true;
  return false;
}

/* Lance 14's rule for 2.1+ files: a leaf, a packed struct or a blob field
 * has a column of its own; any other field (a struct or list parent) has
 * none (column index -1). */
static bool needs_column(const Lance__Table__Manifest *m, const Lance__File__Field *f) {
  bool leaf = true;
  for (size_t i = 0; i < m->n_fields && leaf; i++) leaf = m->fields[i]->parent_id != f->id;
  if (leaf || (f->extension_name && !strcmp(f->extension_name, "lance.blob.v2"))) return true;
  for (size_t i = 0; i < f->n_metadata; i++) {
    const char *k = f->metadata[i]->key;
    if (k && (!strcmp(k, "lance-encoding:blob") || !strcmp(k, "packed") || !strcmp(k, "lance-encoding:packed")) &&
        truthy(&f->metadata[i]->value))
      return true;
    if (k && !strcmp(k, "ARROW:extension:name") && f->metadata[i]->value.len == 13 &&
        !memcmp(f->metadata[i]->value.data, "lance.blob.v2", 13))
      return true;
  }
  return false;
}

/* The field of m with this id, or NULL. */
static const Lance__File__Field *field_by_id(const Lance__Table__Manifest *m, int32_t id) {
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->id == id) return m->fields[i];
  return NULL;
}

/* One data file's column indices against its fields (2.1 and later). */
static bool columns_ok(checker *c, const Lance__Table__Manifest *m, uint64_t frag, const Lance__Table__DataFile *df) {
  if (df->file_major_version < 2 || (df->file_major_version == 2 && df->file_minor_version == 0) ||
      df->n_fields != df->n_column_indices)
    return true;
  for (size_t k = 0; k < df->n_fields; k++) {
    const Lance__File__Field *f = field_by_id(m, df->fields[k]);
    if (!f) continue;
    bool needs = needs_column(m, f);
    if (needs == (df->column_indices[k] != -1)) continue;
    broke(c, BRI_RULE_COLUMN_INDICES, "fragment %llu: data file %s gives field %s (id %d) column index %d, "
          "but %s", U(frag), df->path, f->name ? f->name : "?", f->id, df->column_indices[k],
          needs ? "a leaf, packed struct or blob field has a column of its own"
                : "a field with children has none (-1)");
    return false;
  }
  return true;
}

/* Lance: check_storage_version and check_column_indices. With
 * mixed_data_file_versions (bit 8) each data file names its own version
 * and the table's is only the newest (docs/format/compatibility.md). */
static void check_files(checker *c, const Lance__Table__Manifest *m) {
  unsigned major = 0, minor = 0;
  bool v2 = m->data_format && m->data_format->version &&
            sscanf(m->data_format->version, "%u.%u", &major, &minor) == 2 && major >= 2 &&
            !(m->reader_feature_flags & BRI_FLAG_MIXED_DATA_FILE_VERSIONS);
  bool version_ok = true, indices_ok = true;
  for (size_t i = 0; i < m->n_fragments; i++)
    for (size_t k = 0; k < m->fragments[i]->n_files; k++) {
      const Lance__Table__DataFile *df = m->fragments[i]->files[k];
      if (version_ok && v2 && (df->file_major_version != major || df->file_minor_version != minor)) {
        version_ok = false;
        broke(c, BRI_RULE_STORAGE_VERSION, "fragment %llu: data file %s is format %u.%u, the table's data "
              "storage version is %s", U(m->fragments[i]->id), df->path, df->file_major_version,
              df->file_minor_version, m->data_format->version);
      }
      if (indices_ok && df->n_fields != df->n_column_indices) {
        indices_ok = false;
        broke(c, BRI_RULE_COLUMN_INDICES, "fragment %llu: data file %s lists %zu fields but %zu column indices",
              U(m->fragments[i]->id), df->path, df->n_fields, df->n_column_indices);
      }
      if (indices_ok) indices_ok = columns_ok(c, m, m->fragments[i]->id, df);
    }
}

/* Stable row ids: every fragment has a sequence of physical_rows ids, all
 * below next_row_id (Lance's assign_row_ids); none without the flag. */
static void check_row_ids(checker *c, const Lance__Table__Manifest *m) {
  bool stable = (m->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) != 0;
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    int kind = f->row_id_sequence_case;
    if (!stable) {
      if (kind != LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET) {
        broke(c, BRI_RULE_ROW_IDS, "fragment %llu carries row ids, but the table has no stable row ids", U(f->id));
        return;
      }
      continue;
    }
    if (kind == LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_COLUMN_ROW_IDS) continue; /* in a data file */
    if (kind != LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE_INLINE_ROW_IDS) {
      broke(c, BRI_RULE_ROW_IDS, "fragment %llu has no row ids, but the table has stable row ids", U(f->id));
      return;
    }
    Lance__Table__RowIdSequence *seq = NULL;
    bri_error e;
    uint64_t n = 0, max = 0;
    bool any = false;
    int rc = bri_u64seq_unpack(f->inline_row_ids.data, f->inline_row_ids.len, &seq, &e);
    if (!rc) rc = bri_u64seq_count(seq, &n, &e);
    if (!rc) rc = bri_u64seq_max(seq, &max, &any, &e);
    if (seq) lance__table__row_id_sequence__free_unpacked(seq, NULL);
    if (rc) broke(c, BRI_RULE_ROW_IDS, "fragment %llu: %s", U(f->id), e.msg);
    else if (n != f->physical_rows)
      broke(c, BRI_RULE_ROW_IDS, "fragment %llu has %llu row ids for %llu physical rows", U(f->id), U(n),
            U(f->physical_rows));
    else if (any && max >= m->next_row_id)
      broke(c, BRI_RULE_ROW_IDS, "fragment %llu holds row id %llu, not below next_row_id %llu", U(f->id), U(max),
            U(m->next_row_id));
    else
      continue;
    return;
  }
}

/* created_at / last_updated_at sequences: one version per physical row, none
 * newer than the manifest. */
static void check_versions(checker *c, const Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *f = m->fragments[i];
    const ProtobufCBinaryData *seqs[2] = {NULL, NULL};
    static const char *names[2] = {"created_at", "last_updated_at"};
    if (f->created_at_version_sequence_case ==
        LANCE__TABLE__DATA_FRAGMENT__CREATED_AT_VERSION_SEQUENCE_INLINE_CREATED_AT_VERSIONS)
      seqs[0] = &f->inline_created_at_versions;
    if (f->last_updated_at_version_sequence_case ==
        LANCE__TABLE__DATA_FRAGMENT__LAST_UPDATED_AT_VERSION_SEQUENCE_INLINE_LAST_UPDATED_AT_VERSIONS)
      seqs[1] = &f->inline_last_updated_at_versions;
    for (int k = 0; k < 2; k++) {
      if (!seqs[k]) continue;
      uint64_t max = 0;
      bri_error e;
      if (bri_versions_check(seqs[k]->data, seqs[k]->len, f->physical_rows, &max, &e) != 0)
        broke(c, BRI_RULE_ROW_VERSIONS, "fragment %llu: %s versions: %s", U(f->id), names[k], e.msg);
      else if (max > m->version)
        broke(c, BRI_RULE_ROW_VERSIONS, "fragment %llu: a row's %s version is %llu, after the manifest's "
              "version %llu", U(f->id), names[k], U(max), U(m->version));
      else
        continue;
      return;
    }
  }
}

/* Lance: an index's fragment bitmap names the fragments whose rows it holds,
 * even after they are gone, but never an id not handed out yet. */
static void check_indices(checker *c, const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx) {
  uint64_t max = m->has_max_fragment_id ? m->max_fragment_id : 0;
  for (size_t i = 0; i < m->n_fragments; i++) max = m->fragments[i]->id > max ? m->fragments[i]->id : max;
  for (size_t k = 0; idx && k < idx->n_indices; k++) {
    const Lance__Table__IndexMetadata *x = idx->indices[k];
    /* Lance 14 refuses to load an index without its 16-byte uuid */
    if (!x->uuid || !x->uuid->has_uuid || x->uuid->uuid.len != 16)
      broke(c, BRI_RULE_INDEX_UUID, "index %s has no 16-byte uuid", x->name ? x->name : "?");
    if (!x->has_fragment_bitmap) continue;
    roaring_bitmap_t *b;
    bri_error e;
    if (bri_index_bitmap_read(x, NULL, &b, &e) != 0) {
      broke(c, BRI_RULE_INDEX_BITMAP, "%s", e.msg);
      continue;
    }
    if (!roaring_bitmap_is_empty(b) && roaring_bitmap_maximum(b) > max)
      broke(c, BRI_RULE_INDEX_BITMAP, "index %s covers fragment %u, above every id handed out (%llu)",
            x->name ? x->name : "?", roaring_bitmap_maximum(b), U(max));
    roaring_bitmap_free(b);
  }
}

/* Lance's apply_feature_flags: the flags say what the content holds. */
static void check_flags(checker *c, const Lance__Table__Manifest *m) {
  bool deletions = false, row_ids = false;
  for (size_t i = 0; i < m->n_fragments; i++) {
    deletions |= m->fragments[i]->deletion_file != NULL;
    row_ids |= m->fragments[i]->row_id_sequence_case != LANCE__TABLE__DATA_FRAGMENT__ROW_ID_SEQUENCE__NOT_SET;
  }
  if (deletions && !(m->reader_feature_flags & BRI_FLAG_DELETION_FILES))
    broke(c, BRI_RULE_FEATURE_FLAGS, "fragments have deletion files but the deletion_files flag is not set");
  if (row_ids && !(m->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS))
    broke(c, BRI_RULE_FEATURE_FLAGS, "fragments carry row ids but the stable_row_ids flag is not set");
  uint64_t half = (m->reader_feature_flags ^ m->writer_feature_flags) & BRI_FLAGS_PAIRED;
  if (half) broke(c, BRI_RULE_FEATURE_FLAGS, "a paired flag (%llu) is set in one word only", U(half));
  bool managed = bri_manifest_blobs_managed(m);
  if (managed && !(m->reader_feature_flags & m->writer_feature_flags & BRI_FLAG_MANAGED_BLOBS))
    broke(c, BRI_RULE_FEATURE_FLAGS, "the schema opts in to Managed blobs but managed_blobs is not set in both words");
  if (!m->has_max_allocated_field_id != !(m->writer_feature_flags & BRI_FLAG_NON_REUSABLE_FIELD_IDS))
    broke(c, BRI_RULE_FEATURE_FLAGS, "writer flag non_reusable_field_ids and max_allocated_field_id (field 24) "
          "are not both present or both absent");
}

size_t bri_rules_check_manifest(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                                bri_rule_report report, void *user) {
  checker c = {report, user, 0};
  check_ids(&c, m);
  check_rows(&c, m);
  check_files(&c, m);
  check_row_ids(&c, m);
  check_versions(&c, m);
  check_indices(&c, m, idx);
  check_flags(&c, m);
  return c.broken;
}

static const Lance__Table__DataFragment *find(const Lance__Table__Manifest *m, uint64_t id) {
  for (size_t i = 0; i < m->n_fragments; i++)
    if (m->fragments[i]->id == id) return m->fragments[i];
  return NULL;
}

static bool in_list(Lance__Table__DataFragment *const *f, size_t n, uint64_t id) {
  for (size_t i = 0; i < n; i++)
    if (f[i]->id == id) return true;
  return false;
}

/* A Rewrite's old fragments are gone (unless a group kept an id for its
 * rewritten files) and its new ones are listed. */
size_t bri_rules_check_transaction(const Lance__Table__Manifest *m, const Lance__Table__Transaction *txn,
                                   bri_rule_report report, void *user) {
  checker c = {report, user, 0};
  if (!txn || txn->operation_case != LANCE__TABLE__TRANSACTION__OPERATION_REWRITE || !txn->rewrite) return 0;
  const Lance__Table__Transaction__Rewrite *r = txn->rewrite;
  for (size_t g = 0; g < r->n_groups; g++) {
    const Lance__Table__Transaction__Rewrite__RewriteGroup *gr = r->groups[g];
    for (size_t i = 0; i < gr->n_old_fragments; i++)
      if (find(m, gr->old_fragments[i]->id) && !in_list(gr->new_fragments, gr->n_new_fragments,
                                                         gr->old_fragments[i]->id)) {
        broke(&c, BRI_RULE_REWRITE_APPLIED, "the rewrite replaced fragment %llu, which is still listed",
              U(gr->old_fragments[i]->id));
        return c.broken;
      }
    for (size_t i = 0; i < gr->n_new_fragments; i++)
      if (!find(m, gr->new_fragments[i]->id)) {
        broke(&c, BRI_RULE_REWRITE_APPLIED, "the rewrite wrote fragment %llu, which is not listed",
              U(gr->new_fragments[i]->id));
        return c.broken;
      }
  }
  return 0;
}

size_t bri_rules_check_succession(const Lance__Table__Manifest *prev, const Lance__Table__Manifest *m,
                                  bri_rule_report report, void *user) {
  checker c = {report, user, 0};
  if (prev->has_max_fragment_id && (!m->has_max_fragment_id || m->max_fragment_id < prev->max_fragment_id))
    broke(&c, BRI_RULE_HIGH_WATER, "max_fragment_id went down from %u (version %llu) to %u: ids could be "
          "handed out twice", prev->max_fragment_id, U(prev->version), m->has_max_fragment_id ? m->max_fragment_id : 0);
  bool stable = (m->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) != 0;
  if (stable && (prev->reader_feature_flags & BRI_FLAG_STABLE_ROW_IDS) && m->next_row_id < prev->next_row_id)
    broke(&c, BRI_RULE_HIGH_WATER, "next_row_id went down from %llu (version %llu) to %llu: row ids could be "
          "handed out twice", U(prev->next_row_id), U(prev->version), U(m->next_row_id));
  return c.broken;
}

static int cmp_frag(const void *a, const void *b) {
  uint64_t x = (*(Lance__Table__DataFragment *const *)a)->id, y = (*(Lance__Table__DataFragment *const *)b)->id;
  return x < y ? -1 : x > y;
}

void bri_manifest_sort_fragments(Lance__Table__Manifest *m) {
  if (m->n_fragments > 1) qsort(m->fragments, m->n_fragments, sizeof *m->fragments, cmp_frag);
}

typedef struct first_broken {
  bri_error *err;
  bool set;
} first_broken;

static void keep_first(void *user, const char *rule, const char *what) {
  first_broken *f = user;
  if (f->set) return;
  f->set = true;
  bri_error_set(f->err, BRI_EINVAL, "rule %s: %s", rule, what);
}

int bri_rules_enforce(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                      const Lance__Table__Transaction *txn, bri_error *err) {
  first_broken f = {err, false};
  if (bri_rules_check_manifest(m, idx, keep_first, &f) || bri_rules_check_transaction(m, txn, keep_first, &f))
    return BRI_EINVAL;
  return 0;
}
