/* rowids.c: counting and decoding RowIdSequence / EncodedU64Array (see
 * rowids.h). Semantics follow Lance's Rust code where its docs disagree:
 * RangeWithHoles lists absolute values, RangeWithBitmap is LSB-first
 * (spec/table.md 5.9, verified on Lance 12 files). Error messages name the
 * segment index; callers prefix the file and the field. */
#include "lance/table/rowids.h"

#include <stdlib.h>

#include "util/bytes.h"

static int array_width(const Lance__Table__EncodedU64Array *a, const uint8_t **data, size_t *len,
                       uint64_t *base, unsigned *w, bri_error *err) {
  switch (a->array_case) {
  case LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U16_ARRAY:
    *data = a->u16_array->offsets.data, *len = a->u16_array->offsets.len;
    *base = a->u16_array->base_value, *w = 2;
    break;
  case LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U32_ARRAY:
    *data = a->u32_array->offsets.data, *len = a->u32_array->offsets.len;
    *base = a->u32_array->base_value, *w = 4;
    break;
  case LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY:
    *data = a->u64_array->values.data, *len = a->u64_array->values.len;
    *base = 0, *w = 8;
    break;
  default:
    *data = NULL, *len = 0, *base = 0, *w = 8; /* an unset array is empty */
    return 0;
  }
  if (*len % *w)
    return bri_error_set(err, BRI_ECORRUPT, "encoded u64 array of %zu bytes is not a multiple of %u",
                         *len, *w);
  return 0;
}

int bri_u64array_count(const Lance__Table__EncodedU64Array *a, uint64_t *count, bri_error *err) {
  const uint8_t *d;
  size_t len;
  uint64_t base;
  unsigned w;
  int rc = a ? array_width(a, &d, &len, &base, &w, err) : 0;
  if (rc) return rc;
  *count = a ? len / w : 0;
  return 0;
}

/* Writes the array's values to out (which has room for count). */
static int array_fill(const Lance__Table__EncodedU64Array *a, uint64_t *out, bri_error *err) {
  const uint8_t *d;
  size_t len;
  uint64_t base;
  unsigned w;
  if (!a) return 0;
  int rc = array_width(a, &d, &len, &base, &w, err);
  if (rc) return rc;
  for (size_t i = 0; i < len / w; i++) {
    uint64_t off = w == 2 ? bri_le16(d + 2 * i) : w == 4 ? bri_le32(d + 4 * i) : bri_le64(d + 8 * i);
    if (!bri_add_ok(base, off, &out[i]))
      return bri_error_set(err, BRI_ECORRUPT, "encoded u64 array: base %llu + offset %llu overflows",
                           (unsigned long long)base, (unsigned long long)off);
  }
  return 0;
}

static int segment_count(const Lance__Table__U64Segment *s, size_t idx, uint64_t *count,
                         bri_error *err) {
  switch (s->segment_case) {
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE:
    if (s->range->start > s->range->end) goto bad_range;
    *count = s->range->end - s->range->start;
    return 0;
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_HOLES: {
    const Lance__Table__U64Segment__RangeWithHoles *r = s->range_with_holes;
    if (r->start > r->end) goto bad_range;
    uint64_t holes;
    int rc = bri_u64array_count(r->holes, &holes, err);
    if (rc) return rc;
    if (holes > r->end - r->start)
      return bri_error_set(err, BRI_ECORRUPT, "segment %zu: %llu holes in a range of %llu", idx,
                           (unsigned long long)holes, (unsigned long long)(r->end - r->start));
    *count = r->end - r->start - holes;
    return 0;
  }
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_BITMAP: {
    const Lance__Table__U64Segment__RangeWithBitmap *r = s->range_with_bitmap;
    if (r->start > r->end) goto bad_range;
    uint64_t span = r->end - r->start;
    if (r->bitmap.len < span / 8 + (span % 8 != 0))
      return bri_error_set(err, BRI_ECORRUPT,
                           "segment %zu: bitmap of %zu bytes cannot cover a range of %llu", idx,
                           r->bitmap.len, (unsigned long long)span);
    uint64_t c = 0;
    for (uint64_t i = 0; i < span; i++) c += (r->bitmap.data[i / 8] >> (i % 8)) & 1;
    *count = c;
    return 0;
  }
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_SORTED_ARRAY:
    return bri_u64array_count(s->sorted_array, count, err);
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_ARRAY:
    return bri_u64array_count(s->array, count, err);
  default:
    return bri_error_set(err, BRI_ECORRUPT, "segment %zu has no known kind", idx);
  }
bad_range:
  return bri_error_set(err, BRI_ECORRUPT, "segment %zu: range start is after its end", idx);
}

int bri_u64seq_count(const Lance__Table__RowIdSequence *seq, uint64_t *count, bri_error *err) {
  uint64_t total = 0;
  for (size_t i = 0; i < seq->n_segments; i++) {
    uint64_t c;
    int rc = segment_count(seq->segments[i], i, &c, err);
    if (rc) return rc;
    if (!bri_add_ok(total, c, &total))
      return bri_error_set(err, BRI_ECORRUPT, "sequence length overflows 64 bits");
  }
  *count = total;
  return 0;
}

static int segment_fill(const Lance__Table__U64Segment *s, size_t idx, uint64_t *out,
                        uint64_t count, bri_error *err) {
  uint64_t k = 0;
  switch (s->segment_case) {
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE:
    for (uint64_t v = s->range->start; v < s->range->end; v++) out[k++] = v;
    return 0;
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_HOLES: {
    const Lance__Table__U64Segment__RangeWithHoles *r = s->range_with_holes;
    uint64_t nh;
    int rc = bri_u64array_count(r->holes, &nh, err);
    if (rc) return rc;
    uint64_t *holes = malloc((nh ? nh : 1) * sizeof *holes);
    if (!holes) return bri_error_set(err, BRI_ENOMEM, "out of memory decoding segment %zu", idx);
    if ((rc = array_fill(r->holes, holes, err)) != 0) {
      free(holes);
      return rc;
    }
    uint64_t h = 0;
    for (uint64_t v = r->start; v < r->end; v++) {
      if (h < nh && holes[h] == v) {
        h++;
        continue;
      }
      if (k == count) break;
      out[k++] = v;
    }
    free(holes);
    if (h != nh)
      return bri_error_set(err, BRI_ECORRUPT,
                           "segment %zu: holes are not sorted, unique values inside the range", idx);
    return 0;
  }
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_BITMAP: {
    const Lance__Table__U64Segment__RangeWithBitmap *r = s->range_with_bitmap;
    for (uint64_t i = 0; i < r->end - r->start; i++)
      if ((r->bitmap.data[i / 8] >> (i % 8)) & 1) out[k++] = r->start + i;
    return 0;
  }
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_SORTED_ARRAY: {
    int rc = array_fill(s->sorted_array, out, err);
    if (rc) return rc;
    for (uint64_t i = 1; i < count; i++)
      if (out[i] <= out[i - 1])
        return bri_error_set(err, BRI_ECORRUPT, "segment %zu: sorted array is not increasing at %llu",
                             idx, (unsigned long long)i);
    return 0;
  }
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_ARRAY:
    return array_fill(s->array, out, err);
  default:
    return bri_error_set(err, BRI_ECORRUPT, "segment %zu has no known kind", idx);
  }
}

int bri_u64seq_decode(const Lance__Table__RowIdSequence *seq, uint64_t max, uint64_t **vals,
                      size_t *n, bri_error *err) {
  *vals = NULL;
  *n = 0;
  uint64_t total;
  int rc = bri_u64seq_count(seq, &total, err);
  if (rc) return rc;
  if (total > max)
    return bri_error_set(err, BRI_ECORRUPT, "sequence holds %llu values, more than the %llu allowed",
                         (unsigned long long)total, (unsigned long long)max);
  uint64_t *out = malloc((total ? total : 1) * sizeof *out);
  if (!out) return bri_error_set(err, BRI_ENOMEM, "out of memory for %llu values", (unsigned long long)total);
  uint64_t k = 0;
  for (size_t i = 0; i < seq->n_segments; i++) {
    uint64_t c;
    segment_count(seq->segments[i], i, &c, NULL); /* validated above */
    if ((rc = segment_fill(seq->segments[i], i, out + k, c, err)) != 0) {
      free(out);
      return rc;
    }
    k += c;
  }
  *vals = out;
  *n = (size_t)total;
  return 0;
}

int bri_u64array_decode(const Lance__Table__EncodedU64Array *a, uint64_t max, uint64_t **vals,
                        size_t *n, bri_error *err) {
  *vals = NULL;
  *n = 0;
  uint64_t total;
  int rc = bri_u64array_count(a, &total, err);
  if (rc) return rc;
  if (total > max)
    return bri_error_set(err, BRI_ECORRUPT, "array holds %llu values, more than the %llu allowed",
                         (unsigned long long)total, (unsigned long long)max);
  uint64_t *out = malloc((total ? total : 1) * sizeof *out);
  if (!out) return bri_error_set(err, BRI_ENOMEM, "out of memory for %llu values", (unsigned long long)total);
  if ((rc = array_fill(a, out, err)) != 0) {
    free(out);
    return rc;
  }
  *vals = out;
  *n = (size_t)total;
  return 0;
}

int bri_u64seq_unpack(const uint8_t *buf, size_t len, Lance__Table__RowIdSequence **out,
                      bri_error *err) {
  *out = lance__table__row_id_sequence__unpack(NULL, len, buf);
  if (!*out)
    return bri_error_set(err, BRI_ECORRUPT, "row id sequence (%zu bytes) does not decode", len);
  return 0;
}
