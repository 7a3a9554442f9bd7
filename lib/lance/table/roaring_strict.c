/* roaring_strict.c: the strict Roaring decoder (see roaring_strict.h).
 *
 * One walker reads an image container by container, straight from the bytes
 * (no per-container table is allocated, so a header claiming 65536
 * containers costs nothing until the bytes are there): it checks the header
 * and every container's content against its declared cardinality, and when
 * given an output array also writes the values. Checking and expanding are
 * the same pass, so a value can be written only where the check of that
 * value passed. After a successful check CRoaring reads exactly the checked
 * bytes; its cardinality is compared with ours, which catches any reading of
 * the format where the two would disagree. */
#include "lance/table/roaring_strict.h"

#include <stdio.h>
#include <stdlib.h>

#include "util/bytes.h"

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

enum {
  OFFSETS_MIN = 4, /* 12347 images carry offsets only from 4 containers on */
  KEY_COUNT = 65536, /* 16-bit keys: at most this many containers */
};

/* Reads the header; *pos is then the first byte after it. */
static int header(const uint8_t *buf, size_t len, const char *what, size_t *n, bool *runs,
                  bool *offsets, size_t *pos, bri_error *err) {
  if (len < 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %zu bytes, too short for a Roaring bitmap cookie", what, len);
  uint32_t cookie = bri_le32(buf);
  if (cookie == BRI_ROARING_COOKIE_NO_RUNS) {
    if (len < 8)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset 4: Roaring container count missing (%zu bytes)", what, len);
    uint32_t c32 = bri_le32(buf + 4);
    if (c32 > KEY_COUNT)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset 4: Roaring bitmap claims %u containers, at most 65536 exist",
                           what, c32);
    *n = c32;
    *runs = false;
    *offsets = true;
    *pos = 8;
  } else if ((cookie & 0xFFFF) == BRI_ROARING_COOKIE_RUNS) {
    *n = (size_t)(cookie >> 16) + 1;
    *runs = true;
    *offsets = *n >= OFFSETS_MIN;
    size_t flag_bytes = (*n + 7) / 8;
    if (len - 4 < flag_bytes)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset 4: Roaring run flags for %zu containers need %zu bytes, "
                           "%zu remain",
                           what, *n, flag_bytes, len - 4);
    *pos = 4 + flag_bytes;
  } else {
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset 0: Roaring cookie %u, expected %d or %d (portable 32-bit "
                         "Roaring)",
                         what, cookie, BRI_ROARING_COOKIE_NO_RUNS, BRI_ROARING_COOKIE_RUNS);
  }
  size_t per = *offsets ? 8 : 4;
  if (*n > (len - *pos) / per)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Roaring header for %zu containers needs %zu bytes, only "
                         "%zu remain",
                         what, *pos, *n, *n * per, len - *pos);
  return 0;
}

/* A run container at pos (key hi, declared cardinality card): *pos moves
 * past it. */
static int run_container(const uint8_t *buf, size_t len, const char *what, size_t i, uint32_t hi,
                         uint32_t card, size_t *pos, uint32_t **out, bri_error *err) {
  size_t p = *pos;
  if (len - p < 2)
    return bri_error_set(err, BRI_ECORRUPT, "%s: offset %zu: Roaring run container %zu truncated",
                         what, p, i);
  size_t nruns = bri_le16(buf + p);
  if (nruns == 0 || nruns > (len - p - 2) / 4)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Roaring run container %zu claims %zu runs, %zu bytes "
                         "remain",
                         what, p, i, nruns, len - p - 2);
  const uint8_t *r = buf + p + 2;
  uint64_t sum = 0;
  int64_t prev_end = -1;
  for (size_t j = 0; j < nruns; j++) {
    uint32_t s = bri_le16(r + 4 * j), l = (uint32_t)bri_le16(r + 4 * j + 2) + 1;
    if ((int64_t)s <= prev_end)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %zu: Roaring run %zu of container %zu starts at %u, which "
                           "overlaps or precedes the run before it (ending at %lld)",
                           what, p + 2 + 4 * j, j, i, s, (long long)prev_end);
    if (s + l > 65536)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %zu: Roaring run %zu of container %zu (start %u, length "
                           "%u) runs past 65535",
                           what, p + 2 + 4 * j, j, i, s, l);
    if (sum + l > card)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %zu: Roaring run container %zu holds more than the %u "
                           "values its header says",
                           what, p + 2 + 4 * j, i, card);
    if (*out)
      for (uint32_t v = s; v < s + l; v++) *(*out)++ = hi | v;
    sum += l;
    prev_end = (int64_t)(s + l - 1);
  }
  if (sum != card)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Roaring run container %zu holds %llu values, its header "
                         "says %u",
                         what, p, i, ull(sum), card);
  *pos = p + 2 + 4 * nruns;
  return 0;
}

static int array_container(const uint8_t *buf, size_t len, const char *what, size_t i,
                           uint32_t hi, uint32_t card, size_t *pos, uint32_t **out,
                           bri_error *err) {
  size_t p = *pos, bytes = 2 * (size_t)card;
  if (len - p < bytes)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Roaring array container %zu needs %zu bytes, %zu remain",
                         what, p, i, bytes, len - p);
  for (uint32_t j = 1; j < card; j++) {
    uint16_t prev = bri_le16(buf + p + 2 * (j - 1)), v = bri_le16(buf + p + 2 * j);
    if (v <= prev)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %zu: Roaring array container %zu is not strictly "
                           "increasing (%u after %u)",
                           what, p + 2 * j, i, v, prev);
  }
  if (*out)
    for (uint32_t j = 0; j < card; j++) *(*out)++ = hi | bri_le16(buf + p + 2 * j);
  *pos = p + bytes;
  return 0;
}

static int bitmap_container(const uint8_t *buf, size_t len, const char *what, size_t i,
                            uint32_t hi, uint32_t card, size_t *pos, uint32_t **out,
                            bri_error *err) {
  size_t p = *pos;
  if (len - p < BRI_ROARING_BITMAP_BYTES)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Roaring bitmap container %zu needs %d bytes, %zu remain",
                         what, p, i, BRI_ROARING_BITMAP_BYTES, len - p);
  const uint8_t *bm = buf + p;
  uint64_t pop = 0;
  for (size_t w = 0; w < BRI_ROARING_BITMAP_BYTES / 8; w++)
    pop += (uint64_t)__builtin_popcountll(bri_le64(bm + 8 * w));
  if (pop != card)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: Roaring bitmap container %zu has %llu bits set, its "
                         "header says %u",
                         what, p, i, ull(pop), card);
  for (size_t w = 0; *out && w < BRI_ROARING_BITMAP_BYTES / 8; w++)
    for (uint64_t word = bri_le64(bm + 8 * w); word; word &= word - 1)
      *(*out)++ = hi | (uint32_t)(w * 64 + (size_t)__builtin_ctzll(word));
  *pos = p + BRI_ROARING_BITMAP_BYTES;
  return 0;
}

/* The walker: checks the image and, when out is not NULL, writes its values. */
static int walk(const uint8_t *buf, size_t len, const char *what, bool prefix,
                bri_roaring_info *info, uint32_t *out, bri_error *err) {
  size_t n = 0, pos = 0;
  bool runs = false, has_offsets = false;
  int rc = header(buf, len, what, &n, &runs, &has_offsets, &pos, err);
  if (rc) return rc;
  const uint8_t *run_flags = buf + 4;
  const uint8_t *desc = buf + pos;
  const uint8_t *offs = has_offsets ? desc + 4 * n : NULL;
  pos += (has_offsets ? 8 : 4) * n;
  uint64_t total = 0;
  uint32_t max = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t key = bri_le16(desc + 4 * i), card = (uint32_t)bri_le16(desc + 4 * i + 2) + 1;
    if (i && key <= bri_le16(desc + 4 * (i - 1)))
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %zu: Roaring container %zu has key %u after key %u, keys "
                           "must increase",
                           what, (size_t)(desc - buf) + 4 * i, i, key,
                           bri_le16(desc + 4 * (i - 1)));
    if (offs && bri_le32(offs + 4 * i) != pos)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %zu: Roaring container %zu is declared at offset %u but "
                           "starts at %zu",
                           what, (size_t)(offs - buf) + 4 * i, i, bri_le32(offs + 4 * i), pos);
    uint32_t hi = key << 16;
    size_t at = pos;
    if (runs && (run_flags[i / 8] >> (i % 8) & 1))
      rc = run_container(buf, len, what, i, hi, card, &pos, &out, err);
    else if (card <= BRI_ROARING_ARRAY_MAX)
      rc = array_container(buf, len, what, i, hi, card, &pos, &out, err);
    else
      rc = bitmap_container(buf, len, what, i, hi, card, &pos, &out, err);
    if (rc) return rc;
    /* the largest value of the last container: its content is checked, so
     * the last run, array element or set bit is the maximum */
    if (i == n - 1) {
      if (runs && (run_flags[i / 8] >> (i % 8) & 1)) {
        size_t nr = bri_le16(buf + at);
        max = hi | (bri_le16(buf + at + 2 + 4 * (nr - 1)) + bri_le16(buf + at + 4 * nr));
      } else if (card <= BRI_ROARING_ARRAY_MAX) {
        max = hi | bri_le16(buf + at + 2 * (card - 1));
      } else {
        size_t w = BRI_ROARING_BITMAP_BYTES / 8;
        while (!bri_le64(buf + at + 8 * (w - 1))) w--;
        max = hi | (uint32_t)((w - 1) * 64 + 63 - (size_t)__builtin_clzll(bri_le64(buf + at + 8 * (w - 1))));
      }
    }
    total += card;
  }
  if (!prefix && pos != len)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: %zu bytes follow the Roaring bitmap, expected the end",
                         what, pos, len - pos);
  *info = (bri_roaring_info){.len = pos, .cardinality = total, .max = max, .runs = runs};
  return 0;
}

int bri_roaring_check(const uint8_t *buf, size_t len, const char *what, bool prefix,
                      bri_roaring_info *info, bri_error *err) {
  static const uint8_t none[1];
  return walk(buf ? buf : none, buf ? len : 0, what, prefix, info, NULL, err);
}

void bri_roaring_to_array(const uint8_t *buf, const bri_roaring_info *info, uint32_t *out) {
  bri_roaring_info again;
  if (info->cardinality) walk(buf, info->len, "", false, &again, out, NULL);
}

/* CRoaring's reading of bytes bri_roaring_check accepted as info. */
static int croaring_read(const uint8_t *buf, const bri_roaring_info *info, const char *what,
                         roaring_bitmap_t **out, bri_error *err) {
  roaring_bitmap_t *b = roaring_bitmap_portable_deserialize_safe((const char *)buf, info->len);
  if (!b) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for a Roaring bitmap", what);
  if (roaring_bitmap_get_cardinality(b) != info->cardinality) {
    uint64_t got = roaring_bitmap_get_cardinality(b);
    roaring_bitmap_free(b);
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: CRoaring reads %llu values from the Roaring bitmap, the strict "
                         "reader %llu",
                         what, ull(got), ull(info->cardinality));
  }
  *out = b;
  return 0;
}

int bri_roaring_read(const uint8_t *buf, size_t len, const char *what, roaring_bitmap_t **out,
                     bri_error *err) {
  *out = NULL;
  bri_roaring_info info;
  int rc = bri_roaring_check(buf, len, what, false, &info, err);
  return rc ? rc : croaring_read(buf, &info, what, out, err);
}

int bri_index_bitmap_read(const Lance__Table__IndexMetadata *x, const char *file,
                          roaring_bitmap_t **out, bri_error *err) {
  char what[512];
  snprintf(what, sizeof what, "%s%sindex %s: fragment_bitmap", file ? file : "", file ? ": " : "",
           x->name ? x->name : "?");
  return bri_roaring_read(x->fragment_bitmap.data, x->fragment_bitmap.len, what, out, err);
}

void bri_treemap_free(bri_treemap_part *parts, size_t n) {
  for (size_t i = 0; parts && i < n; i++)
    if (parts[i].low) roaring_bitmap_free(parts[i].low);
  free(parts);
}

int bri_treemap_decode(const uint8_t *buf, size_t len, const char *what,
                       bri_treemap_part **parts, size_t *n, bri_error *err) {
  *parts = NULL;
  *n = 0;
  if (len < 8)
    return bri_error_set(err, BRI_ECORRUPT, "%s: %zu bytes, too short for a RoaringTreemap", what,
                         len);
  uint64_t count = bri_le64(buf);
  /* every part takes at least 4 (key) + 8 (smallest portable bitmap) bytes */
  if (count > (len - 8) / 12)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: RoaringTreemap claims %llu bitmaps in %zu bytes", what, ull(count),
                         len);
  bri_treemap_part *p = calloc(count ? count : 1, sizeof *p);
  if (!p) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t pos = 8;
  int rc = 0;
  for (size_t k = 0; k < count && !rc; k++) {
    if (len - pos < 4) {
      rc = bri_error_set(err, BRI_ECORRUPT, "%s: offset %zu: RoaringTreemap key %zu truncated",
                         what, pos, k);
      break;
    }
    p[k].high = bri_le32(buf + pos);
    if (k && p[k].high <= p[k - 1].high) {
      rc = bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %zu: RoaringTreemap keys not ascending (%u after %u)", what,
                         pos, p[k].high, p[k - 1].high);
      break;
    }
    pos += 4;
    char where[320];
    snprintf(where, sizeof where, "%s: bitmap %zu (fragment %u) at offset %zu of the RoaringTreemap",
             what, k, p[k].high, pos);
    bri_roaring_info info;
    rc = bri_roaring_check(buf + pos, len - pos, where, true, &info, err);
    if (!rc && info.cardinality == 0) rc = bri_error_set(err, BRI_ECORRUPT, "%s is empty", where);
    if (!rc) rc = croaring_read(buf + pos, &info, where, &p[k].low, err);
    if (!rc) pos += info.len;
  }
  if (!rc && pos != len)
    rc = bri_error_set(err, BRI_ECORRUPT, "%s: %zu trailing bytes after the RoaringTreemap", what,
                       len - pos);
  if (rc) {
    bri_treemap_free(p, (size_t)count); /* calloc: parts not reached are empty */
    return rc;
  }
  *parts = p;
  *n = (size_t)count;
  return 0;
}
