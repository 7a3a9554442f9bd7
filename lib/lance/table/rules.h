/* rules.h: the invariants every manifest Lance commits keeps.
 *
 * Lance's build_manifest and commit path (transaction.rs, io/commit.rs) leave
 * every version in a shape its readers rely on: fragments sorted by id (the
 * row-address maps of delete and take are built with from_sorted_iter, which
 * fails with "integers are ordered up to the 0th element" otherwise), unique
 * ids below the max_fragment_id high-water mark, physical_rows and deletion
 * counts recorded, row id and version sequences as long as their fragments,
 * index bitmaps that never name an id not yet handed out, feature flags that
 * match the content. brid's commits must keep them too: bri_commit refuses a
 * manifest that breaks one (bri_rules_enforce), and `brictl verify` reports
 * every broken rule of every version it checks.
 *
 * Each rule has a short name (the BRI_RULE_* strings below, listed with what they
 * check in docs/rules.md) that problems and errors carry. The checks here
 * read only the manifest, its index section and its transaction; rules that
 * need other files (deletion file contents, data file row counts, unique live
 * row ids) live in ops/verify.c. */
#ifndef BRI_RULES_H
#define BRI_RULES_H

#include <stddef.h>

#include "table.pb-c.h"
#include "transaction.pb-c.h"
#include "util/error.h"

#define BRI_RULE_FRAGMENTS_SORTED "fragments-sorted"
#define BRI_RULE_FRAGMENT_IDS "fragment-ids"       /* unique, below 2^32 */
#define BRI_RULE_MAX_FRAGMENT_ID "max-fragment-id"
#define BRI_RULE_PHYSICAL_ROWS "physical-rows"
#define BRI_RULE_DELETIONS "deletion-count"
#define BRI_RULE_STORAGE_VERSION "storage-version"
#define BRI_RULE_COLUMN_INDICES "column-indices"
#define BRI_RULE_ROW_IDS "row-ids"
#define BRI_RULE_ROW_VERSIONS "row-versions"
#define BRI_RULE_INDEX_BITMAP "index-bitmap"
#define BRI_RULE_INDEX_UUID "index-uuid"
#define BRI_RULE_FEATURE_FLAGS "feature-flags"
#define BRI_RULE_REWRITE_APPLIED "rewrite-applied"
#define BRI_RULE_HIGH_WATER "high-water-marks"

/* Called once per broken rule: its name and what is wrong (with ids). */
typedef void (*bri_rule_report)(void *user, const char *rule, const char *what);

/* Checks m and its index section (NULL: none) against every rule that needs
 * only them. Returns the number of broken rules reported. */
size_t bri_rules_check_manifest(const Lance__Table__Manifest *m,
                                const Lance__Table__IndexSection *idx, bri_rule_report report,
                                void *user);

/* Checks that txn, the transaction that produced m, is what m shows (a
 * Rewrite's old fragments gone, its new ones present). */
size_t bri_rules_check_transaction(const Lance__Table__Manifest *m,
                                   const Lance__Table__Transaction *txn, bri_rule_report report,
                                   void *user);

/* Checks m against prev, an earlier version of the same table: the
 * high-water marks (max_fragment_id, next_row_id) never go down. */
size_t bri_rules_check_succession(const Lance__Table__Manifest *prev,
                                  const Lance__Table__Manifest *m, bri_rule_report report,
                                  void *user);

/* Puts m's fragments in ascending id order, as Lance's build_manifest does
 * for every operation (a Rewrite's new fragments, whose ids are the highest,
 * end up after every fragment it left alone). */
void bri_manifest_sort_fragments(Lance__Table__Manifest *m);

/* The first broken rule of m (with idx and txn, either may be NULL) as
 * BRI_EINVAL: "rule NAME: what". 0 when m keeps every rule. */
int bri_rules_enforce(const Lance__Table__Manifest *m, const Lance__Table__IndexSection *idx,
                      const Lance__Table__Transaction *txn, bri_error *err);

#endif
