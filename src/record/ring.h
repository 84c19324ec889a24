/* ring.h - read records from a perf_event mmap ring buffer.
 *
 * ring_read() copies every complete record currently in the ring into
 * out (records that wrap around the end are stitched), then releases the
 * space to the kernel. Never fails.
 */
#ifndef STAX_RECORD_RING_H
#define STAX_RECORD_RING_H

#include "lib/buf.h"

#include <stddef.h>
#include <stdint.h>

struct ring {
	int fd;
	void *base;          /* the mapped control page + data */
	size_t data_size;    /* power of two */
	size_t map_size;
};

/* Map the ring of fd with data_pages pages of data (power of two).
 * Returns 0 or -errno. */
int ring_map(struct ring *r, int fd, size_t data_pages);
void ring_unmap(struct ring *r);
/* Append the ring's complete records to out; returns bytes appended. */
size_t ring_read(struct ring *r, struct buf *out);

#endif
