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

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct err;

/* What one file of a recording in several files held (record_files). */
struct record_file_stats {
	uint64_t samples, lost;        /* samples written; records lost */
	uint64_t bytes;                /* the file's size */
	uint64_t start_ns, end_ns;     /* CLOCK_MONOTONIC: the part it holds */
	const char *why;               /* why it ended: "rotate", "SIGHUP",
					* "cap" (its state reached the cap), "stop" */
};

/* A recording that goes on from one file to the next (stax agent): the
 * events and rings stay open, and every rotate_ns (at SIGHUP, and when
 * what the ingester holds for one file passes file_cap) the file ends,
 * readable alone with the symbols of its own addresses, and the next
 * begins where it ended: no record is lost between them. SIGTERM and
 * SIGINT end the last file and the recording. */
struct record_files {
	uint64_t rotate_ns;     /* a new file this often (0: only when asked) */
	size_t max_procs;       /* live processes carried into the next file at
				 * most (0: no limit): the least recently
				 * sampled go beyond it (ingest.h) */
	size_t file_cap;        /* bytes the ingester may hold for one file
				 * (ingest_file_bytes); 0: no cap */
	uint64_t trim_ns;       /* unwind tables unused this long are let go
				 * (unwind_trim; 0: at each new file only) */
	/* Create the next file, whose recording starts at wall_ns (ns since
	 * the epoch): its descriptor (a new empty file, open for writing)
	 * and its name in name; or -errno with why in e, and the recorder
	 * goes on in the file it has and asks again a second later (the
	 * first file: record_run() fails). */
	int (*open_next)(void *arg, uint64_t wall_ns, char *name, size_t len, struct err *e);
	/* The file name is finished (never written again). */
	void (*file_done)(void *arg, const char *name, const struct record_file_stats *st);
	/* Called about once a second from the recording's loop. */
	void (*tick)(void *arg);
	void *arg;
	/* set: held while the recorder uses the modules' symbol tables
	 * (ingest.h's symbol_lock), for another thread that symbolizes too */
	pthread_mutex_t *symbol_lock;
};

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
	const struct record_files *files; /* set: file after file (system_wide
				 * only; output and output_fd unused) */
};

/* Record; on success *exit_status is the launched command's status
 * (128+signal when killed), or 0 when attaching. On failure returns -1
 * with why in *e ("what failed: why (what to do)"); e->msg is empty when
 * the failure was already reported while recording (a write error). */
int record_run(const struct record_opts *o, int *exit_status, struct err *e);

#endif
