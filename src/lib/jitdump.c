/* jitdump.c - read the jitdump format (jitdump.h). */
#include "lib/err.h"
#include "lib/jitdump.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define JITDUMP_MAGIC 0x4A695444u
#define JITDUMP_MAGIC_SWAPPED 0x4454694Au
#define HEADER_MIN 40
#define REC_HEADER 16

int jitdump_header(const void *data, size_t size, struct err *err)
{
	struct cursor c;
	uint32_t magic, version, hsize;

	cur_init(&c, data, size);
	magic = cur_u32(&c);
	version = cur_u32(&c);
	hsize = cur_u32(&c);
	if (c.bad || magic != JITDUMP_MAGIC) {
		err_set(err, -1, "not a jitdump file%s (magic at offset 0)",
			 !c.bad && magic == JITDUMP_MAGIC_SWAPPED ? " of this byte order" : "");
		return -EINVAL;
	}
	if (version < 1 || version > 2 || hsize < HEADER_MIN || hsize > size) {
		err_set(err, -1, "unsupported jitdump header (version %u, size %u at offset 4)",
			 version, hsize);
		return -EINVAL;
	}
	return (int)hsize;
}

int jitdump_next(const void *data, size_t size, size_t *pos, struct jitdump_rec *r,
		 struct err *err)
{
	const uint8_t *base = data;
	size_t at = *pos;
	uint32_t total;
	struct cursor c;

	if (at > size || size - at < REC_HEADER)
		return 0;
	cur_init(&c, base + at, size - at);
	r->id = cur_u32(&c);
	total = cur_u32(&c);
	r->time = cur_u64(&c);
	r->off = at;
	if (total < REC_HEADER) {
		err_set(err, -1, "bad jitdump record size %u at offset %#zx", total, at);
		return -EINVAL;
	}
	if (total > size - at)
		return 0; /* torn: the writer is still appending */
	cur_init(&r->body, base + at + REC_HEADER, total - REC_HEADER);
	*pos = at + total;
	return r->id == JITDUMP_CODE_CLOSE ? 0 : 1;
}

bool jitdump_load(const struct jitdump_rec *r, struct jitdump_load *l)
{
	struct cursor c = r->body;

	l->pid = cur_u32(&c);
	l->tid = cur_u32(&c);
	l->vma = cur_u64(&c);
	l->code_addr = cur_u64(&c);
	l->code_size = cur_u64(&c);
	l->code_index = cur_u64(&c);
	if (c.bad)
		return false;
	l->name = (const char *)c.p;
	l->name_len = strnlen(l->name, cur_left(&c));
	return l->name_len < cur_left(&c);
}

bool jitdump_move(const struct jitdump_rec *r, struct jitdump_move *m)
{
	struct cursor c = r->body;

	m->pid = cur_u32(&c);
	m->tid = cur_u32(&c);
	m->vma = cur_u64(&c);
	m->old_code_addr = cur_u64(&c);
	m->new_code_addr = cur_u64(&c);
	m->code_size = cur_u64(&c);
	m->code_index = cur_u64(&c);
	return !c.bad;
}

bool jitdump_unwind(const struct jitdump_rec *r, struct jitdump_unwind *u)
{
	struct cursor c = r->body;
	uint64_t usize, hdr;

	usize = cur_u64(&c);
	hdr = cur_u64(&c);
	u->mapped_size = cur_u64(&c);
	if (c.bad || usize > cur_left(&c) || hdr > usize)
		return false;
	u->eh_frame = c.p;
	u->eh_frame_size = (size_t)(usize - hdr);
	return true;
}
