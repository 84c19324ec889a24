#include "record/ring.h"

#include <errno.h>
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
	r->base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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

size_t ring_read(struct ring *r, struct buf *out)
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
			memcpy(dst, data + off, h.size);
		} else {
			memcpy(dst, data + off, first);
			memcpy(dst + first, data, h.size - first);
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	return out->len - start;
}
