/* jitcfi.c - unwind tables from jitdump JIT_CODE_UNWINDING_INFO records
 * (layout in jitcfi.h). */
#include "unwind/jitcfi.h"
#include "unwind/table.h"
#include "lib/jitdump.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANGES (1u << 20)      /* code objects with tables, per process */
#define MAX_CODE (1ull << 30)      /* one code object's size */

struct jit_range {
	uint64_t start, end;
	uint64_t seq;                /* order added: a later range wins */
	struct utable *t;
};

struct jit_cfi {
	struct jit_range *r;
	size_t n, cap;
	uint64_t seq;
	bool sorted;
};

struct jit_cfi *jit_cfi_new(void)
{
	return xcalloc(1, sizeof(struct jit_cfi));
}

void jit_cfi_free(struct jit_cfi *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		utable_free(j->r[i].t);
	free(j->r);
	free(j);
}

size_t jit_cfi_count(const struct jit_cfi *j)
{
	return j->n;
}

static struct utable *compile(const uint8_t *eh, size_t size, uint64_t vaddr)
{
	struct utable *t = xcalloc(1, sizeof(*t));
	struct cfi_section sec = {
		.data = eh, .size = size, .vaddr = vaddr, .datarel = vaddr + size, .is_eh = true,
	};
	if (utable_compile(t, &sec, 1) < 0 || !t->nrows) {
		utable_free(t);
		return NULL;
	}
	return t;
}

static bool covers(const struct utable *t, uint64_t pc)
{
	return pc >= t->base && pc - t->base < t->addr[t->nrows - 1];
}

/* Compile the .eh_frame eh[0..size) for the code [addr, addr+len). */
static void add_range(struct jit_cfi *j, const uint8_t *eh, size_t size, uint64_t addr, uint64_t len)
{
	uint64_t vaddr = addr + ((len + 7) & ~7ull);
	struct utable *t;

	if (!len || len > MAX_CODE || addr + len < addr || j->n >= MAX_RANGES || size < 8)
		return;
	t = compile(eh, size, vaddr);
	if (t && !covers(t, addr)) {
		/* another layout than perf's: move the FDEs onto the code */
		uint64_t delta = addr - t->base;
		utable_free(t);
		t = compile(eh, size, vaddr + delta);
		if (t && !covers(t, addr)) {
			utable_free(t);
			t = NULL;
		}
	}
	if (!t)
		return;
	GROW(j->r, j->cap, j->n + 1);
	j->r[j->n++] = (struct jit_range){ addr, addr + len, j->seq++, t };
	j->sorted = false;
}

int jit_cfi_add(struct jit_cfi *j, const void *data, size_t size, size_t *off,
		struct err *err)
{
	size_t pos = *off, pending = 0, before = j->n;
	struct jitdump_unwind u;
	bool have = false;
	struct jitdump_rec r;
	int got;

	if (pos == 0) {
		int hsize = jitdump_header(data, size, err);
		if (hsize < 0)
			return -EINVAL;
		pos = (size_t)hsize;
	}
	while ((got = jitdump_next(data, size, &pos, &r, err)) > 0) {
		struct jitdump_load l;
		if (r.id == JITDUMP_CODE_UNWINDING_INFO) {
			/* a bad record describes nothing */
			have = jitdump_unwind(&r, &u);
			pending = have ? r.off : 0;
		} else if (r.id == JITDUMP_CODE_LOAD) {
			if (have && jitdump_load(&r, &l))
				add_range(j, u.eh_frame, u.eh_frame_size, l.code_addr, l.code_size);
			have = false;
			pending = 0;
		}
	}
	/* An UNWINDING_INFO whose code load is not written yet is read
	 * again with it next time. */
	*off = pending ? pending : pos;
	return got < 0 ? -EINVAL : (int)(j->n - before);
}

static int cmp_range(const void *a, const void *b)
{
	const struct jit_range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

const struct utable *jit_cfi_find(struct jit_cfi *j, uint64_t pc)
{
	size_t lo = 0, hi;

	if (!j || !j->n)
		return NULL;
	if (!j->sorted) {
		qsort(j->r, j->n, sizeof(*j->r), cmp_range);
		j->sorted = true;
	}
	/* the last range starting at or below pc */
	hi = j->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (j->r[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= j->r[lo - 1].end)
		return NULL;
	return j->r[lo - 1].t;
}
