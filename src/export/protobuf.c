/* protobuf.c - protocol buffer wire format (varints and length-delimited
 * fields), enough to write pprof's profile.proto. */
#include "export/protobuf.h"

#include <string.h>

enum { WIRE_VARINT = 0, WIRE_LEN = 2 };

void pb_varint(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		buf_add_u8(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	buf_add_u8(b, (uint8_t)v);
}

static void tag(struct buf *b, uint32_t field, int wire)
{
	pb_varint(b, ((uint64_t)field << 3) | (uint64_t)wire);
}

void pb_uint(struct buf *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

void pb_bytes(struct buf *b, uint32_t field, const void *data, size_t n)
{
	tag(b, field, WIRE_LEN);
	pb_varint(b, n);
	buf_add(b, data, n);
}

void pb_str(struct buf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_msg(struct buf *b, uint32_t field, const struct buf *msg)
{
	pb_bytes(b, field, msg->data, msg->len);
}

void pb_packed(struct buf *b, uint32_t field, const uint64_t *v, size_t n)
{
	struct buf tmp = BUF_INIT;
	size_t i;
	if (!n)
		return;
	for (i = 0; i < n; i++)
		pb_varint(&tmp, v[i]);
	pb_msg(b, field, &tmp);
	buf_release(&tmp);
}
