#include "lib/buf.h"
#include "lib/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_release(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
}

void *buf_extend(struct buf *b, size_t n)
{
	void *p;
	/* at least one byte, so an empty buffer never hands out NULL + 0 */
	GROW(b->data, b->cap, b->len + (n ? n : 1));
	p = b->data + b->len;
	b->len += n;
	return p;
}

void buf_add(struct buf *b, const void *p, size_t n)
{
	if (n)
		memcpy(buf_extend(b, n), p, n);
}

void buf_add_u8(struct buf *b, uint8_t v) { buf_add(b, &v, 1); }
void buf_add_u16(struct buf *b, uint16_t v) { buf_add(b, &v, 2); }
void buf_add_u32(struct buf *b, uint32_t v) { buf_add(b, &v, 4); }
void buf_add_u64(struct buf *b, uint64_t v) { buf_add(b, &v, 8); }

void buf_add_str(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > 65535)
		n = 65535;
	buf_add_u16(b, (uint16_t)n);
	buf_add(b, s, n);
}

void buf_align(struct buf *b, size_t align)
{
	while (b->len % align)
		buf_add_u8(b, 0);
}

void buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	GROW(b->data, b->cap, b->len + (size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}
