/* perfdata.h - read perf.data (file and pipe format) into a stax recording.
 *
 * The second source next to the live ring buffers: it reads what
 * `perf record` wrote (`-o FILE`, or `-o -` for the pipe format), turns
 * it back into the kernel's own records and feeds them to ingest in time
 * order, so unwinding, stacks and symbols work exactly as when stax
 * records itself. Samples that carry registers and a stack copy
 * (`--call-graph dwarf`) are unwound by our unwinder (hybrid mode, spliced
 * with the kernel chain when there is one); plain `-g` chains are used as
 * they are.
 *
 * Layout read (all little-endian; a byte-swapped file is rejected):
 *
 *   file format                         pipe format
 *   0   u64 magic "PERFILE2"            0  u64 magic "PERFILE2"
 *   8   u64 header size (104)           8  u64 header size (16)
 *   16  u64 attr entry size             16 records: HEADER_ATTR (64),
 *   24  section attrs {off, size}          HEADER_FEATURE (80), EVENT_UPDATE,
 *   40  section data                       HEADER_TRACING_DATA (66, payload
 *   56  section event_types (unused)       follows the record), kernel
 *   72  256-bit feature bitmap             records, FINISHED_ROUND (68) ...
 *   then at data.off + data.size: one section {off, size} per set
 *   feature bit; we read BUILD_ID, HOSTNAME, CMDLINE, EVENT_DESC, NRCPUS.
 *
 * Records are not globally time-sorted in perf.data: like perf, records are
 * queued and released when a FINISHED_ROUND shows every cpu has moved past
 * them (everything up to the largest time seen before the previous round),
 * so mappings precede the samples that use them. Memory stays bounded by
 * what two rounds hold (and at most PERFDATA_QUEUE_MAX bytes: then the
 * older half is released early); the input is read in blocks, never whole.
 *
 * Errors: functions return -1 after formatting one line into err:
 * "NAME: what went wrong at offset N". A file cut short (perf killed, disk
 * full) is not an error: the records before the cut are imported and
 * stats.cut is set.
 */
#ifndef STAX_SOURCE_PERFDATA_H
#define STAX_SOURCE_PERFDATA_H

#include "store/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

#define PERFDATA_QUEUE_MAX (256ull << 20)

struct perfdata_opts {
	const char *event;   /* import samples of this event; NULL: the first sampling event */
	bool progress;       /* a progress line on stderr (the caller asks show_progress()) */
	bool quiet;          /* no warnings on stderr */
	bool no_binaries;    /* never open files named in the input: no DWARF
			      * unwinding, no symbols chunk (fuzzing) */
};

struct perfdata_stats {
	bool pipe;               /* pipe format */
	bool cut;                /* input ended early: a prefix was imported */
	uint32_t nattrs;         /* events in the file */
	const char *event;       /* name of the imported event (borrowed until the next import) */
	const char *unwind;      /* "fp" or "hybrid" */
	uint64_t bytes;          /* input bytes read */
	uint64_t records;        /* kernel records handed to ingest */
	uint64_t samples;        /* samples imported */
	uint64_t other_samples;  /* samples of other events, not imported */
	uint64_t switches;       /* SWITCH / SWITCH_CPU_WIDE, counted only */
	uint64_t skipped;        /* records of kinds stax does not use */
	uint64_t unknown;        /* records of unknown types */
	uint64_t unknown_id;     /* records whose sample id matches no event */
	uint64_t bad;            /* malformed records skipped by ingest */
	uint64_t out_of_order;   /* records older than an already released round */
	uint64_t lost;           /* records and samples the kernel lost */
	uint64_t build_ids;      /* build-ids read from the file */
	uint64_t max_queued;     /* most bytes held in the reordering queue */
	uint32_t nrcpus;         /* from HEADER_NRCPUS (online), 0 when absent */
	uint64_t first_time, last_time;
};

/* True when p starts with the perf.data magic (file and pipe format). */
bool perfdata_is_magic(const void *p, size_t n);
/* True when the file at path is a perf.data file ("-" counts as one:
 * standard input is read only as perf.data). */
bool perfdata_path_is_perfdata(const char *path);

/* Read fd (a file, a pipe, or standard input) named name in messages and
 * write everything into w, opened by the caller: records, META (command,
 * event, event_is_clock, freq, unwind, kernel_frames, hostname, start_ns,
 * end_ns), then the symbols chunk. The caller closes w. */
int perfdata_import_fd(int fd, const char *name, struct store_writer *w,
		       const struct perfdata_opts *o, struct perfdata_stats *st,
		       struct err *err);
/* The same from memory (fuzzing, tests). */
int perfdata_import_mem(const void *data, size_t size, const char *name,
			struct store_writer *w, const struct perfdata_opts *o,
			struct perfdata_stats *st, struct err *err);
/* Open path ("-": standard input) and import it into w. */
int perfdata_import(const char *path, struct store_writer *w,
		    const struct perfdata_opts *o, struct perfdata_stats *st,
		    struct err *err);

/* Import path into an anonymous in-memory file and return its fd (the
 * caller closes it; read it as "/proc/self/fd/N"), or -1 with err. Used
 * by the query commands to read perf.data directly. */
int perfdata_to_memfd(const char *path, const struct perfdata_opts *o,
		      struct err *err);

#endif
