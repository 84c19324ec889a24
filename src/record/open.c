/* open.c - the events of a recording, opened on every cpu into their
 * rings (recorder-private.h): their sizes, the sampling event, the
 * off-CPU events beside it, the wakers outside the recording.
 */
#include "record/recorder-private.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

int rec_size_rings(struct recorder *r, const struct perf_event_attr *attr)
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

int rec_open_task(struct recorder *r, struct perf_event_attr *attr, int pid)
{
	size_t first = r->nfds;
	int ret = open_into(r, attr, pid, r->rings, r->pages), cpu;
	/* the in-kernel reader runs at each of its samples */
	if (!ret)
		rec_moment_attach(r, first);
	if (!ret && pid == -1)
		for (cpu = 0; cpu < r->ncpus; cpu++)
			r->cpus_sampled += r->rings[cpu].base != NULL;
	return ret;
}

/* Open the off-CPU events for pid (or -1 with -a) next to the sampling
 * one: the switch-out samples into the same rings (the ingester learns
 * their ids), the switch records into rings of their own. */
int rec_open_switch(struct recorder *r, struct perf_event_attr *attr,
		       struct perf_event_attr *records, int pid)
{
	size_t first = r->nfds, i;
	if (rec_open_task(r, attr, pid))
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
			err_set(&r->wakers_why, -errno,
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
void rec_open_foreign_wakers(struct recorder *r)
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
