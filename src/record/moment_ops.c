/* moment_ops.c - the in-kernel reader (moment.h) in a recording session
 * (recorder-private.h): opened unless --no-bpf, attached to the sampling
 * and switch-out events, its ring read before the samples it describes
 * are ingested, and the callbacks through which the ingester takes a
 * sample's record and tells it what to read (struct ingest_moment_ops).
 *
 * Any failure of the reader costs only the reader: one warning, and the
 * recording goes on with what is read after the samples (marked late).
 */
#include "record/recorder-private.h"
#include "record/moment.h"
#include "lib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A sample's user pc and stack pointer (0 when it has none), in this
 * machine's perf register order (unwind/arch.h). */
static void sample_pc_sp(const struct perf_sample *s, uint64_t *pc, uint64_t *sp)
{
	struct unwind_regs regs;
	*pc = *sp = 0;
	if (!s->regs_abi || !s->regs)
		return;
	unwind_regs_from_perf(unwind_arch_host(), s->regs_mask, s->regs,
			      (size_t)__builtin_popcountll(s->regs_mask), &regs);
	if (regs.valid & (1ull << UNW_PC))
		*pc = regs.r[UNW_PC];
	if (regs.valid & (1ull << UNW_SP))
		*sp = regs.r[UNW_SP];
}

/* A Go thread's goroutine (MOMENT_F_GO) into out, and its stack's words
 * into the recorder's word list: how many. */
static size_t take_go(struct recorder *r, const struct moment_rec *rec, struct ingest_moment *out)
{
	const uint8_t *stack;
	const struct moment_go *go = moment_rec_go(rec, &stack);
	size_t n = 0;

	if (!go)
		return 0;
	out->have_go = true;
	out->go.dropped = !go->curg;
	out->go.sp = go->sp;
	out->go.pc = go->pc;
	out->go.lr = go->lr;
	out->go.bp = go->bp;
	for (uint32_t o = 0; stack && o + 8 <= go->stack_len && n < MOMENT_WORDS_MAX; o += 8) {
		r->mwords_addr[n] = go->stack + o;
		memcpy(&r->mwords_val[n], stack + o, 8);
		n++;
	}
	return n;
}

/* The words of a range (a slot range, the window) into the recorder's
 * list from *n. */
static void take_range(struct recorder *r, const struct moment_range_hdr *h, const uint8_t *data, size_t *n)
{
	uint32_t o;
	if (!h)
		return;
	for (o = 0; o + 8 <= h->len && *n < MOMENT_WORDS_MAX; o += 8) {
		r->mwords_addr[*n] = h->addr + o;
		memcpy(&r->mwords_val[*n], data + o, 8);
		(*n)++;
	}
}

/* The n words of the recorder's list sorted by address: they come in a
 * few runs each sorted (a goroutine's stack, the window, the slot ranges
 * in the order of the list asked for), merged a pair of runs at a time. */
static void sort_words(struct recorder *r, size_t n)
{
	uint64_t *a = r->mwords_addr, *v = r->mwords_val, *ta = r->mwords_taddr, *tv = r->mwords_tval;
	size_t i, o, runs;

	do {
		for (i = 1; i < n && a[i - 1] <= a[i]; i++)
			;
		if (i >= n)
			return;
		for (i = o = runs = 0; i < n; runs++) {
			size_t m = i + 1, e, x, y;
			while (m < n && a[m - 1] <= a[m])
				m++;
			e = m;
			if (e < n)
				for (e++; e < n && a[e - 1] <= a[e]; e++)
					;
			for (x = i, y = m; x < m || y < e; o++) {
				if (y == e || (x < m && a[x] <= a[y]))
					ta[o] = a[x], tv[o] = v[x++];
				else
					ta[o] = a[y], tv[o] = v[y++];
			}
			i = e;
		}
		memcpy(a, ta, n * sizeof(*a));
		memcpy(v, tv, n * sizeof(*v));
	} while (runs > 1);
}

static bool take(void *arg, const struct perf_sample *s, struct ingest_moment *out)
{
	struct recorder *r = arg;
	const struct moment_rec *rec;
	const struct moment_range_hdr *h;
	struct moment_range_it it = { 0 };
	const uint8_t *data;
	size_t n = 0;
	uint64_t pc, sp;

	sample_pc_sp(s, &pc, &sp);
	rec = moment_take(r->moment, s->tid, s->time, pc, sp);
	if (!rec)
		return false;
	memset(out, 0, sizeof(*out));
	out->flags = rec->flags;
	out->py = moment_rec_pyframes(rec);
	out->npy = out->py ? rec->npy : 0;
	n = take_go(r, rec, out);
	h = moment_rec_window(rec, &data);
	take_range(r, h, data, &n);
	h = moment_rec_topwin(rec, &data);
	take_range(r, h, data, &n);
	while ((h = moment_rec_next_range(rec, &it, &data)))
		if (!h->err)
			take_range(r, h, data, &n);
	sort_words(r, n);
	out->words.addr = r->mwords_addr;
	out->words.val = r->mwords_val;
	out->words.n = n;
	return true;
}

/* The slots as ranges of up to MOMENT_MAX_RANGE bytes, as many as one
 * record holds (MOMENT_MAX_RANGES, MOMENT_SLOT_BYTES with their
 * headers): false when they do not all fit. Then none are asked: a
 * stack whose slots do not all come from the sample is late whatever
 * part of them does, and about 1000 ranges cost the reader 55-60 us a
 * sample; it reads on from the process past the window, checked by the
 * slot of the outermost return address the words hold. */
static bool slots(void *arg, uint32_t pid, uint32_t tid, const uint64_t *addr, size_t n, uint64_t top)
{
	struct recorder *r = arg;
	struct moment_range rg[MOMENT_MAX_RANGES];
	/* (the program stops at a range that might not fit: keep a range's
	 * worth of room) */
	const size_t room = MOMENT_SLOT_BYTES - MOMENT_MAX_RANGE;
	size_t i, k = 0, bytes = 0;
	bool fit = true;

	for (i = 0; i < n && fit; i++) {
		if (k && addr[i] >= rg[k - 1].addr && addr[i] + 8 <= rg[k - 1].addr + MOMENT_MAX_RANGE) {
			/* within reach of the range: it grows to cover it (a
			 * gap of a few words is cheaper read than a range) */
			uint64_t end = rg[k - 1].addr + rg[k - 1].len;
			size_t grow = addr[i] + 8 > end ? (size_t)(addr[i] + 8 - end) : 0;
			if (bytes + grow <= room) {
				rg[k - 1].len += (uint32_t)grow;
				bytes += grow;
			} else {
				fit = false;
			}
			continue;
		}
		if (k == MOMENT_MAX_RANGES || bytes + sizeof(struct moment_range_hdr) + 8 > room) {
			fit = false;
			continue;
		}
		rg[k].addr = addr[i];
		rg[k].len = 8;
		rg[k].pad = 0;
		bytes += sizeof(struct moment_range_hdr) + 8;
		k++;
	}
	if (!fit)
		k = 0;
	if (moment_set_slots(r->moment, tid, k ? rg : NULL, k, ++r->slots_gen, top))
		r->moment_map_errors++;
	/* (recording a program, every process is read as deep already) */
	if (n && r->o->system_wide && moment_set_deep(r->moment, pid, true))
		r->moment_map_errors++;
	return fit;
}

static void python(void *arg, uint32_t pid, const struct pyf_layout *l, uint64_t code_type)
{
	struct recorder *r = arg;
	struct moment_pyproc pp;
	if (!l) {
		moment_set_python(r->moment, pid, NULL);
		return;
	}
	if (moment_pyproc_from_layout(l, code_type, &pp) || moment_set_python(r->moment, pid, &pp))
		r->moment_map_errors++;
}

static void exited(void *arg, uint32_t pid, uint32_t tid)
{
	struct recorder *r = arg;
	moment_forget_thread(r->moment, tid);
	if (pid == tid) {
		moment_set_python(r->moment, pid, NULL);
		moment_set_go(r->moment, pid, NULL);
		if (r->o->system_wide)
			moment_set_deep(r->moment, pid, false);
	}
}

static void go(void *arg, uint32_t pid, const struct moment_goproc *gp)
{
	struct recorder *r = arg;
	if (moment_set_go(r->moment, pid, gp) && gp)
		r->moment_map_errors++;
}

static void put_tstate(void *arg, uint32_t tid, uint64_t ts)
{
	struct recorder *r = arg;
	if (moment_set_tstate(r->moment, tid, ts))
		r->moment_map_errors++;
}

/* moment_opts.need_tstate: every thread state of the interpreter */
static void need_tstate(void *arg, uint32_t pid, uint32_t tid)
{
	struct recorder *r = arg;
	(void)tid;
	if (r->ing.py.reader)
		pyframes_each_tstate(r->ing.py.reader, pid, put_tstate, r);
}

void rec_moment_open(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct moment_opts mo;
	const char *stats;

	if (o->no_bpf) {
		err_set(&r->moment_why, -1, "--no-bpf");
		return;
	}
	if (o->unwind == UNWIND_MODE_FP && o->no_python_frames) {
		err_set(&r->moment_why, -1, "nothing to read at the sample (--unwind fp and --no-python-frames)");
		return;
	}
	memset(&mo, 0, sizeof(mo));
	/* slots within the smallest stack copy of the events are not read:
	 * with -a, switch-outs copy less than samples */
	mo.stack_user = o->unwind == UNWIND_MODE_FP ? 0 :
			o->off_cpu && o->system_wide ? MIN(o->stack_size, r->swattr.sample_stack_user) :
			o->stack_size;
	mo.window = o->unwind == UNWIND_MODE_FP ? 0 : MOMENT_WINDOW_MAX;
	mo.topwin = o->unwind == UNWIND_MODE_FP ? 0 : MOMENT_TOPWIN_MAX;
	/* a program recorded (not -a): each of its processes is read as one
	 * whose stacks go past the copy from its first sample on (its first
	 * deep thread's first samples, before any of its threads was
	 * unwound: rustc's compiler thread lost its first 10-20 ms) */
	mo.deep_all = !o->system_wide;
	mo.need_tstate = need_tstate;
	mo.arg = r;
	if (moment_open(&r->moment, &mo, &r->moment_why)) {
		r->moment = NULL;
		return;
	}
	stats = getenv("STAX_BPF_STATS");
	if (stats && !strcmp(stats, "1") && moment_count_time(r->moment))
		warn("STAX_BPF_STATS=1: cannot count the in-kernel reader's run time");
	r->mops.take = take;
	r->mops.slots = slots;
	r->mops.python = python;
	r->mops.go = go;
	r->mops.exited = exited;
	r->mops.arg = r;
	r->ing.moment = &r->mops;
}

/* The reader goes, with why; the recording goes on without it. */
static void drop(struct recorder *r)
{
	r->ing.moment = NULL;
	moment_free(r->moment);
	r->moment = NULL;
}

void rec_moment_attach(struct recorder *r, size_t first_fd)
{
	size_t i;
	for (i = first_fd; r->moment && i < r->nfds; i++)
		if (moment_attach(r->moment, r->fds[i], &r->moment_why)) {
			warn("%s (recording on, reading what lies outside the samples after them)",
			     r->moment_why.msg);
			drop(r);
		}
}

void rec_moment_poll(struct recorder *r)
{
	if (r->moment)
		moment_poll(r->moment);
}

void rec_moment_expire(struct recorder *r, uint64_t done)
{
	if (r->moment && done > MOMENT_JOIN_NS)
		moment_expire(r->moment, done - MOMENT_JOIN_NS);
}

void rec_moment_put_meta(struct recorder *r, bool end)
{
	struct moment_stats st;
	if (!end) {
		store_put_meta(&r->w, "moment", r->moment ? "bpf" : "late");
		if (!r->moment)
			store_put_meta(&r->w, "moment_why", r->moment_why.msg);
		return;
	}
	store_put_meta(&r->w, "moment", r->moment ? "bpf" : "late");
	if (!r->moment) {
		store_put_meta(&r->w, "moment_why", r->moment_why.msg);
		return;
	}
	moment_get_stats(r->moment, &st);
	store_put_meta_u64(&r->w, "moment_records", st.read);
	store_put_meta_u64(&r->w, "moment_joined", r->ing.moment_samples);
	store_put_meta_u64(&r->w, "moment_unmatched", st.unmatched);
	store_put_meta_u64(&r->w, "moment_dropped", st.dropped);
	store_put_meta_u64(&r->w, "moment_slot_lists", r->ing.us.slot_lists);
	store_put_meta_u64(&r->w, "moment_slots_cut", r->ing.us.slots_cut);
	store_put_meta_u64(&r->w, "moment_map_errors", r->moment_map_errors);
	if (st.run_cnt) {
		store_put_meta_u64(&r->w, "moment_run_ns", st.run_ns);
		store_put_meta_u64(&r->w, "moment_runs", st.run_cnt);
	}
}

void rec_moment_close(struct recorder *r)
{
	drop(r);
}
