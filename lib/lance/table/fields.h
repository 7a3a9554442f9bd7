/* fields.h: what a brid commit does with every field of the messages it
 * writes or copies, and with the fields it does not know.
 *
 * Each message brid writes into a manifest file or copies from one
 * (Manifest, DataFragment, DataFile, DeletionFile, IndexMetadata, the
 * fragment reuse index's details, Transaction) has one rule per field Lance
 * 14.0.2 defines: rewritten (brid computes it for the file it writes: the
 * offsets of the inline transaction and index section, the version stamp,
 * the flags), verbatim (kept as read, inside a message brid leaves alone),
 * carried (table state copied unchanged into the next version, such as the
 * field-id high-water mark), refused (brid will not act on a version that
 * sets it), or judged (read in another writer's transaction only). The
 * tables live in fields.c, are listed in docs/format/fields.md (a test
 * checks the two agree), and are what the checks below and the manifest
 * codec consult.
 *
 * Fields a later Lance adds (numbers Lance 14 does not define) arrive as
 * protobuf-c unknown fields. Their rule is per message: the Manifest's are
 * dropped when brid lays out a new manifest file (as Lance's own older
 * writers drop them: Lance guards every field whose loss matters with a
 * feature flag, which brid refuses when it does not know it, and a dropped
 * number can never be a stale offset into the new file); a fragment's are
 * kept while the fragment is carried and refused where the fragment is
 * removed; clone and cleanup refuse a length-delimited one that may name
 * files. Every refusal names the file, the message, the field number and
 * why, and comes before anything is written. */
#ifndef BRI_FIELDS_H
#define BRI_FIELDS_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "table.pb-c.h"
#include "transaction.pb-c.h"
#include "util/error.h"

/* DataFile field 8, length-delimited: brid's Blob Reuse Index (bri.proto,
 * docs/format/bri.md 2). brid's table.proto leaves it undeclared, so that
 * a varint field 8 (a size hint on an abandoned upstream branch) is kept as
 * an unknown field instead of failing the decode. */
#define BRI_DATAFILE_FIELD 8

typedef enum bri_field_fate {
  BRI_FIELD_REWRITTEN, /* computed by brid for what it writes */
  BRI_FIELD_VERBATIM,  /* kept as read inside a message brid leaves alone */
  BRI_FIELD_CARRIED,   /* table state copied unchanged into the next version */
  BRI_FIELD_REFUSED,   /* a version that sets it is refused */
  BRI_FIELD_JUDGED,    /* never written; read in other writers' transactions */
} bri_field_fate;

typedef struct bri_field_rule {
  uint32_t number;
  const char *name; /* Lance 14's name */
  bri_field_fate fate;
  const char *what; /* what brid does with it, for docs and refusals */
} bri_field_rule;

typedef struct bri_message_rules {
  const char *name;                       /* "Manifest", "DataFragment", ... */
  const ProtobufCMessageDescriptor *desc; /* brid's declaration of it */
  const bri_field_rule *fields;           /* ascending field numbers */
  size_t n_fields;
  const char *unknown; /* the rule for a field number Lance 14 does not define */
} bri_message_rules;

/* Every message with rules, in the order docs/format/fields.md lists them. */
const bri_message_rules *bri_fields_messages(size_t *n);

/* "rewritten", "verbatim", "carried", "refused", "judged". */
const char *bri_field_fate_name(bri_field_fate f);

/* The rule of field `number` of message `msg` (by descriptor), or NULL. */
const bri_field_rule *bri_field_rule_of(const ProtobufCMessageDescriptor *msg, uint32_t number);

/* True when field fd of message m is present (set, non-empty, or the
 * selected arm of its oneof). */
int bri_field_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *fd);

/* The first refused field set in m, its fragments (with their data and
 * deletion files) or the indices of idx (NULL: none): BRI_EUNSUPPORTED,
 * "PATH: fragment 3: DataFragment field 11 (overlays) is set: WHY". */
int bri_fields_check_manifest(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                              const char *path, bri_error *err);

/* Drops m's unknown fields: the codec calls it when it lays out a new
 * manifest file (the Manifest's rule for unknown fields, above). */
void bri_fields_drop_unknown(Lance__Table__Manifest *m);

/* A fragment a compaction removes (its rows move into fresh fragments):
 * an unknown field of the DataFragment, of one of its DataFiles (but the
 * BRI and the size hint, both field 8) or of its DeletionFile would be
 * lost with it. BRI_EUNSUPPORTED. */
int bri_fields_check_removed(const Lance__Table__DataFragment *f, const char *path, bri_error *err);

/* The fragment reuse index entry fri (NULL: none), which a compaction
 * replaces by a fresh one: an unknown field of the IndexMetadata, of its
 * details or of their inline content would be dropped, and tagged
 * transitions (Lance 14's index_version 1) are refused. BRI_EUNSUPPORTED. */
int bri_fields_check_fri(const Lance__Table__IndexMetadata *fri, const char *path, bri_error *err);

/* A clone gives every file a new base or a new copy, and cleanup deletes
 * what no retained version names: a length-delimited unknown field of the
 * Manifest, a DataFragment, a DataFile (but the BRI), a DeletionFile or an
 * IndexMetadata may name files that neither would see. BRI_EUNSUPPORTED,
 * the reason worded for the use. */
typedef enum bri_fields_use { BRI_FIELDS_CLONE, BRI_FIELDS_CLEANUP } bri_fields_use;
int bri_fields_check_files(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                           bri_fields_use use, const char *path, bri_error *err);

/* Another writer's transaction brid must judge before a rebase: an unknown
 * field of the Transaction itself may change what it did. BRI_EUNSUPPORTED. */
int bri_fields_check_txn(const Lance__Table__Transaction *t, const char *path, bri_error *err);

#endif
