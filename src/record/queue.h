/* queue.h - the recorder's drain thread and its bounded queue.
 *
 * A thread of its own copies the records out of the kernel's rings as
 * soon as they are there (as perf does) into a queue; the recorder's main
 * thread takes them from the queue and unwinds, interns and writes them
 * at its own pace. Draining so never waits for unwinding: the kernel
 * loses records only when the drain thread itself cannot run.
 *
 * The queue is bounded. When the main thread falls behind and the queue
 * holds more than half its bound (the high-water mark), the drain thread
 * keeps only the top QUEUE_TRIM_KEEP bytes of the stack copy of each
 * sample (the kernel's call chain stays whole), above seven eighths none
 * of it, and marks those samples (QUEUE_MISC_TRIMMED in the header's
 * misc); at the bound it drops samples and counts them (other records,
 * small and needed to name processes and mappings, are always kept).
 *
 * The drain thread touches the rings, the queue (under its mutex) and
 * the counters (atomics) only: nothing of the ingester, unwinder or
 * writer.
 */
#ifndef STAX_RECORD_QUEUE_H
#define STAX_RECORD_QUEUE_H

#include "lib/buf.h"
#include "record/ring.h"
#include "ingest/ingest.h"
#include "ingest/sample.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* QUEUE_MISC_TRIMMED (ingest/ingest.h) marks the samples it shortened. */
/* Bytes of stack copy a sample keeps above the high-water mark. */
#define QUEUE_TRIM_KEEP 1024
/* The queue's bound: twice the bytes of all rings, within these. */
#define QUEUE_MIN_BYTES (64ull << 20)
#define QUEUE_MAX_BYTES (1ull << 30)

struct rqueue {
	struct ring *rings;       /* nrings of them; a ring without base is skipped */
	size_t nrings;
	struct perf_format fmt;
	size_t cap, high, higher; /* bound, high-water mark, no stack copy above */
	pthread_t thread;
	bool started, stopped;
	pthread_mutex_t mu;
	pthread_mutex_t pass_mu;  /* one pass at a time: the drain thread's or rqueue_pass()'s */
	bool inited;
	struct buf pending;       /* read, not taken yet (under mu) */
	struct buf spare;         /* the main thread's: the next pending */
	struct buf local;         /* the pass's (under pass_mu): read, not in pending yet */
	uint64_t pass_ns;         /* start of the last whole pass over the rings (under mu) */
	int wake[2];              /* to the drain thread: stop */
	int notify[2];            /* to the main thread: records are waiting */
	bool notified;            /* (under mu) a byte is in notify */
	bool held;                /* (under mu) local holds records that waited
				   * for pending to be taken (pass()) */
	/* atomics */
	size_t level;             /* bytes read and not yet handled by the main thread */
	size_t peak;              /* the largest level seen */
	uint64_t trimmed;         /* samples whose stack copy was shortened */
	uint64_t dropped;         /* samples dropped at the bound */
	bool stop;
};

/* Start the drain thread over rings[0..nrings) (the caller keeps them
 * mapped until rqueue_stop) with a bound of cap bytes. Returns 0 or
 * -errno: no thread, and then rqueue_take() reads the rings itself. */
int rqueue_start(struct rqueue *q, struct ring *rings, size_t nrings, const struct perf_format *f,
		 size_t cap);
/* The fd that is readable when records wait to be taken (for poll). */
int rqueue_fd(const struct rqueue *q);
/* Pass over the rings now, from the calling thread, unless the drain
 * thread is at it: the recorder's main thread does at every wakeup, so
 * that what it takes is every record written up to then (and while it
 * reads the processes, Python frames and deep stacks, it wakes every few
 * ms to take samples soon after they were taken: one wakeup a pass
 * instead of two, the drain thread's and then its own). The drain thread
 * keeps its own pace (every 200 ms, or when a ring is a quarter full),
 * so draining still never waits for unwinding. No-op without the
 * thread. */
void rqueue_pass(struct rqueue *q);
/* Stop the drain thread after one last pass over the rings; then the
 * rings may be unmapped. Idempotent; a no-op when not started. */
void rqueue_stop(struct rqueue *q);
/* Append the records read since the last call to out. Returns the time
 * before which every record the kernel wrote is in out or was taken
 * before (the start of the drain thread's last whole pass; UINT64_MAX
 * once stopped). */
uint64_t rqueue_take(struct rqueue *q, struct buf *out);
/* The main thread has handled bytes of what it took. */
void rqueue_done(struct rqueue *q, size_t bytes);
/* Stop (if running) and free. */
void rqueue_release(struct rqueue *q);

/* Shorten the stack copy of the sample record h (laid out by f, at most
 * h->size bytes, in writable memory) to keep bytes, in place; sets
 * QUEUE_MISC_TRIMMED and h->size. Returns false (nothing changed) when
 * the record has no longer copy or does not parse. */
bool rqueue_trim_sample(const struct perf_format *f, struct perf_event_header *h, size_t keep);
/* ring_read()'s copier for the drain thread (arg: the struct perf_format
 * of the records): a sample's stack copy is cut to the bytes the kernel
 * filled (dyn_size, rounded up to 8) and 8 more. The kernel reserves the
 * whole copy (--stack-size, 32 KiB by default) in every sample however
 * little of it the stack used, so a shallow stack's record was mostly
 * bytes nobody reads, copied out of the ring and through the queue. The
 * 8 bytes more keep dyn_size below the copy's size where it was below,
 * so a copy that was full is still told from one that was not. Nothing
 * is marked: no byte the kernel wrote is lost. */
size_t rqueue_copy_record(const struct perf_event_header *h, uint8_t *dst, void *arg);

#endif
