/* recover.h - names and mappings from /proc when the kernel's records of
 * them were lost.
 *
 * Under load the kernel drops records from full ring buffers: a process
 * started during a system-wide recording may lose its FORK, COMM and
 * MMAP records, and its samples would show no name and no symbols. While
 * recording live, the ingester notes which processes and threads it has
 * a name for (from COMM and FORK records, and the /proc seeding when
 * attaching), and before a sample is unwound recover_sample() checks,
 * with hash lookups only:
 *   - the process has a name, else it reads /proc/PID/comm, maps and the
 *     thread's /proc/PID/task/TID/comm once, and writes COMM and MAPPING
 *     records at the sample's time;
 *   - the thread has a name (its COMM or its FORK), else it reads the
 *     thread's comm once;
 *   - the pc of a sample taken in user mode lies in a known mapping, else it reads
 *     /proc/PID/maps (and comm: a lost exec shows as a new name and a new
 *     executable) once per version of the process's mappings and per
 *     loss;
 *   - after a LOST record, on the first sample of each process and each
 *     thread, that its name in /proc is still the one the records gave
 *     (one small read per thread per loss, losses counted at most every
 *     250 ms).
 * A process that has exited before stax could read /proc cannot be
 * recovered: it and its samples are counted. /proc is never read for a
 * process that is known and consistent, so a recording without losses
 * reads nothing.
 *
 * All of it is off unless on is set (the recorder sets it; a perf.data
 * file cannot be recovered from this machine's /proc).
 */
#ifndef STAX_INGEST_RECOVER_H
#define STAX_INGEST_RECOVER_H

#include "lib/hash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ingest;

/* A process (tid == pid) or a thread, as the records left it. */
struct recover_task {
	uint32_t tid, pid;
	uint32_t flags;          /* RT_* in recover.c */
	char name[16];           /* the name a reader would show, as the
				  * kernel keeps it (15 bytes) */
	uint64_t checked_epoch;  /* loss epoch of the last name check */
	/* processes only */
	uint64_t exit_time;      /* when RT_EXITED: the main thread's EXIT */
	uint64_t miss_gen, miss_epoch; /* mappings version and epoch of the last
					* look for an unmapped pc */
};

struct recover {
	bool on;
	struct hmap index;       /* tid -> index in tasks */
	struct recover_task *tasks;
	size_t ntasks, taskcap;
	uint64_t epoch;          /* losses seen, counted at most every 250 ms */
	uint64_t epoch_ns;       /* when epoch last changed (now_ns) */
	/* what was read from /proc, and what could not be */
	uint64_t recovered_procs;     /* processes given a name or mappings */
	uint64_t recovered_threads;   /* threads given their own name */
	uint64_t unrecovered_procs;   /* gone from /proc before stax looked */
	uint64_t unrecovered_samples; /* samples of those processes */
	uint64_t released_samples;    /* of tasks sampled after the kernel released
				       * them (pid -1: the end of an exit) */
};

void recover_init(struct recover *r);
void recover_release(struct recover *r);

/* What the kernel's records (or the /proc seeding) said; no-ops when
 * recovery is off. */
void recover_note_comm(struct ingest *g, uint32_t pid, uint32_t tid, const char *name);
void recover_note_fork(struct ingest *g, uint32_t pid, uint32_t ppid, uint32_t tid);
void recover_note_exit(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time);
void recover_note_lost(struct ingest *g);

/* Whether a record (or seed) named process pid. */
bool recover_has_name(const struct recover *r, uint32_t pid);
/* Whether the EXIT record of process pid's main thread came (and no
 * FORK or COMM of the pid since). */
bool recover_exited(const struct recover *r, uint32_t pid);

/* The recording goes on in another file from time t (ingest_new_file):
 * keep the tasks of the processes in pids (pid -> 1; 0: not) but the
 * threads that exited, write a COMM at t for each one named, and start
 * the counts again. */
struct hmap;
void recover_carry(struct ingest *g, const struct hmap *pids, uint64_t t);

/* Before a sample of pid/tid at time is unwound: pc is its pc when it
 * was taken in user mode (0: none, or taken in the kernel). May write
 * COMM and MAPPING records at time and change the process's mappings. */
void recover_sample(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, uint64_t pc);

#endif
