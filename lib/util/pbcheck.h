/* pbcheck.h: locate what is wrong in a protobuf message before decoding it.
 *
 * protobuf-c's unpack only says "failed". Users need to know where: this
 * walker reads the wire format against the message's descriptor (recursing
 * into sub-messages) and reports the first problem with its absolute byte
 * offset in the file: a truncated varint, a length past the end, a field
 * number 0, a group wire type, or a known field with the wrong wire type.
 * Unknown fields are only checked for well-formedness (they are kept). */
#ifndef BRI_PBCHECK_H
#define BRI_PBCHECK_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Checks buf[0..len) as one encoded `desc` message. file_offset is where buf
 * starts in the file named path (for messages). Returns 0 or BRI_ECORRUPT. */
int bri_pb_check(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                 uint64_t file_offset, const char *path, bri_error *err);

/* Decodes a varint at buf[*pos], advancing *pos; false when malformed or truncated. */
bool bri_pb_varint(const uint8_t *buf, size_t len, size_t *pos, uint64_t *out);

/* Checks then unpacks; on failure err names path, offset and the problem.
 * what names the message for users ("manifest", "transaction"). */
int bri_pb_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *buf, size_t len,
                  uint64_t file_offset, const char *path, const char *what,
                  ProtobufCMessage **out, bri_error *err);
/* The same with protobuf-c's allocator alloc (NULL: malloc), e.g. an
 * arena's (util/arena.h): the message is freed with the same allocator. */
int bri_pb_unpack_in(ProtobufCAllocator *alloc, const ProtobufCMessageDescriptor *desc,
                     const uint8_t *buf, size_t len, uint64_t file_offset, const char *path,
                     const char *what, ProtobufCMessage **out, bri_error *err);

/* A deep copy of m (unknown fields included), by encoding and decoding it:
 * free it with protobuf_c_message_free_unpacked. NULL out of memory. */
ProtobufCMessage *bri_pb_copy(const ProtobufCMessage *m);

/* True when a and b encode to the same bytes (unknown fields included):
 * "this message did not change" checks before a commit builds on it. */
bool bri_pb_equal(const ProtobufCMessage *a, const ProtobufCMessage *b);

#endif
