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
    {(uint64_t)1 << 8, "mixed_data_file_versions"},
    {(uint64_t)1 << 9, "frag_reuse_with_stable_row_ids"},
    {(uint64_t)1 << 10, "fragment_reuse_index"},
    {(uint64_t)1 << 11, "semantic_types"},
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
