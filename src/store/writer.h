/* writer.h - append records to a recording file in zstd chunks.
 *
 * Records are buffered and written as one chunk per store_flush(): a
 * chunk is complete on disk or absent, so readers never see half of one.
 * Nodes and samples are batched into REC_NODES / REC_SAMPLES records;
 * a flush writes pending nodes before pending samples, so every sample
 * refers to nodes defined in its chunk or earlier ones.
 *
 * store_put_*() only buffer and return nothing; the first write error
 * (-errno: the file system may be full) is kept in w->err and returned
 * by store_flush(), store_sync() and store_writer_close().
 */
#ifndef STAX_STORE_WRITER_H
#define STAX_STORE_WRITER_H

#include "lib/buf.h"
#include "store/format.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store_writer {
	int fd;
	uint32_t seq;
	struct buf raw;        /* records of the chunk being built */
	struct buf nodes;      /* pending struct rec_node */
	uint32_t nodes_first;  /* id of the first pending node */
	struct buf samples;    /* pending struct rec_sample */
	struct buf offcpu;     /* pending struct rec_offcpu */
	struct buf wakers;     /* pending REC_WAKER records, whole */
	struct buf open;       /* threads off the CPU now (REC_OFFCPU_OPEN) */
	struct buf metas;      /* every META record put, for store_repeat_meta() */
	uint64_t open_as_of;
	bool open_dirty;       /* open changed since it was last written */
	bool late;             /* the chunk being built holds a late stack:
				* written as CHUNK_DATA_LATE */
	struct buf comp;
	void *cctx;            /* ZSTD_CCtx */
	int level;             /* zstd level of data chunks: 3, or -3 (fast) */
	uint64_t last_flush_ns;
	uint64_t bytes;        /* bytes written to the file so far (by the
				* compressor thread: read it after store_sync) */
	uint64_t nsamples;
	int err;               /* first write error (-errno), sticky */
	uint32_t seq_written;  /* chunks wholly written (bytes is their end) */
	/* the compressor thread and the chunk handed to it */
	bool threaded, stop, job_full;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct buf job;
	enum chunk_kind job_kind;
	uint32_t job_seq;
};

/* Create (truncate) path and write the file header: for scratch files
 * (tests, /proc/self/fd/N of a memfd). A file a user named is created
 * with lib/safefile.h and given to store_writer_open_fd(). */
int store_writer_open(struct store_writer *w, const char *path);
/* Write the file header to fd, a new file open for writing; w owns fd
 * from here (closed by store_writer_close(), or here on failure). */
int store_writer_open_fd(struct store_writer *w, int fd);
/* After a write error (the disk is full): wait for the chunk being
 * written, drop every record not yet written, and cut the file back to
 * the end of its last whole chunk, so that it reads as a recording that
 * ends there; then clear the error, so that a few more records (the end
 * time, an END chunk) may be tried. 0, or -errno when the file cannot be
 * cut (the error stays). */
int store_writer_rewind(struct store_writer *w);
/* For a recording that is read once and dropped (a perf.data imported
 * into memory for a query): compress faster, at zstd level -3; call it
 * before the first flush. */
void store_writer_fast(struct store_writer *w);
/* Flush what is pending, then an END chunk; close. When a write fails the
 * file is cut back to its last whole chunk (as by store_writer_rewind())
 * and the error returned. */
int store_writer_close(struct store_writer *w);

void store_put_meta(struct store_writer *w, const char *key, const char *value);
/* A META record whose value is v in decimal. */
void store_put_meta_u64(struct store_writer *w, const char *key, uint64_t v);
/* Put every META record put so far again: a reader that lost the first
 * chunk to damage still learns the command, event, rate... (a later META
 * with the same key wins, so nothing changes for the others). */
void store_repeat_meta(struct store_writer *w);
void store_put_comm(struct store_writer *w, const struct rec_comm *c, const char *name);
void store_put_mapping(struct store_writer *w, const struct rec_mapping *m, const char *path);
void store_put_task(struct store_writer *w, enum rec_type type, const struct rec_task *t);
/* Nodes must be put with consecutive ids starting at 1. */
void store_put_node(struct store_writer *w, uint32_t id, const struct rec_node *n);
void store_put_sample(struct store_writer *w, const struct rec_sample *s);
/* The records of the chunk being built hold a late stack, put another
 * way than by the functions below (a copy of a chunk): it is written as
 * CHUNK_DATA_LATE. (store_put_sample, store_put_offcpu, store_put_waker
 * and store_set_offcpu_open see the late flags themselves.) */
void store_mark_late(struct store_writer *w);
/* Off-CPU intervals are batched like samples (after them in a chunk). */
void store_put_offcpu(struct store_writer *w, const struct rec_offcpu *o);
/* The intervals still open as of as_of (their start, stack and reason;
 * duration 0), replacing the previous set: written as a REC_OFFCPU_OPEN
 * record with the next chunk when the set changed (or, while it is not
 * empty, as_of moved), so that readers of a growing or crashed recording
 * see the threads that are blocked right now. An empty set is written
 * once, ending the previous one. */
void store_set_offcpu_open(struct store_writer *w, uint64_t as_of,
			   const struct rec_offcpu *o, size_t n);
void store_put_lost(struct store_writer *w, const struct rec_lost *l);
void store_put_throttle(struct store_writer *w, const struct rec_throttle *t);
/* Who ended an off-CPU interval; comm may be NULL. */
void store_put_waker(struct store_writer *w, const struct rec_waker *k, const char *comm);
void store_put_symbol(struct store_writer *w, const struct rec_symbol *s,
		      const char *name, const char *module);
/* One inlined function of a REC_SYMBOL_SRC record. */
struct store_inline {
	const char *name, *file;  /* NULL is written as "" */
	uint32_t line;
};
/* Put right after the store_put_symbol() of the same address. */
void store_put_symbol_src(struct store_writer *w, const struct rec_symbol_src *s,
			  const char *file, const struct store_inline *inl);
/* A copy of a JIT perf map (size bytes) for process pid. */
void store_put_perfmap(struct store_writer *w, uint32_t pid, const void *data, uint32_t size);

/* Write what is buffered as one chunk (no-op when empty). The chunk is
 * compressed and written by a thread of the writer while the caller goes
 * on; the call waits only for the previous chunk. Returns the first write
 * error seen so far (0 or -errno). */
int store_flush(struct store_writer *w, enum chunk_kind kind);
/* Wait until every chunk flushed so far is written; the first write error. */
int store_sync(struct store_writer *w);
/* Flush when 200 ms passed since the last flush or the buffer is large. */
int store_maybe_flush(struct store_writer *w);
/* Milliseconds until store_maybe_flush() would flush what is pending (at
 * least 1), at most max: how long a recorder may sleep between drains so
 * that chunks follow each other at most 250 ms apart. */
int store_ms_to_flush(const struct store_writer *w, int max);

#endif
