/* foreign.c: refusals for fields brid does not know (see foreign.h). Each
 * check walks only the messages whose fate it decides, and names the first
 * offending field: the user learns which newer Lance feature is in the way,
 * and nothing has been written yet. */
#include "lance/table/foreign.h"

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "lance/table/bri.h"
#include "lance/table/frag_reuse.h"

static const char *wire_name(ProtobufCWireType w) {
  switch (w) {
  case PROTOBUF_C_WIRE_TYPE_VARINT: return "varint";
  case PROTOBUF_C_WIRE_TYPE_64BIT: return "64-bit";
  case PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED: return "length-delimited";
  case PROTOBUF_C_WIRE_TYPE_32BIT: return "32-bit";
  default: return "group";
  }
}

static bool is_bri(const ProtobufCMessageUnknownField *u) {
  return u->tag == BRI_DATAFILE_FIELD && u->wire_type == PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED;
}

/* Upstream's DataFile field 8 (a uint64 size hint, docs/format/bri.md 2): a
 * fact about that one file, never needed to read it. */
static bool is_size_hint(const ProtobufCMessageUnknownField *u) {
  return u->tag == BRI_DATAFILE_FIELD && u->wire_type == PROTOBUF_C_WIRE_TYPE_VARINT;
}

enum { ANY = 0, LD_ONLY = 1, SKIP_BRI = 2, SKIP_HINT = 4 };

/* The first unknown field of m that `how` does not let pass, or NULL. */
static const ProtobufCMessageUnknownField *first(const ProtobufCMessage *m, int how) {
  for (size_t i = 0; m && i < m->n_unknown_fields; i++) {
    const ProtobufCMessageUnknownField *u = &m->unknown_fields[i];
    if ((how & LD_ONLY) && u->wire_type != PROTOBUF_C_WIRE_TYPE_LENGTH_PREFIXED) continue;
    if ((how & SKIP_BRI) && is_bri(u)) continue;
    if ((how & SKIP_HINT) && is_size_hint(u)) continue;
    return u;
  }
  return NULL;
}

/* "PATH: WHERE: TYPE field N (WIRE) is unknown to brid; WHY" */
static int refuse(const char *path, const char *where, const ProtobufCMessage *m,
                  const ProtobufCMessageUnknownField *u, const char *why, bri_error *err) {
  return bri_error_set(err, BRI_EUNSUPPORTED, "%s: %s%s%s field %u (%s) is unknown to brid; %s", path,
                       where, *where ? ": " : "", m->descriptor->short_name, u->tag,
                       wire_name(u->wire_type), why);
}

int bri_foreign_check_tree(const Lance__Table__Manifest *m, const char *path, bri_error *err) {
  if (m->n_fragments) return 0;
  const ProtobufCMessageUnknownField *u = first(&m->base, LD_ONLY);
  if (!u) return 0;
  return refuse(path, "", &m->base, u,
                "with no fragments listed it may keep them elsewhere (a Lance fragment tree), so "
                "brid will not treat the table as empty",
                err);
}

/* Fragment f, its deletion file and its data files; how_frag applies to the
 * first two, how_file to the data files. */
static int check_fragment(const Lance__Table__DataFragment *f, int how_frag, int how_file,
                          const char *why, const char *path, bri_error *err) {
  char where[160];
  snprintf(where, sizeof where, "fragment %llu", (unsigned long long)f->id);
  const ProtobufCMessageUnknownField *u = first(&f->base, how_frag);
  if (u) return refuse(path, where, &f->base, u, why, err);
  if (f->deletion_file && (u = first(&f->deletion_file->base, how_frag)))
    return refuse(path, where, &f->deletion_file->base, u, why, err);
  for (size_t k = 0; k < f->n_files; k++)
    if ((u = first(&f->files[k]->base, how_file))) {
      snprintf(where, sizeof where, "fragment %llu: data file %s", (unsigned long long)f->id,
               f->files[k]->path);
      return refuse(path, where, &f->files[k]->base, u, why, err);
    }
  return 0;
}

int bri_foreign_check_removed(const Lance__Table__DataFragment *f, const char *path,
                              bri_error *err) {
  return check_fragment(f, ANY, SKIP_BRI | SKIP_HINT,
                        "compaction removes this message and could not carry the field", path, err);
}

int bri_foreign_check_files(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                            bri_foreign_use use, const char *path, bri_error *err) {
  const char *why = use == BRI_FOREIGN_CLONE
                        ? "it may name files, which the clone would not follow"
                        : "it may name files, which cleanup would take for unreferenced and delete";
  const ProtobufCMessageUnknownField *u = first(&m->base, LD_ONLY);
  if (u) return refuse(path, "", &m->base, u, why, err);
  for (size_t i = 0; i < m->n_fragments; i++) {
    int rc = check_fragment(m->fragments[i], LD_ONLY, LD_ONLY | SKIP_BRI, why, path, err);
    if (rc) return rc;
  }
  char where[160];
  for (size_t i = 0; idx && i < idx->n_indices; i++)
    if ((u = first(&idx->indices[i]->base, LD_ONLY))) {
      snprintf(where, sizeof where, "index %s", idx->indices[i]->name ? idx->indices[i]->name : "");
      return refuse(path, where, &idx->indices[i]->base, u, why, err);
    }
  return 0;
}

int bri_foreign_check_pointers(const Lance__Table__Manifest *m, const char *path, bri_error *err) {
  for (size_t i = 0; i < m->base.n_unknown_fields; i++) {
    const ProtobufCMessageUnknownField *u = &m->base.unknown_fields[i];
    if (u->wire_type != PROTOBUF_C_WIRE_TYPE_VARINT) continue;
    uint64_t v = 0;
    for (size_t k = 0, s = 0; k < u->len && s < 64; k++, s += 7) v |= (uint64_t)(u->data[k] & 0x7f) << s;
    bool txn = m->has_transaction_section && v == m->transaction_section;
    bool idx = m->has_index_section && v == m->index_section;
    if (txn || idx)
      return refuse(path, "", &m->base, u,
                    txn ? "its value is the transaction section's offset: a pointer into the file "
                          "that brid's new layout would leave stale"
                        : "its value is the index section's offset: a pointer into the file that "
                          "brid's new layout would leave stale",
                    err);
  }
  return 0;
}

int bri_foreign_check_txn(const Lance__Table__Transaction *t, const char *path, bri_error *err) {
  const ProtobufCMessageUnknownField *u = first(&t->base, ANY);
  if (!u) return 0;
  return refuse(path, "", &t->base, u,
                "brid cannot tell what that transaction changed, so it will not rebase over it",
                err);
}

int bri_foreign_check_fri(const Lance__Table__IndexSection *idx, const char *path, bri_error *err) {
  static const char why[] = "compaction rebuilds the fragment reuse index and could not carry the field";
  const Lance__Table__IndexMetadata *x = idx ? bri_fri_find(idx) : NULL;
  if (!x) return 0;
  const ProtobufCMessageUnknownField *u = first(&x->base, ANY);
  if (u) return refuse(path, "index " BRI_FRI_NAME, &x->base, u, why, err);
  const Google__Protobuf__Any *d = x->index_details;
  if (!d || !d->value.len) return 0;
  Lance__Table__FragmentReuseIndexDetails *fd =
      lance__table__fragment_reuse_index_details__unpack(NULL, d->value.len, d->value.data);
  if (!fd) return 0; /* undecodable details are reported where the index is read (frag_reuse.h) */
  int rc = 0;
  if ((u = first(&fd->base, ANY)))
    rc = refuse(path, "index " BRI_FRI_NAME, &fd->base, u, why, err);
  else if (fd->content_case == LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE &&
           fd->inline_ && (u = first(&fd->inline_->base, ANY)))
    rc = refuse(path, "index " BRI_FRI_NAME, &fd->inline_->base, u, why, err);
  lance__table__fragment_reuse_index_details__free_unpacked(fd, NULL);
  return rc;
}
