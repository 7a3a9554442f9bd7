/* enc_page.h: encoding one page of one column of a Lance 2.1/2.2 data file.
 *
 * Owns the write-side contract that mirrors page.h: a page is given as its
 * repetition/definition level streams, its layers (innermost first) and its
 * value slots (one per visible item) in the bri_values shape page.h
 * documents, and comes back as the serialized page encoding (the
 * google.protobuf.Any that ColumnMetadata.Page.encoding.direct holds) plus
 * the page buffers, ready to be appended to a file.
 *
 * Design choice: the layout is chosen the way Lance 12 chooses it
 * (docs/format/file.md section 5): all values null => AllNull (2.1) / Constant (2.2)
 * without a scalar; a packed struct with a variable-width child (Blob v2
 * descriptors) => FullZip + VariablePackedStruct; values shorter than 256
 * bytes => MiniBlock (Flat, InlineBitpacking, FixedSizeList, Variable, with a
 * General wrapper when the field asks for one); longer values => FullZip
 * (Flat, FixedSizeList, Variable, or per-value General(zstd) for values over
 * 32 KiB). When a mini-block chunk would break a hard limit of the format (a
 * u16 level count or level size, the 2.1 32 KiB chunk), the page falls back
 * to FullZip, which has no such limits. The encoder never reads the levels or
 * values it is given beyond n_levels / values->n, and checks that they agree
 * with the layers before encoding anything. */
#ifndef BRI_ENCODING_ENC_PAGE_H
#define BRI_ENCODING_ENC_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lance/encoding/page.h"
#include "util/error.h"

/* Most buffers a page encoding produces (MiniBlock with a repetition index). */
#define BRI_ENC_MAX_BUFFERS 4

typedef struct bri_enc_options {
  uint16_t file_minor;   /* 1 (2.1) or 2 (2.2) */
  uint32_t offset_bits;  /* VARIABLE values (and variable struct children): 32 for
                            utf8/binary, 64 for large_utf8/large_binary */
  int general_scheme;    /* 0, BRI_GENERAL_ZSTD or BRI_GENERAL_LZ4: the field's
                            lance-encoding:compression (mini-block General wrapper,
                            per-value compression of large values) */
  int general_level;     /* zstd level for general_scheme (0 = library default) */
  bool auto_zstd;        /* also try General(zstd) on mini-block chunks of fields
                            without lance-encoding:compression; kept where it pays */
  uint32_t dict_key_bits; /* an Arrow dictionary field: 8, 16, 32 or 64 (its key
                             width); every page gets a dictionary (Lance reads such
                             fields only from dictionary pages). 0 otherwise */
  bool force_fullzip;    /* tests: skip the MiniBlock choice */
} bri_enc_options;

/* One page to encode. rep/def follow page.h (NULL when absent); layers are
 * enum bri_repdef_layer values, innermost first; values->n value slots. */
typedef struct bri_enc_input {
  uint64_t n_rows;
  uint64_t n_levels;   /* == values->n when there are neither rep nor def levels */
  const uint16_t *rep;
  const uint16_t *def;
  size_t n_layers;
  const uint8_t *layers;
  const bri_values *values;
} bri_enc_input;

typedef struct bri_encoded_page {
  uint8_t *encoding;   /* serialized Any{/lance.encodings21.PageLayout} */
  size_t encoding_len;
  size_t n_buffers;
  uint8_t *buffers[BRI_ENC_MAX_BUFFERS]; /* NULL for empty buffers */
  uint64_t sizes[BRI_ENC_MAX_BUFFERS];
  const char *layout;  /* "mini_block", "full_zip", "constant" (static string) */
} bri_encoded_page;

/* Encodes in. On success the caller owns *out (bri_encoded_page_dispose); on
 * failure *out is empty. BRI_EINVAL: the input contradicts itself (levels
 * beyond the layers, slot count different from the visible levels, ...);
 * BRI_EUNSUPPORTED: a valid page this encoder cannot write (a 2.1 packed
 * struct with a variable child, FullZip of bit-packed booleans). */
int bri_page_encode(const bri_enc_input *in, const bri_enc_options *opt, bri_encoded_page *out,
                    bri_error *err);

void bri_encoded_page_dispose(bri_encoded_page *p);

/* Total bytes of the page's buffers. */
uint64_t bri_encoded_page_bytes(const bri_encoded_page *p);

#endif
