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

struct ingest {
	struct store_writer *w;
	struct state st;
	struct stack_table stacks;
	struct unwinder *unwinder;     /* NULL: use the kernel's chain as is */
	enum unwind_mode mode;
	uint64_t samples, lost, lost_samples, throttles, unthrottles;
	uint64_t unknown_records, bad_records;
	uint64_t quality[4], method[3];
	uint64_t first_time, last_time;
	uint32_t cur_pid;
	uint64_t kframes[INGEST_MAX_FRAMES], uframes[INGEST_MAX_FRAMES];
	struct unwind_frame frames[INGEST_MAX_FRAMES];
};

/* mode FP ignores registers and stack copies; DWARF and HYBRID unwind
 * samples that carry them. */
void ingest_init(struct ingest *g, struct store_writer *w, enum unwind_mode mode);
void ingest_release(struct ingest *g);

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
