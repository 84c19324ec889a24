#include "record/ring.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ring_map(struct ring *r, int fd, size_t data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->data_size = data_pages * page;
	r->map_size = r->data_size + page;
	/* populated now, before recording: first touches of a big ring
	 * while draining it slowed the recorder down */
	r->base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	return 0;
}

void ring_unmap(struct ring *r)
{
	if (r->base)
		munmap(r->base, r->map_size);
	r->base = NULL;
}

size_t ring_read(struct ring *r, struct buf *out, ring_copy_fn copy, void *arg)
{
	struct perf_event_mmap_page *pg = r->base;
	const uint8_t *data;
	uint64_t head, tail;
	size_t start = out->len;

	if (!pg)
		return 0;
	data = (const uint8_t *)r->base + pg->data_offset;
	if (!pg->data_offset)
		data = (const uint8_t *)r->base + sysconf(_SC_PAGESIZE);
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail & (r->data_size - 1), first;
		uint8_t *dst;

		/* the header itself may wrap */
		first = r->data_size - off;
		if (first >= sizeof(h)) {
			memcpy(&h, data + off, sizeof(h));
		} else {
			memcpy(&h, data + off, first);
			memcpy((uint8_t *)&h + first, data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || tail + h.size > head)
			break; /* cannot happen with a sane kernel; stop rather than loop */
		dst = buf_extend(out, h.size);
		if (first >= h.size) {
			/* read in place: only what the copier keeps is copied */
			if (copy)
				out->len -= h.size - copy((const void *)(data + off), dst, arg);
			else
				memcpy(dst, data + off, h.size);
		} else {
			memcpy(dst, data + off, first);
			memcpy(dst + first, data, h.size - first);
			if (copy)
				out->len -= h.size - copy((const void *)dst, dst, arg);
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return out->len - start;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static uint64_t roundup_pow2(uint64_t v)
{
	uint64_t p = 1;
	while (p < v && p)
		p <<= 1;
	return p;
}

int ring_parse_pages(const char *s, size_t page, size_t *pages, struct err *err)
{
	uint64_t v, mult = 0, bytes;
	char *end;
	char max[32];

	format_size_exact(max, sizeof(max), RING_MAX_BYTES);
	errno = 0;
	if (!s || !(*s >= '0' && *s <= '9')) {
		err_set(err, -1, "not a number of pages or a size (like 512, 512K or 8M)");
		return -EINVAL;
	}
	v = strtoull(s, &end, 10);
	if (errno) {
		err_set(err, -1, "too large (at most %s per cpu)", max);
		return -EINVAL;
	}
	if (*end) {
		switch (*end) {
		case 'B': case 'b': mult = 1; break;
		case 'K': case 'k': mult = 1ull << 10; break;
		case 'M': case 'm': mult = 1ull << 20; break;
		case 'G': case 'g': mult = 1ull << 30; break;
		}
		if (!mult || end[1]) {
			err_set(err, -1, "not a number of pages or a size (like 512, 512K or 8M;"
				 " suffixes B, K, M, G)");
			return -EINVAL;
		}
	}
	if (!v) {
		err_set(err, -1, "a ring needs at least one page");
		return -EINVAL;
	}
	if (mult) {
		if (v > RING_MAX_BYTES / mult) {
			err_set(err, -1, "too large (at most %s per cpu)", max);
			return -EINVAL;
		}
		bytes = v * mult;
		*pages = (size_t)roundup_pow2((bytes + page - 1) / page);
		if ((uint64_t)*pages * page > RING_MAX_BYTES) {
			err_set(err, -1, "too large (at most %s per cpu)", max);
			return -EINVAL;
		}
		return 0;
	}
	if (v > RING_MAX_BYTES / page) {
		err_set(err, -1, "too large (at most %" PRIu64 " pages, %s per cpu)",
			 (uint64_t)(RING_MAX_BYTES / page), max);
		return -EINVAL;
	}
	if (!is_pow2(v)) {
		uint64_t lo = roundup_pow2(v) >> 1;
		err_set(err, -1, "the number of pages must be a power of two (%" PRIu64 " or %" PRIu64
			 "), or give a size like %" PRIu64 "K", lo, lo * 2, v * (page / 1024));
		return -EINVAL;
	}
	*pages = (size_t)v;
	return 0;
}

size_t ring_default_pages(uint64_t freq, size_t record_bytes, size_t page)
{
	/* at most 2^32 Hz x 2^17 bytes x 2^10 ms: no overflow */
	uint64_t bytes = MIN(freq, 1ull << 32) * MIN((uint64_t)record_bytes, 1ull << 17) *
			 RING_DEFAULT_MS / 1000;
	uint64_t pages;

	bytes = MAX(bytes, RING_DEFAULT_MIN_BYTES);
	pages = roundup_pow2((bytes + page - 1) / page);
	while (pages > 1 && pages * page > RING_DEFAULT_MAX_BYTES)
		pages >>= 1;
	return (size_t)pages;
}
