/* moment.h - the in-kernel reader at the sample's moment (user side).
 *
 * A BPF program (bpf/moment.bpf.c, CO-RE, loaded from the skeleton that
 * the build generates) runs on each of stax's sampling events just before
 * the kernel writes the sample, on the sampled thread, and copies what
 * describes that moment and lies outside the sample: the CPython frame
 * chain of the thread, a window of the stack right past the copy (a
 * thread of a process whose stacks go past it), and the stack slots user
 * space asked for beyond those. Its records (bpf/moment_abi.h) come through a BPF ring
 * buffer; moment_poll() reads them, and moment_take() hands the one of a
 * perf sample to whoever handles that sample.
 *
 * What user space tells the reader:
 *   - per process: where its interpreter keeps what the reader follows
 *     (moment_set_python; moment_pyproc_from_layout builds it from the
 *     layout pyframes.h reads);
 *   - per Go process (aarch64): where its runtime keeps the running
 *     goroutine (moment_set_go);
 *   - per process: its stacks go past the copy (moment_set_deep): its
 *     threads get the window;
 *   - per thread: its PyThreadState (moment_set_tstate), found by walking
 *     the interpreter's thread list when a record says it is unknown
 *     (the need_tstate callback), and the stack slot ranges to read
 *     (moment_set_slots), from the thread's last full unwind.
 *
 * The join: a record is a sample's when its tid is the sample's, its
 * time is within MOMENT_JOIN_NS of the sample's (the program runs in the
 * same overflow handler as the kernel's writing of the sample, on the
 * same clock, CLOCK_MONOTONIC, which stax's events use: just before the
 * sample's time is taken on older kernels, a few microseconds after it,
 * once the callchain and stack copy are taken, on 6.x), and its user ip
 * and sp are the sample's REGS_USER ones (when the sample has them).
 * The thread is stopped in between: the record and the sample describe
 * one moment. A thread's records and samples alternate (one sample at a
 * time per thread), so a record older than the sample it is asked for
 * and not its own will never be taken: it counts as unmatched.
 *
 * Failure: every function that can fail returns 0 or -errno, with the
 * reason in a struct err for the command to say; a reader that could not
 * be opened or attached is simply not there, and stax goes on without it
 * (the samples keep today's later reads, and say so). Nothing here can
 * stop or slow the workload beyond the program's cost per sample.
 */
#ifndef STAX_RECORD_MOMENT_H
#define STAX_RECORD_MOMENT_H

#include "ingest/pyframes.h"
#include "lib/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/moment_abi.h"

/* A record further than this from the sample's time is not its own. */
#define MOMENT_JOIN_NS 2000000ull

struct moment;

struct moment_opts {
	size_t ring_bytes;      /* the BPF ring; 0: 8 MiB (a power of two >= 64 KiB) */
	uint32_t stack_user;    /* bytes of the smallest stack copy of the events
				 * attached: slots below sp + stack_user are in
				 * the copy and not read */
	uint32_t window;        /* bytes of the window read past the copy for
				 * the threads of a process whose stacks go
				 * past it (moment_set_deep, or a thread with
				 * slots): a multiple of 4096 up to
				 * MOMENT_WINDOW_MAX, 0 for none */
	uint32_t topwin;        /* bytes of the top of the stack of such a
				 * thread without slots: a multiple of 4096 up
				 * to MOMENT_TOPWIN_MAX, 0 for none */
	bool deep_all;          /* every process is read as deep (as after
				 * moment_set_deep): a recording of a program,
				 * not of the whole machine */
	/* Called from moment_poll() for a record of a Python thread whose
	 * PyThreadState is not known (or is another thread's now), at most
	 * at most once per MOMENT_TSTATE_RETRY_NS per thread at first, then
	 * less and less often (doubling up to MOMENT_TSTATE_RETRY_MAX_NS)
	 * while the thread has none: find it and call
	 * moment_set_tstate(). May be NULL. */
	void (*need_tstate)(void *arg, uint32_t pid, uint32_t tid);
	void *arg;
};
#define MOMENT_TSTATE_RETRY_NS 1000000ull
#define MOMENT_TSTATE_RETRY_MAX_NS 1000000000ull

/* Load the program and create its maps. Needs root, or CAP_BPF with
 * CAP_PERFMON, a kernel with BTF (/sys/kernel/btf/vmlinux) and bpf_loop
 * (5.17 or later). -EPERM, -ENOENT (no BTF), -EOPNOTSUPP (kernel too
 * old) or another -errno with why in *e. */
int moment_open(struct moment **out, const struct moment_opts *o, struct err *e);
void moment_free(struct moment *m);

/* Run the program on the samples of perf event fd (its inherited copies
 * in children created later get it too). 0 or -errno with why in *e. */
int moment_attach(struct moment *m, int perf_fd, struct err *e);

/* The reader's view of an interpreter: from layout l and the address of
 * PyCode_Type in the process. -EINVAL when an offset does not fit what
 * the program reads. */
int moment_pyproc_from_layout(const struct pyf_layout *l, uint64_t code_type, struct moment_pyproc *out);

/* Process pid runs that interpreter (pp), or no longer (pp NULL: after
 * an exec or exit). 0 or -errno (the map is full: -E2BIG). */
int moment_set_python(struct moment *m, uint32_t pid, const struct moment_pyproc *pp);
/* Process pid runs Go with the runtime's structures laid out as gp says
 * (aarch64: the reader reads its g0 threads' goroutine, moment_abi.h),
 * or no longer (gp NULL). 0 or -errno (the map is full: -E2BIG). */
int moment_set_go(struct moment *m, uint32_t pid, const struct moment_goproc *gp);
/* Thread tid's PyThreadState (0: forget it). 0 or -errno. */
int moment_set_tstate(struct moment *m, uint32_t tid, uint64_t tstate);
/* The stack ranges to read at thread tid's samples (n 0: none): each
 * 8-aligned, 8..MOMENT_MAX_RANGE bytes, at most MOMENT_MAX_RANGES;
 * gen comes back in the records read with this list. 0 or -errno
 * (-EINVAL for a range out of those bounds). */
int moment_set_slots(struct moment *m, uint32_t tid, const struct moment_range *r, size_t n,
		     uint32_t gen, uint64_t top);
/* Process pid's stacks go past the copy (deep), or it exited: its threads
 * without slots of their own get the window too. 0 or -errno (the map is
 * full: -E2BIG). */
int moment_set_deep(struct moment *m, uint32_t pid, bool deep);
/* Thread tid exited: forget its tstate, slots and records. */
void moment_forget_thread(struct moment *m, uint32_t tid);

/* Read every record in the ring now (never blocks); returns how many. */
size_t moment_poll(struct moment *m);

/* The record of thread tid's sample taken at time (perf's sample time),
 * with user ip and sp (both 0: the sample has no user registers; then
 * the time alone joins), or NULL when there is none. Records of tid
 * older than it are dropped (unmatched). The record is borrowed until
 * the next moment_take() or moment_poll(). */
const struct moment_rec *moment_take(struct moment *m, uint32_t tid, uint64_t time, uint64_t ip,
				     uint64_t sp);
/* Let go of the entries of threads with no record waiting that were
 * never asked about or were forgotten (moment_forget_thread): a
 * recorder that runs for long (stax agent) calls it at each new file, so
 * that every thread ever seen does not stay. */
void moment_compact(struct moment *m);
/* Drop the records not taken that are older than before (their samples
 * were lost, or never asked for): counted unmatched. */
void moment_expire(struct moment *m, uint64_t before);

/* A record's parts (bounds checked against rec->size: NULL / 0 when
 * the record is shorter than it says). */
const struct moment_pyframe *moment_rec_pyframes(const struct moment_rec *r);
/* With MOMENT_F_GO: the goroutine part, and its stack bytes in *stack
 * (NULL when none were read). */
const struct moment_go *moment_rec_go(const struct moment_rec *r, const uint8_t **stack);
/* The window past the copy of r (MOMENT_F_WINDOW): its header, and its
 * bytes in *data; NULL when r has none or it is out of the record. */
const struct moment_range_hdr *moment_rec_window(const struct moment_rec *r, const uint8_t **data);
/* The top of the thread's stack in r (MOMENT_F_TOPWIN), the same way. */
const struct moment_range_hdr *moment_rec_topwin(const struct moment_rec *r, const uint8_t **data);
/* The slot ranges of r, one a call, in their order: it zeroed before
 * the first; each call gives a range's header and its bytes in *data,
 * and NULL after the last (r->nranges) or at one out of the record. */
struct moment_range_it {
	const uint8_t *at; /* the next range's header; NULL: not started */
	uint32_t k;        /* ranges given */
};
const struct moment_range_hdr *moment_rec_next_range(const struct moment_rec *r, struct moment_range_it *it,
						     const uint8_t **data);

struct moment_stats {
	uint64_t read;          /* records read from the ring */
	uint64_t dropped;       /* records the program could not write (ring full) */
	uint64_t taken;         /* joined with their sample */
	uint64_t unmatched;     /* read, never joined */
	uint64_t lost_bytes;    /* records that did not parse */
	uint64_t run_ns, run_cnt; /* the program's run time and runs, when
				   * kernel.bpf_stats_enabled is 1 (else 0) */
};
void moment_get_stats(const struct moment *m, struct moment_stats *st);
/* Count the program's run time from now while m lives (the kernel's
 * BPF run-time statistics, on as long as one holder keeps them on:
 * kernel.bpf_stats_enabled need not be set). 0 or -errno. */
int moment_count_time(struct moment *m);

#endif
