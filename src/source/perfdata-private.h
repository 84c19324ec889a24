/* perfdata-private.h - what the files of the perf.data reader share
 * (internal to src/source/): perf's file layout, the input (perfdata_input.c),
 * the session (struct pd), and the attribute, build-id and feature
 * readers (perfdata_header.c), the records (perfdata.c), the symbols
 * opened ahead (perfdata_warm.c) and the import as a whole
 * (perfdata_import.c). */
#ifndef STAX_SOURCE_PERFDATA_PRIVATE_H
#define STAX_SOURCE_PERFDATA_PRIVATE_H

#include "source/perfdata.h"
#include "ingest/ingest.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define PERF_MAGIC2          0x32454c4946524550ull  /* "PERFILE2" */
#define PERF_MAGIC2_SWAPPED  0x50455246494c4532ull
#define PERF_MAGIC1          0x454c494646524550ull  /* "PERFFILE" */
#define PIPE_HEADER_SIZE     16
#define FILE_HEADER_SIZE     104
#define ATTR_SIZE_VER0       64

/* perf's own record types, after the kernel's */
enum {
	PD_HEADER_ATTR = 64, PD_HEADER_EVENT_TYPE, PD_HEADER_TRACING_DATA, PD_HEADER_BUILD_ID,
	PD_FINISHED_ROUND, PD_ID_INDEX, PD_AUXTRACE_INFO, PD_AUXTRACE, PD_AUXTRACE_ERROR,
	PD_THREAD_MAP, PD_CPU_MAP, PD_STAT_CONFIG, PD_STAT, PD_STAT_ROUND, PD_EVENT_UPDATE,
	PD_TIME_CONV, PD_HEADER_FEATURE, PD_COMPRESSED, PD_FINISHED_INIT,
};

/* feature bits (perf's HEADER_*) we read */
enum {
	FEAT_BUILD_ID = 2, FEAT_HOSTNAME = 3, FEAT_ARCH = 6, FEAT_NRCPUS = 7, FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
};

#define EVENT_UPDATE_NAME 2
#define BUILD_ID_SIZE_VALID (1u << 15)  /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define SECTION_MAX (256u << 20)        /* largest section we read */

struct section {
	uint64_t offset, size;
};

struct file_header {
	uint64_t magic, size, attr_size;
	struct section attrs, data, event_types;
	uint64_t features[4];
};
_Static_assert(sizeof(struct file_header) == FILE_HEADER_SIZE, "perf_file_header");

struct pd_in {
	int fd;                 /* -1: memory */
	const uint8_t *mem;
	uint64_t size;          /* bytes in the input when known (file, memory) */
	bool seekable;
	uint8_t *buf;
	size_t cap, lo, hi;     /* buf[lo..hi) holds the input from offset pos */
	uint64_t pos;
	bool eof;
	bool mapped;            /* mem is our mapping of a file: pages read
				 * and done with are dropped as we go */
	uint64_t dropped;       /* mem[0..dropped) was dropped */
	/* Shared with the prefault thread (C11 atomics; drop_to is stored
	 * with release after shared_pos, so the thread never sees a drop
	 * point beyond the position it paces itself by): */
	_Atomic uint64_t drop_to;        /* for it to drop up to */
	_Atomic uint64_t helper_dropped; /* what it dropped */
	_Atomic uint64_t shared_pos;     /* pos, published every 256 records */
	bool helper;            /* a prefault thread runs (see import_mem) */
	int err;                /* errno of a failed read */
};

/* ---- the session ---- */

struct pd_attr {
	struct perf_event_attr attr;
	struct perf_format fmt;
	char *name;             /* from EVENT_DESC / EVENT_UPDATE, else derived */
	bool named;
};

struct pd_build_id {
	char *path;
	uint8_t id[20];
	uint8_t size;
};

struct pd_event {              /* a queued kernel record */
	uint64_t time, seq;
	uint32_t attr;
	struct perf_event_header *rec;  /* xmalloc'd copy, or in the mapped input */
};

struct pd {
	const char *name;
	const struct perfdata_opts *o;
	struct perfdata_stats *st;
	struct err *err;               /* the caller's, may be NULL */
	struct pd_in in;
	struct store_writer *w;
	struct ingest *g;
	bool started, pipe;

	struct pd_attr *attrs;
	size_t nattrs, attrcap;
	struct hmap ids;              /* sample id -> attr index */
	int id_pos, is_pos;           /* where records carry their id (u64 units) */
	bool by_id;                   /* several events told apart by id */
	bool merged;                  /* several events that cannot be told apart */
	uint32_t ev;                  /* the imported event */

	struct pd_build_id *bids;
	size_t nbids, bidcap;
	struct hmap bid_index;        /* hash of path -> index */

	char *cmdline, *hostname;
	char *arch;                   /* HEADER_ARCH: uname -m of the recording machine */

	struct pd_event *q;
	size_t nq, qcap;
	struct pd_event *qtmp;        /* room for sort_queue */
	size_t qtmpcap, *runs, runcap;
	struct pd_parsed {            /* samples parsed ahead (see prefetch) */
		const struct perf_event_header *rec;
		struct perf_sample s;
	} parsed[4];
	uint64_t qbytes, seq, next_flush, max_time, flushed_to;
	bool ordered;
	bool q_unsorted;              /* q is not in (time, seq) order */

	void *dctx;                   /* ZSTD_DCtx for PERF_RECORD_COMPRESSED */
	struct buf zbuf;              /* decompressed records not yet handled */

	struct warm *warm;            /* opens symbols and DWARF on a thread (file format) */
	uint64_t counted_lost;         /* perf's lost counters (see kernel_record) */
	uint64_t nrec, progress_start, progress_last;
	bool progress_shown;
};

/* Records read from memory (a mapped file) are used in place when
 * aligned; only copies are freed. */
static inline bool in_mem(const struct pd *pd, const void *p)
{
	return pd->in.fd < 0 && (const uint8_t *)p >= pd->in.mem &&
	       (const uint8_t *)p < pd->in.mem + pd->in.size;
}

static inline void rec_free(struct pd *pd, struct perf_event_header *rec)
{
	if (!in_mem(pd, rec))
		free(rec);
}

/* perfdata_input.c: n bytes at the input position without consuming
 * them (NULL when the input ends first); what is left; skip n bytes
 * (false past the end); read at an offset (seekable input); move to off. */
const uint8_t *pd_in_peek(struct pd_in *in, size_t n);
uint64_t pd_in_avail(const struct pd_in *in);
bool pd_in_skip(struct pd_in *in, uint64_t n);
bool pd_in_pread(struct pd_in *in, uint64_t off, void *dst, size_t n);
void pd_in_seek(struct pd_in *in, uint64_t off);
/* perfdata.c: fail with "NAME: what at offset OFF" in pd->err (returns
 * -1); warn (unless quiet); note that the input was cut at off. */
int pd_fail(struct pd *pd, uint64_t off, const char *fmt, ...) PRINTF(3, 4);
void pd_warn(struct pd *pd, const char *fmt, ...) PRINTF(2, 3);
void pd_cut(struct pd *pd, uint64_t off, const char *what);
/* perfdata_header.c: attributes and sample ids, build-ids, features. */
bool pd_is_dummy(const struct perf_event_attr *a);
size_t pd_add_attr(struct pd *pd, const uint8_t *p, size_t n);
void pd_add_id(struct pd *pd, uint64_t id, uint32_t attr);
void pd_set_name(struct pd *pd, uint32_t i, const char *name, size_t len);
int pd_check_layout(struct pd *pd, uint64_t off);
int pd_attr_of(struct pd *pd, const struct perf_event_header *h);
const struct pd_build_id *pd_bid_find(const struct pd *pd, const char *path);
bool pd_build_id_event(struct pd *pd, const uint8_t *p, size_t n);
int pd_feature(struct pd *pd, unsigned id, const uint8_t *p, size_t n, uint64_t off);
/* perfdata.c: the records. Start the recording at input offset off (the
 * first record: META records, the ingester); read records up to input
 * offset limit (UINT64_MAX: the end) into the reorder queue, handing on
 * those that are in order; hand on every queued record up to time limit.
 * 0, or -1 with pd->err. */
int pd_start(struct pd *pd, uint64_t off);
int pd_read_records(struct pd *pd, uint64_t limit);
void pd_flush_upto(struct pd *pd, uint64_t limit);
/* perfdata_warm.c: the modules of the stacks opened on a thread of their
 * own while records are read (file format): start it, post what the
 * latest records name, and take its session (NULL when none) at the end. */
struct sym_session;
void pd_warm_start(struct pd *pd);
void pd_warm_scan(struct pd *pd);
struct sym_session *pd_warm_finish(struct pd *pd);

#endif
