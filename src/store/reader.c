#include "store/reader.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

static int fail(struct store_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct store_reader *r, const char *fmt, ...)
{
	va_list ap;
	err_set(&r->err, -1, "%s: ", r->path);
	va_start(ap, fmt);
	{
		size_t n = strlen(r->err.msg);
		vsnprintf(r->err.msg + n, sizeof(r->err.msg) - n, fmt, ap);
	}
	va_end(ap);
	return -1;
}

bool store_is_recording(const void *head, size_t n)
{
	return n >= 8 && !memcmp(head, STORE_MAGIC, 8);
}

/* "FILE is not a stax recording or perf.data (why)": the one message
 * every command gives for a file that is neither. */
static int not_recording(struct store_reader *r, const char *why)
{
	return err_set(&r->err, -1, "%s is not a stax recording or perf.data (%s)", r->path, why);
}

static int check_header(struct store_reader *r)
{
	struct store_file_header h;
	char why[160];
	if (r->size < sizeof(h)) {
		snprintf(why, sizeof(why), "it is %zu bytes, too short for a header; a recording that is"
			 " just starting has none yet", r->size);
		return not_recording(r, why);
	}
	memcpy(&h, r->map, sizeof(h));
	/* the query commands take perf.data before they get here (they
	 * import it); a command that reads only recordings says so */
	if (!memcmp(h.magic, "PERFILE2", 8))
		return err_set(&r->err, -1, "%s is a perf.data file, not a stax recording (convert it:"
			       " stax import %s -o FILE.data)", r->path, r->path);
	if (!store_is_recording(h.magic, 8))
		return not_recording(r, "it starts with neither STAXREC nor PERFILE2; record one with"
				     " 'stax record -- CMD'");
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
		r->size = 0;
		return not_recording(r, "the file is empty; a recording that is just starting has no"
				     " header yet");
	}
	/* the writer holds an exclusive lock until it has finished the file;
	 * this shared one is dropped with fd */
	r->live = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
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

/* Is there a chunk header at off: magic, check and sizes hold? */
static bool header_at(const struct store_reader *r, size_t off, struct store_chunk_header *h)
{
	if (off > r->size || r->size - off < sizeof(*h))
		return false;
	memcpy(h, r->map + off, sizeof(*h));
	return h->magic == STORE_CHUNK_MAGIC &&
	       h->check == (h->raw_size ^ h->comp_size ^ h->seq ^ STORE_CHECK_XOR) &&
	       h->raw_size <= STORE_MAX_RAW && h->comp_size <= STORE_MAX_COMP;
}

/* The checksum frame of the chunk at off (whole in the file): 1 it
 * holds, 0 the chunk has none (written before stax had them), -1 it
 * does not hold or is missing though the flags say it is there. */
static int check_sum(const struct store_reader *r, size_t off, const struct store_chunk_header *h)
{
	struct store_chunk_sum sum;
	const uint8_t *p = r->map + off;
	bool there = false;
	if (h->comp_size >= sizeof(sum)) {
		memcpy(&sum, p + sizeof(*h) + h->comp_size - sizeof(sum), sizeof(sum));
		there = sum.magic == STORE_SUM_MAGIC && sum.size == sizeof(sum.xxh3);
	}
	if (!there)
		return h->flags & CHUNK_F_SUM ? -1 : 0;
	return XXH3_64bits(p, sizeof(*h) + h->comp_size - sizeof(sum)) == sum.xxh3 ? 1 : -1;
}

/* Where reading goes on after a damaged chunk at off: next, the end of
 * the chunk by its header, when that header could be trusted (0 when
 * not) and a chunk header follows there; else the first chunk header
 * after off whose sequence number fits (r->seq or later, by at most one
 * per 24 bytes skipped) and whose checksum, if it has one, holds; else
 * the end of the file. */
static size_t find_next(const struct store_reader *r, size_t off, size_t next)
{
	static const uint8_t magic[4] = { 0x43, 0x48, 0x4e, 0x4b }; /* STORE_CHUNK_MAGIC, little-endian */
	struct store_chunk_header h;
	size_t at = off + 1;

	if (next && next <= r->size &&
	    (r->size - next < sizeof(h) || (header_at(r, next, &h) && h.seq > r->seq)))
		return next;
	while (at + sizeof(h) <= r->size) {
		const uint8_t *m = memmem(r->map + at, r->size - at, magic, sizeof(magic));
		if (!m)
			break;
		at = (size_t)(m - r->map);
		if (header_at(r, at, &h) && h.seq >= r->seq && h.seq - r->seq <= (at - off) / sizeof(h) + 1 &&
		    (r->size - at - sizeof(h) < h.comp_size || check_sum(r, at, &h) >= 0))
			return at;
		at++;
	}
	return r->size;
}

static void note_damage(struct store_reader *r, uint64_t off, uint64_t chunks, uint64_t bytes,
			uint64_t lost_raw, const char *why)
{
	struct store_damage *d = &r->damage;
	if (!d->regions) {
		d->first = off;
		snprintf(d->why, sizeof(d->why), "%s", why);
	}
	d->regions++;
	d->chunks += chunks;
	d->bytes += bytes;
	d->lost_raw += lost_raw;
}

/* Skip the damaged chunk at off (raw_size is from its header, when that
 * could be trusted, with next its end; else both 0) and count it. */
static void skip_damaged(struct store_reader *r, size_t off, size_t next, uint32_t raw_size,
			 const char *why)
{
	struct store_chunk_header h;
	size_t to = find_next(r, off, next);
	uint64_t chunks = 1, lost_raw;
	uint32_t seq = r->seq + 1;

	if (to < r->size && header_at(r, to, &h)) {
		if (h.seq > r->seq)
			chunks = h.seq - r->seq;
		seq = h.seq;
	}
	if (next)
		lost_raw = raw_size;
	else
		/* what the skipped bytes could have held: zstd compresses
		 * records about 5 times; allow much more */
		lost_raw = MIN((uint64_t)(to - off) * 32, chunks * STORE_MAX_RAW);
	note_damage(r, off, chunks, to - off, lost_raw, why);
	r->off = to;
	r->seq = seq;
}

int store_reader_next(struct store_reader *r, struct store_chunk *c)
{
	for (;;) {
		struct store_chunk_header h;
		size_t left, n, off = r->off, next;
		char why[160];
		int sum;

		if (r->ended)
			return 0;
		left = r->size - off;
		if (left == 0) {
			r->partial = true; /* still recording, or killed between chunks */
			return 0;
		}
		if (!header_at(r, off, &h)) {
			if (left < sizeof(h)) {
				/* a chunk still being written, or cut */
				r->partial = true;
				r->tail = left;
				return 0;
			}
			if (h.magic != STORE_CHUNK_MAGIC)
				snprintf(why, sizeof(why), "bad chunk magic 0x%08x", h.magic);
			else if (h.check != (h.raw_size ^ h.comp_size ^ h.seq ^ STORE_CHECK_XOR))
				snprintf(why, sizeof(why), "header check mismatch");
			else
				snprintf(why, sizeof(why), "sizes %u/%u out of range", h.raw_size, h.comp_size);
			skip_damaged(r, off, 0, 0, why);
			continue;
		}
		if (h.seq < r->seq) {
			snprintf(why, sizeof(why), "sequence %u, expected %u", h.seq, r->seq);
			skip_damaged(r, off, 0, 0, why);
			continue;
		}
		if (left - sizeof(h) < h.comp_size) {
			r->partial = true; /* the chunk is still being written, or never was */
			r->tail = left;
			return 0;
		}
		if (h.seq > r->seq) {
			/* chunks missing, though no bytes are: count them (what
			 * they held was never in this file, so nothing to make up
			 * for) */
			snprintf(why, sizeof(why), "sequence %u, expected %u", h.seq, r->seq);
			note_damage(r, off, h.seq - r->seq, 0, 0, why);
			r->seq = h.seq;
		}
		next = off + sizeof(h) + h.comp_size;
		sum = check_sum(r, off, &h);
		if (sum < 0) {
			skip_damaged(r, off, next, h.raw_size, "checksum mismatch");
			continue;
		}
		if (h.kind < CHUNK_DATA || h.kind > CHUNK_DATA_LATE) {
			if (sum > 0)
				return fail(r, "unsupported chunk kind %u at offset %zu (a newer stax wrote this"
					    " file; read it with that stax)", h.kind, off);
			snprintf(why, sizeof(why), "chunk kind %u, which no stax writes without a checksum",
				 h.kind);
			skip_damaged(r, off, next, h.raw_size, why);
			continue;
		}
		buf_reset(&r->raw);
		buf_extend(&r->raw, h.raw_size);
		n = ZSTD_decompressDCtx(r->dctx, r->raw.data, h.raw_size, r->map + off + sizeof(h), h.comp_size);
		if (ZSTD_isError(n) || n != h.raw_size) {
			snprintf(why, sizeof(why), "%s", ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
			skip_damaged(r, off, next, h.raw_size, why);
			continue;
		}
		c->late = h.kind == CHUNK_DATA_LATE;
		c->kind = c->late ? CHUNK_DATA : (enum chunk_kind)h.kind;
		c->data = r->raw.data;
		c->size = h.raw_size;
		c->offset = off;
		c->file_size = sizeof(h) + h.comp_size;
		r->off = next;
		r->seq++;
		if (c->kind == CHUNK_DATA)
			r->data_bytes += c->file_size;
		if (h.kind == CHUNK_END)
			r->ended = true;
		return 1;
	}
}

void store_reader_damaged(struct store_reader *r, const struct store_chunk *c, size_t at,
			  const char *why)
{
	const char *w = why;
	size_t n = strlen(r->path);
	/* r->err holds "PATH: what": keep the what */
	if (!strncmp(w, r->path, n) && !strncmp(w + n, ": ", 2))
		w += n + 2;
	note_damage(r, c->offset, 1, c->file_size, c->size > at ? c->size - at : 0, w);
	if (c->kind == CHUNK_DATA && r->data_bytes >= c->file_size)
		r->data_bytes -= c->file_size;
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
