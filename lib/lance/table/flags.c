/* flags.c: names and checks of table feature flags (see flags.h). The names
 * are Lance's FLAG_* constants in lower case, so logs match Lance's docs. */
#include "lance/table/flags.h"

#include <stdio.h>
#include <string.h>

static const struct {
  uint64_t bit;
  const char *name;
} NAMES[] = {
    {BRI_FLAG_DELETION_FILES, "deletion_files"},
    {BRI_FLAG_STABLE_ROW_IDS, "stable_row_ids"},
    {BRI_FLAG_USE_V2_FORMAT_DEPRECATED, "use_v2_format_deprecated"},
    {BRI_FLAG_TABLE_CONFIG, "table_config"},
    {BRI_FLAG_BASE_PATHS, "base_paths"},
    {BRI_FLAG_DISABLE_TRANSACTION_FILE, "disable_transaction_file"},
    {(uint64_t)1 << 6, "unstable_data_overlay_files"},
    {(uint64_t)1 << 7, "covered_index_metadata"},
    {BRI_FLAG_MIXED_DATA_FILE_VERSIONS, "mixed_data_file_versions"},
    {(uint64_t)1 << 9, "frag_reuse_with_stable_row_ids"},
    {(uint64_t)1 << 10, "fragment_reuse_index"},
    {(uint64_t)1 << 11, "unstable_spilled_row_lineage"},
    {BRI_FLAG_FRAGMENT_TREE, "fragment_tree"},
    {(uint64_t)1 << 13, "independent_covering_fields"},
    {BRI_FLAG_MANAGED_BLOBS, "managed_blobs"},
    {BRI_FLAG_BLOB_REUSE_INDEX, "blob_reuse_index"},
};

const char *bri_flag_name(uint64_t bit) {
  for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0]; i++)
    if (NAMES[i].bit == bit) return NAMES[i].name;
  return NULL;
}

static int check_word(uint64_t word, const char *which, const char *path, bri_error *err) {
  uint64_t bad = word & ~BRI_FLAGS_SUPPORTED;
  if (!bad) return 0;
  uint64_t bit = bad & (~bad + 1); /* lowest unsupported bit */
  const char *name = bri_flag_name(bit);
  return bri_error_set(err, BRI_EUNSUPPORTED,
                       "%s: %s feature flag %llu (%s) is not supported by brid", path, which,
                       (unsigned long long)bit, name ? name : "unknown to brid");
}

int bri_flags_check(uint64_t reader, uint64_t writer, const char *path, bri_error *err) {
  /* A paired bit in one word only: newer Lance refuses the manifest as
   * corrupt (Lance 12.0.0 still opens it), and would refuse every version
   * brid derived from it, so brid refuses it before acting. */
  uint64_t half = (reader ^ writer) & BRI_FLAGS_PAIRED;
  if (half) {
    uint64_t bit = half & (~half + 1);
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: feature flag %llu (%s) is set in the %s word only; it must be set in "
                         "both or neither (Lance after 12.0.0 refuses such a manifest as corrupt)",
                         path, (unsigned long long)bit, bri_flag_name(bit),
                         reader & bit ? "reader" : "writer");
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
