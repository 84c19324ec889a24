#include "record/queue.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long the drain thread sleeps at most between two passes: the
 * kernel wakes it earlier when a ring is a quarter full, and the main
 * thread passes itself whenever it wakes (rqueue_pass(): every few ms
 * while it reads the processes, at least every 100 ms). Every pass
 * with records wakes the main thread too. At 50 ms, a
 * system-wide recording at 99 Hz cost 0.85-1.02% of a CPU on a busy
 * 2-cpu VM and 0.65% on an idle one; at 200 ms 0.63-0.66% and 0.35-0.40%. */
#define QUEUE_POLL_MS 200

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Write the sample h, parsed as s, to dst (which may be h) with its
 * stack copy cut to keep bytes (a multiple of 8, less than the copy) and
 * dyn_size to dyn; keep 0 leaves no copy and no dyn_size. Returns the
 * record's new size. */
static size_t write_cut(const struct perf_event_header *h, const struct perf_sample *s, uint8_t *dst,
			size_t keep, uint64_t dyn)
{
	/* u64 size, size bytes, u64 dyn_size: then what follows */
	const uint8_t *field = (const uint8_t *)s->stack - 8;
	const uint8_t *tail = (const uint8_t *)s->stack + s->stack_size + 8;
	size_t head = (size_t)(field - (const uint8_t *)h);
	size_t rest = (size_t)((const uint8_t *)h + h->size - tail), n;
	uint64_t sz = keep;
	struct perf_event_header nh = *h;

	memmove(dst, h, head + (keep ? 8 + keep : 0));
	memcpy(dst + head, &sz, 8);
	n = head + 8;
	if (keep) {
		n += keep;
		memcpy(dst + n, &dyn, 8);
		n += 8;
	}
	memmove(dst + n, tail, rest);
	n += rest;
	nh.size = (uint16_t)n;
	memcpy(dst, &nh, sizeof(nh));
	return n;
}

/* The sample h with a stack copy, parsed; false for any other record. */
static bool parse_copy(const struct perf_format *f, const struct perf_event_header *h,
		       struct perf_sample *s)
{
	return h->type == PERF_RECORD_SAMPLE && !perf_sample_parse(f, h, s) && s->stack_size &&
	       (const uint8_t *)s->stack + s->stack_size + 8 <= (const uint8_t *)h + h->size;
}

bool rqueue_trim_sample(const struct perf_format *f, struct perf_event_header *h, size_t keep)
{
	struct perf_sample s;

	keep &= ~(size_t)7;
	if (!parse_copy(f, h, &s) || keep >= s.stack_size)
		return false;
	write_cut(h, &s, (uint8_t *)h, keep, MIN(s.stack_dyn_size, (uint64_t)keep));
	h->misc |= QUEUE_MISC_TRIMMED;
	return true;
}

size_t rqueue_copy_record(const struct perf_event_header *h, uint8_t *dst, void *arg)
{
	const struct perf_format *f = arg;
	struct perf_sample s;
	size_t keep;

	if (parse_copy(f, h, &s)) {
		keep = (size_t)((s.stack_dyn_size + 7) & ~7ull) + 8;
		if (keep < s.stack_size)
			return write_cut(h, &s, dst, keep, s.stack_dyn_size);
	}
	memmove(dst, h, h->size);
	return h->size;
}

/* Degrade the samples of b[from..) (not counted in the level yet) by
 * the queue's level: shorten their stack copies above the high-water
 * mark, drop them at the bound. */
static void degrade(struct rqueue *q, struct buf *b, size_t from)
{
	size_t base = __atomic_load_n(&q->level, __ATOMIC_RELAXED);
	size_t rd = from, wr = from;
	uint64_t trimmed = 0, dropped = 0;

	if (base + (b->len - from) <= q->high)
		return;
	while (rd < b->len) {
		struct perf_event_header *h = (void *)(b->data + rd);
		size_t size = h->size;
		if (wr != rd)
			memmove(b->data + wr, h, size);
		h = (void *)(b->data + wr);
		rd += size;
		if (h->type == PERF_RECORD_SAMPLE) {
			/* what the queue would hold with this record kept whole */
			size_t at = base + (wr - from) + size;
			if (at > q->cap) {
				dropped++;
				continue;
			}
			if (at > q->high &&
			    rqueue_trim_sample(&q->fmt, h, at > q->higher ? 0 : QUEUE_TRIM_KEEP))
				trimmed++;
		}
		wr += h->size;
	}
	b->len = wr;
	if (trimmed)
		__atomic_add_fetch(&q->trimmed, trimmed, __ATOMIC_RELAXED);
	if (dropped)
		__atomic_add_fetch(&q->dropped, dropped, __ATOMIC_RELAXED);
}

/* One pass: every ring into the drain thread's own buffer, then that
 * into the queue when its lock is free. The drain thread never waits
 * for the lock: the main thread, holding it, may be preempted for a
 * long time on a busy machine, and the rings would overflow meanwhile. */
static void pass(struct rqueue *q, bool wait, bool notify)
{
	uint64_t start = mono_ns();
	size_t i, level = 0;
	bool wake = false;

	for (i = 0; i < q->nrings; i++) {
		size_t from = q->local.len;
		if (!q->rings[i].base || !ring_read(&q->rings[i], &q->local, rqueue_copy_record, &q->fmt))
			continue;
		degrade(q, &q->local, from);
		level = __atomic_add_fetch(&q->level, q->local.len - from, __ATOMIC_RELAXED);
	}
	if (level > __atomic_load_n(&q->peak, __ATOMIC_RELAXED))
		__atomic_store_n(&q->peak, level, __ATOMIC_RELAXED);
	if (wait)
		pthread_mutex_lock(&q->mu);
	else if (pthread_mutex_trylock(&q->mu))
		return; /* the next pass hands these over */
	if (q->local.len) {
		if (!q->pending.len) {
			struct buf t = q->pending;
			q->pending = q->local;
			q->local = t;
		} else if (wait) {
			buf_add(&q->pending, q->local.data, q->local.len);
		} else {
			/* the main thread has not taken pending yet (it was
			 * told): keep these in local, never copy them again;
			 * the first pass after it took pending hands them
			 * over, and rqueue_take() wakes it for that (pass_ns
			 * stays: these are not in the queue) */
			q->held = true;
			pthread_mutex_unlock(&q->mu);
			return;
		}
		buf_reset(&q->local);
		wake = notify && !q->notified;
		q->notified |= wake;
	}
	/* every record written before this pass began is in the queue */
	q->pass_ns = start;
	pthread_mutex_unlock(&q->mu);
	if (wake && write(q->notify[1], "r", 1) < 0) {
		/* full: the main thread is being woken anyway */
	}
}

/* Ask the scheduler to run this thread as soon as it wakes. On a busy
 * machine (1,000 runnable threads of the workload), a thread of normal
 * priority went unscheduled for up to 2 s, and the rings overflowed; at
 * nice -10 still 0.7 s. SCHED_FIFO at the lowest priority runs it at
 * once: it wakes when a ring is a quarter full or every 50 ms, copies
 * what is there and sleeps again, so the CPU time it takes is that of
 * the copying (the kernel's real-time throttling bounds it in any case).
 * Without the privilege (CAP_SYS_NICE or ulimit -r), ask for the shortest
 * slice instead: EEVDF (Linux 6.12 and later) reads sched_runtime as the
 * latency request of a SCHED_OTHER thread; older kernels ignore it. The
 * thread's share of the CPU does not change either way. */
static void ask_low_latency(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct { /* the first version of struct sched_attr (linux/sched/types.h) */
		uint32_t size, sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime, sched_deadline, sched_period;
	} a;

	if (!pthread_setschedparam(pthread_self(), SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		return;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_OTHER;
	a.sched_nice = getpriority(PRIO_PROCESS, 0); /* as it is */
	a.sched_runtime = 100000; /* ns: the shortest slice the kernel takes */
	if (syscall(SYS_sched_setattr, 0, &a, 0)) {
		/* an older kernel or a policy that refuses: run as is */
	}
}

static void *drain_main(void *arg)
{
	struct rqueue *q = arg;
	struct pollfd *pfds = calloc(q->nrings + 1, sizeof(*pfds));
	bool *hup = calloc(q->nrings, sizeof(*hup));
	size_t i, np;

	ask_low_latency();
	while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE)) {
		np = 0;
		if (pfds) {
			pfds[np].fd = q->wake[0];
			pfds[np++].events = POLLIN;
		}
		for (i = 0; pfds && hup && i < q->nrings; i++) {
			/* an event whose task exited hangs up: its ring is
			 * still read at every pass, no longer polled */
			if (!q->rings[i].base || hup[i])
				continue;
			pfds[np].fd = q->rings[i].fd;
			pfds[np].events = POLLIN;
			pfds[np++].revents = 0;
		}
		if (pfds && hup) {
			poll(pfds, (nfds_t)np, QUEUE_POLL_MS);
			for (i = 1, np = 1; i <= q->nrings; i++) {
				if (!q->rings[i - 1].base || hup[i - 1])
					continue;
				if (pfds[np++].revents & (POLLHUP | POLLERR))
					hup[i - 1] = true;
			}
		} else {
			usleep(QUEUE_POLL_MS * 1000); /* no memory for the poll set */
		}
		if (pfds && (pfds[0].revents & POLLIN)) {
			char tmp[16];
			while (read(q->wake[0], tmp, sizeof(tmp)) > 0)
				;
		}
		/* the main thread passing (rqueue_pass()) reads the rings now */
		if (!pthread_mutex_trylock(&q->pass_mu)) {
			pass(q, false, true);
			pthread_mutex_unlock(&q->pass_mu);
		}
	}
	pthread_mutex_lock(&q->pass_mu);
	pass(q, true, true); /* the events are disabled: what is left */
	pthread_mutex_unlock(&q->pass_mu);
	free(pfds);
	free(hup);
	return NULL;
}

void rqueue_pass(struct rqueue *q)
{
	if (!q->started || q->stopped || pthread_mutex_trylock(&q->pass_mu))
		return;
	pass(q, false, false); /* the caller takes what it read */
	pthread_mutex_unlock(&q->pass_mu);
}

int rqueue_start(struct rqueue *q, struct ring *rings, size_t nrings, const struct perf_format *f,
		 size_t cap)
{
	int e;
	memset(q, 0, sizeof(*q));
	q->wake[0] = q->wake[1] = q->notify[0] = q->notify[1] = -1;
	q->rings = rings;
	q->nrings = nrings;
	q->fmt = *f;
	q->cap = cap;
	q->high = cap / 2;
	q->higher = cap / 8 * 7;
	pthread_mutex_init(&q->mu, NULL);
	pthread_mutex_init(&q->pass_mu, NULL);
	q->inited = true;
	if (pipe2(q->wake, O_CLOEXEC | O_NONBLOCK) || pipe2(q->notify, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	e = -pthread_create(&q->thread, NULL, drain_main, q);
	if (e)
		return e;
	q->started = true;
	return 0;
}

int rqueue_fd(const struct rqueue *q)
{
	return q->notify[0];
}

void rqueue_stop(struct rqueue *q)
{
	if (!q->inited || q->stopped)
		return;
	if (q->started) {
		__atomic_store_n(&q->stop, true, __ATOMIC_RELEASE);
		if (write(q->wake[1], "s", 1) < 0) {
			/* full: it wakes anyway */
		}
		pthread_join(q->thread, NULL);
		q->started = false;
	} else {
		pass(q, true, false); /* no thread: the last pass here */
	}
	q->stopped = true;
	pthread_mutex_lock(&q->mu);
	q->pass_ns = UINT64_MAX;
	pthread_mutex_unlock(&q->mu);
}

uint64_t rqueue_take(struct rqueue *q, struct buf *out)
{
	struct buf b;
	uint64_t t;
	char tmp[16];
	bool held;

	if (!q->started && !q->stopped)
		pass(q, true, false); /* no thread: read the rings now */
	pthread_mutex_lock(&q->mu);
	b = q->pending;
	q->pending = q->spare; /* empty, with the room it had */
	t = q->pass_ns;
	held = q->held;
	q->held = false;
	if (q->notified) {
		while (read(q->notify[0], tmp, sizeof(tmp)) > 0)
			;
		q->notified = false;
	}
	pthread_mutex_unlock(&q->mu);
	if (held && write(q->wake[1], "h", 1) < 0) {
		/* full: the drain thread is being woken anyway */
	}
	if (!out->len) {
		/* hand the buffer over whole */
		q->spare = *out;
		*out = b;
	} else {
		buf_add(out, b.data, b.len);
		q->spare = b;
	}
	buf_reset(&q->spare);
	return t;
}

void rqueue_done(struct rqueue *q, size_t bytes)
{
	__atomic_sub_fetch(&q->level, bytes, __ATOMIC_RELAXED);
}

void rqueue_release(struct rqueue *q)
{
	if (!q->inited)
		return;
	rqueue_stop(q);
	pthread_mutex_destroy(&q->mu);
	pthread_mutex_destroy(&q->pass_mu);
	buf_release(&q->pending);
	buf_release(&q->spare);
	buf_release(&q->local);
	for (int i = 0; i < 2; i++) {
		if (q->wake[i] >= 0)
			close(q->wake[i]);
		if (q->notify[i] >= 0)
			close(q->notify[i]);
		q->wake[i] = q->notify[i] = -1;
	}
	q->inited = false;
}
