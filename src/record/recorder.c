#include "record/recorder.h"
#include "record/events.h"
#include "ingest/ingest.h"
#include "record/queue.h"
#include "record/ring.h"
#include "record/target.h"
#include "store/writer.h"
#include "lib/perm.h"
#include "lib/safefile.h"
#include "lib/util.h"
#include "lib/version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>


struct rec_ref {
	uint64_t time;
	const struct perf_event_header *h; /* in carry or batch */
	size_t ord;                        /* order taken: carry's, then batch's */
};

struct recorder {
	const struct record_opts *o;
	struct err *err;         /* record_run()'s: why it failed */
	const struct event_spec *ev;
	bool kernel;
	/* while read_fast, the main thread reads the rings itself every
	 * read_ms (read_pace()): since read_window_ns, when read_samples of
	 * the ingest's samples read the process (read_all of them in all) */
	bool read_fast, read_seen;
	uint32_t read_ms;
	uint64_t read_window_ns, read_samples, read_all;
	struct perm_facts perm;  /* what this process may record (lib/perm.h) */
	int ncpus;
	int cpus_sampled;   /* -a: the cpus whose sampling event opened */
	int *fds;
	size_t nfds, fdcap;
	struct ring *rings;      /* one per cpu */
	/* --off-cpu: the switch records (PERF_RECORD_SWITCH) in rings of
	 * their own, one per cpu, so that a flood of switch samples with
	 * stack copies cannot crowd out the records that time the intervals */
	struct ring *srings;
	/* --off-cpu with wakers, not -a: sched_waking on every cpu for
	 * every process, without stacks, in rings of their own: who outside
	 * the recorded processes (or which interrupt) woke a recorded thread */
	struct ring *wrings;
	size_t pages, switch_pages; /* data pages of each ring, of each switch ring */
	/* records kept from the last drain (carry), then those taken from
	 * the queue (batch: its buffer, handed over whole, never copied) */
	struct buf batch, carry, carry2;
	/* the drain thread copies the rings into this queue (queue.h) */
	struct rqueue q;
	bool queue_on;
	uint64_t dropped_put;    /* of q.dropped: written as LOST_QUEUE */
	/* carry's and batch's records sorted by time; refs[pos..nrefs) wait (drain()) */
	struct rec_ref *refs;
	size_t nrefs, pos, refcap;
	uint64_t safe;
	struct perf_format fmt;
	struct ingest ing;
	struct store_writer w;
	uint64_t start_ns, end_ns;
	struct safe_created out; /* the file, made by safe_create() */
	struct target child;
	bool launched, child_done;
	int child_status;
	/* --duration with CMD: when SIGTERM went to CMD (0: not yet), and
	 * whether SIGKILL followed 5 s later */
	uint64_t term_ns;
	bool killed;
	/* a write failed: recording stopped at fail_ns, events closed */
	bool failed;
	uint64_t fail_ns;
	/* CPU time of attached processes (-p): at the start and as last
	 * seen, from /proc/PID/stat, for the effective rate in stax info */
	uint64_t *cpu_first, *cpu_last;
	/* --off-cpu: wake-ups recorded (sched:sched_waking), or why not */
	bool wakers;
	struct perf_event_attr wkattr;
	struct waking_format wf;
	char wakers_why[300];
};

/* ---- signals: a self-pipe wakes the poll loop ---- */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_count, sig_last, sig_user;
static bool sig_stop;
static sig_atomic_t sig_seen, sig_forwarded;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	(void)uc;
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		sig_last = sig;
		/* si_code <= 0: sent by a process (kill), not by the terminal */
		sig_user = si && si->si_code <= 0;
		sig_count++;
	}
	if (write(sig_pipe[1], "s", 1) < 0) {
		/* pipe full: the loop is awake anyway */
	}
	errno = e;
}

static int install_signals(struct err *e)
{
	struct sigaction sa;
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* past a file size limit (ulimit -f) a write fails with EFBIG, which
	 * is handled like a full disk, instead of killing stax */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

static void restore_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
}

/* ---- opening events ---- */

/* Pages of the switch-record rings by default: two 48-byte records a
 * switch, 8 MiB hold ~80,000 switches between two drains (a busy
 * recorder on a loaded machine lost them with 2 MiB). */
#define SWITCH_RING_PAGES 2048
/* The largest wakeup watermark: the records read at a wakeup are copied
 * into the recorder's batch, whose pages cost the first time they are
 * touched; a bigger ring holds more, it need not wake the recorder later. */
#define WAKEUP_MAX_BYTES (1u << 20)
/* The sample rings' default size with --off-cpu, at least. */
#define OFFCPU_RING_MIN_BYTES (16ull << 20)
/* Call-chain entries of a typical sample, for the default ring size. */
#define TYPICAL_CHAIN 32

/* Bytes of a PERF_RECORD_SAMPLE of attr with a call chain of chain
 * entries: the fixed fields, the registers and the whole stack copy (the
 * kernel always writes sample_stack_user bytes). */
static size_t sample_record_bytes(const struct perf_event_attr *a, size_t chain)
{
	size_t n = 8; /* header */
	uint64_t t = a->sample_type;
	n += 8 * !!(t & PERF_SAMPLE_IDENTIFIER) + 8 * !!(t & PERF_SAMPLE_IP) +
	     8 * !!(t & PERF_SAMPLE_TID) + 8 * !!(t & PERF_SAMPLE_TIME) +
	     8 * !!(t & PERF_SAMPLE_CPU) + 8 * !!(t & PERF_SAMPLE_PERIOD);
	if (t & PERF_SAMPLE_CALLCHAIN)
		n += 8 + 8 * (chain + 3); /* with the context markers */
	if (t & PERF_SAMPLE_RAW)
		n += 8 + 40; /* sched_waking's fields, padded */
	if (t & PERF_SAMPLE_REGS_USER)
		n += 8 + 8 * (size_t)__builtin_popcountll(a->sample_regs_user);
	if (t & PERF_SAMPLE_STACK_USER)
		n += 16 + a->sample_stack_user;
	return n;
}

/* Choose the size of the rings (r->pages, r->switch_pages): -m, or the
 * default from the rate and the record size, within what this user may
 * lock. Prints the error and returns -1 when -m does not fit. */
static int size_rings(struct recorder *r, const struct perf_event_attr *attr)
{
	const struct record_opts *o = r->o;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t largest = sample_record_bytes(attr, (size_t)attr->sample_max_stack);
	size_t nrings = o->off_cpu ? 2 : 1, need_kb, budget;
	long online = sysconf(_SC_NPROCESSORS_ONLN), mlock_kb, memlock_kb;
	char have[32], rec[32];

	if (online < 1)
		online = 1;
	budget = event_mlock_budget_kb(&mlock_kb, &memlock_kb);
	if (o->mmap_pages) {
		r->pages = r->switch_pages = o->mmap_pages;
		format_size_exact(have, sizeof(have), (uint64_t)r->pages * page);
		format_size(rec, sizeof(rec), largest);
		if (r->pages * page < 2 * largest) {
			size_t min = 1;
			while (min * page < 2 * largest)
				min *= 2;
			return err_set(r->err, -1, "-m %zu (%s per cpu) cannot hold two samples of up to %s%s"
				     " (give -m %zu or more%s)", r->pages, have, rec,
				     attr->sample_stack_user ? " with their stack copies" : "", min,
				     attr->sample_stack_user ? ", or a smaller --stack-size" : "");
		}
		need_kb = (size_t)online * nrings * (r->pages + 1) * (page / 1024);
		if (budget != SIZE_MAX && need_kb > budget)
			return err_set(r->err, -1, "cannot lock ring buffers of %s per cpu (-m %zu): %ld cpu%s need %zu KiB%s,"
				     " and kernel.perf_event_mlock_kb (%ld KiB per cpu) with ulimit -l (%ld KiB)"
				     " let this user lock %zu KiB (use a smaller -m, or run: sudo sysctl"
				     " kernel.perf_event_mlock_kb=%zu, or raise ulimit -l)",
				     have, r->pages, online, online == 1 ? "" : "s", need_kb,
				     nrings > 1 ? " (two rings each with --off-cpu)" : "", mlock_kb, memlock_kb,
				     budget, need_kb / (size_t)online + 4);
		return 0;
	}
	r->pages = ring_default_pages(o->freq, sample_record_bytes(attr, TYPICAL_CHAIN), page);
	r->switch_pages = SWITCH_RING_PAGES;
	if (o->off_cpu)
		/* switch-outs write samples (with as much stack as samples) at the rate
		 * of context switches, whatever -F says, in bursts */
		r->pages = MIN(MAX(r->pages * 4, (size_t)(OFFCPU_RING_MIN_BYTES / page)),
			       (size_t)(RING_DEFAULT_MAX_BYTES / page));
	/* over all cpus, at most 1/32 of the memory */
	{
		long phys = sysconf(_SC_PHYS_PAGES);
		size_t cap = phys > 0 ? (size_t)phys / 32 : SIZE_MAX;
		while (r->pages * page > RING_DEFAULT_MIN_BYTES &&
		       (size_t)r->ncpus * (r->pages + (nrings > 1 ? r->switch_pages : 0)) > cap)
			r->pages /= 2;
	}
	if (budget != SIZE_MAX) {
		/* keep half of ulimit -l for other tools */
		size_t fit = (budget - (size_t)MAX(memlock_kb, 0) / 2) / (page / 1024) / (size_t)r->ncpus;
		if (o->off_cpu) {
			while (r->switch_pages > 1 && (r->switch_pages + 1) * 2 > fit)
				r->switch_pages /= 2;
			fit = fit > r->switch_pages + 1 ? fit - (r->switch_pages + 1) : 0;
		}
		while (r->pages > 1 && r->pages + 1 > fit)
			r->pages /= 2;
	}
	return 0;
}

static void add_fd(struct recorder *r, int fd)
{
	GROW(r->fds, r->fdcap, r->nfds + 1);
	r->fds[r->nfds++] = fd;
}

/* Open the event for task pid on every cpu into rings (of pages pages);
 * the first fd per cpu owns the ring, later ones write into it. */
static int open_into(struct recorder *r, struct perf_event_attr *attr, int pid,
		     struct ring *rings, size_t pages)
{
	int cpu, opened = 0;
	/* Wake the recorder when a quarter of the ring is full (at most
	 * WAKEUP_MAX_BYTES), not on every sample: each wakeup preempts the
	 * profiled threads (seen as off-CPU "preempted" time) and a sample
	 * with a stack copy is larger than a small watermark. The loop polls
	 * every 100 ms anyway. */
	attr->wakeup_watermark = (uint32_t)MIN(pages * (size_t)sysconf(_SC_PAGESIZE) / 4,
					       (size_t)WAKEUP_MAX_BYTES);
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		int fd = event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || (errno == EINVAL && cpu > 0))
				continue; /* offline cpu */
			return event_open_error(errno, r->ev, r->o->freq, r->o->npids ? pid : 0, r->err);
		}
		add_fd(r, fd);
		if (!rings[cpu].base) {
			int e = ring_map(&rings[cpu], fd, pages);
			char size[32], why[512];
			format_size_exact(size, sizeof(size), (uint64_t)pages * (size_t)sysconf(_SC_PAGESIZE));
			if (e == -EPERM || e == -ENOMEM)
				return err_set(r->err, -1, "cannot map a ring buffer of %s: %s", size,
					     perm_why(PERM_MLOCK, &r->perm, 0, why, sizeof(why)));
			if (e)
				return err_set(r->err, -1, "cannot map a ring buffer of %s: %s", size, strerror(-e));
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rings[cpu].fd)) {
			return err_set(r->err, -1, "cannot redirect perf event output: %s", strerror(errno));
		}
		opened++;
	}
	if (!opened)
		return err_set(r->err, -1, "cannot open perf events: no usable cpu");
	return 0;
}

static int open_task(struct recorder *r, struct perf_event_attr *attr, int pid)
{
	int ret = open_into(r, attr, pid, r->rings, r->pages), cpu;
	if (!ret && pid == -1)
		for (cpu = 0; cpu < r->ncpus; cpu++)
			r->cpus_sampled += r->rings[cpu].base != NULL;
	return ret;
}

/* Open the off-CPU events for pid (or -1 with -a) next to the sampling
 * one: the switch-out samples into the same rings (the ingester learns
 * their ids), the switch records into rings of their own. */
static int open_switch(struct recorder *r, struct perf_event_attr *attr,
		       struct perf_event_attr *records, int pid)
{
	size_t first = r->nfds, i;
	if (open_task(r, attr, pid))
		return -1;
	for (i = first; i < r->nfds; i++) {
		uint64_t id;
		if (ioctl(r->fds[i], PERF_EVENT_IOC_ID, &id))
			return err_set(r->err, -1, "cannot read the id of a perf event: %s", strerror(errno));
		ingest_add_switch_id(&r->ing, id);
	}
	if (open_into(r, records, pid, r->srings, r->switch_pages))
		return -1;
	if (r->wakers) {
		/* the tracepoint may be refused where the rest is not: try it
		 * once, and record the waits without wakers then */
		int fd = event_open(&r->wkattr, pid, 0, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno != ENODEV) {
			snprintf(r->wakers_why, sizeof(r->wakers_why),
				 "the kernel refused the sched:sched_waking tracepoint: %s", strerror(errno));
			r->wakers = false;
			return 0;
		}
		if (fd >= 0)
			close(fd);
		first = r->nfds;
		if (open_into(r, &r->wkattr, pid, r->rings, r->pages))
			return -1;
		for (i = first; i < r->nfds; i++) {
			uint64_t id;
			if (ioctl(r->fds[i], PERF_EVENT_IOC_ID, &id))
				return err_set(r->err, -1, "cannot read the id of a perf event: %s", strerror(errno));
			ingest_add_wake_id(&r->ing, id);
		}
	}
	return 0;
}

/* Wakers from outside the recorded processes (see struct recorder). A
 * failure only costs those: the waits and the recorded wakers stay. */
static void open_foreign_wakers(struct recorder *r)
{
	struct perf_event_attr a = r->wkattr;
	size_t first = r->nfds, i;
	int cpu;
	a.inherit = 0;
	a.enable_on_exec = 0;
	a.disabled = 0;
	a.sample_stack_user = 0;
	a.exclude_callchain_user = 1;
	a.exclude_callchain_kernel = 1;
	a.wakeup_watermark = (uint32_t)MIN(r->switch_pages * (size_t)sysconf(_SC_PAGESIZE) / 4,
					   (size_t)WAKEUP_MAX_BYTES);
	r->wrings = r->rings + 2 * (size_t)r->ncpus; /* one array (run()) */
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		uint64_t id;
		int fd = event_open(&a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue;
			warn("not recording wakers outside the recorded processes: %s", strerror(errno));
			goto undo;
		}
		add_fd(r, fd);
		if (ring_map(&r->wrings[cpu], fd, r->switch_pages) || ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
			warn("not recording wakers outside the recorded processes: cannot map a ring buffer");
			goto undo;
		}
		ingest_add_foreign_wake_id(&r->ing, id);
	}
	return;
undo:
	for (i = first; i < r->nfds; i++)
		close(r->fds[i]);
	r->nfds = first;
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_unmap(&r->wrings[cpu]);
	r->wrings = NULL;
}

/* Stack bytes copied per wake-up: the waking function is near the top
 * of its stack, and wake-ups come at the rate of switches. (Switch-outs
 * copy as much as CPU samples, --stack-size: the stack of a thread
 * blocked deep in a call chain is as deep as when it runs.) */
#define WAKER_STACK_BYTES 4096u
/* With -a, switch-outs copy at most this much: the switches of the whole
 * machine, whose rings a 32 KiB copy each overflows (the sleeps of a
 * program recorded with -a on a loaded 2-cpu VM lost half their time to
 * lost switch records). */
#define SYSTEM_SWITCH_STACK_BYTES 8192u

/* ---- records ---- */

static int cmp_ref(const void *a, const void *b)
{
	const struct rec_ref *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Records this much older than the start of a drain are all in their
 * rings when it reads them (the kernel writes a record within
 * microseconds of its timestamp). */
#define DRAIN_MARGIN_NS 10000000ull
/* The same while samples read the processes (read_pace()). */
#define DRAIN_MARGIN_FAST_NS 1000000ull
#define READ_POLL_MS PYFRAMES_POLL_MS
/* Bytes of records one drain() handles at most: a few hundred samples
 * with stack copies, some ms of unwinding. */
#define DRAIN_SLICE (4u << 20)

/* Refs to the records of b, in order, from ord on. */
static void add_refs(struct recorder *r, const struct buf *b, size_t ord)
{
	size_t off;
	for (off = 0; off + sizeof(struct perf_event_header) <= b->len;) {
		const struct perf_event_header *h = (const void *)(b->data + off);
		if (h->size < sizeof(*h) || h->size > b->len - off)
			break; /* the queue holds whole records: never */
		GROW(r->refs, r->refcap, r->nrefs + 1);
		r->refs[r->nrefs].time = perf_record_time(&r->fmt, h);
		r->refs[r->nrefs].h = h;
		r->refs[r->nrefs].ord = ord + off;
		r->nrefs++;
		off += h->size;
	}
}

/* Read every ring, then handle the records in time order: a mapping seen
 * on one cpu must be known before a sample on another cpu uses it, and a
 * FORK before the child's first sample (else the child looks unknown and
 * its name is read from /proc for nothing). Rings are read one after the
 * other, so a record written to the first ring after it was read can be
 * older than one read from the last: only the records older than the
 * start of this drain less DRAIN_MARGIN_NS are handled; the newer ones
 * wait in r->carry for the next drain (all: handle them all, when the
 * events are disabled). Returns the time up to which records were
 * handled. */
static uint64_t drain(struct recorder *r, bool all)
{
	uint64_t now = now_ns(), pass, dropped, done, margin;
	size_t off, kept, handled = 0, n;

	if (r->pos == r->nrefs) {
		/* nothing sorted is waiting: take what the drain thread read
		 * (it read every ring after pass began) */
		buf_reset(&r->batch);
		/* read the rings from this thread too: whenever it wakes
		 * (every few ms while reading the processes, read_pace();
		 * when a chunk is due) it so takes every record written up
		 * to now, not only what the drain thread's last pass read */
		rqueue_pass(&r->q);
		pass = rqueue_take(&r->q, &r->batch);
		margin = r->read_fast ? DRAIN_MARGIN_FAST_NS : DRAIN_MARGIN_NS;
		r->safe = all ? UINT64_MAX : pass > margin ? pass - margin : 0;
		r->nrefs = r->pos = 0;
		add_refs(r, &r->carry, 0);
		add_refs(r, &r->batch, r->carry.len);
		if (r->nrefs)
			qsort(r->refs, r->nrefs, sizeof(*r->refs), cmp_ref);
	}
	if (all)
		r->safe = UINT64_MAX;
	/* at most DRAIN_SLICE bytes at a time (all: everything), so that the
	 * loop sees signals, --duration and CMD's end on time when the queue
	 * holds a backlog */
	n = r->nrefs;
	for (off = r->pos; off < n && r->refs[off].time <= r->safe && (all || handled < DRAIN_SLICE); off++) {
		const struct perf_event_header *h = r->refs[off].h;
		handled += h->size;
		ingest_record(&r->ing, &r->fmt, h);
	}
	r->pos = off;
	rqueue_done(&r->q, handled);
	done = off ? r->refs[off - 1].time : 0;
	/* samples the queue dropped at its bound: lost by stax, not the kernel */
	dropped = __atomic_load_n(&r->q.dropped, __ATOMIC_RELAXED);
	if (dropped > r->dropped_put) {
		struct rec_lost l;
		memset(&l, 0, sizeof(l));
		l.time = done ? done : r->safe == UINT64_MAX ? now : r->safe;
		l.count = dropped - r->dropped_put;
		l.kind = LOST_QUEUE;
		store_put_lost(&r->w, &l);
		r->dropped_put = dropped;
	}
	if (off < n && r->refs[off].time <= r->safe)
		return done; /* more to handle: the next call goes on from pos */
	/* the rest (the last DRAIN_MARGIN_NS: small), in time order, starts
	 * the next batch */
	buf_reset(&r->carry2);
	for (kept = off; kept < n; kept++) {
		const struct perf_event_header *h = r->refs[kept].h;
		memcpy(buf_extend(&r->carry2, h->size), h, h->size);
	}
	{
		struct buf t = r->carry;
		r->carry = r->carry2;
		r->carry2 = t;
	}
	r->nrefs = r->pos = 0;
	return all ? now : MIN(r->safe, now);
}

/* ---- attaching: names and mappings from /proc ---- */

/* Seed pid's thread names and mappings as of time t. */
static void seed_process(struct recorder *r, int pid, const pid_t *tids, int ntids, uint64_t t)
{
	int i;
	for (i = 0; i < ntids; i++) {
		char path[64], name[64] = "";
		FILE *f;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, (int)tids[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
		ingest_seed_comm(&r->ing, (uint32_t)pid, (uint32_t)tids[i], t, name);
	}
	ingest_seed_proc(&r->ing, pid, t);
}

/* -a: names and mappings of every process that exists now, as of time
 * t, before the first sample; those that start later come with COMM,
 * FORK and MMAP records. Called before the events are enabled, and again
 * after (only_new: for the processes not seeded yet), so that neither a
 * process that exits just after the start nor one that starts just
 * before it goes unnamed. */
static void seed_all(struct recorder *r, uint64_t t, bool only_new)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	if (!only_new)
		ingest_seed_comm(&r->ing, 0, 0, t, "swapper");
	if (!d)
		return;
	while ((e = readdir(d))) {
		uint64_t pid;
		pid_t *tids = NULL;
		int nt;
		if (parse_u64(e->d_name, &pid) || !pid || pid > 0x7fffffff ||
		    (only_new && recover_has_name(&r->ing.recover, (uint32_t)pid)))
			continue;
		nt = target_threads((pid_t)pid, &tids);
		if (nt > 0)
			seed_process(r, (int)pid, tids, nt, t);
		free(tids);
	}
	closedir(d);
}

/* ---- the session ---- */

static void put_meta_u64(struct store_writer *w, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	store_put_meta(w, key, buf);
}

/* arg as a shell would need it: as is when it is made of safe
 * characters, else in single quotes ('\'' for a quote). */
static void add_shell_word(struct buf *b, const char *arg)
{
	const char *c;
	if (*arg && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			   "_-+=.,/:@%") == strlen(arg)) {
		buf_printf(b, "%s", arg);
		return;
	}
	buf_add_u8(b, '\'');
	for (c = arg; *c; c++) {
		if (*c == '\'')
			buf_printf(b, "'\\''");
		else
			buf_add_u8(b, (uint8_t)*c);
	}
	buf_add_u8(b, '\'');
}

/* " (cmdline)" of process pid, NUL-separated arguments shown as words. */
static void add_proc_cmdline(struct buf *b, int pid)
{
	char path[64], args[4096];
	ssize_t n;
	size_t i;
	int fd;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, args, sizeof(args) - 1);
	close(fd);
	if (n <= 0)
		return;
	args[n] = '\0';
	buf_printf(b, " (");
	for (i = 0; i < (size_t)n; i += strlen(args + i) + 1) {
		if (i)
			buf_add_u8(b, ' ');
		add_shell_word(b, args + i);
	}
	buf_add_u8(b, ')');
}

static void put_header_meta(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct buf cmd = BUF_INIT;
	char host[256] = "", perm[256];
	size_t i;

	if (o->system_wide)
		buf_printf(&cmd, "-a%s", o->argv ? " " : "");
	if (o->argv) {
		for (i = 0; o->argv[i]; i++) {
			if (i)
				buf_add_u8(&cmd, ' ');
			add_shell_word(&cmd, o->argv[i]);
		}
	} else if (!o->system_wide) {
		/* -p 123 (python3 app.py), 456 (...) */
		buf_printf(&cmd, o->thread_only ? "-t" : "-p");
		for (i = 0; i < o->npids; i++) {
			buf_printf(&cmd, "%s%d", i ? ", " : " ", o->pids[i]);
			add_proc_cmdline(&cmd, o->pids[i]);
		}
	}
	buf_add_u8(&cmd, 0);
	store_put_meta(&r->w, "command", (char *)cmd.data);
	store_put_meta(&r->w, "stax_version", stax_version);
	store_put_meta(&r->w, "event", event_name(r->ev));
	store_put_meta(&r->w, "event_is_clock", r->ev->is_clock ? "1" : "0");
	put_meta_u64(&r->w, "freq", o->period ? 0 : o->freq);
	if (o->period)
		put_meta_u64(&r->w, "period", o->period);
	put_meta_u64(&r->w, "max_stack", r->ing.max_stack);
	put_meta_u64(&r->w, "ring_bytes", (uint64_t)r->pages * (uint64_t)sysconf(_SC_PAGESIZE));
	if (o->unwind != UNWIND_MODE_FP)
		put_meta_u64(&r->w, "stack_size", o->stack_size);
	store_put_meta(&r->w, "unwind", o->unwind == UNWIND_MODE_FP ? "fp" :
		       o->unwind == UNWIND_MODE_DWARF ? "dwarf" : "hybrid");
	store_put_meta(&r->w, "kernel_frames", r->kernel ? "1" : "0");
	perm_format(&r->perm, perm, sizeof(perm));
	store_put_meta(&r->w, "perm", perm);
	if (o->off_cpu) {
		store_put_meta(&r->w, "off_cpu", "1");
		store_put_meta(&r->w, "wakers", r->wakers ? "1" : "0");
		if (!r->wakers)
			store_put_meta(&r->w, "wakers_why", r->wakers_why);
	}
	if (o->system_wide)
		store_put_meta(&r->w, "system_wide", "1");
	gethostname(host, sizeof(host) - 1);
	store_put_meta(&r->w, "hostname", host);
	put_meta_u64(&r->w, "start_ns", r->start_ns);
	put_meta_u64(&r->w, "wall_start", (uint64_t)time(NULL));
	buf_release(&cmd);
}

static void summary(struct recorder *r)
{
	const struct recover *rc = &r->ing.recover;
	char size[32];
	double secs = (r->end_ns - r->start_ns) / 1e9;
	format_size(size, sizeof(size), r->w.bytes);
	char rate[48];
	if (r->o->period)
		snprintf(rate, sizeof(rate), "every %" PRIu64 "%s", r->o->period, r->ev->is_clock ? " ns" : "");
	else
		snprintf(rate, sizeof(rate), "at %" PRIu64 " Hz", r->o->freq);
	note("recorded %" PRIu64 " samples in %.2f s (%s %s),"
		" %" PRIu64 " lost, %" PRIu64 " throttled; wrote %s (%s, %.1f bytes/sample)."
		" Next: stax top -i %s, stax flame -i %s, stax info -i %s",
		r->ing.samples, secs, event_name(r->ev), rate,
		r->ing.lost + r->ing.lost_samples + r->dropped_put,
		r->ing.throttles, r->o->output, size,
		r->ing.samples ? (double)r->w.bytes / r->ing.samples : 0.0,
		r->o->output, r->o->output, r->o->output);
	if (r->o->off_cpu)
		note("recorded %" PRIu64 " off-CPU intervals, %.1f ms off the CPU in all."
		     " Next: stax threads -i %s, stax flame --wall -i %s", r->ing.offcpu_intervals,
			r->ing.offcpu_ns / 1e6, r->o->output, r->o->output);
	if (r->ing.chains_capped) {
		/* Offer, never change the system setting ourselves. */
		long cap = (long)r->ing.max_stack;
		note("%" PRIu64 " samples had call chains cut at kernel.perf_event_max_stack (%ld"
		     " frames), so their outermost callers are missing; to record deeper stacks%s"
		     " run: %ssysctl kernel.perf_event_max_stack=%ld", r->ing.chains_capped, cap,
		     geteuid() == 0 ? " (you are root)" : "", geteuid() == 0 ? "" : "sudo ",
		     cap < 512 ? 1024 : 4 * cap);
	}
	if (r->ing.trimmed)
		note("%" PRIu64 " sample%s kept only the top %u bytes of %s stack copy (or none): unwinding"
		     " fell behind and the queue passed its high-water mark (stax info counts them)",
		     r->ing.trimmed, r->ing.trimmed == 1 ? "" : "s", QUEUE_TRIM_KEEP,
		     r->ing.trimmed == 1 ? "its" : "their");
	if (r->dropped_put)
		warn("%" PRIu64 " samples were dropped by stax: its queue (%zu MiB) was full, unwinding"
		     " could not keep up (lower -F, or use --unwind fp)", r->dropped_put, r->q.cap >> 20);
	if (r->ing.lost + r->ing.lost_samples) {
		char ring[32], stack[64] = "";
		format_size_exact(ring, sizeof(ring), (uint64_t)r->pages * (uint64_t)sysconf(_SC_PAGESIZE));
		if (r->o->unwind != UNWIND_MODE_FP)
			snprintf(stack, sizeof(stack), ", or lower --stack-size (now %u bytes a sample)",
				 r->o->stack_size);
		warn("%" PRIu64 " records were lost because the ring buffers filled up before stax"
		     " read them (raise -m, now %s per cpu, or lower -F, now %" PRIu64 " Hz%s)",
		     r->ing.lost + r->ing.lost_samples, ring, r->o->freq, stack);
	}
	if (rc->recovered_procs || rc->recovered_threads)
		note("read the names and mappings of %" PRIu64 " process%s and the names of %" PRIu64
		     " thread%s from /proc: the kernel's records of them were missing",
		     rc->recovered_procs, rc->recovered_procs == 1 ? "" : "es",
		     rc->recovered_threads, rc->recovered_threads == 1 ? "" : "s");
	/* a process can also be unknown without a record lost: one that
	 * started as the recording began, between the scan of /proc and the
	 * events' start */
	if (rc->unrecovered_procs && r->ing.lost + r->ing.lost_samples)
		warn("%" PRIu64 " process%s exited before stax could read what the lost records said"
		     " from /proc: %" PRIu64 " sample%s no process name and no symbols (raise -m,"
		     " or lower -F)", rc->unrecovered_procs, rc->unrecovered_procs == 1 ? "" : "es",
		     rc->unrecovered_samples, rc->unrecovered_samples == 1 ? " has" : "s have");
	else if (rc->unrecovered_procs)
		warn("%" PRIu64 " process%s of which the recording had no record (started as it began)"
		     " exited before stax could read %s from /proc: %" PRIu64 " sample%s no process"
		     " name and no symbols", rc->unrecovered_procs, rc->unrecovered_procs == 1 ? "" : "es",
		     rc->unrecovered_procs == 1 ? "it" : "them", rc->unrecovered_samples,
		     rc->unrecovered_samples == 1 ? " has" : "s have");
}

/* user+system CPU time of process pid in ns (all its threads), or 0. */
static uint64_t proc_cpu_ns(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long tck = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* fields 14 and 15, counted after the ")" that ends the name */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2 ||
	    tck <= 0)
		return 0;
	return (ut + st) * (1000000000ull / (uint64_t)tck);
}

/* Note the CPU time of the attached processes (first call: the start). */
static void track_cpu(struct recorder *r)
{
	size_t i;
	if (!r->o->npids)
		return;
	if (!r->cpu_first) {
		r->cpu_first = xcalloc(r->o->npids, sizeof(*r->cpu_first));
		r->cpu_last = xcalloc(r->o->npids, sizeof(*r->cpu_last));
		for (i = 0; i < r->o->npids; i++)
			r->cpu_first[i] = r->cpu_last[i] = proc_cpu_ns(r->o->pids[i]);
		return;
	}
	for (i = 0; i < r->o->npids; i++) {
		uint64_t v = proc_cpu_ns(r->o->pids[i]);
		if (v > r->cpu_last[i])
			r->cpu_last[i] = v;
	}
}

/* Samples whose unwinding reads the process (Python frames from the
 * interpreter, stacks deeper than their copy) are read when they are
 * ingested: the sooner after the sample, the likelier the thread is
 * still where the sample saw it (pyframes.h; a deep stack is read only
 * while the copy's outermost return address is in place). So from the
 * first such sample the main thread wakes every READ_POLL_MS, reads the
 * rings itself (rqueue_pass(): one wakeup, where the drain thread's pass
 * and then the main thread woken by it were two) and records wait only
 * DRAIN_MARGIN_FAST_NS to be sorted: a rustc recording read 26 ms after
 * the sample on average, 2.5 ms so, and rooted 89-92% of its stacks,
 * 94-95% so. The drain thread keeps its own pace meanwhile, so a main
 * thread busy unwinding still loses nothing. Each pass is a wakeup:
 * while fewer than 1 in 20 of the last second's samples read the
 * process (a system-wide recording of a machine where a Python daemon
 * idles), it passes at the default pace again; 500 wakeups a second
 * cost -a -F 99 3.4% of a CPU. */
static uint64_t reads_of(const struct ingest *g)
{
	return g->py_expanded + g->py_failed + g->py_stale + g->py_noaccess + g->deep_reads +
	       g->deep_stale + g->deep_gone;
}

/* The pace while samples read the process: one pass per
 * sample expected (the last second's samples of all kinds), at least
 * READ_POLL_MS and at most READ_POLL_MAX_MS apart. A pass more often than
 * samples arrive mostly finds the rings empty: a system-wide recording
 * at 99 Hz on two busy cpus (about 200 samples a second) passed 500
 * times a second at a fixed 2 ms and cost 1.5% of a CPU; one pass per
 * sample still reads each within a sample's interval of it. */
#define READ_POLL_MAX_MS 10u

static uint32_t read_poll_ms(uint64_t samples, uint64_t ns)
{
	uint64_t per_s = ns ? samples * 1000000000ull / ns : 0;
	if (per_s >= 1000 / READ_POLL_MS)
		return READ_POLL_MS;
	if (per_s <= 1000 / READ_POLL_MAX_MS)
		return READ_POLL_MAX_MS;
	return (uint32_t)(1000 / per_s);
}

static void read_pace(struct recorder *r)
{
	const struct ingest *g = &r->ing;
	uint64_t reads = reads_of(g), now;
	bool fast;

	if (!r->read_seen && !pyframes_found(g->py) && !reads)
		return;
	now = now_ns();
	if (!r->read_seen) {
		r->read_seen = r->read_fast = true;
		r->read_ms = READ_POLL_MS;
	} else if (now - r->read_window_ns < 1000000000ull) {
		return;
	} else {
		fast = (reads - r->read_samples) * 20 >= g->samples - r->read_all &&
		       reads > r->read_samples;
		r->read_ms = fast ? read_poll_ms(g->samples - r->read_all, now - r->read_window_ns) : 0;
		r->read_fast = fast;
	}
	r->read_window_ns = now;
	r->read_samples = reads;
	r->read_all = g->samples;
}

static bool targets_alive(struct recorder *r)
{
	size_t i;
	for (i = 0; i < r->o->npids; i++)
		if (target_alive(r->o->pids[i]))
			return true;
	return r->o->system_wide;
}

/* A terminal's Ctrl-C already reached the target (same process group):
 * do not send a second one, keep recording until it exits. A signal sent
 * to stax alone is forwarded once; a second one stops the recording. When
 * attached with -p, any of them stops the recording. */
static void handle_signals(struct recorder *r)
{
	while (sig_seen != sig_count) {
		sig_seen++;
		if (!r->launched || r->child_done) {
			sig_stop = true;
		} else if (sig_user && !sig_forwarded) {
			sig_forwarded = 1;
			kill(r->child.pid, sig_last);
		} else if (sig_seen > 1) {
			sig_stop = true;
		}
	}
}

/* How long CMD has after SIGTERM before SIGKILL, as timeout -k 5. */
#define TERM_GRACE_NS (5ull * 1000 * 1000 * 1000)

/* --duration is up and CMD runs on: end it as timeout(1) does, SIGTERM
 * to it and its descendants, SIGKILL 5 s later; recording goes on until
 * it exits, and stax exits with its status. */
static void end_command(struct recorder *r)
{
	uint64_t now = now_ns();
	if (!r->term_ns) {
		r->term_ns = now;
		if (!r->o->quiet)
			note("--duration %g s is up: ending %s (pid %d) with SIGTERM", r->o->duration,
			     r->o->argv[0], (int)r->child.pid);
		target_signal_tree(r->child.pid, SIGTERM);
	} else if (!r->killed && now - r->term_ns >= TERM_GRACE_NS) {
		r->killed = true;
		warn("%s (pid %d) did not end within 5 s of SIGTERM: sending SIGKILL", r->o->argv[0],
		     (int)r->child.pid);
		target_signal_tree(r->child.pid, SIGKILL);
	}
}

/* Stop the events and free their rings: nothing more is recorded. */
static void stop_events(struct recorder *r)
{
	size_t i;
	int cpu;
	for (i = 0; i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	rqueue_stop(&r->q); /* it reads the rings: before they go */
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	r->nfds = 0;
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_unmap(&r->rings[cpu]);
	for (cpu = 0; r->srings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->srings[cpu]);
	for (cpu = 0; r->wrings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->wrings[cpu]);
}

/* The file could not be written (the disk is full): stop recording, cut
 * the file back to its last whole chunk, and say so, once. CMD is left
 * to run on; the caller waits for it. */
static void write_failed(struct recorder *r)
{
	int e = r->w.err ? -r->w.err : EIO;
	const char *hint = e == EFBIG ? "raise the file size limit, ulimit -f" :
			   e == ENOSPC || e == EDQUOT ? "free some disk space" : "check the file system";
	char what[160] = "";
	if (r->failed)
		return;
	r->failed = true;
	r->fail_ns = now_ns();
	stop_events(r);
	store_writer_rewind(&r->w);
	if (r->launched && !r->child_done)
		snprintf(what, sizeof(what), "; %s (pid %d) runs on, and stax waits for it to end",
			 r->o->argv[0], (int)r->child.pid);
	if (r->end_ns) /* while ending the file: the recording had stopped */
		error("cannot write %s: %s (the file keeps what was written before, and may lack the"
		      " symbols; %s)", r->o->output, strerror(e), hint);
	else
		error("cannot write %s: %s (stopped recording after %.1f s; the file keeps what was"
		      " written until then%s; %s)", r->o->output, strerror(e),
		      (r->fail_ns - r->start_ns) / 1e9, what, hint);
}

/* Out of memory (an allocation failed anywhere, any thread): stop the
 * events, say so once, wait for CMD, and exit with its status (1 when it
 * is 0) without touching the heap. The file reads up to its last whole
 * chunk, as after SIGKILL. */
static struct recorder *oom_rec;

static void record_oom(void)
{
	static int once;
	struct recorder *r = oom_rec;
	char msg[600];
	int st = 0, code = 1, len;
	size_t i;

	if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		for (;;)
			pause(); /* another thread is ending the process */
	for (i = 0; r && i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (r && r->launched && !r->child_done) {
		len = snprintf(msg, sizeof(msg), "stax: error: out of memory (stopped recording; %s keeps"
			       " what was written until now; %s (pid %d) runs on, and stax waits for it"
			       " to end)\n", r->o->output, r->o->argv[0], (int)r->child.pid);
		if (write(2, msg, (size_t)MIN(len, (int)sizeof(msg) - 1)) < 0) {
			/* nothing to do */
		}
		while (waitpid(r->child.pid, &st, 0) < 0) {
			if (errno != EINTR) {
				/* the main thread reaped it: it sets child_done
				 * right after storing the status */
				for (i = 0; i < 5000 && !__atomic_load_n(&r->child_done, __ATOMIC_ACQUIRE); i++)
					usleep(1000);
				st = r->child_status;
				break;
			}
		}
	} else {
		len = snprintf(msg, sizeof(msg), "stax: error: out of memory (%s keeps what was written"
			       " until now, and may lack the symbols)\n", r ? r->o->output : "the file");
		if (write(2, msg, (size_t)MIN(len, (int)sizeof(msg) - 1)) < 0) {
			/* nothing to do */
		}
		if (r && r->launched) /* CMD had ended: its status */
			st = r->child_status;
	}
	if (r && r->launched)
		code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	_exit(code ? code : 1);
}

/* META records that close the recording (the last chunk before END). */
static void put_end_meta(struct recorder *r, int exit_status)
{
	char why[512];
	struct perm_facts now;

	store_repeat_meta(&r->w); /* the first chunk's, should it be damaged */
	put_meta_u64(&r->w, "end_ns", r->end_ns);
	/* the kernel lowers kernel.perf_event_max_sample_rate when sampling
	 * costs too much: keep what it was at the end too */
	perm_probe(&now);
	r->perm.max_rate_end = now.max_rate;
	perm_format(&r->perm, why, sizeof(why));
	store_put_meta(&r->w, "perm", why);
	put_meta_u64(&r->w, "recovered_processes", r->ing.recover.recovered_procs);
	put_meta_u64(&r->w, "recovered_threads", r->ing.recover.recovered_threads);
	put_meta_u64(&r->w, "unrecovered_processes", r->ing.recover.unrecovered_procs);
	put_meta_u64(&r->w, "unrecovered_samples", r->ing.recover.unrecovered_samples);
	store_put_meta(&r->w, "python_frames", r->ing.py ? "1" : "0");
	if (r->ing.py) {
		put_meta_u64(&r->w, "python_expanded", r->ing.py_expanded);
		put_meta_u64(&r->w, "python_stale", r->ing.py_stale);
		put_meta_u64(&r->w, "python_invalid", r->ing.py_failed);
		put_meta_u64(&r->w, "python_unreadable", r->ing.py_noaccess);
	}
	if (r->ing.py && *pyframes_no_access_why(r->ing.py))
		store_put_meta(&r->w, "python_no_access", pyframes_no_access_why(r->ing.py));
	store_put_meta(&r->w, "read_stack", r->ing.no_read_stack ? "0" : "1");
	put_meta_u64(&r->w, "deep_stacks_read", r->ing.deep_reads);
	put_meta_u64(&r->w, "deep_stacks_stale", r->ing.deep_stale);
	put_meta_u64(&r->w, "deep_stacks_gone", r->ing.deep_gone);
	put_meta_u64(&r->w, "copy_cut_within_max", r->ing.cut_within_max);
	put_meta_u64(&r->w, "copy_cut_beyond_max", r->ing.cut_beyond_max);
	if (r->o->off_cpu) {
		put_meta_u64(&r->w, "offcpu_stacks_read", r->ing.stack_reads);
		put_meta_u64(&r->w, "offcpu_stacks_stale", r->ing.stack_reads_stale);
	}
	if (r->cpus_sampled)
		put_meta_u64(&r->w, "cpus", (uint64_t)r->cpus_sampled);
	if (r->failed)
		store_put_meta(&r->w, "write_error", "1");
	if (r->term_ns)
		store_put_meta(&r->w, "duration_ended", r->killed ? "SIGKILL" : "SIGTERM");
	if (r->launched && !r->child_done)
		store_put_meta(&r->w, "stopped", "early"); /* a second signal: CMD goes on */
	if (r->launched && r->child_done) {
		struct rusage ru;
		put_meta_u64(&r->w, "exit_status", (uint64_t)exit_status);
		/* the CPU time of CMD and the children it waited for */
		if (!getrusage(RUSAGE_CHILDREN, &ru))
			put_meta_u64(&r->w, "cpu_ns",
				     ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
				     ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull);
	}
	if (r->cpu_first) {
		uint64_t cpu = 0;
		size_t i;
		for (i = 0; i < r->o->npids; i++)
			cpu += r->cpu_last[i] - r->cpu_first[i];
		put_meta_u64(&r->w, "cpu_ns", cpu);
	}
}

/* record_run's body; r is freed by the caller, so the early returns
 * (bad options, no permission, no output file) leak nothing */
static int run(struct recorder *r, const struct record_opts *o, int *exit_status)
{
	struct perf_event_attr attr, swattr, recattr;
	char why[512];
	size_t i;
	int ret = -1, cpu;
	struct pollfd *pfds = NULL;
	uint64_t deadline = 0;

	*exit_status = 0;
	r->o = o;
	r->ev = event_find(o->event);
	if (!r->ev)
		return err_set(r->err, -1, "unknown event '%s' (available: %s)", o->event, event_available());
	perm_probe(&r->perm);
	if (o->freq == 0)
		return err_set(r->err, -1, "invalid sample rate 0 (use -F with a positive number of Hz)");
	if (r->perm.max_rate != PERM_UNKNOWN && o->freq > (uint64_t)r->perm.max_rate)
		return err_set(r->err, -1, "cannot sample at %" PRIu64 " Hz: %s", o->freq,
			     perm_why(PERM_RATE, &r->perm, (long)MIN(o->freq, (uint64_t)LONG_MAX), why, sizeof(why)));
	if (r->ev->type == PERF_TYPE_HARDWARE && !event_supported(r->ev))
		return event_open_error(ENOENT, r->ev, o->freq, 0, r->err);

	r->kernel = perm_allowed(PERM_KERNEL, &r->perm);
	if (o->off_cpu && !perm_allowed(PERM_OFFCPU, &r->perm))
		return err_set(r->err, -1, "cannot record off-CPU time: it needs kernel sampling, and %s",
			     perm_why(PERM_OFFCPU, &r->perm, 0, why, sizeof(why)));
	if (o->system_wide && !perm_allowed(PERM_SYSTEM, &r->perm))
		return err_set(r->err, -1, "cannot record the whole machine (-a): %s",
			     perm_why(PERM_SYSTEM, &r->perm, 0, why, sizeof(why)));
	r->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpus < 1)
		r->ncpus = 1;
	/* one array, for the drain thread: the switch rings after the
	 * others, then the rings of the wakers outside the recording */
	r->rings = xcalloc((size_t)r->ncpus * (o->off_cpu ? 3 : 1), sizeof(*r->rings));
	if (o->off_cpu)
		r->srings = r->rings + r->ncpus;

	event_attr(&attr, r->ev, o->freq, r->kernel, o->argv != NULL && !o->system_wide,
		   o->unwind != UNWIND_MODE_FP ? unwind_perf_regs_mask(unwind_arch_host()) : 0,
		   o->stack_size);
	if (o->system_wide || o->thread_only)
		attr.inherit = 0;
	if (o->period) {
		attr.freq = 0;
		attr.sample_period = o->period;
	}
	if (o->off_cpu) {
		/* samples of both events share the rings: tell them apart by id */
		attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
		/* who ends the waits: the sched_waking tracepoint, with its
		 * raw fields (in every event's samples, so they read alike) */
		struct waking_format wf;
		if (o->no_wakers)
			snprintf(r->wakers_why, sizeof(r->wakers_why), "--no-wakers");
		else if (r->perm.privileged != 1)
			snprintf(r->wakers_why, sizeof(r->wakers_why),
				 "it needs root or CAP_PERFMON (the sched:sched_waking tracepoint)");
		else if (!event_waking_format(&wf, r->wakers_why, sizeof(r->wakers_why)))
			r->wakers = true;
		if (r->wakers)
			attr.sample_type |= PERF_SAMPLE_RAW;
		event_attr_switch(&swattr, &recattr, &attr,
				  o->system_wide ? MIN(SYSTEM_SWITCH_STACK_BYTES, o->stack_size) : o->stack_size);
		if (r->wakers) {
			event_attr_waking(&r->wkattr, &attr, &wf, MIN(WAKER_STACK_BYTES, o->stack_size));
			r->wf = wf;
		}
	}
	/* before anything is created: a -m that cannot work stops here */
	if (size_rings(r, &attr))
		return -1;

	/* like perf: keep the previous recording as FILE.old; but only ever
	 * move or replace regular files, before anything starts */
	{
		char why[600];
		int fd = o->output_fd > 0 ? o->output_fd : safe_create(&r->out, o->output, 0644, why, sizeof(why)), e;
		if (fd == -EEXIST && r->out.bad_old)
			return err_set(r->err, -1, "cannot record into %s: %s (stax leaves both as they are; move %s.old"
				     " away, or choose another file with -o)", o->output, why, o->output);
		if (fd == -EEXIST)
			return err_set(r->err, -1, "cannot record into %s: %s (stax writes only regular files, and leaves"
				     " this as it is; choose a file with -o)", o->output, why);
		if (fd < 0)
			return err_set(r->err, -1, "cannot create %s: %s (choose another path with -o)", o->output, why);
		e = store_writer_open_fd(&r->w, fd);
		if (e) {
			safe_create_undo(&r->out);
			return err_set(r->err, -1, "cannot create %s: %s (choose another path with -o)", o->output, strerror(-e));
		}
	}
	ingest_init(&r->ing, &r->w, o->unwind);
	r->ing.live = true; /* JIT code bytes can be read from the targets */
	r->ing.recover.on = true; /* and what lost records named, from /proc */
	r->ing.no_read_stack = o->no_read_stack != 0;
	if (install_signals(r->err))
		goto out;

	r->ing.max_stack = attr.sample_max_stack;
	if (!o->no_python_frames)
		ingest_enable_python(&r->ing);
	if (o->off_cpu)
		ingest_enable_offcpu(&r->ing);
	if (r->wakers)
		ingest_enable_wakers(&r->ing, r->wf.flags_off, r->wf.pid_off);
	r->fmt.sample_type = attr.sample_type;
	r->fmt.read_format = attr.read_format;
	r->fmt.regs_user_mask = attr.sample_regs_user;
	r->fmt.sample_id_all = attr.sample_id_all;
	if (o->system_wide) {
		if (o->argv && target_spawn(&r->child, o->argv, r->err))
			goto out;
		if (open_task(r, &attr, -1) || (o->off_cpu && open_switch(r, &swattr, &recattr, -1))) {
			if (o->argv)
				target_abort(&r->child);
			goto out;
		}
		uint64_t t0 = now_ns();
		seed_all(r, t0, false);
		r->start_ns = now_ns();
		put_header_meta(r);
		for (i = 0; i < r->nfds; i++)
			ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0);
		seed_all(r, t0, true);
		if (o->argv) {
			if (target_release(&r->child, o->argv[0], r->err))
				goto exec_failed;
			r->launched = true;
		}
	} else if (o->argv) {
		if (target_spawn(&r->child, o->argv, r->err))
			goto out;
		if (open_task(r, &attr, r->child.pid) || (o->off_cpu && open_switch(r, &swattr, &recattr, r->child.pid))) {
			target_abort(&r->child);
			goto out;
		}
		if (r->wakers)
			open_foreign_wakers(r);
		r->start_ns = now_ns();
		put_header_meta(r);
		if (target_release(&r->child, o->argv[0], r->err))
			goto exec_failed;
		r->launched = true;
	} else {
		for (i = 0; i < o->npids; i++) {
			pid_t *tids = NULL;
			int nt, j, pid = o->pids[i];
			if (o->thread_only) {
				/* -t: that thread alone, named as a thread of its process */
				pid = target_tgid(o->pids[i]);
				if (pid < 0) {
					err_set(r->err, -1, "cannot attach to thread %d: no such thread (check the tid)", o->pids[i]);
					goto out;
				}
				tids = xmalloc(sizeof(*tids));
				tids[0] = o->pids[i];
				nt = 1;
			} else if ((nt = target_threads(pid, &tids)) < 0) {
				err_set(r->err, -1, "cannot attach to process %d: no such process (check the pid)", o->pids[i]);
				goto out;
			}
			for (j = 0; j < nt; j++) {
				if (open_task(r, &attr, tids[j]) ||
				    (o->off_cpu && open_switch(r, &swattr, &recattr, tids[j]))) {
					free(tids);
					goto out;
				}
			}
			seed_process(r, pid, tids, nt, now_ns());
			free(tids);
		}
		if (r->wakers)
			open_foreign_wakers(r);
		r->start_ns = now_ns();
		put_header_meta(r);
		track_cpu(r);
		for (i = 0; i < r->nfds; i++)
			ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	}
	if (!r->kernel)
		note("recording user-space frames only: %s", perm_why(PERM_KERNEL, &r->perm, 0, why, sizeof(why)));
	if (o->off_cpu && !r->wakers && !o->no_wakers)
		note("recording the waits without who ended them (stax wakers shows them as not recorded): %s",
		     r->wakers_why);
	if (o->duration > 0)
		deadline = r->start_ns + (uint64_t)(o->duration * 1e9);
	oom_rec = r;
	set_oom_handler(record_oom);

	/* the rings are read by a thread of their own from now on */
	{
		size_t nrings = (size_t)r->ncpus * (o->off_cpu ? 3 : 1), bytes = 0, cap;
		long phys = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		for (i = 0; i < nrings; i++)
			bytes += r->rings[i].base ? r->rings[i].data_size : 0;
		cap = (size_t)MIN(MAX(2ull * bytes, QUEUE_MIN_BYTES), QUEUE_MAX_BYTES);
		if (phys > 0 && page > 0 && cap > (uint64_t)phys * (uint64_t)page / 16)
			cap = (size_t)MAX((uint64_t)phys * (uint64_t)page / 16, 16ull << 20);
		int e = rqueue_start(&r->q, r->rings, nrings, &r->fmt, cap);
		if (e)
			warn("cannot start the drain thread: %s (the rings are read between unwinding,"
			     " and may overflow)", strerror(-e));
	}
	pfds = xcalloc(2, sizeof(*pfds));
	for (;;) {
		int np = 0, status;
		uint64_t done;
		pfds[np].fd = sig_pipe[0];
		pfds[np++].events = POLLIN;
		pfds[np].fd = rqueue_fd(&r->q);
		pfds[np++].events = POLLIN;
		poll(pfds, (nfds_t)np, r->pos < r->nrefs ? 0 :
		     r->read_fast ? (int)MIN((uint32_t)store_ms_to_flush(&r->w, 100), r->read_ms) :
		     store_ms_to_flush(&r->w, 100));
		if (pfds[0].revents & POLLIN) {
			char tmp[64];
			while (read(sig_pipe[0], tmp, sizeof(tmp)) > 0)
				;
		}
		handle_signals(r);
		if (!r->failed) {
			done = drain(r, false);
			read_pace(r);
			track_cpu(r);
			ingest_checkpoint(&r->ing, done);
			/* a write error stops the recording, never CMD */
			if (store_maybe_flush(&r->w))
				write_failed(r);
		}
		if (r->launched && waitpid(r->child.pid, &status, WNOHANG) == r->child.pid) {
			r->child_status = status;
			__atomic_store_n(&r->child_done, true, __ATOMIC_RELEASE); /* see record_oom() */
			break;
		}
		if (!r->launched && (r->failed || !targets_alive(r)))
			break;
		if (sig_stop)
			break;
		if (deadline && now_ns() >= deadline) {
			if (!r->launched)
				break; /* -p, -a: never signalled */
			end_command(r);
		}
	}
	if (!r->failed) {
		for (i = 0; i < r->nfds; i++)
			ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
		rqueue_stop(&r->q); /* after a last pass over the rings */
		drain(r, true); /* what was sorted already, */
		drain(r, true); /* then the rest of the queue */
		track_cpu(r);
		r->end_ns = now_ns();
		if (o->off_cpu)
			ingest_finish(&r->ing, r->end_ns);
	} else {
		r->end_ns = r->fail_ns;
	}
	if (r->launched && !r->child_done && sig_stop) {
		/* a second signal: exit as if it had ended stax */
		*exit_status = 128 + sig_last;
		note("stopped recording at the second signal; %s (pid %d) goes on running",
		     o->argv[0], (int)r->child.pid);
	}
	if (r->launched && r->child_done) {
		int st = r->child_status;
		*exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	}
	/* the end of the file: what is pending, the symbols, the closing
	 * META records and END; a write error on the way cuts the file back
	 * to its last whole chunk and still ends it when it can */
	if (!r->failed) {
		int e = store_flush(&r->w, CHUNK_DATA);
		if (!e) {
			ingest_put_symbols(&r->ing);
			e = store_flush(&r->w, CHUNK_SYMBOLS);
		}
		if (!e)
			e = store_sync(&r->w);
		if (e)
			write_failed(r);
	}
	put_end_meta(r, *exit_status);
	if (store_writer_close(&r->w) && !r->failed)
		write_failed(r);
	if (r->failed)
		goto out;
	if (!o->quiet)
		summary(r);
	ret = 0;
	goto out;
exec_failed:
	/* as a shell says it: 127 not found, 126 found but not runnable */
	if (r->child.exec_errno)
		*exit_status = r->child.exec_errno == ENOENT ? 127 : 126;
out:
	set_oom_handler(NULL);
	oom_rec = NULL;
	restore_signals();
	rqueue_release(&r->q);
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_unmap(&r->rings[cpu]);
	for (cpu = 0; r->srings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->srings[cpu]);
	for (cpu = 0; r->wrings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->wrings[cpu]);
	if (ret && r->w.fd >= 0) {
		/* it failed before recording: leave things as they were */
		store_writer_close(&r->w);
		if (!r->ing.samples)
			safe_create_undo(&r->out);
	}
	safe_created_release(&r->out);
	free(r->cpu_first);
	free(r->cpu_last);
	free(pfds);
	free(r->fds);
	buf_release(&r->batch);
	buf_release(&r->carry);
	buf_release(&r->carry2);
	free(r->refs);
	ingest_release(&r->ing);
	return ret;
}

int record_run(const struct record_opts *o, int *exit_status, struct err *e)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	int ret;
	err_set(e, 0, "%s", "");
	r->err = e;
	ret = run(r, o, exit_status) ? -1 : 0;
	free(r->rings); /* srings and wrings point into it */
	free(r);
	return ret;
}
