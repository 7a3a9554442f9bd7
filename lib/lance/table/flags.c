/* flags.c: names and checks of table feature flags (see flags.h). The names
 * are Lance 14's FLAG_* constants in lower case, so logs match Lance's docs
 * (bit 11 is Lance's SPILLED_ROW_LINEAGE, once UNSTABLE_SPILLED_ROW_LINEAGE). */
#include "lance/table/flags.h"

#include <stdio.h>
#include <string.h>

static const char *const NAMES[18] = {
    "deletion_files",
    "stable_row_ids",
    "use_v2_format_deprecated",
    "table_config",
    "base_paths",
    "disable_transaction_file",
    "unstable_data_overlay_files",
    "covered_index_metadata",
    "mixed_data_file_versions",
    "frag_reuse_with_stable_row_ids",
    "fragment_reuse_index",
    "spilled_row_lineage",
    "fragment_tree",
    "independent_covering_fields",
    "managed_blobs",
    "non_reusable_field_ids",
    "zone_write_seeds",
    "object_metadata",
};

const char *bri_flag_name(uint64_t bit) {
  if (bit == BRI_FLAG_BLOB_REUSE_INDEX) return "blob_reuse_index";
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (bit == (uint64_t)1 << i) return NAMES[i];
  return NULL;
}

static uint64_t lowest(uint64_t w) { return w & (~w + 1); }

static int check_word(uint64_t word, const char *which, const char *path, bri_error *err) {
  uint64_t bad = word & ~BRI_FLAGS_SUPPORTED;
  if (!bad) return 0;
  uint64_t bit = lowest(bad);
  const char *name = bri_flag_name(bit);
  return bri_error_set(err, BRI_EUNSUPPORTED,
                       "%s: %s feature flag %llu (%s) is not supported by brid", path, which,
                       (unsigned long long)bit, name ? name : "unknown to brid");
}

int bri_flags_check(uint64_t reader, uint64_t writer, const char *path, bri_error *err) {
  /* Lance 14's validate_paired_feature_flags: a paired bit in one word only
   * makes the manifest corrupt, and every version derived from it too. */
  uint64_t half = (reader ^ writer) & BRI_FLAGS_PAIRED;
  if (half) {
    uint64_t bit = lowest(half);
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: feature flag %llu (%s) is set in the %s word only; it must be set in "
                         "both or neither (Lance 14 refuses such a manifest as corrupt)",
                         path, (unsigned long long)bit, bri_flag_name(bit),
                         reader & bit ? "reader" : "writer");
  }
  /* validate_non_reusable_field_id_flags: bit 15 is a writer obligation */
  uint64_t misplaced = reader & BRI_FLAGS_WRITER_ONLY;
  if (misplaced) {
    uint64_t bit = lowest(misplaced);
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: feature flag %llu (%s) is set in the reader word; it is a writer flag "
                         "(Lance 14 refuses such a manifest as corrupt)",
                         path, (unsigned long long)bit, bri_flag_name(bit));
  }
  int rc = check_word(reader, "reader", path, err);
  return rc ? rc : check_word(writer, "writer", path, err);
}

void bri_flags_describe(uint64_t flags, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < 64 && used < len; i++) {
    uint64_t bit = (uint64_t)1 << i;
    if (!(flags & bit)) continue;
    const char *name = bri_flag_name(bit);
    int n = name ? snprintf(buf + used, len - used, "%s%s", used ? "," : "", name)
                 : snprintf(buf + used, len - used, "%sbit%d", used ? "," : "", i);
    if (n < 0) break;
    used += (size_t)n;
  }
}
