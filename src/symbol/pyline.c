/* pyline.c - CPython's line tables (see pyline.h). */
#include "symbol/pyline.h"

#include <limits.h>
#include <stdbool.h>

void pyline_init(struct pyline_iter *it, const uint8_t *table, const uint8_t *end, int firstlineno,
		 uint32_t version)
{
	it->start = it->p = table;
	it->end = end;
	it->version = version;
	it->line = firstlineno;
	it->addr = 0;
}

/* An unsigned varint at *p (6-bit groups, bit 6: more follow); false
 * when it runs past end or past 32 bits. */
static bool varint(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;
	do {
		if (*p >= end || shift > 30)
			return false;
		b = *(*p)++;
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

static bool svarint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint32_t u;
	if (!varint(p, end, &u))
		return false;
	*out = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

static int corrupt(const struct pyline_iter *it, const uint8_t *at, size_t *bad_at)
{
	if (bad_at)
		*bad_at = (size_t)(at - it->start);
	return PYLINE_CORRUPT;
}

/* 3.10: (bytes, line delta) pairs */
static int next_310(struct pyline_iter *it, uint64_t *lo, uint64_t *hi, int *line, size_t *bad_at)
{
	const uint8_t *at = it->p;
	int8_t ld;
	if (it->p == it->end)
		return 0;
	if (it->end - it->p < 2)
		return corrupt(it, at, bad_at);
	*lo = it->addr;
	it->addr += it->p[0];
	*hi = it->addr;
	ld = (int8_t)it->p[1];
	it->p += 2;
	if (ld == -128) {
		*line = PYLINE_NONE;
		return 1;
	}
	it->line += ld;
	if (it->line < 0 || it->line > INT_MAX)
		return corrupt(it, at, bad_at);
	*line = (int)it->line;
	return 1;
}

int pyline_next(struct pyline_iter *it, uint64_t *lo, uint64_t *hi, int *line, size_t *bad_at)
{
	const uint8_t *at = it->p, *p = it->p;
	uint32_t code, skip;
	int64_t delta = 0;
	uint8_t b;

	if (it->version == 0x030a)
		return next_310(it, lo, hi, line, bad_at);
	if (it->version < 0x030b || it->version > 0x030d)
		return corrupt(it, at, bad_at);
	if (p == it->end)
		return 0;
	b = *p++;
	if (!(b & 128))
		return corrupt(it, at, bad_at); /* not the start of an entry */
	code = (b >> 3) & 15;
	switch (code) {
	case 15: /* no location */
		break;
	case 14: /* long form: line delta, end line delta, column, end column */
		if (!svarint(&p, it->end, &delta) || !varint(&p, it->end, &skip) ||
		    !varint(&p, it->end, &skip) || !varint(&p, it->end, &skip))
			return corrupt(it, at, bad_at);
		break;
	case 13: /* no columns */
		if (!svarint(&p, it->end, &delta))
			return corrupt(it, at, bad_at);
		break;
	case 10: case 11: case 12: /* one line: two bytes of columns */
		delta = code - 10;
		if (it->end - p < 2)
			return corrupt(it, at, bad_at);
		p += 2;
		break;
	default: /* short forms: one byte of columns */
		if (p >= it->end)
			return corrupt(it, at, bad_at);
		p++;
		break;
	}
	/* an entry ends where the next starts: CPython skips any byte
	 * without bit 7 (there are none in a well-formed table) */
	if (p < it->end && !(*p & 128))
		return corrupt(it, p, bad_at);
	it->p = p;
	it->line += delta;
	if (it->line < -1 || it->line > INT_MAX)
		return corrupt(it, at, bad_at);
	*lo = it->addr;
	it->addr += 2 * ((b & 7) + 1);
	*hi = it->addr;
	*line = code == 15 ? PYLINE_NONE : (int)it->line;
	return 1;
}

int pyline_find(const uint8_t *table, const uint8_t *end, int firstlineno, uint32_t version,
		uint32_t offset, size_t *bad_at)
{
	struct pyline_iter it;
	uint64_t lo, hi;
	int line, r;

	pyline_init(&it, table, end, firstlineno, version);
	while ((r = pyline_next(&it, &lo, &hi, &line, bad_at)) == 1)
		if (offset >= lo && offset < hi)
			return line;
	return r < 0 ? r : PYLINE_BEYOND;
}
