/* ingest.h - turn kernel perf_event records into a stax recording.
 *
 * Every source (the live ring buffers, a perf.data file or pipe) feeds
 * its records here in time order with the format that laid them out. The
 * ingester keeps processes and mappings (state/), unwinds user stacks
 * from registers and stack copies when samples carry them (unwind/),
 * interns stacks and writes records, nodes and samples (store/). At the
 * end, ingest_put_symbols() appends the symbols chunk.
 */
#ifndef STAX_RECORD_INGEST_H
#define STAX_RECORD_INGEST_H

#include "source/sample.h"
#include "state/state.h"
#include "store/stacks.h"
#include "store/writer.h"
#include "unwind/unwind.h"

#include <stdbool.h>
#include <stdint.h>

#define INGEST_MAX_FRAMES 1024

/* A thread switched out whose switch-in has not been seen yet. */
struct offcpu_pending {
	uint32_t pid, tid;
	uint64_t out_time;   /* switch-out time, 0 = not off the CPU */
	uint64_t last_in;    /* last switch-in: older switch-outs are stale */
	uint32_t stack;
	uint16_t cpu;
	uint8_t reason;      /* from the kernel stack (enum offcpu_reason) */
	uint8_t qm;          /* quality | method << 2 of the stack */
	bool preempt;        /* the switch-out record said still runnable */
	bool dead;           /* exited: its last switch-out is no wait */
};

struct ingest {
	struct store_writer *w;
	struct state st;
	struct stack_table stacks;
	struct unwinder *unwinder;     /* NULL: use the kernel's chain as is */
	enum unwind_mode mode;
	uint64_t samples, lost, lost_samples, throttles, unthrottles;
	uint64_t unknown_records, bad_records;
	uint64_t quality[4], method[3];
	uint64_t max_stack;            /* the events' sample_max_stack (0: unknown) */
	uint64_t chains_capped;        /* samples whose kernel chain hit max_stack */
	uint64_t first_time, last_time;
	/* off-CPU: samples of these event ids are switch-outs, not samples */
	bool offcpu;
	struct hmap switch_ids;
	struct offcpu_pending *pend;
	size_t npend, pendcap;
	struct hmap pend_index;        /* tid -> index in pend */
	struct hmap kreason;           /* kernel address -> reason + 1 */
	struct sym_session *ksyms;
	uint64_t offcpu_intervals, offcpu_ns;
	uint32_t cur_pid;
	uint64_t kframes[INGEST_MAX_FRAMES], uframes[INGEST_MAX_FRAMES];
	struct unwind_frame frames[INGEST_MAX_FRAMES];
};

/* mode FP ignores registers and stack copies; DWARF and HYBRID unwind
 * samples that carry them. */
void ingest_init(struct ingest *g, struct store_writer *w, enum unwind_mode mode);
void ingest_release(struct ingest *g);

/* Off-CPU recording: samples whose id is a switch id are the stacks of
 * threads switching out; PERF_RECORD_SWITCH(_CPU_WIDE) records end the
 * intervals. Each interval is written as a rec_offcpu. */
void ingest_enable_offcpu(struct ingest *g);
void ingest_add_switch_id(struct ingest *g, uint64_t id);
/* Write the intervals still open at end_time (flagged OFFCPU_F_OPEN). */
void ingest_finish(struct ingest *g, uint64_t end_time);
/* Reason bucket of a kernel stack (leaf first), from the names of its
 * frames in /proc/kallsyms (cached per address); OFFCPU_OTHER when no
 * frame says. Preemption is not in the stack: the caller checks it. */
enum offcpu_reason ingest_offcpu_reason(struct ingest *g, const uint64_t *kframes, size_t nk);

/* Handle one record laid out by f. Malformed records are counted in
 * bad_records and skipped, unknown types in unknown_records. */
void ingest_record(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h);

/* Seed what existed before recording started (attaching to a process). */
void ingest_seed_comm(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, const char *name);
void ingest_seed_mapping(struct ingest *g, uint32_t pid, uint64_t time, const struct state_mapping *m);
/* Seed the executable mappings and thread names of a running process
 * from /proc. */
void ingest_seed_proc(struct ingest *g, int pid, uint64_t time);

/* Append a symbol for every distinct frame address (call at the end,
 * after a flush; the caller flushes the CHUNK_SYMBOLS chunk). */
void ingest_put_symbols(struct ingest *g);

#endif
