/* key.c: key columns, ordered as JavaScript orders them and matched against
 * a value given as text (see key.h).
 *
 * Strings are compared code point by code point, folded to UTF-16 code
 * units where the two orders differ (above U+FFFF), without converting the
 * string; invalid UTF-8 falls back to byte order from the first bad byte. */
#include "scan/key.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


bool bri_key_type_of(const char *f, bri_key_type *t) {
  static const char ints[] = "cCsSiIlL";
  if (f[0] && !f[1] && strchr(ints, f[0])) {
    int k = (int)(strchr(ints, f[0]) - ints);
    *t = (bri_key_type){k % 2 ? BRI_KEY_UINT : BRI_KEY_INT, 1 << (k / 2)};
    return true;
  }
  if (!strcmp(f, "tdD") || !strcmp(f, "tts") || !strcmp(f, "ttm")) return *t = (bri_key_type){BRI_KEY_INT, 4}, true;
  if (!strcmp(f, "tdm") || !strncmp(f, "ts", 2) || !strncmp(f, "tD", 2) || !strcmp(f, "ttu") || !strcmp(f, "ttn"))
    return *t = (bri_key_type){BRI_KEY_INT, 8}, true;
  if (!strcmp(f, "e")) return *t = (bri_key_type){BRI_KEY_FLOAT, 2}, true;
  if (!strcmp(f, "f")) return *t = (bri_key_type){BRI_KEY_FLOAT, 4}, true;
  if (!strcmp(f, "g")) return *t = (bri_key_type){BRI_KEY_FLOAT, 8}, true;
  if (!strcmp(f, "u")) return *t = (bri_key_type){BRI_KEY_STR, 4}, true;
  if (!strcmp(f, "U")) return *t = (bri_key_type){BRI_KEY_STR, 8}, true;
  return false;
}

static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -v : v;
}

void bri_key_get(const struct ArrowArray *a, int64_t i, bri_key_type t, bri_key *e) {
  e->is_null = !bri_arrow_valid(a, i);
  if (e->is_null) return;
  if (t.kind == BRI_KEY_STR) {
    size_t n;
    bri_arrow_bytes(t.width == 4 ? "u" : "U", a, i, &e->v.s.p, &n);
    e->v.s.n = n;
    return;
  }
  const uint8_t *b = (const uint8_t *)a->buffers[1] + (size_t)(a->offset + i) * (size_t)t.width;
  if (t.kind == BRI_KEY_FLOAT) {
    if (t.width == 2) {
      uint16_t h;
      memcpy(&h, b, 2);
      e->v.d = half_to_double(h);
    } else if (t.width == 4) {
      float f;
      memcpy(&f, b, 4);
      e->v.d = f;
    } else {
      memcpy(&e->v.d, b, 8);
    }
    return;
  }
  uint64_t u = 0;
  memcpy(&u, b, (size_t)t.width); /* little endian */
  if (t.kind == BRI_KEY_UINT) {
    e->v.u = u;
  } else if (t.width < 8) {
    int sh = 64 - 8 * t.width;
    e->v.i = (int64_t)(u << sh) >> sh;
  } else {
    e->v.i = (int64_t)u;
  }
}

/* Decodes one code point; false on invalid UTF-8. */
static bool utf8_next(const uint8_t *p, uint64_t n, uint64_t *i, uint32_t *cp) {
  uint8_t c = p[*i];
  int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (!len || *i + (uint64_t)len > n) return false;
  uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (int k = 1; k < len; k++) {
    if ((p[*i + (uint64_t)k] & 0xc0) != 0x80) return false;
    v = v << 6 | (p[*i + (uint64_t)k] & 0x3f);
  }
  *i += (uint64_t)len;
  *cp = v;
  return true;
}

static int bytes_cmp(const uint8_t *a, uint64_t an, const uint8_t *b, uint64_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? (c < 0 ? -1 : 1) : (an > bn) - (an < bn);
}

/* JavaScript's string order: UTF-16 code units. */
static int js_str_cmp(const uint8_t *a, uint64_t an, const uint8_t *b, uint64_t bn) {
  uint64_t i = 0, j = 0;
  while (i < an && j < bn) {
    if (a[i] == b[j] && a[i] < 0x80) {
      i++, j++;
      continue;
    }
    uint32_t ca, cb;
    uint64_t i0 = i, j0 = j;
    if (!utf8_next(a, an, &i, &ca) || !utf8_next(b, bn, &j, &cb))
      return bytes_cmp(a + i0, an - i0, b + j0, bn - j0);
    if (ca == cb) continue;
    uint32_t ua = ca < 0x10000 ? ca : 0xD800 + ((ca - 0x10000) >> 10);
    uint32_t ub = cb < 0x10000 ? cb : 0xD800 + ((cb - 0x10000) >> 10);
    if (ua != ub) return ua < ub ? -1 : 1;
    return ca < cb ? -1 : 1; /* same high surrogate: the low ones decide */
  }
  return (an - i > bn - j) - (an - i < bn - j);
}

int bri_key_cmp(bri_key_kind kind, const bri_key *a, const bri_key *b) {
  /* JavaScript compares null as 0 with numbers; strings put nulls first
   * (JS leaves that order undefined) and NaN goes last (likewise). */
  if (kind == BRI_KEY_INT) {
    int64_t p = a->is_null ? 0 : a->v.i, q = b->is_null ? 0 : b->v.i;
    return (p > q) - (p < q);
  }
  if (kind == BRI_KEY_UINT) {
    uint64_t p = a->is_null ? 0 : a->v.u, q = b->is_null ? 0 : b->v.u;
    return (p > q) - (p < q);
  }
  if (kind == BRI_KEY_FLOAT) {
    double p = a->is_null ? 0 : a->v.d, q = b->is_null ? 0 : b->v.d;
    if (isnan(p) || isnan(q)) return isnan(p) - isnan(q);
    return (p > q) - (p < q);
  }
  if (a->is_null || b->is_null) return (int)b->is_null - (int)a->is_null;
  return js_str_cmp(a->v.s.p, a->v.s.n, b->v.s.p, b->v.s.n);
}

int bri_key_parse(const char *text, bri_key_type t, bri_key *out, bri_error *err) {
  char *end;
  memset(out, 0, sizeof *out);
  errno = 0;
  if (t.kind == BRI_KEY_STR) {
    out->v.s.p = (const uint8_t *)text;
    out->v.s.n = strlen(text);
    return 0;
  }
  if (t.kind == BRI_KEY_FLOAT) {
    out->v.d = strtod(text, &end);
    if (end == text || *end || errno) return bri_error_set(err, BRI_EINVAL, "\"%s\" is not a number", text);
    return 0;
  }
  if (t.kind == BRI_KEY_UINT) {
    out->v.u = strtoull(text, &end, 10);
    bool fits = t.width == 8 || out->v.u < (uint64_t)1 << (8 * t.width);
    if (end == text || *end || errno || text[0] == '-' || !fits)
      return bri_error_set(err, BRI_EINVAL, "\"%s\" is not an integer from 0 to %llu", text,
                           t.width == 8 ? (unsigned long long)UINT64_MAX : ((1ULL << (8 * t.width)) - 1));
    return 0;
  }
  out->v.i = strtoll(text, &end, 10);
  int64_t lim = t.width == 8 ? INT64_MAX : ((int64_t)1 << (8 * t.width - 1)) - 1;
  if (end == text || *end || errno || out->v.i > lim || out->v.i < -lim - 1)
    return bri_error_set(err, BRI_EINVAL, "\"%s\" is not an integer from %lld to %lld", text, (long long)(-lim - 1),
                         (long long)lim);
  return 0;
}

/* The top-level field called column, or -1. */
static long top_field(const Lance__Table__Manifest *m, const char *column) {
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->parent_id == -1 && m->fields[i]->name && !strcmp(m->fields[i]->name, column)) return (long)i;
  return -1;
}

int bri_key_find(const bri_table *t, const bri_manifest *mf, const char *column, const char *value, bri_row *row,
                 bri_fragment_reader **rd, bri_error *err) {
  const Lance__Table__Manifest *m = mf->pb;
  *rd = NULL;
  long fi = top_field(m, column);
  if (fi < 0)
    return bri_error_set(err, BRI_ENOTFOUND, "%s: version %llu has no top-level column \"%s\"", t->root,
                         (unsigned long long)m->version, column);
  uint64_t matches = 0, before = 0, first[3];
  int rc = 0;
  for (size_t k = 0; !rc && k < m->n_fragments; k++) {
    bri_fragment_reader *r = NULL;
    struct ArrowArray arr = {0};
    struct ArrowSchema sch = {0};
    bri_key_type kt;
    bri_key want, have;
    rc = bri_fragment_open(t, mf, m->fragments[k], &r, err);
    if (!rc) rc = bri_fragment_read_field(r, m->fields[fi]->id, &arr, &sch, err);
    if (!rc && !bri_key_type_of(sch.format, &kt))
      rc = bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: column %s has Arrow type \"%s\"; keys must be integers, floats or strings", t->root,
                         column, sch.format);
    if (!rc && (rc = bri_key_parse(value, kt, &want, err)) != 0) bri_error_wrap(err, "%s: key %s", t->root, column);
    for (int64_t i = 0; !rc && i < arr.length; i++) {
      bri_key_get(&arr, i, kt, &have);
      if (have.is_null || bri_key_cmp(kt.kind, &have, &want) != 0) continue;
      if (matches < 3) first[matches] = before + (uint64_t)i;
      if (matches++ == 0) {
        bri_row_at(mf, k, r, (uint64_t)i, row);
        *rd = r;
      }
    }
    before += (uint64_t)(arr.length > 0 ? arr.length : 0);
    if (arr.release) arr.release(&arr);
    if (sch.release) sch.release(&sch);
    if (r != *rd) bri_fragment_close(r);
  }
  if (!rc && matches == 0)
    rc = bri_error_set(err, BRI_ENOTFOUND, "%s: no row of version %llu has %s = %s", t->root,
                       (unsigned long long)m->version, column, value);
  if (!rc && matches > 1)
    rc = bri_error_set(err, BRI_EINVAL, "%s: %llu rows have %s = %s (row offsets %llu, %llu%s); name one by its offset",
                       t->root, (unsigned long long)matches, column, value, (unsigned long long)first[0],
                       (unsigned long long)first[1], matches > 2 ? ", ..." : "");
  if (rc) {
    bri_fragment_close(*rd);
    *rd = NULL;
  }
  return rc;
}
