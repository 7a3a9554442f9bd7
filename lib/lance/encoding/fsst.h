/* fsst.h: FSST string decompression with Lance's symbol table format
 * (docs/format/file.md section 7.6).
 *
 * The table is `u64 header | n symbols as u64 | n lengths as u8` (Lance pads it
 * to 2312 bytes); header = "FSST" magic << 32 | encoder_switch << 24 |
 * suffix_lim << 16 | terminator << 8 | n. encoder_switch 0 means the strings
 * were stored uncompressed. A compressed string is a code sequence: code 255
 * escapes one literal byte, code c < n emits the first len[c] bytes of
 * symbol[c]. Any other code, an escape at the end, a symbol length outside
 * 1..8 or a table shorter than its symbol count is an error. */
#ifndef BRI_ENCODING_FSST_H
#define BRI_ENCODING_FSST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

typedef struct bri_fsst_table {
  uint8_t symbols[256][8]; /* symbol bytes, first byte first */
  uint8_t lens[256];
  unsigned n_symbols;
  bool compressed; /* encoder_switch: false => strings are stored raw */
} bri_fsst_table;

int bri_fsst_table_parse(const uint8_t *buf, size_t len, bri_fsst_table *t, bri_error *err);

/* Exact decoded length of one string (validates every code). Raw tables: len. */
int bri_fsst_decoded_len(const bri_fsst_table *t, const uint8_t *in, size_t len, uint64_t *out_len,
                         bri_error *err);

/* Decodes one string into out (cap bytes); fails rather than write past cap.
 * *written receives the decoded length. */
int bri_fsst_decode(const bri_fsst_table *t, const uint8_t *in, size_t len, uint8_t *out,
                    size_t cap, size_t *written, bri_error *err);

#endif
