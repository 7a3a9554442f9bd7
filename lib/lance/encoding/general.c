/* general.c: zstd and lz4 units with Lance's length prefixes (see general.h).
 *
 * Size rule: the declared length is checked against the cap before anything
 * is allocated, and the decompressor is given exactly that much room, so a
 * unit that expands further fails instead of growing. */
#include "lance/encoding/general.h"

#include <lz4.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "util/bytes.h"

const char *bri_general_scheme_name(int scheme) {
  switch (scheme) {
  case BRI_GENERAL_LZ4: return "lz4";
  case BRI_GENERAL_ZSTD: return "zstd";
  default: return "unknown";
  }
}

void bri_general_decoder_dispose(bri_general_decoder *dec) {
  if (dec && dec->zstd) {
    ZSTD_freeDCtx(dec->zstd);
    dec->zstd = NULL;
  }
}

static ZSTD_DCtx *dctx_get(bri_general_decoder *dec, ZSTD_DCtx **own) {
  *own = NULL;
  if (dec) {
    if (!dec->zstd) dec->zstd = ZSTD_createDCtx();
    return dec->zstd;
  }
  *own = ZSTD_createDCtx();
  return *own;
}

/* Bare zstd stream: Lance's legacy framing (docs/format/file.md 7.8). */
static int is_bare_zstd(const uint8_t *in, size_t len) {
  if (len < 8) return 1; /* too short to carry the u64 prefix */
  return bri_le32(in) == 0xFD2FB528u && (in[4] & 0x10) == 0;
}

static int zstd_bare(ZSTD_DCtx *dctx, const uint8_t *in, size_t len, size_t max_out,
                     uint8_t **out, size_t *out_len, bri_error *err) {
  unsigned long long declared = ZSTD_getFrameContentSize(in, len);
  if (declared == ZSTD_CONTENTSIZE_ERROR)
    return bri_error_set(err, BRI_ECORRUPT, "zstd: bare stream of %zu bytes has no valid frame header",
                         len);
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > max_out)
    return bri_error_set(err, BRI_ECORRUPT,
                         "zstd: frame declares %llu bytes, more than the %zu this unit may hold",
                         declared, max_out);
  size_t cap = 0, used = 0;
  uint8_t *buf = NULL;
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  ZSTD_inBuffer ib = {in, len, 0};
  for (;;) {
    if (used == cap) {
      if (cap >= max_out) {
        /* Full at the cap: only acceptable if the input is exhausted and the
         * frame is complete, which the next call would report as 0. */
        uint8_t probe;
        ZSTD_outBuffer pb = {&probe, 1, 0};
        size_t r = ZSTD_decompressStream(dctx, &pb, &ib);
        if (!ZSTD_isError(r) && pb.pos == 0 && r == 0 && ib.pos == ib.size) break;
        free(buf);
        return bri_error_set(err, BRI_ECORRUPT,
                             "zstd: bare stream expands past the %zu bytes this unit may hold",
                             max_out);
      }
      size_t ncap = cap ? cap * 2 : 4096;
      if (ncap > max_out) ncap = max_out;
      uint8_t *nb = realloc(buf, ncap ? ncap : 1);
      if (!nb) {
        free(buf);
        return bri_error_set(err, BRI_ENOMEM, "zstd: out of memory growing to %zu bytes", ncap);
      }
      buf = nb;
      cap = ncap;
    }
    ZSTD_outBuffer ob = {buf, cap, used};
    size_t r = ZSTD_decompressStream(dctx, &ob, &ib);
    used = ob.pos;
    if (ZSTD_isError(r)) {
      free(buf);
      return bri_error_set(err, BRI_ECORRUPT, "zstd: %s", ZSTD_getErrorName(r));
    }
    if (r == 0 && ib.pos == ib.size) break;
    if (ib.pos == ib.size && ob.pos < ob.size) {
      free(buf);
      return bri_error_set(err, BRI_ECORRUPT, "zstd: stream of %zu bytes ends inside a frame", len);
    }
  }
  *out = buf;
  *out_len = used;
  return 0;
}

int bri_general_decompress(bri_general_decoder *dec, int scheme, const uint8_t *in, size_t len,
                           size_t max_out, uint8_t **out, size_t *out_len, bri_error *err) {
  *out = NULL;
  *out_len = 0;
  if (scheme == BRI_GENERAL_ZSTD) {
    if (len == 0) return 0; /* Lance: an empty unit is empty */
    ZSTD_DCtx *own, *dctx = dctx_get(dec, &own);
    if (!dctx) return bri_error_set(err, BRI_ENOMEM, "zstd: cannot create a decoder");
    int rc;
    if (is_bare_zstd(in, len)) {
      rc = zstd_bare(dctx, in, len, max_out, out, out_len, err);
    } else {
      uint64_t declared = bri_le64(in);
      if (declared > max_out) {
        rc = bri_error_set(err, BRI_ECORRUPT,
                           "zstd: unit declares %llu uncompressed bytes, more than the %zu it "
                           "may hold",
                           (unsigned long long)declared, max_out);
      } else {
        uint8_t *buf = malloc(declared ? (size_t)declared : 1);
        if (!buf) {
          rc = bri_error_set(err, BRI_ENOMEM, "zstd: cannot allocate %llu bytes",
                             (unsigned long long)declared);
        } else {
          size_t r = ZSTD_decompressDCtx(dctx, buf, (size_t)declared, in + 8, len - 8);
          if (ZSTD_isError(r)) {
            free(buf);
            rc = bri_error_set(err, BRI_ECORRUPT,
                               "zstd: unit declaring %llu bytes does not decompress: %s",
                               (unsigned long long)declared, ZSTD_getErrorName(r));
          } else if (r != declared) {
            free(buf);
            rc = bri_error_set(err, BRI_ECORRUPT,
                               "zstd: unit declares %llu bytes but decompresses to %zu",
                               (unsigned long long)declared, r);
          } else {
            *out = buf;
            *out_len = r;
            rc = 0;
          }
        }
      }
    }
    if (own) ZSTD_freeDCtx(own);
    return rc;
  }
  if (scheme == BRI_GENERAL_LZ4) {
    if (len < 4)
      return bri_error_set(err, BRI_ECORRUPT,
                           "lz4: unit of %zu bytes is too short for its 4-byte length", len);
    uint32_t declared = bri_le32(in);
    if (declared > max_out || declared > (uint32_t)LZ4_MAX_INPUT_SIZE || len - 4 > INT32_MAX)
      return bri_error_set(err, BRI_ECORRUPT,
                           "lz4: unit declares %u uncompressed bytes, more than the %zu it may "
                           "hold",
                           declared, max_out);
    uint8_t *buf = malloc(declared ? declared : 1);
    if (!buf) return bri_error_set(err, BRI_ENOMEM, "lz4: cannot allocate %u bytes", declared);
    int r = LZ4_decompress_safe((const char *)in + 4, (char *)buf, (int)(len - 4), (int)declared);
    if (r < 0 || (uint32_t)r != declared) {
      free(buf);
      return bri_error_set(err, BRI_ECORRUPT,
                           "lz4: unit declaring %u bytes is not a valid LZ4 block of that size",
                           declared);
    }
    *out = buf;
    *out_len = declared;
    return 0;
  }
  return bri_error_set(err, BRI_EUNSUPPORTED,
                       "General compression scheme %d is neither lz4 (1) nor zstd (2)", scheme);
}

int bri_general_compress(int scheme, int level, const uint8_t *in, size_t len, uint8_t **out,
                         size_t *out_len, bri_error *err) {
  *out = NULL;
  *out_len = 0;
  if (scheme == BRI_GENERAL_ZSTD) {
    size_t bound = ZSTD_compressBound(len);
    uint8_t *buf = malloc(8 + bound);
    if (!buf) return bri_error_set(err, BRI_ENOMEM, "zstd: cannot allocate %zu bytes", 8 + bound);
    bri_put_le64(buf, len);
    size_t r = ZSTD_compress(buf + 8, bound, in, len, level);
    if (ZSTD_isError(r)) {
      free(buf);
      return bri_error_set(err, BRI_EINVAL, "zstd: %s", ZSTD_getErrorName(r));
    }
    *out = buf;
    *out_len = 8 + r;
    return 0;
  }
  if (scheme == BRI_GENERAL_LZ4) {
    if (len > (size_t)LZ4_MAX_INPUT_SIZE)
      return bri_error_set(err, BRI_EINVAL, "lz4: %zu bytes is above the LZ4 block limit", len);
    int bound = LZ4_compressBound((int)len);
    uint8_t *buf = malloc(4 + (size_t)bound);
    if (!buf) return bri_error_set(err, BRI_ENOMEM, "lz4: cannot allocate %d bytes", bound);
    bri_put_le32(buf, (uint32_t)len);
    int r = LZ4_compress_default((const char *)in, (char *)buf + 4, (int)len, bound);
    if (r <= 0 && len > 0) {
      free(buf);
      return bri_error_set(err, BRI_EINVAL, "lz4: compression failed");
    }
    *out = buf;
    *out_len = 4 + (size_t)r;
    return 0;
  }
  return bri_error_set(err, BRI_EINVAL, "General compression scheme %d is neither lz4 nor zstd",
                       scheme);
}
