/* datafile.c: opening and validating a Lance v2 data file (see datafile.h).
 *
 * Open reads the tail of the file once (the last 64 KiB, which holds all the
 * metadata of ordinary files; larger metadata regions get one more read),
 * then checks the container from the outside in: footer magic and version,
 * the order and bounds of the tables, the global buffer table, global buffer
 * 0 (FileDescriptor), every ColumnMetadata, every page's buffers and its
 * PageLayout. Every offset and length read from the file is checked against
 * the bytes it claims before it is used; counts are bounded by the bytes that
 * would hold them before anything is allocated for them. protobuf messages go
 * through bri_pb_unpack, which walks the wire format first (bounded nesting,
 * offsets in messages) and only then lets protobuf-c decode.
 *
 * The same code serves files and memory images: all reads go through
 * read_range, a ranged read of the storage interface (pread on a local
 * disk, a ranged GET on S3) or memcpy from the image. The bytes read at open
 * (the tail, at least the whole metadata region) stay with the file, and
 * read_range serves any range inside them from memory: a small file (most
 * fragments of a table that grows by appends) costs one read in all, and
 * global buffer 0 and the pages near the end of a large one none. */
#include "lance/file/datafile.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/bytes.h"
#include "util/fsutil.h"
#include "util/pbcheck.h"

enum {
  FOOTER_LEN = 40,
  TAIL_READ = 64 * 1024,
  ALIGN = 64, /* page buffers and global buffers start at multiples of 64 in >= 2.1 */
};

struct bri_datafile {
  char *path;
  bri_sfile *f;       /* NULL for memory images */
  const uint8_t *mem; /* borrowed image, or NULL */
  uint64_t size;
  bri_datafile_footer footer;
  uint8_t *tail;      /* file bytes [tail_start, size), read at open */
  uint64_t tail_start;
  const uint8_t *meta; /* inside tail: file bytes [footer.column_meta_start, size) */
  uint64_t *gb_pos, *gb_size;
  Lance__File__FileDescriptor *desc;
  const uint8_t *schema_bytes; /* the FileDescriptor's Schema as stored, or NULL */
  size_t schema_len;
  Lance__File__V2__ColumnMetadata **cms;
  bri_column *cols;
  bri_arena arena; /* every decoded message and array above, freed at close */
  bri_pbcache *cache; /* opts.cache: shared schema and layouts, or NULL */
};

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

static int read_range(const bri_datafile *df, uint64_t off, uint64_t len, void *buf,
                      bri_error *err) {
  if (!bri_range_ok(off, len, df->size))
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: read of %llu bytes at offset %llu is outside the %llu-byte file",
                         df->path, ull(len), ull(off), ull(df->size));
  if (len == 0) return 0;
  if (df->mem) {
    memcpy(buf, df->mem + off, (size_t)len);
    return 0;
  }
  if (df->tail && off >= df->tail_start) {
    memcpy(buf, df->tail + (off - df->tail_start), (size_t)len);
    return 0;
  }
  return bri_sfile_read(df->f, off, buf, (size_t)len, err);
}

const char *bri_datafile_layout_name(const Lance__Encodings21__PageLayout *layout) {
  switch (layout ? layout->layout_case : LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT__NOT_SET) {
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT: return "mini_block";
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT: return "constant";
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT: return "full_zip";
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT: return "blob";
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_SPARSE_LAYOUT: return "sparse";
  default: return "unset";
  }
}

/* Rewrites a message "<path>: <detail>" as "<path>: <context>: <detail>" so
 * that a protobuf error keeps the file first and says which message failed. */
static int add_context(bri_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int add_context(bri_error *err, const char *path, const char *fmt, ...) {
  if (!err) return BRI_ECORRUPT;
  char ctx[256], old[sizeof err->msg];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ctx, sizeof ctx, fmt, ap);
  va_end(ap);
  size_t pl = strlen(path);
  const char *detail = err->msg;
  if (strncmp(detail, path, pl) == 0 && strncmp(detail + pl, ": ", 2) == 0) detail += pl + 2;
  snprintf(old, sizeof old, "%s", detail);
  char full[sizeof err->msg + sizeof ctx + 4096];
  snprintf(full, sizeof full, "%s: %s: %s", path, ctx, old);
  size_t n = strlen(full);
  if (n >= sizeof err->msg) n = sizeof err->msg - 1; /* truncate, never overflow */
  memcpy(err->msg, full, n);
  err->msg[n] = '\0';
  return err->code;
}

/* ------------------------------------------------------------ footer */

/* Version policy, docs/format/file.md section 1.2: only the structural 2.1 and 2.2
 * formats are read; everything else is named so the user knows why. */
static int check_version(const char *path, uint64_t at, uint16_t major, uint16_t minor,
                         bri_error *err) {
  if (major == 2 && (minor == 1 || minor == 2)) return 0;
  if (major == 0 && (minor == 1 || minor == 2))
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: footer at offset %llu: legacy Lance v1 file (footer version %u.%u); "
                         "only file versions 2.1 and 2.2 are supported",
                         path, ull(at), major, minor);
  if (major == 0 && minor == 3)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: footer at offset %llu: Lance file version 2.0 (footer version 0.3); "
                         "only file versions 2.1 and 2.2 are supported",
                         path, ull(at));
  if (major == 2 && minor == 3)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: footer at offset %llu: Lance file version 2.3 (unstable); "
                         "only file versions 2.1 and 2.2 are supported",
                         path, ull(at));
  return bri_error_set(err, BRI_EUNSUPPORTED,
                       "%s: footer at offset %llu: unknown Lance file version %u.%u; "
                       "only file versions 2.1 and 2.2 are supported",
                       path, ull(at), major, minor);
}

/* Decodes the footer from the last 40 bytes and checks the table layout:
 *   column_meta_start <= cmo_table_start, cmo_table_start + 16*C == gbo_table_start
 *   (Lance locates the CMO table by counting back from the GBO table),
 *   gbo_table_start + 16*G <= footer start, G >= 1 (global buffer 0 is the schema). */
static int parse_footer(bri_datafile *df, const uint8_t *p, bri_error *err) {
  const char *path = df->path;
  uint64_t at = df->size - FOOTER_LEN;
  if (memcmp(p + 36, "LANC", 4) != 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: offset %llu: expected the magic \"LANC\" at the end of the file, "
                         "found %02x %02x %02x %02x: not a Lance data file",
                         path, ull(df->size - 4), p[36], p[37], p[38], p[39]);
  bri_datafile_footer *f = &df->footer;
  f->column_meta_start = bri_le64(p);
  f->cmo_table_start = bri_le64(p + 8);
  f->gbo_table_start = bri_le64(p + 16);
  f->num_global_buffers = bri_le32(p + 24);
  f->num_columns = bri_le32(p + 28);
  f->major = bri_le16(p + 32);
  f->minor = bri_le16(p + 34);
  int rc = check_version(path, at, f->major, f->minor, err);
  if (rc) return rc;

  if (f->gbo_table_start > at)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: footer at offset %llu: global buffer table start %llu is past the "
                         "footer",
                         path, ull(at), ull(f->gbo_table_start));
  if (f->cmo_table_start > f->gbo_table_start)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: footer at offset %llu: column metadata offset table start %llu is "
                         "after the global buffer table start %llu",
                         path, ull(at), ull(f->cmo_table_start), ull(f->gbo_table_start));
  if (f->column_meta_start > f->cmo_table_start)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: footer at offset %llu: column metadata start %llu is after the "
                         "column metadata offset table start %llu",
                         path, ull(at), ull(f->column_meta_start), ull(f->cmo_table_start));
  if ((uint64_t)f->num_columns * 16 != f->gbo_table_start - f->cmo_table_start)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: footer at offset %llu: %u columns need a %llu-byte offset table, "
                         "but the tables at %llu and %llu leave %llu bytes",
                         path, ull(at), f->num_columns, ull((uint64_t)f->num_columns * 16),
                         ull(f->cmo_table_start), ull(f->gbo_table_start),
                         ull(f->gbo_table_start - f->cmo_table_start));
  if (f->num_global_buffers == 0)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: footer at offset %llu: no global buffers; global buffer 0 must hold "
                         "the schema",
                         path, ull(at));
  if ((uint64_t)f->num_global_buffers * 16 > at - f->gbo_table_start)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: footer at offset %llu: %u global buffers need %llu bytes of offset "
                         "table at %llu, only %llu bytes remain before the footer",
                         path, ull(at), f->num_global_buffers,
                         ull((uint64_t)f->num_global_buffers * 16), ull(f->gbo_table_start),
                         ull(at - f->gbo_table_start));
  if (df->size - f->column_meta_start > BRI_DATAFILE_MAX_METADATA)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: footer at offset %llu: %llu bytes of metadata from offset %llu is "
                         "more than the %llu brid reads",
                         path, ull(at), ull(df->size - f->column_meta_start),
                         ull(f->column_meta_start), ull(BRI_DATAFILE_MAX_METADATA));
  return 0;
}

/* ------------------------------------------------------------ global buffers */

static int parse_global_buffers(bri_datafile *df, bri_error *err) {
  const bri_datafile_footer *f = &df->footer;
  size_t n = f->num_global_buffers;
  df->gb_pos = bri_arena_alloc(&df->arena, n * sizeof *df->gb_pos);
  df->gb_size = bri_arena_alloc(&df->arena, n * sizeof *df->gb_size);
  if (!df->gb_pos || !df->gb_size)
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %zu global buffers", df->path, n);
  const uint8_t *t = df->meta + (f->gbo_table_start - f->column_meta_start);
  for (size_t i = 0; i < n; i++) {
    uint64_t pos = bri_le64(t + 16 * i), size = bri_le64(t + 16 * i + 8);
    uint64_t entry = f->gbo_table_start + 16 * i;
    /* Global buffers are written before the column metadata (docs/format/file.md 1). */
    if (!bri_range_ok(pos, size, f->column_meta_start))
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: global buffer table entry %zu at offset %llu: buffer [%llu, +%llu) "
                           "is not inside the data region [0, %llu)",
                           df->path, i, ull(entry), ull(pos), ull(size), ull(f->column_meta_start));
    if (pos % ALIGN != 0)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: global buffer table entry %zu at offset %llu: position %llu is not "
                           "a multiple of %d",
                           df->path, i, ull(entry), ull(pos), ALIGN);
    df->gb_pos[i] = pos;
    df->gb_size[i] = size;
  }
  return 0;
}

/* Finds the schema (field 1, once) and the row count (field 2, at most
 * once) in FileDescriptor bytes with nothing else in them: the shape every
 * Lance writer produces. false for anything else (then the bytes are
 * decoded whole and judged by the decoder). */
static bool descriptor_parts(const uint8_t *buf, size_t len, size_t *schema_off,
                             size_t *schema_len, bool *has_length, uint64_t *length) {
  size_t pos = 0;
  int schemas = 0, lengths = 0;
  *has_length = false;
  while (pos < len) {
    uint64_t key, v;
    if (!bri_pb_varint(buf, len, &pos, &key)) return false;
    if (key == (1 << 3 | 2)) {
      if (!bri_pb_varint(buf, len, &pos, &v) || v > len - pos) return false;
      *schema_off = pos, *schema_len = (size_t)v;
      pos += (size_t)v;
      schemas++;
    } else if (key == (2 << 3 | 0)) {
      if (!bri_pb_varint(buf, len, &pos, length)) return false;
      *has_length = true;
      lengths++;
    } else {
      return false;
    }
  }
  return schemas == 1 && lengths <= 1;
}

/* The descriptor from the shared cache: the Schema decoded once for every
 * file with the same bytes, the row count this file's own. 0 when served. */
static int cached_descriptor(bri_datafile *df, bri_pbcache *cache, const uint8_t *buf,
                             size_t len) {
  size_t off, slen;
  bool has_length;
  uint64_t length;
  if (!cache || !descriptor_parts(buf, len, &off, &slen, &has_length, &length)) return -1;
  const uint8_t *key;
  const Lance__File__Schema *s = (const Lance__File__Schema *)bri_pbcache_get(
      cache, &lance__file__schema__descriptor, buf + off, slen, &key);
  Lance__File__FileDescriptor *d = s ? bri_arena_alloc(&df->arena, sizeof *d) : NULL;
  if (!d) return -1;
  lance__file__file_descriptor__init(d);
  d->schema = (Lance__File__Schema *)s; /* shared: never modified or freed here */
  d->has_length = has_length;
  d->length = has_length ? length : 0;
  df->desc = d;
  df->schema_bytes = key;
  df->schema_len = slen;
  return 0;
}

/* Keeps the bytes of the descriptor's schema when they can be told apart:
 * files with equal bytes have equal schemas, which lets page copy check a
 * schema once for all the files of a table (bri_datafile_schema_bytes). */
static void keep_schema_bytes(bri_datafile *df, const uint8_t *buf, size_t len) {
  size_t off, slen;
  bool has_length;
  uint64_t length;
  uint8_t *copy;
  if (!descriptor_parts(buf, len, &off, &slen, &has_length, &length) ||
      !(copy = bri_arena_alloc(&df->arena, slen)))
    return;
  memcpy(copy, buf + off, slen);
  df->schema_bytes = copy;
  df->schema_len = slen;
}

static int parse_descriptor(bri_datafile *df, bri_pbcache *cache, bri_error *err) {
  uint64_t pos = df->gb_pos[0], size = df->gb_size[0];
  if (size > BRI_DATAFILE_MAX_METADATA)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: global buffer 0 at offset %llu is %llu bytes, more than the %llu "
                         "brid reads",
                         df->path, ull(pos), ull(size), ull(BRI_DATAFILE_MAX_METADATA));
  uint8_t *buf = NULL;
  const uint8_t *bytes;
  int rc = 0;
  if (df->mem || (df->tail && pos >= df->tail_start)) {
    bytes = df->mem ? df->mem + pos : df->tail + (pos - df->tail_start); /* read at open */
  } else {
    if (!(buf = malloc(size ? (size_t)size : 1)))
      return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %llu bytes of schema",
                           df->path, ull(size));
    rc = read_range(df, pos, size, buf, err);
    bytes = buf;
  }
  if (!rc && cached_descriptor(df, cache, bytes, (size_t)size) != 0) {
    ProtobufCMessage *m;
    rc = bri_pb_unpack_in(bri_arena_pb(&df->arena), &lance__file__file_descriptor__descriptor,
                          bytes, (size_t)size, pos, df->path, "file descriptor (global buffer 0)",
                          &m, err);
    if (rc)
      add_context(err, df->path, "file descriptor (global buffer 0 at offset %llu, %llu bytes)",
                  ull(pos), ull(size));
    else
      df->desc = (Lance__File__FileDescriptor *)m;
    if (!rc) keep_schema_bytes(df, bytes, (size_t)size);
  }
  free(buf);
  if (rc) return rc;
  if (!df->desc->schema)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: the file descriptor at offset %llu (global buffer 0) has no schema",
                         df->path, ull(pos));
  return 0;
}

/* ------------------------------------------------------------ columns */

/* Finds the next length-delimited field `id` at or after *pos and returns
 * its payload window; used only to give errors a file offset for bytes
 * protobuf-c copied out of their context. Stops quietly on malformed bytes
 * (bri_pb_unpack has validated them already). */
static bool next_field(const uint8_t *buf, size_t len, size_t *pos, uint64_t id, size_t *off,
                       size_t *sub) {
  while (*pos < len) {
    uint64_t key, v;
    if (!bri_pb_varint(buf, len, pos, &key)) return false;
    switch (key & 7) {
    case 0: if (!bri_pb_varint(buf, len, pos, &v)) return false; break;
    case 1: if (len - *pos < 8) return false; *pos += 8; break;
    case 5: if (len - *pos < 4) return false; *pos += 4; break;
    case 2:
      if (!bri_pb_varint(buf, len, pos, &v) || v > len - *pos) return false;
      *pos += (size_t)v;
      if ((key >> 3) == id) {
        *off = *pos - (size_t)v;
        *sub = (size_t)v;
        return true;
      }
      break;
    default: return false;
    }
  }
  return false;
}

/* File offset of the PageLayout bytes inside one Page message (the last
 * occurrence wins, as in protobuf), or page_off when they cannot be found. */
static uint64_t layout_offset(const uint8_t *page, size_t len, uint64_t page_off) {
  static const uint64_t path[] = {4, 2, 1, 2}; /* encoding, direct, encoding bytes, Any.value */
  size_t o = 0, l = len;
  for (size_t i = 0; page && i < sizeof path / sizeof *path; i++) {
    size_t pos = 0, o2, l2, lo = 0, ll = 0;
    bool found = false;
    while (next_field(page + o, l, &pos, path[i], &o2, &l2)) {
      lo = o2;
      ll = l2;
      found = true;
    }
    if (!found) return page_off;
    o += lo;
    l = ll;
  }
  return page_off + o;
}

/* Where a column's or a page's metadata is, for messages only: formatted
 * when something is wrong, never on the way to a successful open. */
typedef struct where_at {
  size_t c, p;     /* column, page (p == SIZE_MAX: the column itself) */
  uint64_t offset; /* the column's ColumnMetadata */
} where_at;

static const char *where_str(const where_at *w, char *buf, size_t n) {
  if (w->p == SIZE_MAX)
    snprintf(buf, n, "column %zu (metadata at offset %llu)", w->c, ull(w->offset));
  else
    snprintf(buf, n, "column %zu (metadata at offset %llu): page %zu", w->c, ull(w->offset), w->p);
  return buf;
}
#define WHERE(w) where_str((w), (char[160]){0}, 160)

/* The two fields of an Any (type_url = 1, value = 2; the last of each wins,
 * unknown fields are skipped as protobuf does), read in place: false for
 * bytes that are no Any. */
static bool any_parts(const uint8_t *b, size_t len, const uint8_t **url, size_t *url_len,
                      const uint8_t **val, size_t *val_len) {
  size_t pos = 0;
  *url = *val = NULL;
  *url_len = *val_len = 0;
  while (pos < len) {
    uint64_t key, v;
    if (!bri_pb_varint(b, len, &pos, &key) || (key >> 3) == 0) return false;
    switch (key & 7) {
    case 0:
      if (!bri_pb_varint(b, len, &pos, &v)) return false;
      break;
    case 1:
    case 5:
      if (len - pos < ((key & 7) == 1 ? 8u : 4u)) return false;
      pos += (key & 7) == 1 ? 8 : 4;
      break;
    case 2:
      if (!bri_pb_varint(b, len, &pos, &v) || v > len - pos) return false;
      if ((key >> 3) == 1) *url = b + pos, *url_len = (size_t)v;
      if ((key >> 3) == 2) *val = b + pos, *val_len = (size_t)v;
      pos += (size_t)v;
      break;
    default:
      return false;
    }
    if (((key >> 3) == 1 || (key >> 3) == 2) && (key & 7) != 2) return false; /* wrong wire type */
  }
  return true;
}

/* The Any bytes of Encoding{direct{...}}: checks the location (the decoded
 * message's; column_fast only accepts a plain direct encoding). */
static int direct_bytes(const bri_datafile *df, const Lance__File__V2__Encoding *enc,
                        const char *want_url, const where_at *w, const uint8_t **bytes, size_t *len,
                        bri_error *err) {
  if (!enc)
    return bri_error_set(err, BRI_ECORRUPT, "%s: %s: no encoding (expected a direct Any \"%s\")",
                         df->path, WHERE(w), want_url);
  if (enc->location_case == LANCE__FILE__V2__ENCODING__LOCATION_INDIRECT)
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: %s: deferred (indirect) encodings are not supported (Lance writes "
                         "direct encodings)",
                         df->path, WHERE(w));
  if (enc->location_case != LANCE__FILE__V2__ENCODING__LOCATION_DIRECT || !enc->direct)
    return bri_error_set(err, BRI_ECORRUPT, "%s: %s: encoding is %s, expected a direct Any \"%s\"",
                         df->path, WHERE(w),
                         enc->location_case == LANCE__FILE__V2__ENCODING__LOCATION_NONE ? "none"
                                                                                        : "unset",
                         want_url);
  const Lance__File__V2__DirectEncoding *d = enc->direct;
  *bytes = d->has_encoding ? d->encoding.data : NULL;
  *len = d->has_encoding ? d->encoding.len : 0;
  return 0;
}

/* The value of an Any behind the exact type URL want_url (in place). */
static int any_value(const bri_datafile *df, const uint8_t *bytes, size_t len, const char *want_url,
                     const where_at *w, const uint8_t **value, size_t *value_len, bri_error *err) {
  const uint8_t *url;
  size_t url_len;
  if (!any_parts(bytes, len, &url, &url_len, value, value_len))
    return bri_error_set(err, BRI_ECORRUPT, "%s: %s: the %zu encoding bytes are not a valid Any",
                         df->path, WHERE(w), len);
  if (url_len != strlen(want_url) || memcmp(url, want_url, url_len) != 0)
    return bri_error_set(err, BRI_ECORRUPT, "%s: %s: Any type URL is \"%.*s\", expected \"%s\"",
                         df->path, WHERE(w), url_len > 200 ? 200 : (int)url_len,
                         url ? (const char *)url : "", want_url);
  return 0;
}

/* Checks one buffer list (offsets and sizes as parallel arrays) against the
 * data region; page buffers must also be 64-aligned (Lance asserts it >= 2.1). */
static int check_buffers(const bri_datafile *df, const where_at *w, size_t n_off,
                         const uint64_t *off, size_t n_size, const uint64_t *size, bool aligned,
                         bri_error *err) {
  if (n_off != n_size)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s: %zu buffer offsets but %zu buffer sizes (expected one size per "
                         "offset)",
                         df->path, WHERE(w), n_off, n_size);
  uint64_t end = df->footer.column_meta_start;
  for (size_t b = 0; b < n_off; b++) {
    if (!bri_range_ok(off[b], size[b], end))
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: %s: buffer %zu [%llu, +%llu) is not inside the data region "
                           "[0, %llu) of the %llu-byte file",
                           df->path, WHERE(w), b, ull(off[b]), ull(size[b]), ull(end),
                           ull(df->size));
    if (aligned && off[b] % ALIGN != 0)
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: %s: buffer %zu offset %llu is not a multiple of %d",
                           df->path, WHERE(w), b, ull(off[b]), ALIGN);
  }
  return 0;
}

/* File offset of the PageLayout bytes of page p of column metadata bytes
 * (whose file offset is cm_off), for messages: found by walking the Page
 * messages (field 2) up to p. */
static uint64_t page_layout_offset(const uint8_t *bytes, size_t len, uint64_t cm_off, size_t p) {
  size_t scan = 0, po = 0, pl = 0;
  for (size_t i = 0; i <= p; i++)
    if (!next_field(bytes, len, &scan, 2, &po, &pl)) return cm_off;
  return layout_offset(bytes + po, pl, cm_off + po);
}

/* ---- ColumnMetadata without protobuf-c (the shape Lance writes) */

/* A cursor over protobuf wire bytes. */
typedef struct wire {
  const uint8_t *b;
  size_t len, pos;
} wire;

/* The next field's number, wire type and (length-delimited) payload or
 * (varint) value; false at the end or on malformed bytes. */
static bool wire_next(wire *x, uint32_t *id, int *wt, const uint8_t **sub, size_t *sub_len,
                      uint64_t *v) {
  uint64_t key;
  if (x->pos >= x->len || !bri_pb_varint(x->b, x->len, &x->pos, &key) || key >> 3 == 0 ||
      key >> 3 > 536870911)
    return false;
  *id = (uint32_t)(key >> 3), *wt = (int)(key & 7);
  if (*wt == 0) return bri_pb_varint(x->b, x->len, &x->pos, v);
  if (*wt != 2 || !bri_pb_varint(x->b, x->len, &x->pos, v) || *v > x->len - x->pos) return false;
  *sub = x->b + x->pos, *sub_len = (size_t)*v;
  x->pos += (size_t)*v;
  return true;
}

/* A packed repeated uint64 into the arena; false when malformed. */
static bool wire_packed(bri_datafile *df, const uint8_t *b, size_t len, const uint64_t **out,
                        size_t *n) {
  size_t count = 0;
  for (size_t i = 0; i < len; i++) count += !(b[i] & 0x80); /* one end byte per varint */
  uint64_t *v = bri_arena_alloc(&df->arena, (count ? count : 1) * sizeof *v);
  if (!v) return false;
  size_t pos = 0, k = 0;
  while (pos < len)
    if (k == count || !bri_pb_varint(b, len, &pos, &v[k++])) return false;
  *out = v, *n = k;
  return k == count;
}

/* The Any bytes of an Encoding that is exactly {direct {encoding}}; false
 * for anything else (the general decoder then judges it). */
static bool wire_direct(const uint8_t *b, size_t len, const uint8_t **any, size_t *any_len) {
  wire e = {b, len, 0}, d;
  uint32_t id;
  int wt;
  const uint8_t *sub;
  size_t sl;
  uint64_t v;
  if (!wire_next(&e, &id, &wt, &sub, &sl, &v) || id != 2 || wt != 2 || e.pos != len) return false;
  d = (wire){sub, sl, 0};
  if (!wire_next(&d, &id, &wt, any, any_len, &v) || id != 1 || wt != 2 || d.pos != sl) return false;
  return true;
}

/* Fills col and its pages from ColumnMetadata bytes written the way Lance
 * writes them: each field at most once (pages aside), packed buffer lists
 * of equal length, plain direct encodings, no unknown fields. Anything else
 * (valid or not) answers false: the general decoder (protobuf-c) takes the
 * column then, and reports what is wrong. *col_any: the column's Any. */
static bool column_fast(bri_datafile *df, bri_column *col, const uint8_t *b, size_t len,
                        const uint8_t **col_any, size_t *col_any_len) {
  wire x = {b, len, 0};
  uint32_t id;
  int wt;
  const uint8_t *sub;
  size_t sl, n_pages = 0, n_sizes = 0;
  uint64_t v;
  unsigned seen = 0;
  col->n_buffers = 0;
  *col_any = NULL;
  while (x.pos < len) {
    if (!wire_next(&x, &id, &wt, &sub, &sl, &v) || wt != 2 || id < 1 || id > 4) return false;
    if (id == 2) {
      n_pages++;
      continue;
    }
    if (seen & (1u << id)) return false;
    seen |= 1u << id;
    if (id == 1 && !wire_direct(sub, sl, col_any, col_any_len)) return false;
    if (id == 3 && !wire_packed(df, sub, sl, &col->buffer_offsets, &col->n_buffers)) return false;
    if (id == 4 && !wire_packed(df, sub, sl, &col->buffer_sizes, &n_sizes)) return false;
  }
  if (!(seen & 2) || n_sizes != col->n_buffers) return false;
  bri_page *pages = bri_arena_alloc(&df->arena, (n_pages ? n_pages : 1) * sizeof *pages);
  if (!pages) return false;
  memset(pages, 0, (n_pages ? n_pages : 1) * sizeof *pages);
  x.pos = 0;
  for (size_t p = 0; x.pos < len;) {
    wire_next(&x, &id, &wt, &sub, &sl, &v); /* well-formed: the first pass read it */
    if (id != 2) continue;
    bri_page *pg = &pages[p++];
    wire y = {sub, sl, 0};
    const uint8_t *psub;
    size_t psl, np_sizes = 0;
    unsigned pseen = 0;
    while (y.pos < sl) {
      if (!wire_next(&y, &id, &wt, &psub, &psl, &v) || id < 1 || id > 5 || (pseen & (1u << id)))
        return false;
      pseen |= 1u << id;
      if (wt != (id == 3 || id == 5 ? 0 : 2)) return false;
      if (id == 1 && !wire_packed(df, psub, psl, &pg->buffer_offsets, &pg->n_buffers)) return false;
      if (id == 2 && !wire_packed(df, psub, psl, &pg->buffer_sizes, &np_sizes)) return false;
      if (id == 3) pg->n_rows = v;
      if (id == 4 && !wire_direct(psub, psl, &pg->encoding_bytes, &pg->encoding_len)) return false;
      if (id == 5) pg->priority = v;
    }
    if (!(pseen & (1u << 4)) || np_sizes != pg->n_buffers) return false;
  }
  col->pages = pages, col->n_pages = n_pages;
  return true;
}

/* Fills col and its pages from the message protobuf-c decoded (kept for
 * bri_datafile_column_metadata), checking what column_fast only assumes:
 * encoding locations and one size per buffer. */
static int column_from_pb(bri_datafile *df, size_t c, bri_column *col,
                          const Lance__File__V2__ColumnMetadata *cm, const uint8_t **col_any,
                          size_t *col_any_len, bri_error *err) {
  where_at w = {c, SIZE_MAX, col->metadata_offset};
  int rc = direct_bytes(df, cm->encoding, BRI_COLUMN_ENCODING_TYPE_URL, &w, col_any, col_any_len, err);
  if (rc) return rc;
  if (cm->n_buffer_offsets != cm->n_buffer_sizes) {
    check_buffers(df, &w, cm->n_buffer_offsets, cm->buffer_offsets, cm->n_buffer_sizes,
                  cm->buffer_sizes, false, err);
    return add_context(err, df->path, "column buffers");
  }
  col->n_buffers = cm->n_buffer_offsets;
  col->buffer_offsets = cm->buffer_offsets, col->buffer_sizes = cm->buffer_sizes;
  col->foreign = cm->base.n_unknown_fields != 0;
  col->pages = bri_arena_alloc(&df->arena, (cm->n_pages ? cm->n_pages : 1) * sizeof *col->pages);
  if (!col->pages)
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %zu pages", df->path, cm->n_pages);
  memset(col->pages, 0, (cm->n_pages ? cm->n_pages : 1) * sizeof *col->pages);
  col->n_pages = cm->n_pages;
  for (size_t p = 0; p < cm->n_pages; p++) {
    const Lance__File__V2__ColumnMetadata__Page *pg = cm->pages[p];
    bri_page *out = &col->pages[p];
    w.p = p;
    if (pg->n_buffer_offsets != pg->n_buffer_sizes)
      return check_buffers(df, &w, pg->n_buffer_offsets, pg->buffer_offsets, pg->n_buffer_sizes,
                           pg->buffer_sizes, true, err);
    col->foreign |= pg->base.n_unknown_fields != 0;
    out->n_rows = pg->has_length ? pg->length : 0;
    out->priority = pg->has_priority ? pg->priority : 0;
    out->n_buffers = pg->n_buffer_offsets;
    out->buffer_offsets = pg->buffer_offsets, out->buffer_sizes = pg->buffer_sizes;
    rc = direct_bytes(df, pg->encoding, BRI_PAGE_LAYOUT_TYPE_URL, &w, &out->encoding_bytes,
                      &out->encoding_len, err);
    if (rc) return rc;
  }
  return 0;
}

/* Checks page p of column c (buffers, the Any, the layout) and decodes its
 * layout; cm_bytes/cm_len are the column's metadata (only to give messages
 * a file offset). */
static int check_page(bri_datafile *df, size_t c, size_t p, const uint8_t *cm_bytes, size_t cm_len,
                      bri_error *err) {
  bri_column *col = &df->cols[c];
  bri_page *out = &col->pages[p];
  where_at w = {c, p, col->metadata_offset};
  out->metadata_offset = col->metadata_offset;
  int rc = check_buffers(df, &w, out->n_buffers, out->buffer_offsets, out->n_buffers,
                         out->buffer_sizes, true, err);
  if (rc) return rc;
  const uint8_t *lb;
  size_t ll;
  rc = any_value(df, out->encoding_bytes, out->encoding_len, BRI_PAGE_LAYOUT_TYPE_URL, &w, &lb, &ll,
                 err);
  if (rc) return rc;
  /* the table's files share a few layouts: decoded once (pbcache.h) */
  ProtobufCMessage *m = df->cache ? (ProtobufCMessage *)bri_pbcache_get(
                                        df->cache, &lance__encodings21__page_layout__descriptor, lb,
                                        ll, NULL)
                                  : NULL;
  rc = m ? 0
         : bri_pb_unpack_in(bri_arena_pb(&df->arena), &lance__encodings21__page_layout__descriptor,
                            lb, ll, 0, df->path, "page layout", &m, err);
  if (rc) {
    /* once more with the layout's file offset, for the message */
    uint64_t at = page_layout_offset(cm_bytes, cm_len, col->metadata_offset, p);
    rc = bri_pb_unpack_in(bri_arena_pb(&df->arena), &lance__encodings21__page_layout__descriptor,
                          lb, ll, at, df->path, "page layout", &m, err);
    if (rc) return add_context(err, df->path, "%s: page layout at offset %llu", WHERE(&w), ull(at));
  }
  out->layout = (Lance__Encodings21__PageLayout *)m;
  switch (out->layout->layout_case) {
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_MINI_BLOCK_LAYOUT:
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_CONSTANT_LAYOUT:
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_FULL_ZIP_LAYOUT:
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_BLOB_LAYOUT:
    return 0;
  case LANCE__ENCODINGS21__PAGE_LAYOUT__LAYOUT_SPARSE_LAYOUT:
    return bri_error_set(err, BRI_EUNSUPPORTED,
                         "%s: %s: SparseLayout (page layout at offset %llu) is a Lance 2.3 layout, "
                         "not supported",
                         df->path, WHERE(&w),
                         ull(page_layout_offset(cm_bytes, cm_len, col->metadata_offset, p)));
  default:
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s: the page layout at offset %llu sets no layout (expected "
                         "mini-block, constant, full-zip or blob)",
                         df->path, WHERE(&w),
                         ull(page_layout_offset(cm_bytes, cm_len, col->metadata_offset, p)));
  }
}

/* The general decoder of column c's metadata (protobuf-c, after the wire
 * check that locates a problem), kept with the file. */
static int decode_column_metadata(bri_datafile *df, size_t c, bri_error *err) {
  const bri_column *col = &df->cols[c];
  const uint8_t *bytes = df->meta + (col->metadata_offset - df->footer.column_meta_start);
  ProtobufCMessage *m;
  int rc = bri_pb_unpack_in(bri_arena_pb(&df->arena), &lance__file__v2__column_metadata__descriptor,
                            bytes, (size_t)col->metadata_size, col->metadata_offset, df->path,
                            "column metadata", &m, err);
  if (rc)
    return add_context(err, df->path, "column metadata %zu at offset %llu (%llu bytes)", c,
                       ull(col->metadata_offset), ull(col->metadata_size));
  df->cms[c] = (Lance__File__V2__ColumnMetadata *)m;
  return 0;
}

static int parse_column(bri_datafile *df, size_t c, bri_error *err) {
  const bri_datafile_footer *f = &df->footer;
  const uint8_t *t = df->meta + (f->cmo_table_start - f->column_meta_start) + 16 * c;
  uint64_t pos = bri_le64(t), size = bri_le64(t + 8);
  uint64_t entry = f->cmo_table_start + 16 * c;
  /* Column metadata blocks live in [column_meta_start, cmo_table_start). */
  if (pos < f->column_meta_start ||
      !bri_range_ok(pos - f->column_meta_start, size, f->cmo_table_start - f->column_meta_start))
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: column metadata offset table entry %zu at offset %llu: [%llu, +%llu) "
                         "is not inside the column metadata region [%llu, %llu)",
                         df->path, c, ull(entry), ull(pos), ull(size), ull(f->column_meta_start),
                         ull(f->cmo_table_start));
  bri_column *col = &df->cols[c];
  col->metadata_offset = pos;
  col->metadata_size = size;
  const uint8_t *bytes = df->meta + (pos - f->column_meta_start);
  const uint8_t *col_any;
  size_t col_any_len;
  int rc = 0;
  if (!column_fast(df, col, bytes, (size_t)size, &col_any, &col_any_len)) {
    rc = decode_column_metadata(df, c, err);
    if (!rc) rc = column_from_pb(df, c, col, df->cms[c], &col_any, &col_any_len, err);
    if (rc) return rc;
  }
  where_at w = {c, SIZE_MAX, pos};
  const uint8_t *val;
  size_t val_len;
  rc = any_value(df, col_any, col_any_len, BRI_COLUMN_ENCODING_TYPE_URL, &w, &val, &val_len, err);
  if (rc) return rc;
  rc = check_buffers(df, &w, col->n_buffers, col->buffer_offsets, col->n_buffers,
                     col->buffer_sizes, false, err);
  if (rc) return add_context(err, df->path, "column buffers");
  uint64_t rows = 0;
  for (size_t p = 0; p < col->n_pages; p++) {
    rc = check_page(df, c, p, bytes, (size_t)size, err);
    if (rc) return rc;
    if (!bri_add_ok(rows, col->pages[p].n_rows, &rows))
      return bri_error_set(err, BRI_ECORRUPT, "%s: %s: page %zu: row count overflows", df->path,
                           WHERE(&w), p);
  }
  col->n_rows = rows;
  col->parsed = true;
  uint64_t want = bri_datafile_num_rows(df);
  if (rows != want)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: %s: its %zu pages hold %llu rows, but the file descriptor says the "
                         "file has %llu rows",
                         df->path, WHERE(&w), col->n_pages, ull(rows), ull(want));
  return 0;
}

/* ------------------------------------------------------------ open */

/* Whether opts ask for column c. */
static bool wanted(const bri_datafile_opts *o, size_t c) {
  if (!o || !o->columns) return true;
  for (size_t i = 0; i < o->n_columns; i++)
    if (o->columns[i] == c) return true;
  return false;
}

static int open_common(bri_datafile *df, const bri_datafile_opts *o, bri_error *err) {
  df->cache = o ? o->cache : NULL;
  const char *path = df->path;
  if (df->size < FOOTER_LEN)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: file is %llu bytes, smaller than the %d-byte Lance footer", path,
                         ull(df->size), FOOTER_LEN);
  /* One read of the tail covers the whole metadata of ordinary files. */
  uint64_t tail_len = df->size < TAIL_READ ? df->size : TAIL_READ;
  uint64_t tail_start = df->size - tail_len;
  uint8_t *tail = malloc((size_t)tail_len);
  if (!tail) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  int rc = read_range(df, tail_start, tail_len, tail, err);
  if (!rc) rc = parse_footer(df, tail + tail_len - FOOTER_LEN, err);
  if (rc) {
    free(tail);
    return rc;
  }
  const bri_datafile_footer *f = &df->footer;
  if (f->column_meta_start < tail_start) {
    /* The metadata is larger than the tail: read it whole instead. */
    free(tail);
    uint64_t meta_len = df->size - f->column_meta_start;
    tail = malloc((size_t)meta_len);
    if (!tail)
      return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %llu bytes of metadata", path,
                           ull(meta_len));
    tail_start = f->column_meta_start;
    rc = read_range(df, tail_start, meta_len, tail, err);
    if (rc) {
      free(tail);
      return rc;
    }
  }
  df->tail = tail; /* read_range serves ranges inside it from here on */
  df->tail_start = tail_start;
  df->meta = tail + (f->column_meta_start - tail_start);
  /* decoded metadata takes a few times its encoded size: one chunk for most files */
  uint64_t meta_len = df->size - f->column_meta_start;
  bri_arena_init(&df->arena, meta_len < 1024 ? 4096 : (size_t)meta_len * 4);

  rc = parse_global_buffers(df, err);
  if (!rc) rc = parse_descriptor(df, o ? o->cache : NULL, err);
  if (rc) return rc;

  size_t nc = f->num_columns;
  if (nc) {
    df->cms = bri_arena_alloc(&df->arena, nc * sizeof *df->cms);
    df->cols = bri_arena_alloc(&df->arena, nc * sizeof *df->cols);
    if (!df->cms || !df->cols)
      return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %zu columns", path, nc);
    memset(df->cms, 0, nc * sizeof *df->cms);
    memset(df->cols, 0, nc * sizeof *df->cols);
  }
  for (size_t c = 0; c < nc; c++) {
    rc = wanted(o, c) ? parse_column(df, c, err) : 0;
    if (rc) return rc;
  }
  return 0;
}

static int finish_open(bri_datafile *df, const bri_datafile_opts *o, bri_datafile **out,
                       bri_error *err) {
  int rc = open_common(df, o, err);
  if (rc) {
    bri_datafile_close(df);
    return rc;
  }
  *out = df;
  return 0;
}

static bri_datafile *new_df(const char *path) {
  bri_datafile *df = calloc(1, sizeof *df);
  if (!df) return NULL;
  bri_arena_init(&df->arena, 0);
  df->path = strdup(path ? path : "(memory)");
  if (!df->path) {
    free(df);
    return NULL;
  }
  return df;
}

int bri_datafile_open(bri_store *st, const char *path, bri_datafile **out, bri_error *err) {
  return bri_datafile_open_in(st, path, NULL, out, err);
}

int bri_datafile_open_in(bri_store *st, const char *path, const bri_datafile_opts *opts,
                         bri_datafile **out, bri_error *err) {
  *out = NULL;
  bri_datafile *df = new_df(path);
  if (!df) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path);
  int rc = bri_store_open_file(st, path, &df->f, err);
  if (rc) {
    bri_datafile_close(df);
    return rc;
  }
  df->size = bri_sfile_size(df->f);
  return finish_open(df, opts, out, err);
}

int bri_datafile_open_mem(const uint8_t *buf, size_t len, const char *path, bri_datafile **out,
                          bri_error *err) {
  return bri_datafile_open_mem_in(buf, len, path, NULL, out, err);
}

int bri_datafile_open_mem_in(const uint8_t *buf, size_t len, const char *path,
                             const bri_datafile_opts *opts, bri_datafile **out, bri_error *err) {
  *out = NULL;
  bri_datafile *df = new_df(path);
  if (!df) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", path ? path : "(memory)");
  static const uint8_t empty[1];
  df->mem = buf ? buf : empty;
  df->size = buf ? len : 0;
  return finish_open(df, opts, out, err);
}

void bri_datafile_close(bri_datafile *df) {
  if (!df) return;
  bri_arena_clear(&df->arena);
  free(df->tail);
  bri_sfile_close(df->f);
  free(df->path);
  free(df);
}

/* ------------------------------------------------------------ accessors */

const char *bri_datafile_path(const bri_datafile *df) { return df->path; }
uint64_t bri_datafile_size(const bri_datafile *df) { return df->size; }
void bri_datafile_version(const bri_datafile *df, uint16_t *major, uint16_t *minor) {
  *major = df->footer.major;
  *minor = df->footer.minor;
}
const bri_datafile_footer *bri_datafile_footer_of(const bri_datafile *df) { return &df->footer; }
uint64_t bri_datafile_num_rows(const bri_datafile *df) {
  /* proto3 writers omit a zero length. */
  return df->desc && df->desc->has_length ? df->desc->length : 0;
}
const Lance__File__FileDescriptor *bri_datafile_descriptor(const bri_datafile *df) {
  return df->desc;
}
const uint8_t *bri_datafile_schema_bytes(const bri_datafile *df, size_t *len) {
  *len = df->schema_len;
  return df->schema_bytes;
}
size_t bri_datafile_num_columns(const bri_datafile *df) { return df->footer.num_columns; }
const bri_column *bri_datafile_column(const bri_datafile *df, size_t index) {
  return index < df->footer.num_columns && df->cols[index].parsed ? &df->cols[index] : NULL;
}
const Lance__File__V2__ColumnMetadata *bri_datafile_column_metadata(bri_datafile *df, size_t index) {
  if (!bri_datafile_column(df, index)) return NULL;
  if (!df->cms[index] && decode_column_metadata(df, index, NULL) != 0) return NULL;
  return df->cms[index];
}
size_t bri_datafile_num_global_buffers(const bri_datafile *df) {
  return df->footer.num_global_buffers;
}
void bri_datafile_global_buffer(const bri_datafile *df, size_t i, uint64_t *pos, uint64_t *size) {
  bool ok = i < df->footer.num_global_buffers;
  *pos = ok ? df->gb_pos[i] : 0;
  *size = ok ? df->gb_size[i] : 0;
}

int bri_datafile_read_into(bri_datafile *df, uint64_t offset, uint64_t size, void *buf,
                           bri_error *err) {
  return read_range(df, offset, size, buf, err);
}

int bri_datafile_read(bri_datafile *df, uint64_t offset, uint64_t size, uint8_t **out,
                      bri_error *err) {
  *out = NULL;
  if (!bri_range_ok(offset, size, df->size) || size > SIZE_MAX - 1)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: read of %llu bytes at offset %llu is outside the %llu-byte file",
                         df->path, ull(size), ull(offset), ull(df->size));
  uint8_t *buf = malloc(size ? (size_t)size : 1);
  if (!buf)
    return bri_error_set(err, BRI_ENOMEM, "%s: out of memory for %llu bytes at offset %llu",
                         df->path, ull(size), ull(offset));
  int rc = read_range(df, offset, size, buf, err);
  if (rc) {
    free(buf);
    return rc;
  }
  *out = buf;
  return 0;
}

/* ---- pages ---------------------------------------------------------------- */

int bri_page_decode(bri_datafile *df, size_t column, size_t page_index,
                    const bri_leaf_type *type, bri_leaf_page *out, bri_error *err) {
  memset(out, 0, sizeof *out);
  const char *path = bri_datafile_path(df);
  if (column >= bri_datafile_num_columns(df))
    return bri_error_set(err, BRI_ENOTFOUND, "%s: no column %zu (the file has %zu)", path, column,
                         bri_datafile_num_columns(df));
  const bri_column *col = bri_datafile_column(df, column);
  if (!col || page_index >= col->n_pages)
    return bri_error_set(err, BRI_ENOTFOUND, "%s: column %zu has no page %zu (it has %zu)", path,
                         column, page_index, col ? col->n_pages : 0);
  const bri_page *pg = &col->pages[page_index];
  char where[1024];
  snprintf(where, sizeof where, "%s: page %zu of column %zu", path, page_index, column);
  uint16_t major, minor;
  bri_datafile_version(df, &major, &minor);
  size_t nb = pg->n_buffers;
  uint8_t **bufs = calloc(nb ? nb : 1, sizeof *bufs);
  if (!bufs) return bri_error_set(err, BRI_ENOMEM, "%s: out of memory", where);
  int rc = 0;
  for (size_t i = 0; i < nb && !rc; i++) {
    rc = bri_datafile_read(df, pg->buffer_offsets[i], pg->buffer_sizes[i], &bufs[i], err);
    if (rc) bri_error_wrap(err, "%s: buffer %zu", where, i);
  }
  if (!rc) {
    bri_page_input in = {
        .where = where,
        .file_minor = minor,
        .n_rows = pg->n_rows,
        .layout = pg->layout,
        .n_buffers = nb,
        .buffers = (const uint8_t *const *)bufs,
        .buffer_sizes = pg->buffer_sizes,
    };
    rc = bri_page_decode_buffers(&in, type, NULL, out, err);
  }
  for (size_t i = 0; i < nb; i++) free(bufs[i]);
  free(bufs);
  return rc;
}
