#include "store/reader.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

static int fail(struct store_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct store_reader *r, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(r->err, sizeof(r->err), "%s: ", r->path);
	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

bool store_is_recording(const void *head, size_t n)
{
	return n >= 8 && !memcmp(head, STORE_MAGIC, 8);
}

static int check_header(struct store_reader *r)
{
	struct store_file_header h;
	if (r->size < sizeof(h))
		return fail(r, "not a stax recording: file is %zu bytes, too short for a header"
			    " (is the recording still starting?)", r->size);
	memcpy(&h, r->map, sizeof(h));
	if (!store_is_recording(h.magic, 8))
		return fail(r, "not a stax recording: bad magic at offset 0"
			    " (record one with 'stax record' or pass a perf.data file)");
	if (h.version != STORE_VERSION)
		return fail(r, "unsupported recording version %u (this stax reads version %u;"
			    " use a matching stax)", h.version, STORE_VERSION);
	if (h.header_size < sizeof(h) || h.header_size > r->size)
		return fail(r, "corrupt file header at offset 8: header size %u", h.header_size);
	r->off = h.header_size;
	r->dctx = ZSTD_createDCtx();
	return 0;
}

int store_reader_open_mem(struct store_reader *r, const char *name,
			  const void *data, size_t size)
{
	memset(r, 0, sizeof(*r));
	r->path = name;
	r->map = data;
	r->size = size;
	return check_header(r);
}

int store_reader_open(struct store_reader *r, const char *path)
{
	struct stat st;
	int fd;
	void *map;

	memset(r, 0, sizeof(*r));
	r->path = path;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(r, "cannot open: %s (%s)", strerror(errno),
			    errno == ENOENT ? "record one first with 'stax record -- CMD', or pass -i FILE"
					    : "check the file's permissions");
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(r, "cannot read: not a regular file (pass a recording file)");
	}
	if (st.st_size == 0) {
		close(fd);
		return fail(r, "not a stax recording: the file is empty (the recording may not have started yet)");
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return fail(r, "cannot map the file: %s", strerror(errno));
	r->map = map;
	r->size = (size_t)st.st_size;
	r->owned = true;
	if (check_header(r) < 0) {
		munmap(map, r->size);
		r->map = NULL;
		return -1;
	}
	return 0;
}

void store_reader_close(struct store_reader *r)
{
	if (r->owned && r->map)
		munmap((void *)r->map, r->size);
	r->map = NULL;
	ZSTD_freeDCtx(r->dctx);
	r->dctx = NULL;
	buf_release(&r->raw);
}

int store_reader_next(struct store_reader *r, struct store_chunk *c)
{
	struct store_chunk_header h;
	size_t left, n;

	if (r->ended)
		return 0;
	left = r->size - r->off;
	if (left == 0) {
		r->partial = true; /* still recording, or killed between chunks */
		return 0;
	}
	if (left < sizeof(h)) {
		r->partial = true;
		return 0;
	}
	memcpy(&h, r->map + r->off, sizeof(h));
	if (h.magic != STORE_CHUNK_MAGIC)
		return fail(r, "corrupt chunk at offset %zu: bad chunk magic 0x%08x"
			    " (the file is damaged; record again)", r->off, h.magic);
	if (h.check != (h.raw_size ^ h.comp_size ^ h.seq ^ STORE_CHECK_XOR))
		return fail(r, "corrupt chunk at offset %zu: header check mismatch"
			    " (the file is damaged; record again)", r->off);
	if (h.seq != r->seq)
		return fail(r, "corrupt chunk at offset %zu: sequence %u, expected %u"
			    " (the file is damaged; record again)", r->off, h.seq, r->seq);
	if (h.kind < CHUNK_DATA || h.kind > CHUNK_END)
		return fail(r, "unsupported chunk kind %u at offset %zu (a newer stax wrote this file)",
			    h.kind, r->off);
	if (h.raw_size > STORE_MAX_RAW || h.comp_size > STORE_MAX_COMP)
		return fail(r, "corrupt chunk at offset %zu: sizes %u/%u out of range"
			    " (the file is damaged; record again)", r->off, h.raw_size, h.comp_size);
	if (left - sizeof(h) < h.comp_size) {
		r->partial = true; /* the chunk is still being written, or never was */
		return 0;
	}
	buf_reset(&r->raw);
	buf_extend(&r->raw, h.raw_size);
	n = ZSTD_decompressDCtx(r->dctx, r->raw.data, h.raw_size,
				r->map + r->off + sizeof(h), h.comp_size);
	if (ZSTD_isError(n) || n != h.raw_size)
		return fail(r, "corrupt chunk at offset %zu: %s (the file is damaged; record again)",
			    r->off, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
	c->kind = (enum chunk_kind)h.kind;
	c->data = r->raw.data;
	c->size = h.raw_size;
	c->offset = r->off;
	r->off += sizeof(h) + h.comp_size;
	r->seq++;
	if (h.kind == CHUNK_END)
		r->ended = true;
	return 1;
}

int store_chunk_next_record(struct store_reader *r, struct store_record_iter *it,
			    struct store_record *rec)
{
	struct rec_header h;
	const struct store_chunk *c = it->chunk;

	if (it->off == c->size)
		return 0;
	if (c->size - it->off < sizeof(h))
		return fail(r, "corrupt record at chunk offset %" PRIu64 "+%zu: truncated header",
			    c->offset, it->off);
	memcpy(&h, c->data + it->off, sizeof(h));
	if (h.size < sizeof(h) || h.size % 8 || h.size > c->size - it->off)
		return fail(r, "corrupt record at chunk offset %" PRIu64 "+%zu: size %u",
			    c->offset, it->off, h.size);
	rec->type = h.type;
	rec->flags = h.flags;
	rec->payload = c->data + it->off + sizeof(h);
	rec->size = h.size - sizeof(h);
	rec->chunk_offset = c->offset;
	rec->offset = it->off;
	it->off += h.size;
	return 1;
}
