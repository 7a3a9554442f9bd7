/* pbcheck.c: descriptor-driven protobuf wire walker (see pbcheck.h).
 *
 * It duplicates none of protobuf-c's decoding: values are not stored, only
 * framing is checked, so it costs one pass over the bytes. Recursion depth is
 * bounded so that hostile nesting cannot exhaust the stack. */
#include "util/pbcheck.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

bool bri_pb_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (unsigned i = 0; i < 10; i++) {
    if (*pos >= len) return false;
    uint8_t b = buf[(*pos)++];
    if (i == 9 && b > 1) return false; /* more than 64 bits */
    v |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

static const ProtobufCFieldDescriptor *find_field(const ProtobufCMessageDescriptor *d,
                                                  uint64_t id) {
  for (unsigned i = 0; i < d->n_fields; i++)
    if (d->fields[i].id == id) return &d->fields[i];
  return NULL;
}

/* Wire type a scalar of this type uses when not packed. */
static int natural_wire_type(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_FLOAT:
    return 5;
  case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_DOUBLE:
    return 1;
  case PROTOBUF_C_TYPE_STRING: case PROTOBUF_C_TYPE_BYTES: case PROTOBUF_C_TYPE_MESSAGE:
    return 2;
  default:
    return 0;
  }
}

static const char *wire_name(int wt) {
  static const char *names[] = {"varint", "64-bit", "length-delimited", "group start",
                                "group end", "32-bit", "invalid (6)", "invalid (7)"};
  return names[wt & 7];
}

static int walk(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                uint64_t off, const char *path, int depth, bri_error *err) {
  if (depth > MAX_DEPTH)
    return bri_error_set(err, BRI_ECORRUPT, "%s: offset %llu: messages nested deeper than %d",
                         path, (unsigned long long)off, MAX_DEPTH);
  size_t pos = 0;
  while (pos < len) {
    size_t start = pos;
    uint64_t key;
    if (!bri_pb_varint(buf, len, &pos, &key))
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %llu: truncated or overlong field key in %s", path,
                           (unsigned long long)(off + start), desc->name);
    uint64_t id = key >> 3;
    int wt = (int)(key & 7);
    if (id == 0 || id > 536870911)
      return bri_error_set(err, BRI_ECORRUPT, "%s: offset %llu: invalid field number %llu in %s",
                           path, (unsigned long long)(off + start), (unsigned long long)id,
                           desc->name);
    const ProtobufCFieldDescriptor *f = find_field(desc, id);
    if (f) {
      int want = natural_wire_type(f->type);
      bool packable = f->label == PROTOBUF_C_LABEL_REPEATED && want != 2;
      if (wt != want && !(packable && wt == 2))
        return bri_error_set(err, BRI_ECORRUPT,
                             "%s: offset %llu: field %llu (%s) of %s has wire type %s, expected %s",
                             path, (unsigned long long)(off + start), (unsigned long long)id,
                             f->name, desc->name, wire_name(wt), wire_name(want));
    }
    uint64_t v;
    switch (wt) {
    case 0:
      if (!bri_pb_varint(buf, len, &pos, &v))
        return bri_error_set(err, BRI_ECORRUPT, "%s: offset %llu: truncated varint (field %llu of %s)",
                             path, (unsigned long long)(off + pos), (unsigned long long)id, desc->name);
      break;
    case 1:
    case 5: {
      size_t w = wt == 1 ? 8 : 4;
      if (len - pos < w)
        return bri_error_set(err, BRI_ECORRUPT,
                             "%s: offset %llu: %zu-byte field %llu of %s runs past the end (%zu bytes left)",
                             path, (unsigned long long)(off + pos), w, (unsigned long long)id,
                             desc->name, len - pos);
      pos += w;
      break;
    }
    case 2: {
      size_t lpos = pos;
      if (!bri_pb_varint(buf, len, &pos, &v))
        return bri_error_set(err, BRI_ECORRUPT, "%s: offset %llu: truncated length (field %llu of %s)",
                             path, (unsigned long long)(off + lpos), (unsigned long long)id, desc->name);
      if (v > len - pos)
        return bri_error_set(err, BRI_ECORRUPT,
                             "%s: offset %llu: field %llu of %s claims %llu bytes, only %zu remain in the message",
                             path, (unsigned long long)(off + lpos), (unsigned long long)id,
                             desc->name, (unsigned long long)v, len - pos);
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
        int rc = walk((const ProtobufCMessageDescriptor *)f->descriptor, buf + pos, (size_t)v,
                      off + pos, path, depth + 1, err);
        if (rc) return rc;
      }
      pos += (size_t)v;
      break;
    }
    default:
      return bri_error_set(err, BRI_ECORRUPT,
                           "%s: offset %llu: field %llu of %s uses wire type %s, which Lance never writes",
                           path, (unsigned long long)(off + start), (unsigned long long)id,
                           desc->name, wire_name(wt));
    }
  }
  return 0;
}

int bri_pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                 uint64_t file_offset, const char *path, bri_error *err) {
  return walk(desc, buf, len, file_offset, path, 0, err);
}

int bri_pb_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                  uint64_t file_offset, const char *path, const char *what,
                  ProtobufCMessage **out, bri_error *err) {
  return bri_pb_unpack_in(NULL, desc, buf, len, file_offset, path, what, out, err);
}

int bri_pb_unpack_in(ProtobufCAllocator *alloc, const ProtobufCMessageDescriptor *desc,
                     const uint8_t *buf, size_t len, uint64_t file_offset, const char *path,
                     const char *what, ProtobufCMessage **out, bri_error *err) {
  *out = NULL;
  int rc = bri_pb_check(desc, buf, len, file_offset, path, err);
  if (rc) return rc;
  ProtobufCMessage *m = protobuf_c_message_unpack(desc, alloc, len, buf);
  if (!m)
    return bri_error_set(err, BRI_ECORRUPT,
                         "%s: the %s at offset %llu (%zu bytes) is not a valid %s message", path,
                         what, (unsigned long long)file_offset, len, desc->name);
  *out = m;
  return 0;
}

bool bri_pb_equal(const ProtobufCMessage *a, const ProtobufCMessage *b) {
  size_t la = protobuf_c_message_get_packed_size(a), lb = protobuf_c_message_get_packed_size(b);
  if (la != lb) return false;
  uint8_t *x = malloc(la ? la : 1), *y = malloc(lb ? lb : 1);
  bool same = x && y;
  if (same) {
    protobuf_c_message_pack(a, x);
    protobuf_c_message_pack(b, y);
    same = memcmp(x, y, la) == 0;
  }
  free(x), free(y);
  return same;
}

ProtobufCMessage *bri_pb_copy(const ProtobufCMessage *m) {
  size_t len = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return NULL;
  protobuf_c_message_pack(m, buf);
  ProtobufCMessage *c = protobuf_c_message_unpack(m->descriptor, NULL, len, buf);
  free(buf);
  return c;
}
