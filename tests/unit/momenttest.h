/* momenttest.h - what the tests of the in-kernel reader share
 * (record/moment.h): a launched program's sampling events opened as the
 * recorder opens them (record/events.h's attribute: cpu-clock, inherit,
 * enable_on_exec, user registers and a stack copy, CLOCK_MONOTONIC), one
 * ring per cpu, the reader attached to every event, and the loop that
 * reads the perf rings and then the reader's ring (in that order: a
 * sample read has its record, written just before it, already in the
 * reader's ring) and hands each sample with its record to the test.
 */
#ifndef STAX_TEST_MOMENTTEST_H
#define STAX_TEST_MOMENTTEST_H

#include "record/events.h"
#include "record/moment.h"
#include "record/ring.h"
#include "record/target.h"
#include "lib/buf.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MT_REGS 0xff01ffull  /* the recorder's REGS_MASK: AX..IP, R8..R15 */
#define MT_REG_SP 7          /* indexes in a sample's registers */
#define MT_REG_IP 8
#define MT_MAX_CPUS 256
#define MT_MAX_FDS (2 * MT_MAX_CPUS)

struct mt_run {
	struct perf_format fmt;
	struct ring rings[MT_MAX_CPUS];
	int fds[MT_MAX_FDS];
	int nfds, ncpus;
	struct target child;
	struct buf b;
	struct { uint64_t time; size_t off; } *order;
	size_t ns, ordercap;
	uint64_t samples, joined;
};

static inline int mt_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

typedef void (*mt_sample_fn)(void *arg, const struct perf_sample *s, const struct moment_rec *r);
/* called after each pass of the loop (e.g. to register a process) */
typedef void (*mt_tick_fn)(void *arg, struct mt_run *run);

static inline uint64_t mt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mt_reg(const struct perf_sample *s, int idx)
{
	uint64_t v = 0;
	if (s->regs_abi && s->regs)
		memcpy(&v, s->regs + 8 * idx, 8);
	return v;
}

/* Spawn argv, open its events (freq Hz, stack copies of stack bytes) on
 * every cpu with the reader m attached; 0, or -1 with why in e. */
static inline int mt_open_cpu(struct mt_run *run, struct moment *m, struct perf_event_attr *attr, int cpu,
			      struct err *e)
{
	int fd = event_open(attr, run->child.pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno == ENODEV ? 0 : err_set(e, -errno, "perf_event_open: %s", strerror(errno));
	run->fds[run->nfds++] = fd;
	if (!run->rings[cpu].base) {
		if (ring_map(&run->rings[cpu], fd, 1024))
			return err_set(e, -1, "cannot map a ring");
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, run->rings[cpu].fd)) {
		return err_set(e, -errno, "PERF_EVENT_IOC_SET_OUTPUT: %s", strerror(errno));
	}
	return moment_attach(m, fd, e);
}

/* offcpu: the switch-out samples too (event_attr_switch(): period 1, in
 * the same rings; their PERF_SAMPLE_PERIOD is 1). */
static inline int mt_start(struct mt_run *run, struct moment *m, char *const argv[], uint64_t freq,
			   uint32_t stack, bool offcpu, struct err *e)
{
	struct perf_event_attr attr, sw, records;
	int cpu;

	memset(run, 0, sizeof(*run));
	run->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (run->ncpus > MT_MAX_CPUS)
		run->ncpus = MT_MAX_CPUS;
	event_attr(&attr, event_find("cpu-clock"), freq, true, true, MT_REGS, stack);
	run->fmt.sample_type = attr.sample_type;
	run->fmt.read_format = attr.read_format;
	run->fmt.regs_user_mask = attr.sample_regs_user;
	run->fmt.sample_id_all = attr.sample_id_all;
	if (target_spawn(&run->child, argv, e))
		return -1;
	event_attr_switch(&sw, &records, &attr, stack);
	for (cpu = 0; cpu < run->ncpus; cpu++)
		if (mt_open_cpu(run, m, &attr, cpu, e) || (offcpu && mt_open_cpu(run, m, &sw, cpu, e)))
			goto fail;
	if (target_release(&run->child, argv[0], e))
		return -1;
	return 0;
fail:
	target_abort(&run->child);
	return -1;
}

/* Read the perf rings, then the reader's ring, and hand every sample of
 * the rings with its record (or NULL) to fn. */
static inline void mt_pass(struct mt_run *run, struct moment *m, mt_sample_fn fn, void *arg)
{
	size_t off;
	int cpu;

	buf_reset(&run->b);
	for (cpu = 0; cpu < run->ncpus; cpu++)
		if (run->rings[cpu].base)
			ring_read(&run->rings[cpu], &run->b, NULL, NULL);
	moment_poll(m);
	/* in time order, as the recorder hands them over (a thread that
	 * moved between cpus has samples in two rings) */
	run->ns = 0;
	for (off = 0; off + sizeof(struct perf_event_header) <= run->b.len;) {
		const struct perf_event_header *h = (const void *)(run->b.data + off);
		struct perf_sample s;
		if (h->size < sizeof(*h) || off + h->size > run->b.len)
			break;
		if (h->type == PERF_RECORD_SAMPLE && !perf_sample_parse(&run->fmt, h, &s)) {
			GROW(run->order, run->ordercap, run->ns + 1);
			run->order[run->ns].time = s.time;
			run->order[run->ns++].off = off;
		}
		off += h->size;
	}
	if (run->ns)
		qsort(run->order, run->ns, sizeof(*run->order), mt_cmp);
	for (size_t i = 0; i < run->ns; i++) {
		const struct perf_event_header *h = (const void *)(run->b.data + run->order[i].off);
		struct perf_sample s;
		const struct moment_rec *r;
		perf_sample_parse(&run->fmt, h, &s);
		run->samples++;
		r = moment_take(m, s.tid, s.time, mt_reg(&s, MT_REG_IP), mt_reg(&s, MT_REG_SP));
		run->joined += r != NULL;
		fn(arg, &s, r);
	}
}

/* Run until the child exits, a pass every 10 ms; its exit status. */
static inline int mt_wait(struct mt_run *run, struct moment *m, mt_sample_fn fn, mt_tick_fn tick,
			  void *arg)
{
	int status = -1, cpu;
	for (;;) {
		pid_t w = waitpid(run->child.pid, &status, WNOHANG);
		if (tick)
			tick(arg, run);
		mt_pass(run, m, fn, arg);
		if (w == run->child.pid)
			break;
		poll(NULL, 0, 10);
	}
	mt_pass(run, m, fn, arg);
	for (cpu = 0; cpu < run->nfds; cpu++)
		close(run->fds[cpu]);
	for (cpu = 0; cpu < run->ncpus; cpu++)
		if (run->rings[cpu].base)
			ring_unmap(&run->rings[cpu]);
	buf_release(&run->b);
	free(run->order);
	return status;
}

#endif
