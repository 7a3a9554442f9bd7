/* rowids.c: counting and decoding RowIdSequence / EncodedU64Array (see
 * rowids.h). Semantics follow Lance's Rust code where its docs disagree:
 * RangeWithHoles lists absolute values, RangeWithBitmap is LSB-first
 * (docs/format/table.md 5.9, verified on Lance 12 files). Error messages name the
 * segment index; callers prefix the file and the field. */
#include "lance/table/rowids.h"

#include <stdbool.h>
#include <stdint.h>
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
  if (total > SIZE_MAX / sizeof(uint64_t)) /* the byte count would wrap */
    return bri_error_set(err, BRI_ENOMEM, "%llu values do not fit in memory", (unsigned long long)total);
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

/* Largest value of one segment (*any false when it holds none). */
static int segment_max(const Lance__Table__U64Segment *s, size_t idx, uint64_t *max, bool *any,
                       bri_error *err) {
  uint64_t c;
  int rc = segment_count(s, idx, &c, err);
  *any = c > 0;
  if (rc || !c) return rc;
  switch (s->segment_case) {
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE:
    *max = s->range->end - 1;
    return 0;
  case LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE_WITH_BITMAP: {
    const Lance__Table__U64Segment__RangeWithBitmap *r = s->range_with_bitmap;
    for (uint64_t i = r->end - r->start; i-- > 0;)
      if ((r->bitmap.data[i / 8] >> (i % 8)) & 1) {
        *max = r->start + i;
        break;
      }
    return 0;
  }
  default: {
    /* holes and arrays: their values are stored, so decoding costs what they take */
    uint64_t *v = malloc(c * sizeof *v);
    if (!v) return bri_error_set(err, BRI_ENOMEM, "out of memory decoding segment %zu", idx);
    rc = segment_fill(s, idx, v, c, err);
    *max = 0;
    for (uint64_t i = 0; !rc && i < c; i++) *max = v[i] > *max ? v[i] : *max;
    free(v);
    return rc;
  }
  }
}

int bri_u64seq_max(const Lance__Table__RowIdSequence *seq, uint64_t *max, bool *any, bri_error *err) {
  *max = 0, *any = false;
  for (size_t i = 0; i < seq->n_segments; i++) {
    uint64_t m = 0;
    bool some;
    int rc = segment_max(seq->segments[i], i, &m, &some, err);
    if (rc) return rc;
    if (some && (!*any || m > *max)) *max = m;
    *any |= some;
  }
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

/* A U64Segment holding v[0..n) as an array (sorted when increasing), with
 * the narrowest offsets that fit above the minimum. Buffers are malloc'd
 * into *bytes for the caller to free after packing. */
static int array_segment(const uint64_t *v, size_t n, Lance__Table__U64Segment *seg,
                         Lance__Table__EncodedU64Array *arr,
                         Lance__Table__EncodedU64Array__U16Array *a16,
                         Lance__Table__EncodedU64Array__U32Array *a32,
                         Lance__Table__EncodedU64Array__U64Array *a64, uint8_t **bytes) {
  uint64_t lo = UINT64_MAX, hi = 0;
  bool sorted = true;
  for (size_t i = 0; i < n; i++) {
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
    if (i && v[i] <= v[i - 1]) sorted = false;
  }
  unsigned w = hi - lo <= UINT16_MAX ? 2 : hi - lo <= UINT32_MAX ? 4 : 8;
  *bytes = malloc(n * w + 1);
  if (!*bytes) return BRI_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (w == 2) bri_put_le16(*bytes + 2 * i, (uint16_t)(v[i] - lo));
    else if (w == 4) bri_put_le32(*bytes + 4 * i, (uint32_t)(v[i] - lo));
    else bri_put_le64(*bytes + 8 * i, v[i]);
  }
  lance__table__encoded_u64_array__init(arr);
  if (w == 2) {
    lance__table__encoded_u64_array__u16_array__init(a16);
    a16->has_base_value = 1, a16->base_value = lo;
    a16->has_offsets = 1, a16->offsets.data = *bytes, a16->offsets.len = 2 * n;
    arr->array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U16_ARRAY, arr->u16_array = a16;
  } else if (w == 4) {
    lance__table__encoded_u64_array__u32_array__init(a32);
    a32->has_base_value = 1, a32->base_value = lo;
    a32->has_offsets = 1, a32->offsets.data = *bytes, a32->offsets.len = 4 * n;
    arr->array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U32_ARRAY, arr->u32_array = a32;
  } else {
    lance__table__encoded_u64_array__u64_array__init(a64);
    a64->has_values = 1, a64->values.data = *bytes, a64->values.len = 8 * n;
    arr->array_case = LANCE__TABLE__ENCODED_U64_ARRAY__ARRAY_U64_ARRAY, arr->u64_array = a64;
  }
  lance__table__u64_segment__init(seg);
  if (sorted) seg->segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_SORTED_ARRAY, seg->sorted_array = arr;
  else seg->segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_ARRAY, seg->array = arr;
  return 0;
}

static int pack_message(const ProtobufCMessage *m, uint8_t **out, size_t *len, bri_error *err) {
  *len = protobuf_c_message_get_packed_size(m);
  *out = malloc(*len ? *len : 1);
  if (!*out) return bri_error_set(err, BRI_ENOMEM, "out of memory");
  protobuf_c_message_pack(m, *out);
  return 0;
}

int bri_u64seq_pack(const uint64_t *v, size_t n, uint8_t **out, size_t *len, bri_error *err) {
  size_t runs = 0;
  bool has_max = false;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || v[i] != v[i - 1] + 1) runs++;
    has_max |= v[i] == UINT64_MAX;
  }
  Lance__Table__RowIdSequence seq;
  lance__table__row_id_sequence__init(&seq);
  int rc = 0;
  /* fragmented: one array segment is smaller. A Range's end is exclusive, so
   * a run through 2^64-1 has no Range (fuzz_rowids: it encoded start > end):
   * such values go into the array too. */
  if (has_max || (runs && n / runs < 8)) {
    Lance__Table__U64Segment seg, *segp = &seg;
    Lance__Table__EncodedU64Array arr;
    Lance__Table__EncodedU64Array__U16Array a16;
    Lance__Table__EncodedU64Array__U32Array a32;
    Lance__Table__EncodedU64Array__U64Array a64;
    uint8_t *bytes = NULL;
    if (array_segment(v, n, &seg, &arr, &a16, &a32, &a64, &bytes))
      return bri_error_set(err, BRI_ENOMEM, "out of memory");
    seq.segments = &segp, seq.n_segments = 1;
    rc = pack_message(&seq.base, out, len, err);
    free(bytes);
    return rc;
  }
  Lance__Table__U64Segment *segs = calloc(runs + 1, sizeof *segs);
  Lance__Table__U64Segment__Range *ranges = calloc(runs + 1, sizeof *ranges);
  Lance__Table__U64Segment **ptrs = calloc(runs + 1, sizeof *ptrs);
  if (!segs || !ranges || !ptrs) rc = bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    if (i == 0 || v[i] != v[i - 1] + 1) {
      lance__table__u64_segment__init(&segs[k]);
      lance__table__u64_segment__range__init(&ranges[k]);
      ranges[k].has_start = ranges[k].has_end = 1;
      ranges[k].start = v[i];
      segs[k].segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE;
      segs[k].range = &ranges[k];
      ptrs[k] = &segs[k];
      k++;
    }
    ranges[k - 1].end = v[i] + 1;
  }
  if (!rc) {
    seq.segments = ptrs, seq.n_segments = runs;
    rc = pack_message(&seq.base, out, len, err);
  }
  free(segs), free(ranges), free(ptrs);
  return rc;
}

/* Checks that the runs of s cover exactly n_rows rows; *max_version is the
 * highest version a run names (0 without runs). */
static int versions_cover(const Lance__Table__RowDatasetVersionSequence *s, uint64_t n_rows,
                          uint64_t *max_version, bri_error *err) {
  int rc = 0;
  uint64_t total = 0;
  *max_version = 0;
  for (size_t i = 0; !rc && i < s->n_runs; i++) {
    uint64_t c = 0;
    if (!s->runs[i]->span) rc = bri_error_set(err, BRI_ECORRUPT, "version run %zu has no span", i);
    else rc = segment_count(s->runs[i]->span, i, &c, err);
    if (!rc && c > n_rows - total)
      rc = bri_error_set(err, BRI_ECORRUPT, "version runs cover more than the fragment's %llu rows",
                         (unsigned long long)n_rows);
    if (!rc) total += c;
    if (!rc && c && s->runs[i]->version > *max_version) *max_version = s->runs[i]->version;
  }
  if (!rc && total != n_rows)
    rc = bri_error_set(err, BRI_ECORRUPT, "version runs cover %llu of the fragment's %llu rows",
                       (unsigned long long)total, (unsigned long long)n_rows);
  return rc;
}

int bri_versions_check(const uint8_t *buf, size_t len, uint64_t n_rows, uint64_t *max_version,
                       bri_error *err) {
  Lance__Table__RowDatasetVersionSequence *s =
      lance__table__row_dataset_version_sequence__unpack(NULL, len, buf);
  if (!s) return bri_error_set(err, BRI_ECORRUPT, "row version sequence (%zu bytes) does not decode", len);
  int rc = versions_cover(s, n_rows, max_version, err);
  lance__table__row_dataset_version_sequence__free_unpacked(s, NULL);
  return rc;
}

int bri_versions_unpack(const uint8_t *buf, size_t len, uint64_t n_rows, uint64_t **versions,
                        bri_error *err) {
  *versions = NULL;
  Lance__Table__RowDatasetVersionSequence *s =
      lance__table__row_dataset_version_sequence__unpack(NULL, len, buf);
  if (!s) return bri_error_set(err, BRI_ECORRUPT, "row version sequence (%zu bytes) does not decode", len);
  /* Count first: the runs must cover exactly n_rows before anything is
   * allocated for them, and n_rows values must fit in memory's byte count
   * (fuzz_rowids found 2^61 + k rows wrapping the malloc size: heap overflow). */
  uint64_t max_version;
  int rc = versions_cover(s, n_rows, &max_version, err);
  if (!rc && n_rows > SIZE_MAX / sizeof(uint64_t))
    rc = bri_error_set(err, BRI_ENOMEM, "%llu row versions do not fit in memory",
                       (unsigned long long)n_rows);
  uint64_t *v = rc ? NULL : malloc((n_rows ? n_rows : 1) * sizeof *v);
  if (!rc && !v) rc = bri_error_set(err, BRI_ENOMEM, "out of memory for %llu row versions",
                                    (unsigned long long)n_rows);
  uint64_t at = 0;
  for (size_t i = 0; !rc && i < s->n_runs; i++) {
    uint64_t c = 0;
    segment_count(s->runs[i]->span, i, &c, NULL); /* validated above */
    for (uint64_t k = 0; k < c; k++) v[at++] = s->runs[i]->version;
  }
  lance__table__row_dataset_version_sequence__free_unpacked(s, NULL);
  if (rc) {
    free(v);
    return rc;
  }
  *versions = v;
  return 0;
}

int bri_versions_pack(const uint64_t *v, size_t n, uint8_t **out, size_t *len, bri_error *err) {
  size_t runs = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || v[i] != v[i - 1]) runs++;
  Lance__Table__RowDatasetVersionRun *r = calloc(runs + 1, sizeof *r), **rp = calloc(runs + 1, sizeof *rp);
  Lance__Table__U64Segment *segs = calloc(runs + 1, sizeof *segs);
  Lance__Table__U64Segment__Range *ranges = calloc(runs + 1, sizeof *ranges);
  int rc = r && rp && segs && ranges ? 0 : bri_error_set(err, BRI_ENOMEM, "out of memory");
  size_t k = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    if (i == 0 || v[i] != v[i - 1]) {
      lance__table__row_dataset_version_run__init(&r[k]);
      lance__table__u64_segment__init(&segs[k]);
      lance__table__u64_segment__range__init(&ranges[k]);
      ranges[k].has_start = ranges[k].has_end = 1;
      ranges[k].start = i;
      segs[k].segment_case = LANCE__TABLE__U64_SEGMENT__SEGMENT_RANGE;
      segs[k].range = &ranges[k];
      r[k].span = &segs[k];
      r[k].has_version = 1, r[k].version = v[i];
      rp[k] = &r[k];
      k++;
    }
    ranges[k - 1].end = i + 1;
  }
  if (!rc) {
    Lance__Table__RowDatasetVersionSequence s;
    lance__table__row_dataset_version_sequence__init(&s);
    s.runs = rp, s.n_runs = runs;
    rc = pack_message(&s.base, out, len, err);
  }
  free(r), free(rp), free(segs), free(ranges);
  return rc;
}
