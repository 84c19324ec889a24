#include "store/writer.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>
#include <zstd_errors.h>

/* 200 ms: with the time a drain takes, chunks stay under 250 ms apart */
#define FLUSH_INTERVAL_NS (200ull * 1000 * 1000)
#define FLUSH_BYTES (1u << 20)

/* Compress and write one chunk of raw records (the compressor thread, or
 * the caller when there is none). Returns 0 or -errno: a compression that
 * fails (zstd out of memory: -ENOMEM) is a chunk that cannot be written,
 * as on a full disk, and its writer's user ends the file the same way. */
static int write_chunk(struct store_writer *w, const struct buf *raw, enum chunk_kind kind, uint32_t seq)
{
	struct store_chunk_header h;
	struct store_chunk_sum sum;
	size_t bound, n;
	int ret;

	bound = ZSTD_compressBound(raw->len);
	buf_reset(&w->comp);
	buf_extend(&w->comp, sizeof(h) + bound + sizeof(sum));
	n = ZSTD_compress2(w->cctx, w->comp.data + sizeof(h), bound, raw->data, raw->len);
	if (ZSTD_isError(n))
		return ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation ? -ENOMEM : -EIO;
	h.magic = STORE_CHUNK_MAGIC;
	h.kind = (uint16_t)kind;
	h.flags = CHUNK_F_SUM;
	h.seq = seq;
	h.raw_size = (uint32_t)raw->len;
	h.comp_size = (uint32_t)(n + sizeof(sum));
	h.check = h.raw_size ^ h.comp_size ^ h.seq ^ STORE_CHECK_XOR;
	memcpy(w->comp.data, &h, sizeof(h));
	/* the checksum frame: a zstd skippable frame after the data frame */
	sum.magic = STORE_SUM_MAGIC;
	sum.size = sizeof(sum.xxh3);
	sum.xxh3 = XXH3_64bits(w->comp.data, sizeof(h) + n);
	memcpy(w->comp.data + sizeof(h) + n, &sum, sizeof(sum));
	n += sizeof(sum);
	/* One write per chunk: readers see a whole chunk or a short tail. */
	ret = write_all(w->fd, w->comp.data, sizeof(h) + n);
	if (!ret) {
		w->bytes += sizeof(h) + n;
		w->seq_written = seq + 1;
	}
	return ret;
}

/* The compressor thread: takes the chunk handed over in w->job, writes
 * it, and hands the buffer back empty, while the caller builds the next. */
static void *compressor_main(void *arg)
{
	struct store_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		int ret;
		while (!w->job_full && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->job_full)
			break;
		pthread_mutex_unlock(&w->mu);
		ret = write_chunk(w, &w->job, w->job_kind, w->job_seq);
		pthread_mutex_lock(&w->mu);
		if (ret && !w->err)
			w->err = ret;
		buf_reset(&w->job);
		w->job_full = false;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Compression costs about 2 ms per MiB of records here: a thread does it,
 * so that building the next chunk (the recorder draining its rings, an
 * import parsing its input) goes on meanwhile. Without a thread, chunks
 * are written by store_flush itself. The thread takes no signals: they
 * stay with the threads that handle them. */
static void start_compressor(struct store_writer *w)
{
	sigset_t all, old;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w->threaded = pthread_create(&w->thread, NULL, compressor_main, w) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Wait until the compressor has no chunk in hand. Called with w->mu held. */
static void wait_idle(struct store_writer *w)
{
	while (w->job_full)
		pthread_cond_wait(&w->cv, &w->mu);
}

void store_writer_fast(struct store_writer *w)
{
	w->level = -3;
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
}

int store_sync(struct store_writer *w)
{
	int ret;
	if (!w->threaded)
		return w->err;
	pthread_mutex_lock(&w->mu);
	wait_idle(w);
	ret = w->err;
	pthread_mutex_unlock(&w->mu);
	return ret;
}

int store_writer_open(struct store_writer *w, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		memset(w, 0, sizeof(*w));
		w->fd = -1;
		return -errno;
	}
	return store_writer_open_fd(w, fd);
}

int store_writer_open_fd(struct store_writer *w, int fd)
{
	struct store_file_header h;
	int ret, i;

	memset(w, 0, sizeof(*w));
	w->fd = fd;
	/* held until the END chunk is written: readers tell a recording in
	 * progress from one whose writer died (see format.h). A reader holds
	 * its shared lock for microseconds (open to mmap): try again a
	 * little, never wait on it for long. */
	for (i = 0; i < 100 && flock(w->fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK; i++)
		usleep(1000);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, STORE_MAGIC, 8);
	h.version = STORE_VERSION;
	h.header_size = sizeof(h);
	ret = write_all(w->fd, &h, sizeof(h));
	if (ret) {
		close(w->fd);
		w->fd = -1;
		return ret;
	}
	w->bytes = sizeof(h);
	w->nodes_first = 1;
	w->cctx = ZSTD_createCCtx();
	w->level = 3;
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
	w->last_flush_ns = now_ns();
	start_compressor(w);
	return 0;
}

int store_writer_rewind(struct store_writer *w)
{
	store_sync(w);
	buf_reset(&w->raw);
	/* ids stay consecutive if more nodes are put (they refer to lost ones) */
	w->nodes_first += (uint32_t)(w->nodes.len / sizeof(struct rec_node));
	buf_reset(&w->nodes);
	buf_reset(&w->samples);
	buf_reset(&w->offcpu);
	buf_reset(&w->wakers);
	w->open_dirty = false;
	w->seq = w->seq_written;
	w->err = 0;
	if (w->fd < 0)
		return -EBADF;
	if (ftruncate(w->fd, (off_t)w->bytes) || lseek(w->fd, (off_t)w->bytes, SEEK_SET) < 0)
		return w->err = -errno;
	return 0;
}

static void rec_begin(struct store_writer *w, enum rec_type type, size_t *start)
{
	struct rec_header h = { (uint16_t)type, 0, 0 };
	*start = w->raw.len;
	buf_add(&w->raw, &h, sizeof(h));
}

static void rec_end(struct store_writer *w, size_t start)
{
	struct rec_header *h;
	buf_align(&w->raw, 8);
	h = (struct rec_header *)(w->raw.data + start);
	h->size = (uint32_t)(w->raw.len - start);
}

void store_put_meta(struct store_writer *w, const char *key, const char *value)
{
	size_t at;
	rec_begin(w, REC_META, &at);
	buf_add_str(&w->raw, key);
	buf_add_str(&w->raw, value);
	rec_end(w, at);
	buf_add(&w->metas, w->raw.data + at, w->raw.len - at);
}

void store_put_meta_u64(struct store_writer *w, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	store_put_meta(w, key, buf);
}

void store_repeat_meta(struct store_writer *w)
{
	if (w->metas.len)
		buf_add(&w->raw, w->metas.data, w->metas.len);
}

void store_put_comm(struct store_writer *w, const struct rec_comm *c, const char *name)
{
	size_t at;
	rec_begin(w, REC_COMM, &at);
	buf_add(&w->raw, c, sizeof(*c));
	buf_add_str(&w->raw, name);
	rec_end(w, at);
}

void store_put_mapping(struct store_writer *w, const struct rec_mapping *m, const char *path)
{
	size_t at;
	rec_begin(w, REC_MAPPING, &at);
	buf_add(&w->raw, m, sizeof(*m));
	buf_add_str(&w->raw, path);
	rec_end(w, at);
}

void store_put_task(struct store_writer *w, enum rec_type type, const struct rec_task *t)
{
	size_t at;
	rec_begin(w, type, &at);
	buf_add(&w->raw, t, sizeof(*t));
	rec_end(w, at);
}

void store_put_lost(struct store_writer *w, const struct rec_lost *l)
{
	size_t at;
	rec_begin(w, REC_LOST, &at);
	buf_add(&w->raw, l, sizeof(*l));
	rec_end(w, at);
}

void store_put_waker(struct store_writer *w, const struct rec_waker *k, const char *comm)
{
	/* whole records, kept until the nodes of the chunk are written:
	 * the waker's stack may be among them */
	size_t at = w->wakers.len;
	struct rec_header h = { REC_WAKER, 0, 0 };
	buf_add(&w->wakers, &h, sizeof(h));
	buf_add(&w->wakers, k, sizeof(*k));
	buf_add_str(&w->wakers, comm ? comm : "");
	w->late |= (k->flags & WAKER_F_LATE) != 0;
	while ((w->wakers.len - at) % 8)
		buf_add_u8(&w->wakers, 0);
	h.size = (uint32_t)(w->wakers.len - at);
	memcpy(w->wakers.data + at, &h, sizeof(h));
}

void store_put_throttle(struct store_writer *w, const struct rec_throttle *t)
{
	size_t at;
	rec_begin(w, REC_THROTTLE, &at);
	buf_add(&w->raw, t, sizeof(*t));
	rec_end(w, at);
}

void store_put_symbol(struct store_writer *w, const struct rec_symbol *s,
		      const char *name, const char *module)
{
	size_t at;
	rec_begin(w, REC_SYMBOL, &at);
	buf_add(&w->raw, s, sizeof(*s));
	buf_add_str(&w->raw, name);
	buf_add_str(&w->raw, module);
	rec_end(w, at);
}

void store_put_symbol_src(struct store_writer *w, const struct rec_symbol_src *s,
			  const char *file, const struct store_inline *inl)
{
	size_t at;
	uint32_t i;
	rec_begin(w, REC_SYMBOL_SRC, &at);
	buf_add(&w->raw, s, sizeof(*s));
	buf_add_str(&w->raw, file ? file : "");
	for (i = 0; i < s->ninline; i++) {
		buf_add_u32(&w->raw, inl[i].line);
		buf_add_str(&w->raw, inl[i].name ? inl[i].name : "");
		buf_add_str(&w->raw, inl[i].file ? inl[i].file : "");
	}
	rec_end(w, at);
}

void store_put_perfmap(struct store_writer *w, uint32_t pid, const void *data, uint32_t size)
{
	size_t at;
	rec_begin(w, REC_PERFMAP, &at);
	buf_add_u32(&w->raw, pid);
	buf_add_u32(&w->raw, size);
	buf_add(&w->raw, data, size);
	rec_end(w, at);
}

void store_put_node(struct store_writer *w, uint32_t id, const struct rec_node *n)
{
	if (id != w->nodes_first + w->nodes.len / sizeof(*n))
		BUG("nodes must be put with consecutive ids");
	buf_add(&w->nodes, n, sizeof(*n));
}

void store_put_sample(struct store_writer *w, const struct rec_sample *s)
{
	buf_add(&w->samples, s, sizeof(*s));
	w->nsamples++;
	w->late |= (s->quality & SAMPLE_Q_LATE) != 0;
}

void store_put_offcpu(struct store_writer *w, const struct rec_offcpu *o)
{
	buf_add(&w->offcpu, o, sizeof(*o));
	w->late |= (o->flags & OFFCPU_F_LATE) != 0;
}

void store_mark_late(struct store_writer *w)
{
	w->late = true;
}

/* Move pending nodes and samples into the raw buffer as batch records. */
static void put_batches(struct store_writer *w)
{
	size_t at;
	if (w->nodes.len) {
		uint32_t count = (uint32_t)(w->nodes.len / sizeof(struct rec_node));
		rec_begin(w, REC_NODES, &at);
		buf_add_u32(&w->raw, w->nodes_first);
		buf_add_u32(&w->raw, count);
		buf_add(&w->raw, w->nodes.data, w->nodes.len);
		rec_end(w, at);
		w->nodes_first += count;
		buf_reset(&w->nodes);
	}
	if (w->samples.len) {
		rec_begin(w, REC_SAMPLES, &at);
		buf_add_u32(&w->raw, (uint32_t)(w->samples.len / sizeof(struct rec_sample)));
		buf_add_u32(&w->raw, 0);
		buf_add(&w->raw, w->samples.data, w->samples.len);
		rec_end(w, at);
		buf_reset(&w->samples);
	}
	if (w->offcpu.len) {
		rec_begin(w, REC_OFFCPU, &at);
		buf_add_u32(&w->raw, (uint32_t)(w->offcpu.len / sizeof(struct rec_offcpu)));
		buf_add_u32(&w->raw, 0);
		buf_add(&w->raw, w->offcpu.data, w->offcpu.len);
		rec_end(w, at);
		buf_reset(&w->offcpu);
	}
	if (w->wakers.len) {
		buf_add(&w->raw, w->wakers.data, w->wakers.len);
		buf_reset(&w->wakers);
	}
	if (w->open_dirty) {
		rec_begin(w, REC_OFFCPU_OPEN, &at);
		buf_add_u32(&w->raw, (uint32_t)(w->open.len / sizeof(struct rec_offcpu)));
		buf_add_u32(&w->raw, 0);
		buf_add_u64(&w->raw, w->open_as_of);
		buf_add(&w->raw, w->open.data, w->open.len);
		rec_end(w, at);
		w->open_dirty = false;
	}
}

int store_flush(struct store_writer *w, enum chunk_kind kind)
{
	struct buf t;
	int ret;

	put_batches(w);
	w->last_flush_ns = now_ns();
	ret = store_sync(w);
	if (!w->raw.len && kind != CHUNK_END)
		return ret;
	if (kind == CHUNK_DATA && w->late)
		kind = CHUNK_DATA_LATE;
	w->late = false;
	if (ret || w->fd < 0)
		return ret ? ret : -EBADF;
	if (w->raw.len > STORE_MAX_RAW)
		BUG("chunk too large");
	if (!w->threaded) {
		ret = write_chunk(w, &w->raw, kind, w->seq++);
		buf_reset(&w->raw);
		if (ret)
			w->err = ret;
		return ret;
	}
	/* hand the records over; the compressor's empty buffer becomes ours */
	pthread_mutex_lock(&w->mu);
	t = w->job;
	w->job = w->raw;
	w->raw = t;
	w->job_kind = kind;
	w->job_seq = w->seq++;
	w->job_full = true;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

void store_set_offcpu_open(struct store_writer *w, uint64_t as_of,
			   const struct rec_offcpu *o, size_t n)
{
	size_t len = n * sizeof(*o);
	if (len == w->open.len && (!len || (!memcmp(w->open.data, o, len) && as_of == w->open_as_of)))
		return;
	buf_reset(&w->open);
	buf_add(&w->open, o, len);
	w->open_as_of = as_of;
	w->open_dirty = true;
	for (size_t i = 0; i < n; i++)
		w->late |= (o[i].flags & OFFCPU_F_LATE) != 0;
}

/* What a flush would write now (the open set counts one when changed). */
static size_t pending(const struct store_writer *w)
{
	return w->raw.len + w->nodes.len + w->samples.len + w->offcpu.len + w->wakers.len + w->open_dirty;
}

int store_maybe_flush(struct store_writer *w)
{
	size_t pending_now = pending(w);
	if (pending_now >= FLUSH_BYTES ||
	    (pending_now && now_ns() - w->last_flush_ns >= FLUSH_INTERVAL_NS))
		return store_flush(w, CHUNK_DATA);
	return w->err;
}

int store_ms_to_flush(const struct store_writer *w, int max)
{
	uint64_t since = now_ns() - w->last_flush_ns, ms;
	/* with nothing pending, new records wait in the rings until the
	 * next wakeup: a flush is due right after that one */
	if (since >= FLUSH_INTERVAL_NS)
		return pending(w) ? 1 : max;
	ms = (FLUSH_INTERVAL_NS - since + 999999) / 1000000;
	return ms < (uint64_t)max ? (int)(ms ? ms : 1) : max;
}

int store_writer_close(struct store_writer *w)
{
	int ret = store_flush(w, CHUNK_DATA);
	if (!ret)
		ret = store_flush(w, CHUNK_END);
	if (!ret)
		ret = store_sync(w);
	/* never leave half a chunk at the end: cut back to the last whole one */
	if (ret && w->fd >= 0) {
		int e = w->err ? w->err : ret;
		store_writer_rewind(w);
		w->err = e;
	}
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		wait_idle(w);
		w->stop = true;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		w->threaded = false;
		if (!ret)
			ret = w->err;
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
	if (w->fd >= 0)
		flock(w->fd, LOCK_UN); /* a dup of fd (a memfd handed on) keeps no lock */
	if (w->fd >= 0 && close(w->fd) && !ret)
		ret = -errno;
	w->fd = -1;
	ZSTD_freeCCtx(w->cctx);
	w->cctx = NULL;
	buf_release(&w->raw);
	buf_release(&w->nodes);
	buf_release(&w->samples);
	buf_release(&w->offcpu);
	buf_release(&w->wakers);
	buf_release(&w->open);
	buf_release(&w->metas);
	buf_release(&w->comp);
	buf_release(&w->job);
	return ret;
}
