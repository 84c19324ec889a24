/* buf.h - a growable byte buffer for building records and text.
 *
 * struct buf is embedded by value; buf_release() frees its memory. The
 * data pointer is invalidated by any append.
 */
#ifndef STAX_LIB_BUF_H
#define STAX_LIB_BUF_H

#include <stddef.h>
#include <stdint.h>

struct buf {
	uint8_t *data;
	size_t len, cap;
};

#define BUF_INIT { NULL, 0, 0 }

void buf_release(struct buf *b);
void buf_reset(struct buf *b);
/* Make room for n more bytes and return a pointer to them (len grows). */
void *buf_extend(struct buf *b, size_t n);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_add_u8(struct buf *b, uint8_t v);
void buf_add_u16(struct buf *b, uint16_t v);
void buf_add_u32(struct buf *b, uint32_t v);
void buf_add_u64(struct buf *b, uint64_t v);
/* u16 length + bytes (no NUL); strings longer than 65535 are cut. */
void buf_add_str(struct buf *b, const char *s);
/* Pad with zeros to a multiple of align. */
void buf_align(struct buf *b, size_t align);
void buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
