/* cursor.h - bounds-checked reading of untrusted bytes.
 *
 * Every read checks against end; a failed read sets bad and returns
 * zeros, so parsers read a whole struct and check cur.bad once.
 */
#ifndef STAX_LIB_CURSOR_H
#define STAX_LIB_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static inline void cur_init(struct cursor *c, const void *p, size_t n)
{
	c->p = p;
	c->end = (const uint8_t *)p + n;
	c->bad = false;
}

static inline size_t cur_left(const struct cursor *c)
{
	return (size_t)(c->end - c->p);
}

static inline bool cur_get(struct cursor *c, void *dst, size_t n)
{
	if (c->bad || cur_left(c) < n) {
		c->bad = true;
		memset(dst, 0, n);
		return false;
	}
	memcpy(dst, c->p, n);
	c->p += n;
	return true;
}

static inline uint32_t cur_u32(struct cursor *c)
{
	uint32_t v;
	cur_get(c, &v, 4);
	return v;
}

static inline uint64_t cur_u64(struct cursor *c)
{
	uint64_t v = 0;
	cur_get(c, &v, sizeof(v));
	return v;
}

/* A u16-length string; *s points into the buffer (not NUL-terminated). */
static inline bool cur_str(struct cursor *c, const char **s, size_t *len)
{
	uint16_t n;
	*s = "";
	*len = 0;
	if (!cur_get(c, &n, 2))
		return false;
	if (cur_left(c) < n) {
		c->bad = true;
		return false;
	}
	*s = (const char *)c->p;
	*len = n;
	c->p += n;
	return true;
}

#endif
