/* perfdata.c - read perf.data (file and pipe format) into a stax recording.
 *
 * The input is read in blocks (never whole); every record is copied into
 * memory of its own (aligned, owned by the reorder queue) before it is
 * looked at, and every field is checked against the bytes it came in.
 * See perfdata.h for the layout and the ordering rule.
 */
#include "source/perfdata-private.h"
#include "ingest/ingest.h"
#include "symbol/symbol.h"
#include "lib/cursor.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

int pd_fail(struct pd *pd, uint64_t off, const char *fmt, ...)
{
	char msg[sizeof(pd->err->msg)];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_set(pd->err, -1, "%s: %s at offset %" PRIu64, pd->name, msg, off);
	return -1;
}

void pd_warn(struct pd *pd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	if (pd->o->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pd->progress_shown) {
		note_progress_clear();
		pd->progress_shown = false;
	}
	warn("%s: %s", pd->name, msg);
}

void pd_cut(struct pd *pd, uint64_t off, const char *what)
{
	if (pd->st->cut)
		return;
	pd->st->cut = true;
	if (pd->in.err)
		pd_warn(pd, "read error at offset %" PRIu64 " (%s): imported the records before it",
			off, strerror(pd->in.err));
	else
		pd_warn(pd, "the file ends inside %s at offset %" PRIu64 " (perf record was stopped"
			" early?): imported the records before it", what, off);
}

/* ---- ordering and delivery ---- */

/* MMAP and MMAP2 records of a file perf knew the build-id of: seed the
 * mapping with it so the unwinder and symbolizer find the right file.
 * Returns false when the record is left to ingest as it is. */
static bool mmap_with_build_id(struct pd *pd, const struct perf_format *f,
			       const struct perf_event_header *h)
{
	const struct pd_build_id *b;
	struct perf_mmap mm;
	struct state_mapping m;
	struct perf_sample id;

	if (perf_mmap_parse(f, h, &mm) || mm.has_build_id || mm.data)
		return false;
	if (!(mm.prot & PROT_EXEC) || !mm.name)
		return false;
	b = pd_bid_find(pd, mm.name);
	if (!b)
		return false;
	ingest_mapping_of_mmap(&mm, &m);
	m.build_id_size = b->size;
	memcpy(m.build_id, b->id, sizeof(m.build_id));
	perf_sample_id_parse(f, h, &id);
	ingest_seed_mapping(pd->g, mm.pid, id.time, &m);
	return true;
}

/* Hand one record to ingest; s is its parse when it is a sample parsed
 * already (see prefetch), else NULL. */
static void deliver(struct pd *pd, uint32_t a, const struct perf_event_header *h,
		    const struct perf_sample *s)
{
	const struct perf_format *f = &pd->attrs[a].fmt;
	pd->st->records++;
	if (s) {
		ingest_sample(pd->g, f, s);
		return;
	}
	if ((h->type == PERF_RECORD_MMAP || h->type == PERF_RECORD_MMAP2) && pd->nbids &&
	    mmap_with_build_id(pd, f, h))
		return;
	ingest_record(pd->g, f, h);
}

static bool event_before(const struct pd_event *a, const struct pd_event *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

/* Sort the queue by (time, seq). It holds a few sorted runs: the part
 * sorted at the last flush, then one run per cpu ring perf copied in the
 * round. Runs are merged pairwise (a natural merge sort), linear in the
 * queue for a few runs, where qsort cost a quarter of reading a
 * frame-pointer file. */
static void sort_queue(struct pd *pd)
{
	struct pd_event *src = pd->q, *dst, *t;
	size_t n = pd->nq, nruns = 0, i, r, out;

	GROW(pd->qtmp, pd->qtmpcap, n);
	GROW(pd->runs, pd->runcap, n + 1);
	for (i = 0; i < n; i++)
		if (!i || event_before(&src[i], &src[i - 1]))
			pd->runs[nruns++] = i;
	pd->runs[nruns] = n;
	dst = pd->qtmp;
	while (nruns > 1) {
		for (r = out = 0; r < nruns; r += 2, out++) {
			size_t a = pd->runs[r], am = pd->runs[r + 1], b = am;
			size_t bm = r + 2 <= nruns ? pd->runs[MIN(r + 2, nruns)] : am, k = a;
			while (a < am && b < bm)
				dst[k++] = event_before(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < am)
				dst[k++] = src[a++];
			while (b < bm)
				dst[k++] = src[b++];
			pd->runs[out] = pd->runs[r];
		}
		pd->runs[out] = n;
		nruns = out;
		t = src;
		src = dst;
		dst = t;
	}
	if (src != pd->q) {   /* the sorted queue is in qtmp: swap the arrays */
		size_t cap = pd->qcap;
		pd->qtmp = pd->q;
		pd->q = src;
		pd->qcap = pd->qtmpcap;
		pd->qtmpcap = cap;
	}
}

/* Handing a sample on reads its header, call chain, registers, the top
 * of its stack copy and the size word after the copy: bytes of the mapped
 * file no one touched since the round's headers were read, cache misses
 * that were most of the time spent on a sample. So while record i is
 * handed on, record i + PREFETCH_HEAD has its first lines and its last
 * one requested, and record i + PREFETCH_PARSE (loaded by then) is parsed
 * and the top of its stack requested; the loads overlap with the work,
 * and the parse is kept for delivery. */
#define PREFETCH_HEAD 8
#define PREFETCH_HEAD_BYTES 512
#define PREFETCH_PARSE 2
#define PREFETCH_STACK_BYTES 512

static void prefetch(struct pd *pd, size_t i)
{
	const struct pd_event *e;
	struct pd_parsed *ps;
	const char *p;
	uint32_t o, n;

	if (i + PREFETCH_HEAD < pd->nq) {
		p = (const char *)pd->q[i + PREFETCH_HEAD].rec;
		n = ((const struct perf_event_header *)p)->size;
		for (o = 64; o < MIN(n, PREFETCH_HEAD_BYTES); o += 64)
			__builtin_prefetch(p + o);
		__builtin_prefetch(p + n - 1);
	}
	if (i + PREFETCH_PARSE >= pd->nq)
		return;
	e = &pd->q[i + PREFETCH_PARSE];
	ps = &pd->parsed[(i + PREFETCH_PARSE) % ARRAY_SIZE(pd->parsed)];
	ps->rec = NULL;
	if (e->rec->type != PERF_RECORD_SAMPLE ||
	    perf_sample_parse(&pd->attrs[e->attr].fmt, e->rec, &ps->s))
		return;
	ps->rec = e->rec;
	for (o = 0; o < MIN(ps->s.stack_size, (uint64_t)PREFETCH_STACK_BYTES); o += 64)
		__builtin_prefetch(ps->s.stack + o);
}

/* Hand every queued record with time <= limit to ingest, oldest first. */
void pd_flush_upto(struct pd *pd, uint64_t limit)
{
	size_t i;
	if (!pd->nq)
		return;
	/* records mostly arrive in time order (one cpu's ring at a time):
	 * sort only when one did not */
	if (pd->q_unsorted) {
		sort_queue(pd);
		pd->q_unsorted = false;
	}
	for (i = 0; i < pd->nq && pd->q[i].time <= limit; i++) {
		const struct pd_parsed *ps = &pd->parsed[i % ARRAY_SIZE(pd->parsed)];
		prefetch(pd, i);
		if (i < PREFETCH_PARSE) /* not parsed ahead: this call's first records */
			deliver(pd, pd->q[i].attr, pd->q[i].rec, NULL);
		else
			deliver(pd, pd->q[i].attr, pd->q[i].rec, ps->rec == pd->q[i].rec ? &ps->s : NULL);
		pd->qbytes -= pd->q[i].rec->size;
		rec_free(pd, pd->q[i].rec);
	}
	if (i) {
		pd->flushed_to = MAX(pd->flushed_to, pd->q[i - 1].time);
		memmove(pd->q, pd->q + i, (pd->nq - i) * sizeof(*pd->q));
		pd->nq -= i;
	}
	if (pd->warm)
		pd_warm_scan(pd);
}

/* Take ownership of rec (xmalloc'd) and queue it by time. */
static void enqueue(struct pd *pd, uint32_t a, struct perf_event_header *rec, uint64_t t)
{
	struct pd_event *e;
	if (t < pd->flushed_to)
		pd->st->out_of_order++;
	if (pd->nq && t < pd->q[pd->nq - 1].time)
		pd->q_unsorted = true;
	GROW(pd->q, pd->qcap, pd->nq + 1);
	e = &pd->q[pd->nq++];
	e->time = t;
	e->seq = pd->seq++;
	e->attr = a;
	e->rec = rec;
	pd->qbytes += rec->size;
	pd->max_time = MAX(pd->max_time, t);
	pd->st->max_queued = MAX(pd->st->max_queued, pd->qbytes);
	if (pd->qbytes > PERFDATA_QUEUE_MAX) {
		/* like perf's OE_FLUSH__HALF: release the older half by time */
		uint64_t lo = UINT64_MAX;
		size_t i;
		for (i = 0; i < pd->nq; i++)
			lo = MIN(lo, pd->q[i].time);
		pd_flush_upto(pd, lo + (pd->max_time - lo) / 2);
	}
}

/* The machine the file was recorded on: its HEADER_ARCH (uname -m), else
 * (a file without features) told by the user registers sampled: perf
 * asks for aarch64's x0-x30, sp and pc (bits 0-32) and never for bit 32
 * on x86-64 (an xmm register). NONE (with a warning) for a machine stax
 * does not unwind: its stacks are imported as the kernel's chains. */
static enum unwind_arch recording_arch(struct pd *pd, const struct perf_event_attr *a)
{
	enum unwind_arch arch;

	if (pd->arch) {
		arch = unwind_arch_by_name(pd->arch);
		if (arch == UNWIND_ARCH_NONE && !pd->o->quiet &&
		    (a->sample_type & PERF_SAMPLE_REGS_USER))
			pd_warn(pd, "recorded on %s, whose stacks stax does not unwind: using the"
				" kernel's frame-pointer chains", pd->arch);
		return arch;
	}
	if ((a->sample_type & PERF_SAMPLE_REGS_USER) && ((a->sample_regs_user >> 32) & 1))
		return UNWIND_ARCH_AARCH64;
	return (a->sample_type & PERF_SAMPLE_REGS_USER) && a->sample_regs_user ?
	       UNWIND_ARCH_X86_64 : unwind_arch_host();
}

/* The first kernel record: every event is known. Choose the event to
 * import, start ingest in the right unwinding mode, write the header META. */
int pd_start(struct pd *pd, uint64_t off)
{
	const struct perf_event_attr *a;
	enum unwind_mode mode = UNWIND_MODE_FP;
	enum unwind_arch arch;
	size_t i;

	if (!pd->nattrs)
		return pd_fail(pd, off, "no event attributes before the first record (not written by perf record?)");
	if (pd_check_layout(pd, off))
		return -1;
	pd->ev = 0;
	if (pd->o->event) {
		size_t n = strlen(pd->o->event);
		for (i = 0; i < pd->nattrs; i++) {
			const char *nm = pd->attrs[i].name;
			if (!strcmp(nm, pd->o->event) || (!strncmp(nm, pd->o->event, n) && nm[n] == ':'))
				break;
		}
		if (i == pd->nattrs) {
			struct buf b = BUF_INIT;
			for (i = 0; i < pd->nattrs; i++)
				buf_printf(&b, "%s%s", i ? ", " : "", pd->attrs[i].name);
			buf_add_u8(&b, 0);
			err_set(pd->err, -1, "%s: no event '%s' in the file (it has: %s)",
				 pd->name, pd->o->event, (char *)b.data);
			buf_release(&b);
			return -1;
		}
		pd->ev = (uint32_t)i;
	} else {
		for (i = 0; i < pd->nattrs; i++)
			if (!pd_is_dummy(&pd->attrs[i].attr) && pd->attrs[i].attr.sample_period)
				break;
		pd->ev = i < pd->nattrs ? (uint32_t)i : 0;
	}
	if (pd->merged && !pd->o->quiet)
		pd_warn(pd, "its %zu events carry no sample ids: importing all their samples as %s",
			pd->nattrs, pd->attrs[pd->ev].name);
	a = &pd->attrs[pd->ev].attr;
	arch = recording_arch(pd, a);
	if ((a->sample_type & PERF_SAMPLE_REGS_USER) && (a->sample_type & PERF_SAMPLE_STACK_USER) &&
	    !pd->o->no_binaries && arch != UNWIND_ARCH_NONE)
		mode = UNWIND_MODE_HYBRID;
	pd->ordered = (a->sample_type & PERF_SAMPLE_TIME) != 0;
	pd->g = xcalloc(1, sizeof(*pd->g));
	ingest_init(pd->g, pd->w, mode);
	/* its registers and stacks are the recording machine's, whatever
	 * this one is */
	ingest_set_arch(pd->g, arch);
	pd->started = true;
	pd->st->event = pd->attrs[pd->ev].name;
	pd->st->unwind = mode == UNWIND_MODE_HYBRID ? "hybrid" : "fp";

	store_put_meta(pd->w, "command", pd->cmdline ? pd->cmdline : "perf record");
	store_put_meta(pd->w, "event", pd->attrs[pd->ev].name);
	store_put_meta(pd->w, "event_is_clock", a->type == PERF_TYPE_SOFTWARE &&
		       (a->config == PERF_COUNT_SW_CPU_CLOCK || a->config == PERF_COUNT_SW_TASK_CLOCK) ?
		       "1" : "0");
	store_put_meta_u64(pd->w, "freq", a->freq ? a->sample_freq : 0);
	store_put_meta(pd->w, "unwind", pd->st->unwind);
	store_put_meta(pd->w, "kernel_frames", a->exclude_kernel ? "0" : "1");
	if (!a->exclude_kernel && !pd->o->no_binaries)
		sym_kernel_prefetch(); /* named at the end, read meanwhile */
	pd_warm_start(pd);
	if (pd->hostname)
		store_put_meta(pd->w, "hostname", pd->hostname);
	return 0;
}

/* A kernel record (type < 64): queue it by time, or count and drop it. */
static int kernel_record(struct pd *pd, struct perf_event_header *rec, uint64_t off)
{
	int a;
	uint64_t t;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		pd->st->switches++;
		goto drop;
	case PERF_RECORD_READ:
	case PERF_RECORD_AUX:
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_NAMESPACES:
	case PERF_RECORD_KSYMBOL:
	case PERF_RECORD_BPF_EVENT:
	case PERF_RECORD_CGROUP:
	case PERF_RECORD_TEXT_POKE:
	case 21: /* AUX_OUTPUT_HW_ID */
		pd->st->skipped++;
		goto drop;
	default:
		pd->st->unknown++;
		goto drop;
	}
	if (!pd->started && pd_start(pd, off))
		goto fail;
	if (rec->type == PERF_RECORD_LOST_SAMPLES) {
		/* perf appends one per event and cpu at the end, holding the
		 * kernel's lost counter (read_format LOST), without a time: the
		 * same samples its LOST records counted, and a few more when
		 * recording stopped before the kernel reported them. finish()
		 * adds what the LOST records missed. The kernel's own always
		 * have a time. */
		struct perf_sample id;
		uint64_t n;
		if ((pd->attrs[0].attr.sample_type & PERF_SAMPLE_TIME) && rec->size >= 16 &&
		    !perf_sample_id_parse(&pd->attrs[0].fmt, rec, &id) && !id.time) {
			memcpy(&n, rec + 1, 8);
			pd->counted_lost += n;
			goto drop;
		}
	}
	a = pd_attr_of(pd, rec);
	if (a < 0) {
		pd->st->unknown_id++;
		goto drop;
	}
	if (rec->type == PERF_RECORD_SAMPLE && (uint32_t)a != pd->ev && !pd->merged) {
		pd->st->other_samples++;
		goto drop;
	}
	t = pd->ordered ? perf_record_time(&pd->attrs[a].fmt, rec) : 0;
	if (!t) {
		/* no time (synthesized, or the file has none): in file order, like perf */
		deliver(pd, (uint32_t)a, rec, NULL);
		goto drop;
	}
	enqueue(pd, (uint32_t)a, rec, t);
	return 0;
drop:
	rec_free(pd, rec);
	return 0;
fail:
	rec_free(pd, rec);
	return -1;
}

static int record(struct pd *pd, struct perf_event_header *rec, uint64_t off, uint64_t *extra);

/* PERF_RECORD_COMPRESSED (perf record -z): zstd frames whose output is
 * more records; a record may continue in the next compressed record. */
static int compressed(struct pd *pd, const struct perf_event_header *h, uint64_t off)
{
	ZSTD_inBuffer zin = { (const uint8_t *)(h + 1), h->size - sizeof(*h), 0 };
	size_t pos = 0;
	if (!pd->dctx)
		pd->dctx = ZSTD_createDCtx();
	for (;;) {
		ZSTD_outBuffer zout;
		size_t r;
		buf_extend(&pd->zbuf, 1 << 16);
		pd->zbuf.len -= 1 << 16;
		zout.dst = pd->zbuf.data + pd->zbuf.len;
		zout.size = 1 << 16;
		zout.pos = 0;
		r = ZSTD_decompressStream(pd->dctx, &zout, &zin);
		if (ZSTD_isError(r))
			return pd_fail(pd, off, "cannot decompress a compressed record (%s)", ZSTD_getErrorName(r));
		pd->zbuf.len += zout.pos;
		/* done when the input is used up and the output was not full
		 * (a full buffer may leave output inside the decoder) */
		if (zin.pos == zin.size && zout.pos < zout.size)
			break;
		if (pd->zbuf.len > (64u << 20))
			return pd_fail(pd, off, "a compressed record holds a record larger than 64 MiB");
	}
	while (pd->zbuf.len - pos >= 8) {
		struct perf_event_header hh;
		struct perf_event_header *copy;
		uint64_t extra = 0;
		memcpy(&hh, pd->zbuf.data + pos, 8);
		if (hh.size < 8 || hh.type == PD_COMPRESSED)
			return pd_fail(pd, off, "malformed record (type %u, size %u) inside a compressed record",
				    hh.type, hh.size);
		if (pd->zbuf.len - pos < hh.size)
			break;
		copy = xmalloc(hh.size);
		memcpy(copy, pd->zbuf.data + pos, hh.size);
		pos += hh.size;
		if (record(pd, copy, off, &extra))
			return -1;
		if (extra)
			return pd_fail(pd, off, "record of type %u cannot be inside a compressed record", hh.type);
	}
	memmove(pd->zbuf.data, pd->zbuf.data + pos, pd->zbuf.len - pos);
	pd->zbuf.len -= pos;
	return 0;
}

/* Handle one record (rec is xmalloc'd and owned from here). *extra is set
 * to the number of payload bytes that follow the record in the stream. */
static int record(struct pd *pd, struct perf_event_header *rec, uint64_t off, uint64_t *extra)
{
	const uint8_t *body = (const uint8_t *)(rec + 1);
	size_t n = rec->size - sizeof(*rec);
	int ret = 0;
	uint64_t v, id;
	uint32_t i, u;
	size_t used;

	*extra = 0;
	if (rec->type < PD_HEADER_ATTR)
		return kernel_record(pd, rec, off);
	switch (rec->type) {
	case PD_HEADER_ATTR:
		if (pd->started) {
			ret = pd_fail(pd, off, "event attribute after the first record");
			break;
		}
		used = pd_add_attr(pd, body, n);
		if (!used) {
			ret = pd_fail(pd, off, "malformed event attribute record");
			break;
		}
		for (i = 0; used + 8 * (size_t)(i + 1) <= n; i++) {
			memcpy(&id, body + used + 8 * (size_t)i, 8);
			pd_add_id(pd, id, (uint32_t)(pd->nattrs - 1));
		}
		break;
	case PD_HEADER_TRACING_DATA:
		if (n < 4) {
			ret = pd_fail(pd, off, "malformed tracing data record");
			break;
		}
		memcpy(&u, body, 4);
		*extra = u;
		pd->st->skipped++;
		break;
	case PD_AUXTRACE:
		if (n < 8) {
			ret = pd_fail(pd, off, "malformed auxtrace record");
			break;
		}
		memcpy(&v, body, 8);
		*extra = v;
		pd->st->skipped++;
		break;
	case PD_HEADER_BUILD_ID:
		if (!pd_build_id_event(pd, (const uint8_t *)rec, rec->size))
			ret = pd_fail(pd, off, "malformed build-id record");
		break;
	case PD_FINISHED_ROUND:
		pd_flush_upto(pd, pd->next_flush);
		pd->next_flush = pd->max_time;
		break;
	case PD_EVENT_UPDATE:
		if (n >= 16) {
			memcpy(&v, body, 8);
			memcpy(&id, body + 8, 8);
			if (v == EVENT_UPDATE_NAME && hmap_get(&pd->ids, id, &u) && !pd->attrs[u].named)
				pd_set_name(pd, u, (const char *)body + 16, strnlen((const char *)body + 16, n - 16));
		}
		break;
	case PD_HEADER_FEATURE:
		if (n < 8) {
			ret = pd_fail(pd, off, "malformed feature record");
			break;
		}
		memcpy(&v, body, 8);
		if (v < 256)
			ret = pd_feature(pd, (unsigned)v, body + 8, n - 8, off + 16);
		break;
	case PD_COMPRESSED:
		ret = compressed(pd, rec, off);
		break;
	case PD_HEADER_EVENT_TYPE:
	case PD_ID_INDEX:
	case PD_AUXTRACE_INFO:
	case PD_AUXTRACE_ERROR:
	case PD_THREAD_MAP:
	case PD_CPU_MAP:
	case PD_STAT_CONFIG:
	case PD_STAT:
	case PD_STAT_ROUND:
	case PD_TIME_CONV:
	case PD_FINISHED_INIT:
		pd->st->skipped++;
		break;
	default:
		pd->st->unknown++;
		break;
	}
	rec_free(pd, rec);
	return ret;
}

static void progress(struct pd *pd)
{
	uint64_t now;
	if (!pd->o->progress || (pd->nrec & 4095))
		return;
	now = now_ns();
	if (now - pd->progress_start < 300000000ull || now - pd->progress_last < 100000000ull)
		return;
	pd->progress_last = now;
	pd->progress_shown = true;
	if (pd->in.size && pd->in.seekable)
		note_progress("reading %s: %3.0f%%", pd->name, 100.0 * pd->in.pos / pd->in.size);
	else
		note_progress("reading %s: %" PRIu64 " MiB", pd->name, pd->in.pos >> 20);
}

/* A mapped file's pages count in the resident set once touched; drop
 * those below the oldest record still queued, so memory stays bounded by
 * the queue however large the file (they stay in the page cache). */
#define DROP_STEP (16ull << 20)
static void drop_pages(struct pd *pd)
{
	uint64_t lo = pd->in.pos;
	size_t i;
	for (i = 0; i < pd->nq; i++)
		if (in_mem(pd, pd->q[i].rec))
			lo = MIN(lo, (uint64_t)((const uint8_t *)pd->q[i].rec - pd->in.mem));
	lo &= ~(uint64_t)4095;
	if (pd->in.helper) {
		/* the prefault thread drops them; when it falls behind (a busy
		 * machine), drop here too, so that memory stays bounded */
		if (lo > pd->in.dropped &&
		    lo > atomic_load_explicit(&pd->in.helper_dropped, memory_order_relaxed) + 4 * DROP_STEP)
			madvise((void *)(pd->in.mem + pd->in.dropped), lo - pd->in.dropped, MADV_DONTNEED);
		/* pos first: the thread never touches pages below it again */
		atomic_store_explicit(&pd->in.shared_pos, pd->in.pos, memory_order_relaxed);
		atomic_store_explicit(&pd->in.drop_to, lo, memory_order_release);
		pd->in.dropped = lo;
	} else if (lo > pd->in.dropped &&
		   !madvise((void *)(pd->in.mem + pd->in.dropped), lo - pd->in.dropped, MADV_DONTNEED)) {
		pd->in.dropped = lo;
	}
}

/* Records from the current position up to limit (or the end of input). */
int pd_read_records(struct pd *pd, uint64_t limit)
{
	for (;;) {
		uint64_t off = pd->in.pos, extra = 0;
		const uint8_t *p;
		struct perf_event_header h, *rec;

		if (off >= limit)
			return 0;
		p = pd_in_peek(&pd->in, sizeof(h));
		if (!p) {
			if (!pd_in_avail(&pd->in) && !pd->in.err && limit == UINT64_MAX)
				return 0; /* the stream ended between records */
			pd_cut(pd, off, "a record header");
			return 0;
		}
		memcpy(&h, p, sizeof(h));
		if (h.size < sizeof(h))
			return pd_fail(pd, off, "record of type %u has an invalid size %u", h.type, h.size);
		if (limit - off < h.size) {
			if (limit != pd->in.size)
				return pd_fail(pd, off, "record of %u bytes runs past the end of the data section",
					    h.size);
			pd_cut(pd, off, "a record");
			return 0;
		}
		p = pd_in_peek(&pd->in, h.size);
		if (!p) {
			pd_cut(pd, off, "a record");
			return 0;
		}
		if (pd->in.fd < 0 && !((uintptr_t)p & 7)) {
			rec = (struct perf_event_header *)p; /* in place */
		} else {
			rec = xmalloc(h.size);
			memcpy(rec, p, h.size);
		}
		pd_in_skip(&pd->in, h.size);
		if (record(pd, rec, off, &extra))
			return -1;
		if (extra && (limit - pd->in.pos < extra || !pd_in_skip(&pd->in, extra))) {
			if (limit != UINT64_MAX && limit != pd->in.size)
				return pd_fail(pd, off, "payload of %" PRIu64 " bytes runs past the end of the"
					    " data section", extra);
			pd_cut(pd, off, "a record's payload");
			return 0;
		}
		if (pd->w->err)
			return pd_fail(pd, off, "cannot write the recording: %s", strerror(-pd->w->err));
		if (!(++pd->nrec & 255)) {
			store_maybe_flush(pd->w);
			if (pd->in.helper)
				atomic_store_explicit(&pd->in.shared_pos, pd->in.pos, memory_order_relaxed);
		}
		if (pd->in.mapped && pd->in.pos - pd->in.dropped >= DROP_STEP)
			drop_pages(pd);
		progress(pd);
	}
}
