/* recorder-private.h - what the files of the recorder share: the
 * recorder's state, the opening of its events (open.c) and the META
 * records and summary of a recording (meta.c). recorder.c has the
 * session: prepare, start (system-wide, command, attach), loop, finish.
 */
#ifndef STAX_RECORD_RECORDER_PRIVATE_H
#define STAX_RECORD_RECORDER_PRIVATE_H

#include "record/recorder.h"
#include "record/events.h"
#include "record/queue.h"
#include "record/ring.h"
#include "record/target.h"
#include "ingest/ingest.h"
#include "store/writer.h"
#include "lib/buf.h"
#include "lib/err.h"
#include "lib/perm.h"
#include "lib/safefile.h"

#include <stdbool.h>
#include <stdint.h>

#include "bpf/moment_abi.h"

/* stack words of one record of the in-kernel reader, at most */
#define MOMENT_WORDS_MAX \
	((MOMENT_MAX_RANGES * MOMENT_MAX_RANGE + MOMENT_GO_STACK + MOMENT_WINDOW_MAX + MOMENT_TOPWIN_MAX) / 8)

struct moment;

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
	uint64_t read_window_ns, read_samples, read_all, read_slots;
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
	/* the events: samples; with --off-cpu the switch-out samples and
	 * the switch records */
	struct perf_event_attr attr, swattr, recattr;
	struct perf_format fmt;
	struct ingest ing;
	bool prepared;           /* the file is made and ing set up (prepare()) */
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
	struct err wakers_why;   /* why wakers are not recorded */
	/* record_files (rotate.c): the file being written, its number, when
	 * the next is due (CLOCK_MONOTONIC), or tried again after one could
	 * not be made; why the current one ends; what the start of the
	 * current one carried over */
	char path[512];
	uint32_t file_seq;
	uint64_t next_rotate_ns, retry_ns, last_trim_ns, last_tick_ns, cap_checked_ns;
	bool rotate_asked;       /* SIGHUP */
	bool no_file;            /* the next file could not be begun: none is open */
	bool files_stop;         /* no next file for too long: end this one, fail */
	uint64_t retry_since;    /* when the next file first could not be made */
	const char *end_why;
	uint64_t cap_ends;       /* files ended early at record_files.file_cap */
	struct ingest_carry kept;
	/* the in-kernel reader (moment_ops.c; NULL: not there, and why) */
	struct moment *moment;
	struct err moment_why;
	struct ingest_moment_ops mops;
	uint32_t slots_gen;
	uint64_t moment_map_errors; /* its maps refused an update */
	uint64_t mwords_addr[MOMENT_WORDS_MAX], mwords_val[MOMENT_WORDS_MAX];
	uint64_t mwords_taddr[MOMENT_WORDS_MAX], mwords_tval[MOMENT_WORDS_MAX]; /* merging them */
};

/* The file being written, for messages: -o's, or record_files' current. */
const char *rec_output(const struct recorder *r);
/* The file could not be written: stop recording, cut it back to its last
 * whole chunk, say so once (recorder.c). */
void rec_write_failed(struct recorder *r);

/* ---- rotate.c: one file after another (record_files) ---- */

/* The wall-clock time (ns since the epoch) of CLOCK_MONOTONIC mono_ns. */
uint64_t rec_wall_of(uint64_t mono_ns);
/* Make the first file; -1 with r->err. */
int rec_files_first(struct recorder *r);
/* META records of each file's start, and of its end (no-ops for one file). */
void rec_files_meta(struct recorder *r);
void rec_files_end_meta(struct recorder *r);
/* The last file ended (finish()): tell record_files. */
void rec_files_done(struct recorder *r);
/* From the loop, after a drain: end the file and begin the next when it
 * is due (and all records up to r->safe were handled), let go of unused
 * unwind tables, call the tick. */
void rec_files_step(struct recorder *r);
/* End the current file at t and go on in the next; why says why. */
void rec_files_rotate(struct recorder *r, uint64_t t, const char *why);

/* ---- open.c: the events, opened into their rings ---- */

/* Choose the size of the rings (r->pages, r->switch_pages): -m, or the
 * default from the rate and the record size, within what this user may
 * lock. -1 with r->err when -m does not fit. */
int rec_size_rings(struct recorder *r, const struct perf_event_attr *attr);
/* Open the sampling event attr for task pid (-1: every task, -a) on
 * every cpu; -1 with r->err. */
int rec_open_task(struct recorder *r, struct perf_event_attr *attr, int pid);
/* Open the off-CPU events for pid (or -1 with -a) next to the sampling
 * one; -1 with r->err. */
int rec_open_switch(struct recorder *r, struct perf_event_attr *attr, struct perf_event_attr *records, int pid);
/* Wakers from outside the recorded processes; a failure only costs those
 * (said with a warning). */
void rec_open_foreign_wakers(struct recorder *r);

/* ---- moment_ops.c: the in-kernel reader in the session ---- */

/* Open it (unless --no-bpf) and hand the ingester its callbacks; when it
 * cannot be, r->moment stays NULL and r->moment_why says why. Call after
 * the events' attributes are chosen. */
void rec_moment_open(struct recorder *r);
/* Attach it to the sampling events r->fds[first_fd..]: a failure drops
 * it (one warning), never the recording. */
void rec_moment_attach(struct recorder *r, size_t first_fd);
/* Read its ring: before the samples taken from the rings are ingested
 * (their records were written before them). */
void rec_moment_poll(struct recorder *r);
/* Records of samples up to done were handled: drop older ones. */
void rec_moment_expire(struct recorder *r, uint64_t done);
/* Its META records: which path (at the start), and its counts (end). */
void rec_moment_put_meta(struct recorder *r, bool end);
void rec_moment_close(struct recorder *r);

/* ---- meta.c: what a recording says of itself ---- */

/* META records that open the recording (the command, the event and its
 * rate, the unwinding, the permissions, the start). */
void rec_put_header_meta(struct recorder *r);
/* META records that close it (the last chunk before END). */
void rec_put_end_meta(struct recorder *r, int exit_status);
/* The lines printed when a recording ends (unless --quiet). */
void rec_summary(struct recorder *r);

#endif
