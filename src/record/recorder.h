/* recorder.h - record a program or processes into a stax recording.
 *
 * record_run() owns the whole session: opens the events, launches or
 * attaches, drains the ring buffers in time order, interns stacks, writes
 * chunks, and at the end appends symbols and prints a summary.
 *
 * What it says while it runs (progress, the summary, warnings about what
 * it could not do, and a write failure that stops the recording while
 * CMD runs on) goes through lib/util.c's note() and warn() (error() for
 * the write failure) at the time; a failure that ends record_run()
 * comes back in a struct err for the command to print.
 */
#ifndef STAX_RECORD_RECORDER_H
#define STAX_RECORD_RECORDER_H

#include "unwind/unwind.h"

#include <stddef.h>
#include <stdint.h>

struct record_opts {
	const char *output;     /* default "stax.data" */
	int output_fd;          /* > 0: write to this new file (stax live's
				 * memfd) instead of creating output */
	const char *event;      /* default "cpu-clock" */
	uint64_t freq;          /* Hz, default 999 */
	int *pids;              /* -p targets (thread ids with thread_only) */
	size_t npids;
	int thread_only;        /* -t: pids are threads, each recorded alone (no
				 * other thread of its process, no children) */
	uint64_t period;        /* -c: a sample every period events (ns of the
				 * clock for clock events); 0: freq */
	char **argv;            /* command to launch, NULL-terminated */
	enum unwind_mode unwind;
	uint32_t stack_size;    /* bytes of user stack per sample (dwarf/hybrid) */
	double duration;        /* stop after this many seconds; 0 = no limit */
	int quiet;              /* no summary */
	int off_cpu;            /* also record off-CPU intervals (switches) */
	int no_wakers;          /* ... without their wakers (sched_waking) */
	int no_python_frames;   /* do not read CPython's frames (pyframes.h) */
	int no_read_stack;      /* do not read stacks beyond their copy */
	int no_bpf;             /* no in-kernel reader (record/moment.h): what
				 * lies outside a sample is read after it, and
				 * marked late */
	int system_wide;        /* -a: every process, per-cpu events */
	size_t mmap_pages;      /* -m: data pages of each ring (a power of
				 * two); 0 = sized from the rate (see
				 * ring_default_pages) */
	int started_fd;         /* > 0: one byte is written to it once the
				 * recording has started (events enabled, CMD
				 * released), then it is closed: stax live's
				 * intervals begin there */
};

/* Record; on success *exit_status is the launched command's status
 * (128+signal when killed), or 0 when attaching. On failure returns -1
 * with why in *e ("what failed: why (what to do)"); e->msg is empty when
 * the failure was already reported while recording (a write error). */
struct err;
int record_run(const struct record_opts *o, int *exit_status, struct err *e);

#endif
