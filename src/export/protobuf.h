/* protobuf.h - the few protocol buffer encodings pprof needs.
 *
 * Fields are appended to a struct buf in wire format. Nested messages are
 * encoded into their own buf first and added with pb_msg(). Zero scalars
 * are omitted, as proto3 does. Never fails.
 */
#ifndef STAX_EXPORT_PROTOBUF_H
#define STAX_EXPORT_PROTOBUF_H

#include "lib/buf.h"

#include <stddef.h>
#include <stdint.h>

void pb_varint(struct buf *b, uint64_t v);
/* varint field (uint64, int64 as two's complement, bool) */
void pb_uint(struct buf *b, uint32_t field, uint64_t v);
/* length-delimited field: bytes, strings, nested messages */
void pb_bytes(struct buf *b, uint32_t field, const void *data, size_t n);
void pb_str(struct buf *b, uint32_t field, const char *s);
void pb_msg(struct buf *b, uint32_t field, const struct buf *msg);
/* repeated varint field, packed (omitted when n is 0) */
void pb_packed(struct buf *b, uint32_t field, const uint64_t *v, size_t n);

#endif
