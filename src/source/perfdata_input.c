/* perfdata_input.c - the perf.data reader's input: a file, a pipe or
 * memory, read in blocks and never whole (see perfdata-private.h). */
#include "source/perfdata-private.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* ---- input: a file, a pipe or memory, read in blocks ---- */


/* Make n bytes at pos readable. NULL when the input ends first (or a
 * read failed: err is set). The pointer is valid until the next call. */
const uint8_t *pd_in_peek(struct pd_in *in, size_t n)
{
	if (in->fd < 0) {
		if (in->pos > in->size || in->size - in->pos < n)
			return NULL;
		return in->mem + in->pos;
	}
	while (in->hi - in->lo < n) {
		ssize_t r;
		if (in->eof)
			return NULL;
		if (in->lo && in->cap - in->lo < MAX(n, in->cap / 2)) {
			memmove(in->buf, in->buf + in->lo, in->hi - in->lo);
			in->hi -= in->lo;
			in->lo = 0;
		}
		if (in->cap - in->lo < n) {
			in->cap = MAX(n + in->lo, in->cap * 2);
			in->buf = xrealloc(in->buf, in->cap);
		}
		r = read(in->fd, in->buf + in->hi, in->cap - in->hi);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			in->err = errno;
		if (r <= 0)
			in->eof = true;
		else
			in->hi += (size_t)r;
	}
	return in->buf + in->lo;
}

/* Bytes buffered (or left in memory) at pos, without reading more. */
uint64_t pd_in_avail(const struct pd_in *in)
{
	if (in->fd < 0)
		return in->pos < in->size ? in->size - in->pos : 0;
	return in->hi - in->lo;
}

/* Consume n bytes. Returns false when the input ended first. */
bool pd_in_skip(struct pd_in *in, uint64_t n)
{
	uint64_t have;
	if (in->fd < 0) {
		if (in->pos > in->size || in->size - in->pos < n) {
			in->pos = in->size;
			return false;
		}
		in->pos += n;
		return true;
	}
	have = in->hi - in->lo;
	if (have >= n) {
		in->lo += (size_t)n;
		in->pos += n;
		return true;
	}
	in->pos += have;
	n -= have;
	in->lo = in->hi = 0;
	if (in->seekable) {
		if (in->size - in->pos < n || lseek(in->fd, (off_t)(in->pos + n), SEEK_SET) < 0) {
			in->pos = in->size;
			in->eof = true;
			return false;
		}
		in->pos += n;
		return true;
	}
	while (n) {
		const uint8_t *p = pd_in_peek(in, 1);
		uint64_t k;
		if (!p)
			return false;
		k = MIN(n, (uint64_t)(in->hi - in->lo));
		in->lo += (size_t)k;
		in->pos += k;
		n -= k;
	}
	return true;
}

/* Read n bytes at off (random access; seekable inputs only). */
bool pd_in_pread(struct pd_in *in, uint64_t off, void *dst, size_t n)
{
	size_t done = 0;
	if (off > in->size || in->size - off < n)
		return false;
	if (in->fd < 0) {
		memcpy(dst, in->mem + off, n);
		return true;
	}
	while (done < n) {
		ssize_t r = pread(in->fd, (uint8_t *)dst + done, n - done, (off_t)(off + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			in->err = r < 0 ? errno : 0;
			return false;
		}
		done += (size_t)r;
	}
	return true;
}

void pd_in_seek(struct pd_in *in, uint64_t off)
{
	in->pos = off;
	in->lo = in->hi = 0;
	in->eof = false;
	if (in->fd >= 0 && lseek(in->fd, (off_t)off, SEEK_SET) < 0)
		in->eof = true;
}

