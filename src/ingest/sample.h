/* sample.h - decode the kernel's perf_event records (the one vocabulary).
 *
 * Live ring buffers and perf.data files both deliver records laid out by
 * the kernel according to an event's attributes. struct perf_format holds
 * the attribute fields that decide the layout; the parsers below check
 * every field against the record's size and return -1 when it does not
 * fit, never reading past the end.
 */
#ifndef STAX_INGEST_SAMPLE_H
#define STAX_INGEST_SAMPLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct perf_format {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t regs_user_mask;
	uint64_t regs_intr_mask;
	bool sample_id_all;
};

struct perf_sample {
	uint64_t id, ip, time, addr, period;
	uint32_t pid, tid, cpu;
	const uint64_t *callchain;    /* unaligned-safe copy not needed: 8-aligned */
	uint64_t callchain_nr;
	uint64_t regs_abi;            /* 0: no user registers (kernel thread) */
	const uint8_t *regs;          /* popcount(regs_user_mask) u64 values */
	uint64_t regs_mask;
	const uint8_t *raw;           /* PERF_SAMPLE_RAW: a tracepoint's fields */
	uint32_t raw_size;
	const uint8_t *stack;         /* user stack copy */
	uint64_t stack_size, stack_dyn_size;
	uint16_t misc;
};

/* perf's name of a software or hardware event ("cpu-clock", "cycles"),
 * or NULL for another type or an unknown config: the one list of event
 * names (record/events.c's table of the events stax records names them
 * by it). */
const char *perf_event_name(uint32_t type, uint64_t config);

/* Parse a PERF_RECORD_SAMPLE. Returns 0 or -1 when malformed. */
int perf_sample_parse(const struct perf_format *f, const struct perf_event_header *h,
		      struct perf_sample *s);

/* A PERF_RECORD_MMAP (type 1) or MMAP2 (type 10). */
struct perf_mmap {
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t maj, min;            /* MMAP2 without a build-id */
	uint64_t inode;
	uint8_t build_id_size;        /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id[20];
	bool has_build_id;
	uint32_t prot;                /* MMAP2's; 5 (r-x) for MMAP */
	bool data;                    /* MMAP with PERF_RECORD_MISC_MMAP_DATA */
	const char *name;             /* in the record; NULL when it is not
				       * NUL-terminated before the sample_id */
};
/* Parse an MMAP or MMAP2 record of format f. Returns 0, or -1 when the
 * record is too short for its fixed part and one byte of name. */
int perf_mmap_parse(const struct perf_format *f, const struct perf_event_header *h,
		    struct perf_mmap *m);
/* Parse the sample_id trailer of a non-sample record (pid, tid, time,
 * id, cpu). Returns 0, or -1 when absent or malformed (fields zeroed). */
int perf_sample_id_parse(const struct perf_format *f, const struct perf_event_header *h,
			 struct perf_sample *s);
/* The time of any record (0 when it carries none). */
uint64_t perf_record_time(const struct perf_format *f, const struct perf_event_header *h);
/* Size in bytes of the sample_id trailer for this format. */
size_t perf_sample_id_size(const struct perf_format *f);

#endif
