/* fields.c: the field rules of the messages brid writes or copies (see
 * fields.h), and the checks that enforce them. The tables are the single
 * source: docs/format/fields.md lists them (tests/unit/test_fields.c checks
 * that every field of brid's protos has a rule, and that the document says
 * the same), the manifest codec drops what they say to drop, and the checks
 * below refuse what they say to refuse, naming the first offending field:
 * the user learns which Lance feature is in the way, and nothing has been
 * written yet. */
#include "lance/table/fields.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define R BRI_FIELD_REWRITTEN
#define V BRI_FIELD_VERBATIM
#define C BRI_FIELD_CARRIED
#define X BRI_FIELD_REFUSED
#define J BRI_FIELD_JUDGED

static const bri_field_rule MANIFEST[] = {
    {1, "fields", C, "the schema; compaction, materialize and clone add no column"},
    {2, "fragments", R, "the fragment list a commit changes; fragments it leaves alone are copied verbatim"},
    {3, "version", R, "the version committed"},
    {4, "version_aux_data", R, "cleared: a position inside the old manifest file, not inheritable"},
    {5, "schema_metadata", C, "table-level schema metadata (lance.blob.managed among it)"},
    {6, "index_section", R, "offset of the index section in the new file (offset 0, written first)"},
    {7, "timestamp", R, "the commit time"},
    {8, "tag", C, "the legacy version tag"},
    {9, "reader_feature_flags", R, "derived from the content; sticky bits kept (docs/format/compatibility.md)"},
    {10, "writer_feature_flags", R, "derived from the content; sticky bits kept"},
    {11, "max_fragment_id", R, "raised over the ids a commit hands out, never lowered"},
    {12, "transaction_file", R, "the name of brid's transaction file under _transactions/"},
    {13, "writer_version", R, "library brid, brid's version"},
    {14, "next_row_id", C, "compaction allocates no row ids: stable ids move with their rows"},
    {15, "data_format", C, "the table's data storage version, which brid writes its files in"},
    {16, "config", C, "table configuration (lance.compaction.* keys are read by the planner)"},
    {18, "base_paths", C, "kept; a shallow clone adds the source's root as a base"},
    {19, "table_metadata", C, "table metadata"},
    {20, "branch", C, "the branch the version belongs to"},
    {21, "transaction_section_deprecated", R,
     "offset of the inline transaction in the new file, for Lance 12 and 13 (which read 21)"},
    {22, "fragment_tree", X,
     "fragments kept in a tree (flag fragment_tree); brid reads fragments only from field 2"},
    {23, "transaction_section", R,
     "offset of the inline transaction in the new file, for Lance 14 (which reads 23 before 21)"},
    {24, "max_allocated_field_id", C,
     "the field-id high-water mark; kept with writer flag non_reusable_field_ids (brid adds no field)"},
    {25, "clustering", X, "clustering definitions (flag object_metadata), which brid cannot keep consistent"},
    {26, "max_clustering_id", X, "the clustering-id allocator (flag object_metadata)"},
};

static const bri_field_rule FRAGMENT[] = {
    {1, "id", R, "a fresh id above max_fragment_id for an output fragment; verbatim in fragments left alone"},
    {2, "files", R, "the output's data file; verbatim in fragments left alone"},
    {3, "deletion_file", R,
     "none on output fragments (deletions another writer made meanwhile are carried over); verbatim otherwise"},
    {4, "physical_rows", R, "the output's row count; verbatim otherwise"},
    {5, "inline_row_ids", R, "the stable row ids of the rows moved, in their new order; verbatim otherwise"},
    {7, "inline_last_updated_at_versions", R, "each moved row's version, in the new order; verbatim otherwise"},
    {9, "inline_created_at_versions", R, "each moved row's version, in the new order; verbatim otherwise"},
    {11, "overlays", X, "data overlay files (flag unstable_data_overlay_files)"},
    {12, "column_row_ids", X, "row ids spilled into a hidden column (flag spilled_row_lineage)"},
    {13, "column_last_updated_at_versions", X, "versions spilled into a hidden column (flag spilled_row_lineage)"},
    {14, "column_created_at_versions", X, "versions spilled into a hidden column (flag spilled_row_lineage)"},
    {15, "clustering_id", X, "a clustering reference (flag object_metadata)"},
    {16, "metadata", X, "per-fragment metadata (flag object_metadata), which output fragments would not inherit"},
};

static const bri_field_rule DATAFILE[] = {
    {1, "path", R, "the output file's name; verbatim in fragments left alone"},
    {2, "fields", R, "the field ids the output holds, as the source files"},
    {3, "column_indices", R, "one per field: the column, or -1 for a field without one"},
    {4, "file_major_version", R, "the table's data storage version"},
    {5, "file_minor_version", R, "the table's data storage version"},
    {6, "file_size_bytes", R, "the size brid wrote (Lance opens the file with it, without asking the store)"},
    {7, "base_id", R, "unset: brid writes into the table's own data directory; verbatim otherwise"},
    {BRI_DATAFILE_FIELD, "blob_reuse_index (brid)", R,
     "brid's Blob Reuse Index, strategy bri only (flag blob_reuse_index); not a Lance field"},
};

static const bri_field_rule DELETION[] = {
    {1, "file_type", V, "kept; arrow or bitmap where brid carries another writer's deletions"},
    {2, "read_version", V, "kept"},
    {3, "id", V, "kept"},
    {4, "num_deleted_rows", V, "kept"},
    {7, "base_id", V, "kept"},
};

static const bri_field_rule INDEX[] = {
    {1, "uuid", V, "kept; a fresh one for brid's fragment reuse index entry"},
    {2, "fields", V, "kept"},
    {3, "name", V, "kept"},
    {4, "dataset_version", V, "kept"},
    {5, "fragment_bitmap", R, "remapped onto the output fragments where rows keep stable ids; verbatim otherwise"},
    {6, "index_details", V, "kept; rebuilt for the fragment reuse index"},
    {7, "index_version", V, "kept"},
    {8, "created_at", V, "kept"},
    {9, "base_id", V, "kept"},
    {10, "files", V, "kept: the index's files are not touched"},
    {11, "covering_fields", V, "kept: an index carried is the same index"},
    {12, "clustering_id", X, "a clustering reference (flag object_metadata)"},
    {13, "metadata", X, "per-segment metadata (flag object_metadata)"},
};

static const bri_field_rule FRI[] = {
    {1, "inline", R, "rebuilt: the versions kept plus the compaction's own"},
    {2, "external", R, "read; rewritten inline, or to a new file above Lance's spill size"},
};

static const bri_field_rule FRI_CONTENT[] = {
    {1, "legacy_versions", R, "the versions still needed, plus one for the compaction (index_version 0)"},
    {2, "transitions", X, "tagged transitions (index_version 1, flag fragment_reuse_index)"},
};

static const bri_field_rule TRANSACTION[] = {
    {1, "read_version", R, "the version the commit was planned on"},
    {2, "uuid", R, "fresh"},
    {3, "tag", R, "unset"},
    {4, "transaction_properties", R, "unset"},
    {100, "append", J, "compatible with a compaction"},
    {101, "delete", J, "its deletions are carried over, or the compaction gives way"},
    {102, "overwrite", J, "the compaction gives way"},
    {103, "create_index", J, "judged by the indices it covers"},
    {104, "rewrite", R, "what a compaction commits"},
    {105, "merge", J, "the compaction gives way"},
    {106, "restore", J, "the compaction gives way"},
    {107, "reserve_fragments", J, "compatible; the ids it reserved are not reused"},
    {108, "update", J, "judged by the fragments it touched"},
    {109, "project", J, "judged by the columns it dropped"},
    {110, "update_config", R,
     "what the switch to Managed blobs commits (schema metadata lance.blob.managed); compatible in another "
     "writer's"},
    {111, "data_replacement", R, "what materialize commits"},
    {112, "update_mem_wal_state", J, "compatible with a compaction, not with materialize"},
    {113, "clone", R, "what brictl clone commits as the clone's first version"},
    {114, "update_bases", J, "compatible"},
    {115, "data_overlay", J, "always a conflict: brid does not rebase over overlays"},
};

static const char UNKNOWN_MANIFEST[] =
    "dropped when brid writes a new manifest file, as Lance's older writers drop it (Lance guards "
    "every field whose loss matters with a feature flag, which brid refuses when it does not know it); "
    "cleanup and clone refuse a length-delimited one, which may name files";
static const char UNKNOWN_FRAGMENT[] =
    "kept in a fragment brid leaves alone; refused in one a compaction removes (it would be lost); "
    "cleanup and clone refuse a length-delimited one, which may name files";
static const char UNKNOWN_INDEX[] =
    "kept (indices are carried as read); cleanup and clone refuse a length-delimited one";
static const char UNKNOWN_FRI[] = "refused: compaction rebuilds the entry and could not carry it";
static const char UNKNOWN_TXN[] =
    "never written (brid builds its transactions fresh); in another writer's transaction, a reason "
    "not to rebase over it";

static const bri_message_rules MESSAGES[] = {
    {"Manifest", &lance__table__manifest__descriptor, MANIFEST, N(MANIFEST), UNKNOWN_MANIFEST},
    {"DataFragment", &lance__table__data_fragment__descriptor, FRAGMENT, N(FRAGMENT), UNKNOWN_FRAGMENT},
    {"DataFile", &lance__table__data_file__descriptor, DATAFILE, N(DATAFILE), UNKNOWN_FRAGMENT},
    {"DeletionFile", &lance__table__deletion_file__descriptor, DELETION, N(DELETION), UNKNOWN_FRAGMENT},
    {"IndexMetadata", &lance__table__index_metadata__descriptor, INDEX, N(INDEX), UNKNOWN_INDEX},
    {"FragmentReuseIndexDetails", &lance__table__fragment_reuse_index_details__descriptor, FRI, N(FRI),
     UNKNOWN_FRI},
    {"FragmentReuseIndexDetails.InlineContent",
     &lance__table__fragment_reuse_index_details__inline_content__descriptor, FRI_CONTENT, N(FRI_CONTENT),
     UNKNOWN_FRI},
    {"Transaction", &lance__table__transaction__descriptor, TRANSACTION, N(TRANSACTION), UNKNOWN_TXN},
};

const bri_message_rules *bri_fields_messages(size_t *n) {
  *n = N(MESSAGES);
  return MESSAGES;
}

const char *bri_field_fate_name(bri_field_fate f) {
  static const char *const names[] = {"rewritten", "verbatim", "carried", "refused", "judged"};
  return (unsigned)f < N(names) ? names[f] : "?";
}

static const bri_message_rules *rules_of(const ProtobufCMessageDescriptor *d) {
  for (size_t i = 0; i < N(MESSAGES); i++)
    if (MESSAGES[i].desc == d) return &MESSAGES[i];
  return NULL;
}

const bri_field_rule *bri_field_rule_of(const ProtobufCMessageDescriptor *msg, uint32_t number) {
  const bri_message_rules *r = rules_of(msg);
  for (size_t i = 0; r && i < r->n_fields; i++)
    if (r->fields[i].number == number) return &r->fields[i];
  return NULL;
}

int bri_field_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd) {
  const char *base = (const char *)m;
  if (fd->label == PROTOBUF_C_LABEL_REPEATED) return *(const size_t *)(base + fd->quantifier_offset) > 0;
  if (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
    return *(const uint32_t *)(base + fd->quantifier_offset) == fd->id;
  switch (fd->type) {
  case PROTOBUF_C_TYPE_MESSAGE:
  case PROTOBUF_C_TYPE_STRING:
    return *(void *const *)(base + fd->offset) != NULL;
  default:
    return *(const protobuf_c_boolean *)(base + fd->quantifier_offset) != 0;
  }
}

/* The first refused field set in m (by its own rules), or NULL. */
static const bri_field_rule *first_refused(const ProtobufCMessage *m) {
  const bri_message_rules *r = rules_of(m->descriptor);
  for (size_t i = 0; r && i < r->n_fields; i++) {
    if (r->fields[i].fate != BRI_FIELD_REFUSED) continue;
    const ProtobufCFieldDescriptor *fd = protobuf_c_message_descriptor_get_field(m->descriptor, r->fields[i].number);
    if (fd && bri_field_present(m, fd)) return &r->fields[i];
  }
  return NULL;
}

static int refuse_set(const char *path, const char *where, const ProtobufCMessage *m, const bri_field_rule *f,
                      bri_error *err) {
  return bri_error_set(err, BRI_EUNSUPPORTED, "%s: %s%s%s field %u (%s) is set: %s; brid will not act on this version",
                       path, where, *where ? ": " : "", rules_of(m->descriptor)->name, f->number, f->name, f->what);
}

int bri_fields_check_manifest(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                              const char *path, bri_error *err) {
  const bri_field_rule *f = first_refused(&m->base);
  if (f) return refuse_set(path, "", &m->base, f, err);
  char where[160];
  for (size_t i = 0; i < m->n_fragments; i++) {
    const Lance__Table__DataFragment *fr = m->fragments[i];
    snprintf(where, sizeof where, "fragment %llu", (unsigned long long)fr->id);
    if ((f = first_refused(&fr->base))) return refuse_set(path, where, &fr->base, f, err);
    if (fr->deletion_file && (f = first_refused(&fr->deletion_file->base)))
      return refuse_set(path, where, &fr->deletion_file->base, f, err);
    for (size_t k = 0; k < fr->n_files; k++)
      if ((f = first_refused(&fr->files[k]->base))) return refuse_set(path, where, &fr->files[k]->base, f, err);
  }
  for (size_t i = 0; idx && i < idx->n_indices; i++)
    if ((f = first_refused(&idx->indices[i]->base))) {
      snprintf(where, sizeof where, "index %s", idx->indices[i]->name ? idx->indices[i]->name : "");
      return refuse_set(path, where, &idx->indices[i]->base, f, err);
    }
  return 0;
}

void bri_fields_drop_unknown(Lance__Table__Manifest *m) {
  for (size_t i = 0; i < m->base.n_unknown_fields; i++) free(m->base.unknown_fields[i].data);
  free(m->base.unknown_fields);
  m->base.unknown_fields = NULL;
  m->base.n_unknown_fields = 0;
}

/* ---- fields brid does not know ---- */

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

/* A varint DataFile field 8 (a size hint of an upstream branch that Lance
 * 14 never adopted, docs/format/bri.md 2): a fact about that one file,
 * never needed to read it. */
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

int bri_fields_check_removed(const Lance__Table__DataFragment *f, const char *path, bri_error *err) {
  return check_fragment(f, ANY, SKIP_BRI | SKIP_HINT,
                        "compaction removes this message and could not carry the field", path, err);
}

int bri_fields_check_files(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                           bri_fields_use use, const char *path, bri_error *err) {
  const char *why = use == BRI_FIELDS_CLONE
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

int bri_fields_check_txn(const Lance__Table__Transaction *t, const char *path, bri_error *err) {
  const ProtobufCMessageUnknownField *u = first(&t->base, ANY);
  if (!u) return 0;
  return refuse(path, "", &t->base, u,
                "brid cannot tell what that transaction changed, so it will not rebase over it",
                err);
}

int bri_fields_check_fri(const Lance__Table__IndexMetadata *x, const char *path, bri_error *err) {
  static const char why[] = "compaction rebuilds the fragment reuse index and could not carry the field";
  if (!x) return 0;
  char where[160];
  snprintf(where, sizeof where, "index %s", x->name ? x->name : "");
  const ProtobufCMessageUnknownField *u = first(&x->base, ANY);
  if (u) return refuse(path, where, &x->base, u, why, err);
  const Google__Protobuf__Any *d = x->index_details;
  if (!d || !d->value.len) return 0;
  Lance__Table__FragmentReuseIndexDetails *fd =
      lance__table__fragment_reuse_index_details__unpack(NULL, d->value.len, d->value.data);
  if (!fd) return 0; /* undecodable details are reported where the index is read (frag_reuse.h) */
  int rc = 0;
  const bri_field_rule *f;
  if ((u = first(&fd->base, ANY)))
    rc = refuse(path, where, &fd->base, u, why, err);
  else if (fd->content_case == LANCE__TABLE__FRAGMENT_REUSE_INDEX_DETAILS__CONTENT_INLINE && fd->inline_) {
    if ((u = first(&fd->inline_->base, ANY))) rc = refuse(path, where, &fd->inline_->base, u, why, err);
    else if ((f = first_refused(&fd->inline_->base))) rc = refuse_set(path, where, &fd->inline_->base, f, err);
  }
  lance__table__fragment_reuse_index_details__free_unpacked(fd, NULL);
  return rc;
}
