/* frag_reuse.c: the Fragment Reuse Index format (see frag_reuse.h).
 *
 * Validation mirrors what Lance checks when it builds its remap from the
 * details (lance-core row_addr_remap, lance-table system_index/frag_reuse):
 * details brid would append to must be ones Lance can still read, or the
 * commit would break every index of the table. Every bitmap read from disk
 * (treemaps, index fragment bitmaps) goes through the strict decoder
 * (roaring_strict.h) before CRoaring sees it; CRoaring builds and serializes
 * them. */
#include "lance/table/frag_reuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/bytes.h"
#include "util/fsutil.h"
#include "util/random.h"
#include "util/strmap.h"

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* ---------------------------------------------------------------- treemap */

int bri_treemap_encode(const bri_treemap_part *parts, size_t n, uint8_t **out, size_t *len,
                       bri_error *err) {
  *out = NULL;
  *len = 0;
  size_t total = 8, kept = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && parts[i].high <= parts[i - 1].high)
      return bri_error_set(err, BRI_EINVAL, "treemap parts must be ascending by high key");
    if (roaring_bitmap_is_empty(parts[i].low)) continue;
    roaring_bitmap_run_optimize(parts[i].low);
    total += 4 + roaring_bitmap_portable_size_in_bytes(parts[i].low);
    kept++;
  }
  uint8_t *b = malloc(total);
  if (!b) return bri_error_set(err, BRI_ENOMEM, "out of memory for a %zu-byte treemap", total);
  bri_put_le64(b, kept);
  size_t pos = 8;
  for (size_t i = 0; i < n; i++) {
    if (roaring_bitmap_is_empty(parts[i].low)) continue;
    bri_put_le32(b + pos, parts[i].high);
    pos += 4;
    pos += roaring_bitmap_portable_serialize(parts[i].low, (char *)b + pos);
  }
  *out = b;
  *len = pos;
  return 0;
}

/* ---------------------------------------------------------------- details */

bool bri_fri_is(const Lance__Table__IndexMetadata *x) {
  return x->name && !strcmp(x->name, BRI_FRI_NAME);
}

const Lance__Table__IndexMetadata *bri_fri_find(const Lance__Table__IndexSection *sec) {
  for (size_t i = 0; sec && i < sec->n_indices; i++)
    if (bri_fri_is(sec->indices[i])) return sec->indices[i];
  return NULL;
}

static bool ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && !strcmp(s + a - b, suffix);
}

/* What the history so far produced and consumed (Lance 14 decodes every
 * FRI history into a ledger and refuses one where a fragment is produced or
 * consumed twice, or consumed with another size than it was produced with). */
typedef struct ledger {
  roaring_bitmap_t *consumed, *produced;
  bri_strmap rows; /* produced fragment id -> its physical_rows */
} ledger;

/* One group against Lance's remap rules (Lance 12's remap and Lance 14's
 * ledger decode); l collects the history's fragments. */
static int check_group(const bri_fri_group *g, const char *where, ledger *l, bri_error *err) {
  if (!g->n_old_fragments)
    return bri_error_set(err, BRI_ECORRUPT, "%s: a group without old fragments", where);
  uint64_t new_rows = 0, live_old = 0;
  char key[24];
  for (size_t i = 0; i < g->n_new_fragments; i++) {
    const bri_fri_digest *d = g->new_fragments[i];
    if (d->id > UINT32_MAX || d->physical_rows > UINT32_MAX)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: new fragment %llu (%llu rows) is outside the row-address range",
                           where, ull(d->id), ull(d->physical_rows));
    if (d->num_deleted_rows)
      return bri_error_set(err, BRI_ECORRUPT, "%s: new fragment %llu records %llu deleted rows (a rewrite "
                           "writes none)", where, ull(d->id), ull(d->num_deleted_rows));
    if (!roaring_bitmap_add_checked(l->produced, (uint32_t)d->id))
      return bri_error_set(err, BRI_ECORRUPT, "%s: new fragment %llu was already produced", where, ull(d->id));
    snprintf(key, sizeof key, "%llu", ull(d->id));
    if (!bri_strmap_put(&l->rows, key, d->physical_rows, 0)) return bri_error_set(err, BRI_ENOMEM, "out of memory");
    new_rows += d->physical_rows;
  }
  for (size_t i = 0; i < g->n_old_fragments; i++) {
    const bri_fri_digest *d = g->old_fragments[i];
    if (d->id > UINT32_MAX || d->physical_rows > UINT32_MAX)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: old fragment %llu (%llu rows) is outside the row-address range",
                           where, ull(d->id), ull(d->physical_rows));
    if (d->num_deleted_rows > d->physical_rows)
      return bri_error_set(err, BRI_ECORRUPT, "%s: old fragment %llu records %llu deleted of %llu rows", where,
                           ull(d->id), ull(d->num_deleted_rows), ull(d->physical_rows));
    if (!roaring_bitmap_add_checked(l->consumed, (uint32_t)d->id))
      return bri_error_set(err, BRI_ECORRUPT, "%s: old fragment %llu was already consumed", where, ull(d->id));
    snprintf(key, sizeof key, "%llu", ull(d->id));
    const bri_strmap_entry *p = bri_strmap_get(&l->rows, key);
    if (p && p->a != d->physical_rows)
      return bri_error_set(err, BRI_ECORRUPT, "%s: old fragment %llu has %llu rows, but was produced with %llu",
                           where, ull(d->id), ull(d->physical_rows), ull(p->a));
    live_old += d->physical_rows - d->num_deleted_rows;
  }
  if (live_old != new_rows)
    return bri_error_set(err, BRI_ECORRUPT, "%s: the old fragments hold %llu live rows but the new ones %llu",
                         where, ull(live_old), ull(new_rows));
  bri_treemap_part *parts;
  size_t n;
  int rc = bri_treemap_decode(g->changed_row_addrs.data, g->changed_row_addrs.len, where, &parts,
                              &n, err);
  if (rc) return rc;
  uint64_t changed = 0;
  for (size_t k = 0; k < n && !rc; k++) {
    const bri_fri_digest *d = NULL;
    for (size_t i = 0; i < g->n_old_fragments && !d; i++)
      if (g->old_fragments[i]->id == parts[k].high) d = g->old_fragments[i];
    if (!d)
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: surviving rows of fragment %u, which is not one of the group's old "
                         "fragments",
                         where, parts[k].high);
    else if (roaring_bitmap_maximum(parts[k].low) >= d->physical_rows)
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: row offset %u outside old fragment %u with physical_rows=%llu",
                         where, roaring_bitmap_maximum(parts[k].low), parts[k].high,
                         ull(d->physical_rows));
    else if (roaring_bitmap_get_cardinality(parts[k].low) != d->physical_rows - d->num_deleted_rows)
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: %llu surviving rows of old fragment %u, which has %llu live rows",
                         where, ull(roaring_bitmap_get_cardinality(parts[k].low)), parts[k].high,
                         ull(d->physical_rows - d->num_deleted_rows));
    changed += roaring_bitmap_get_cardinality(parts[k].low);
  }
  if (!rc && changed != new_rows)
    rc = bri_error_set(err, BRI_ECORRUPT,
                       "%s: %llu surviving old rows but the new fragments hold %llu rows", where,
                       ull(changed), ull(new_rows));
  bri_treemap_free(parts, n);
  return rc;
}

int bri_fri_check(const bri_fri_content *c, const char *path, bri_error *err) {
  ledger l = {roaring_bitmap_create(), roaring_bitmap_create(), {0}};
  int rc = l.consumed && l.produced ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  for (size_t v = 0; v < c->n_versions && !rc; v++)
    for (size_t g = 0; g < c->versions[v]->n_groups && !rc; g++) {
      char where[256];
      snprintf(where, sizeof where, "%s: fragment reuse index version %zu (dataset version %llu), "
               "group %zu", path, v, ull(c->versions[v]->dataset_version), g);
      rc = check_group(c->versions[v]->groups[g], where, &l, err);
    }
  if (l.consumed) roaring_bitmap_free(l.consumed);
  if (l.produced) roaring_bitmap_free(l.produced);
  bri_strmap_dispose(&l.rows);
  return rc;
}

int bri_fri_load(const bri_table *t, const bri_manifest *m, const Lance__Table__IndexMetadata *x,
                 bri_fri_content **out, bri_error *err) {
  *out = NULL;
  if (x->has_index_version && x->index_version != 0)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: the fragment reuse index has index_version %d; brid reads version 0 "
                         "only (Lance 12's format)",
                         m->path, x->index_version);
  if (!x->index_details || !x->index_details->type_url ||
      !ends_with(x->index_details->type_url, "FragmentReuseIndexDetails"))
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: index %s does not carry FragmentReuseIndexDetails", m->path,
                         BRI_FRI_NAME);
  Lance__Table__FragmentReuseIndexDetails *d = lance__table__fragment_reuse_index_details__unpack(
      NULL, x->index_details->value.len, x->index_details->value.data);
  if (!d)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: the details of the fragment reuse index do not decode", m->path);
  int rc = 0;
  bri_fri_content *c = NULL;
  char *file = NULL;
  if (d->content_case == LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE) {
    /* take the inline content out of d */
    c = d->inline_;
    d->inline_ = NULL;
    d->content_case = LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT__NOT_SET;
  } else if (d->content_case == LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_EXTERNAL) {
    const Lance__Table__ExternalFile *e = d->external;
    char *dir = NULL;
    if (!e->path || !*e->path || strchr(e->path, '/') || !strcmp(e->path, "..") || !strcmp(e->path, "."))
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: the fragment reuse index names external file \"%s\", not a file name "
                         "in its index directory",
                         m->path, e->path ? e->path : "");
    else if ((rc = bri_table_index_dir(t, m->pb, x, &dir, err)) == 0 &&
             !(file = bri_path_join(dir, e->path)))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    free(dir);
    uint8_t *buf = NULL;
    size_t len = 0;
    bri_store *st = NULL;
    if (!rc) rc = bri_table_store_of(t, m->pb, file, &st, err);
    if (!rc) rc = bri_store_read(st, file, BRI_FRI_MAX_BYTES, &buf, &len, err);
    if (!rc && (e->offset > len || e->size > len - e->offset))
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: %zu bytes, but the fragment reuse index of %s reads %llu at offset "
                         "%llu",
                         file, len, m->path, ull(e->size), ull(e->offset));
    if (!rc && !(c = (bri_fri_content *)protobuf_c_message_unpack(
                     &lance__table__fragment_reuse_index_details__inline_content__descriptor, NULL,
                     e->size, buf + e->offset)))
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: fragment reuse index details do not decode",
                         file);
    free(buf);
  } else {
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: the fragment reuse index has no content", m->path);
  }
  lance__table__fragment_reuse_index_details__free_unpacked(d, NULL);
  if (!rc) rc = bri_fri_check(c, file ? file : m->path, err);
  free(file);
  if (rc) {
    if (c) bri_fri_content_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

void bri_fri_content_free(bri_fri_content *c) {
  if (c) protobuf_c_message_free_unpacked(&c->base, NULL);
}

void bri_fri_remap_bitmap(const bri_fri_content *c, roaring_bitmap_t *b) {
  for (size_t v = 0; c && v < c->n_versions; v++)
    for (size_t g = 0; g < c->versions[v]->n_groups; g++) {
      const bri_fri_group *gr = c->versions[v]->groups[g];
      size_t removed = 0;
      for (size_t i = 0; i < gr->n_old_fragments; i++)
        removed += roaring_bitmap_remove_checked(b, (uint32_t)gr->old_fragments[i]->id);
      if (removed == 0 || removed != gr->n_old_fragments) continue; /* straddle: nothing added */
      for (size_t i = 0; i < gr->n_new_fragments; i++)
        roaring_bitmap_add(b, (uint32_t)gr->new_fragments[i]->id);
    }
}

bool bri_fri_version_caught_up(const bri_fri_version *v, const Lance__Table__IndexSection *sec) {
  for (size_t k = 0; sec && k < sec->n_indices; k++) {
    const Lance__Table__IndexMetadata *x = sec->indices[k];
    if (bri_fri_is(x) || (x->name && !strcmp(x->name, "__lance_mem_wal"))) continue;
    if (x->dataset_version < v->dataset_version) return false;
    if (!x->has_fragment_bitmap) continue;
    roaring_bitmap_t *b;
    bri_error e;
    if (bri_index_bitmap_read(x, NULL, &b, &e) != 0) return false; /* unreadable: keep the version */
    bool covers = false;
    for (size_t g = 0; g < v->n_groups && !covers; g++)
      for (size_t i = 0; i < v->groups[g]->n_old_fragments && !covers; i++)
        covers = roaring_bitmap_contains(b, (uint32_t)v->groups[g]->old_fragments[i]->id);
    roaring_bitmap_free(b);
    if (covers) return false;
  }
  return true;
}

void bri_fri_entry_free(Lance__Table__IndexMetadata *x) {
  if (!x) return;
  if (x->uuid) free(x->uuid->uuid.data);
  free(x->uuid);
  free(x->fragment_bitmap.data);
  if (x->index_details) free(x->index_details->value.data);
  free(x->index_details);
  free(x);
}

void bri_fri_external_remove(const bri_table *t, const char *file) {
  bri_error ignored;
  bri_store_delete(t->store, file, &ignored);
  char *dir = strdup(file), *slash = dir ? strrchr(dir, '/') : NULL;
  if (slash) {
    *slash = 0;
    bri_store_delete(t->store, dir, &ignored); /* the index directory, now empty */
  }
  free(dir);
}

/* Writes the external details file; *path is set once the file exists. */
static int write_external(const bri_table *t, const char *uuid, const uint8_t *bytes, size_t len,
                          char **path, bri_error *err) {
  char *idx = bri_path_join(t->root, "_indices");
  char *dir = idx ? bri_path_join(idx, uuid) : NULL;
  char *file = dir ? bri_path_join(dir, BRI_FRI_DETAILS_FILE) : NULL;
  int rc = file ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc && (rc = bri_store_mkdir(t->store, idx, err)) == BRI_ETAKEN) rc = 0;
  if (!rc) rc = bri_store_mkdir(t->store, dir, err);
  if (!rc) rc = bri_store_put_new(t->store, file, bytes, len, NULL, err);
  if (!rc) {
    *path = file;
    file = NULL;
  } else if (file) {
    bri_fri_external_remove(t, file);
  }
  free(idx), free(dir), free(file);
  return rc;
}

int bri_fri_entry_build(const bri_table *t, const bri_fri_content *c,
                        const Lance__Table__IndexMetadata *previous, uint64_t dataset_version,
                        const roaring_bitmap_t *new_frags, Lance__Table__IndexMetadata **out,
                        char **external, bri_error *err) {
  *out = NULL;
  *external = NULL;
  char uuid[37];
  bri_uuid_v4(uuid);
  Lance__Table__IndexMetadata *x = calloc(1, sizeof *x);
  Lance__Table__UUID *u = calloc(1, sizeof *u);
  Google__Protobuf__Any *any = calloc(1, sizeof *any);
  uint8_t *ub = malloc(16);
  if (!x || !u || !any || !ub) {
    free(x), free(u), free(any), free(ub);
    return bri_error_set(err, BRI_ENOMEM, "out of memory");
  }
  lance__table__index_metadata__init(x);
  lance__table__uuid__init(u);
  google__protobuf__any__init(any);
  for (int i = 0, j = 0; i < 16; i++, j += 2) {
    if (uuid[j] == '-') j++;
    unsigned hi = (unsigned)(uuid[j] <= '9' ? uuid[j] - '0' : uuid[j] - 'a' + 10);
    unsigned lo = (unsigned)(uuid[j + 1] <= '9' ? uuid[j + 1] - '0' : uuid[j + 1] - 'a' + 10);
    ub[i] = (uint8_t)(hi << 4 | lo);
  }
  u->uuid.data = ub, u->uuid.len = 16, u->has_uuid = 1;
  x->uuid = u;
  x->name = (char *)BRI_FRI_NAME; /* static: bri_fri_entry_free leaves it */
  x->has_dataset_version = 1, x->dataset_version = dataset_version;
  x->has_index_version = 1, x->index_version = previous && previous->has_index_version ? previous->index_version : 0;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  x->has_created_at = 1;
  x->created_at = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
  x->index_details = any;
  any->type_url = (char *)BRI_FRI_TYPE_URL;
  int rc = 0;
  roaring_bitmap_t *nb = roaring_bitmap_copy(new_frags);
  if (!nb) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  if (!rc) {
    roaring_bitmap_run_optimize(nb);
    x->fragment_bitmap.len = roaring_bitmap_portable_size_in_bytes(nb);
    if (!(x->fragment_bitmap.data = malloc(x->fragment_bitmap.len)))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    else
      roaring_bitmap_portable_serialize(nb, (char *)x->fragment_bitmap.data);
    x->has_fragment_bitmap = 1;
  }
  if (nb) roaring_bitmap_free(nb);
  Lance__Table__FragmentReuseIndexDetails d;
  Lance__Table__ExternalFile ext;
  lance__table__fragment_reuse_index_details__init(&d);
  size_t clen = protobuf_c_message_get_packed_size(&c->base);
  if (!rc && clen > BRI_FRI_INLINE_MAX) {
    uint8_t *cb = malloc(clen);
    if (!cb) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    if (!rc) {
      protobuf_c_message_pack(&c->base, cb);
      rc = write_external(t, uuid, cb, clen, external, err);
    }
    free(cb);
    lance__table__external_file__init(&ext);
    ext.path = (char *)BRI_FRI_DETAILS_FILE;
    ext.has_offset = 1, ext.offset = 0;
    ext.has_size = 1, ext.size = clen;
    d.content_case = LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_EXTERNAL;
    d.external = &ext;
  } else {
    d.content_case = LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE;
    d.inline_ = (bri_fri_content *)c;
  }
  if (!rc) {
    any->value.len = lance__table__fragment_reuse_index_details__get_packed_size(&d);
    if (!(any->value.data = malloc(any->value.len ? any->value.len : 1)))
      rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
    else
      lance__table__fragment_reuse_index_details__pack(&d, any->value.data);
    any->has_value = 1;
  }
  if (rc) {
    if (*external) {
      bri_fri_external_remove(t, *external);
      free(*external);
      *external = NULL;
    }
    bri_fri_entry_free(x);
    return rc;
  }
  *out = x;
  return 0;
}
