/* ring.h - read records from a perf_event mmap ring buffer, and size it.
 *
 * ring_read() copies every complete record currently in the ring into
 * out (records that wrap around the end are stitched), then releases the
 * space to the kernel. Never fails.
 *
 * Ring sizes are a power-of-two number of data pages (the kernel's rule),
 * given as perf's -m/--mmap-pages takes them; ring_parse_pages() reads
 * that syntax and ring_default_pages() picks a size from the rate and the
 * size of a sample record.
 */
#ifndef STAX_RECORD_RING_H
#define STAX_RECORD_RING_H

#include "lib/buf.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

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
/* A record copier: writes the record at src (whole, src->size bytes) to
 * dst (room for src->size bytes; dst may be src) and returns the bytes it
 * wrote, at most src->size. */
typedef size_t (*ring_copy_fn)(const struct perf_event_header *src, uint8_t *dst, void *arg);
/* Append the ring's complete records to out, each through copy(..., arg)
 * when copy is not NULL; returns bytes appended. */
size_t ring_read(struct ring *r, struct buf *out, ring_copy_fn copy, void *arg);

/* The largest ring ring_parse_pages() accepts, in bytes (per cpu). */
#define RING_MAX_BYTES (1ull << 30)
/* The default's bounds per cpu, in bytes. */
#define RING_DEFAULT_MIN_BYTES (1ull << 20)
#define RING_DEFAULT_MAX_BYTES (64ull << 20)
/* Milliseconds of samples at the requested rate that the default ring
 * of each cpu holds. */
#define RING_DEFAULT_MS 500

/* Parse s as perf's -m does: a number of pages that is a power of two
 * ("512"), or a size with a suffix B, K, M or G (either case: "2M",
 * "640K"), rounded up to a power-of-two number of pages of page bytes.
 * Returns 0 with *pages set, or -EINVAL with the reason in why[0..whylen)
 * (not a number, 0, not a power of two, above RING_MAX_BYTES). */
int ring_parse_pages(const char *s, size_t page, size_t *pages, struct err *err);

/* The default data pages of a sample ring: room for RING_DEFAULT_MS ms of
 * samples of record_bytes each at freq Hz (a cpu takes at most freq
 * samples a second of a clock event), rounded up to a power of two,
 * within RING_DEFAULT_MIN_BYTES and RING_DEFAULT_MAX_BYTES. */
size_t ring_default_pages(uint64_t freq, size_t record_bytes, size_t page);

#endif
