/* test_moment_rec.c - the parts of an in-kernel reader's record
 * (record/moment.h: moment_rec_go, moment_rec_window, moment_rec_next_range),
 * bounds checked against the record's size: a Go thread's goroutine part
 * (aarch64, MOMENT_F_GO), the window past the copy (MOMENT_F_WINDOW) and
 * the slot ranges after them, and records shorter than they say. Records built here byte by byte, as the BPF program lays
 * them out (bpf/moment_abi.h). */
#include "test.h"
#include "record/moment.h"

#include <string.h>

static uint8_t buf[4096 + MOMENT_WINDOW_MAX + MOMENT_TOPWIN_MAX] __attribute__((aligned(8)));

/* The window (wlen bytes at waddr) after the goroutine part, and the top
 * of the stack (tlen bytes at taddr) after it: build()'s, 0 for none. */
static uint64_t waddr, taddr;
static uint32_t wlen, tlen;

/* A span at buf + at: a range header (addr, len) and len bytes first,
 * first + step, first + 2 * step, ... Where it ends. */
static size_t put_span(size_t at, uint64_t addr, uint32_t len, uint8_t first, uint8_t step)
{
	struct moment_range_hdr h = { .addr = addr, .len = len };
	memcpy(buf + at, &h, sizeof(h));
	at += sizeof(h);
	for (uint32_t i = 0; i < len; i++)
		buf[at + i] = (uint8_t)(first + step * i);
	return at + len;
}

/* A record: the head, a goroutine part with stack_len bytes of stack
 * (when go), then one slot range of len bytes at addr. Its size. */
static size_t build(bool go, uint32_t stack_len, uint64_t addr, uint32_t len)
{
	struct moment_rec *r = (struct moment_rec *)buf;
	size_t at = sizeof(*r);

	memset(buf, 0, sizeof(buf));
	if (go) {
		struct moment_go g = { .curg = 0x4000a000, .sp = 0x4000c000, .pc = 0x401234,
				       .lr = 0x405678, .bp = 0x4000c010, .stack = 0x4000c000,
				       .stack_len = stack_len };
		memcpy(buf + at, &g, sizeof(g));
		at += sizeof(g);
		for (uint32_t i = 0; i < stack_len; i++)
			buf[at + i] = (uint8_t)(0xa0 + i);
		at += stack_len;
		r->flags |= MOMENT_F_GO;
	}
	if (wlen) {
		at = put_span(at, waddr, wlen, 0x40, 1);
		r->flags |= MOMENT_F_WINDOW;
	}
	if (tlen) {
		at = put_span(at, taddr, tlen, 0x70, 1);
		r->flags |= MOMENT_F_TOPWIN;
	}
	at = put_span(at, addr, len, 0x10, 1);
	r->nranges = 1;
	r->size = (uint32_t)at;
	return at;
}

/* The first slot range of r. */
static const struct moment_range_hdr *range0(const struct moment_rec *r, const uint8_t **data)
{
	struct moment_range_it it = { 0 };
	return moment_rec_next_range(r, &it, data);
}

/* Append a slot range of len bytes at addr to the record build() made:
 * its size. */
static size_t add_range(uint64_t addr, uint32_t len, uint8_t fill)
{
	struct moment_rec *r = (struct moment_rec *)buf;
	size_t at = put_span(r->size, addr, len, fill, 0);
	r->nranges++;
	r->size = (uint32_t)at;
	return at;
}

int main(void)
{
	const struct moment_rec *r = (const struct moment_rec *)buf;
	const struct moment_go *g;
	const struct moment_range_hdr *h;
	const uint8_t *stack, *data;

	build(true, 16, 0x7fff0000, 8);
	g = moment_rec_go(r, &stack);
	CHECK(g && g->pc == 0x401234 && g->lr == 0x405678 && g->stack_len == 16, "the goroutine part");
	CHECK(stack && stack[0] == 0xa0 && stack[15] == 0xaf, "its stack bytes follow it");
	h = range0(r, &data);
	CHECK(h && h->addr == 0x7fff0000 && data && data[0] == 0x10 && data[7] == 0x17,
	      "the slot range after the goroutine part");

	build(false, 0, 0x7fff0000, 8);
	CHECK(!moment_rec_go(r, &stack) && !stack, "no goroutine part without MOMENT_F_GO");
	h = range0(r, &data);
	CHECK(h && data && data[0] == 0x10, "the slot range right after the head");

	build(true, 0, 0x7fff0000, 8);
	g = moment_rec_go(r, &stack);
	CHECK(g && !stack, "a goroutine part without stack bytes (not read)");

	/* shorter than it says */
	build(true, 16, 0x7fff0000, 8);
	((struct moment_rec *)buf)->size = (uint32_t)(sizeof(struct moment_rec) + sizeof(struct moment_go) + 8);
	CHECK(!moment_rec_go(r, &stack) && !range0(r, &data),
	      "a stack longer than the record: no goroutine part, no range");
	((struct moment_rec *)buf)->size = (uint32_t)(sizeof(struct moment_rec) + 8);
	CHECK(!moment_rec_go(r, &stack), "a record too short for the goroutine part");
	build(true, 16, 0x7fff0000, 8);
	((struct moment_go *)(buf + sizeof(struct moment_rec)))->stack_len = 12;
	CHECK(!moment_rec_go(r, &stack), "a stack length that is not whole words");
	build(true, 16, 0x7fff0000, 8);
	((struct moment_go *)(buf + sizeof(struct moment_rec)))->stack_len = MOMENT_GO_STACK + 8;
	CHECK(!moment_rec_go(r, &stack), "a stack length over MOMENT_GO_STACK");
	CHECK(!moment_rec_window(r, &data) && !data, "no window without MOMENT_F_WINDOW");

	/* the window: after the goroutine part, before the slot ranges */
	waddr = 0x7ffe8000;
	wlen = 4096;
	build(true, 16, 0x7fff0000, 8);
	h = moment_rec_window(r, &data);
	CHECK(h && h->addr == 0x7ffe8000 && h->len == 4096 && data && data[0] == 0x40 && data[1] == 0x41,
	      "the window after the goroutine part");
	h = range0(r, &data);
	CHECK(h && h->addr == 0x7fff0000 && data && data[0] == 0x10, "the slot range after the window");
	build(false, 0, 0x7fff0000, 8);
	h = moment_rec_window(r, &data);
	CHECK(h && data && data[0] == 0x40, "the window right after the head");
	h = range0(r, &data);
	CHECK(h && data && data[0] == 0x10, "and the slot range after it");
	((struct moment_rec *)buf)->size = (uint32_t)(sizeof(struct moment_rec) + sizeof(struct moment_range_hdr) + 4000);
	CHECK(!moment_rec_window(r, &data) && !range0(r, &data),
	      "a window longer than the record: no window, no range");
	build(false, 0, 0x7fff0000, 8);
	((struct moment_range_hdr *)(buf + sizeof(struct moment_rec)))->len = MOMENT_WINDOW_MAX + 8;
	CHECK(!moment_rec_window(r, &data) && !range0(r, &data),
	      "a window over MOMENT_WINDOW_MAX: no window, no range");
	CHECK(!moment_rec_topwin(r, &data) && !data, "no top of the stack without MOMENT_F_TOPWIN");

	/* the top of the stack: after the window, before the slot ranges */
	taddr = 0x7fffe000;
	tlen = 8192;
	build(true, 16, 0x7fff0000, 8);
	h = moment_rec_topwin(r, &data);
	CHECK(h && h->addr == 0x7fffe000 && h->len == 8192 && data && data[0] == 0x70,
	      "the top of the stack after the window");
	h = moment_rec_window(r, &data);
	CHECK(h && h->addr == 0x7ffe8000 && data && data[0] == 0x40, "the window before it");
	h = range0(r, &data);
	CHECK(h && h->addr == 0x7fff0000 && data && data[0] == 0x10, "the slot range after both");
	wlen = 0;
	build(false, 0, 0x7fff0000, 8);
	h = moment_rec_topwin(r, &data);
	CHECK(h && data && data[0] == 0x70 && !moment_rec_window(r, &data),
	      "the top of the stack without a window");
	h = range0(r, &data);
	CHECK(h && data && data[0] == 0x10, "and the slot range after it");
	((struct moment_range_hdr *)(buf + sizeof(struct moment_rec)))->len = MOMENT_TOPWIN_MAX + 8;
	CHECK(!moment_rec_topwin(r, &data) && !range0(r, &data),
	      "a top of the stack over MOMENT_TOPWIN_MAX: none, no range");

	/* several ranges, one a call, and no more than nranges */
	tlen = wlen = 0;
	build(false, 0, 0x7fff0000, 8);
	add_range(0x7fff0100, 16, 0x21);
	add_range(0x7fff0400, 64, 0x22);
	{
		struct moment_range_it it = { 0 };
		const struct moment_range_hdr *a = moment_rec_next_range(r, &it, &data);
		const uint8_t *d1, *d2, *d3;
		const struct moment_range_hdr *b = moment_rec_next_range(r, &it, &d1);
		const struct moment_range_hdr *c = moment_rec_next_range(r, &it, &d2);
		const struct moment_range_hdr *e = moment_rec_next_range(r, &it, &d3);
		CHECK(a && a->addr == 0x7fff0000 && b && b->addr == 0x7fff0100 && b->len == 16 && d1[0] == 0x21 &&
		      c && c->addr == 0x7fff0400 && c->len == 64 && d2[63] == 0x22 && !e && !d3,
		      "three slot ranges in their order, then none");
		((struct moment_rec *)buf)->nranges = 2;
		memset(&it, 0, sizeof(it));
		a = moment_rec_next_range(r, &it, &data);
		b = moment_rec_next_range(r, &it, &data);
		CHECK(a && b && !moment_rec_next_range(r, &it, &data),
		      "a record saying 2 ranges gives 2, whatever bytes follow");
		((struct moment_rec *)buf)->nranges = 3;
		((struct moment_rec *)buf)->size -= 8;
		memset(&it, 0, sizeof(it));
		a = moment_rec_next_range(r, &it, &data);
		b = moment_rec_next_range(r, &it, &data);
		CHECK(a && b && !moment_rec_next_range(r, &it, &data) && !moment_rec_next_range(r, &it, &data),
		      "a last range past the record's end: the two before it, then none");
	}
	TEST_DONE();
}
