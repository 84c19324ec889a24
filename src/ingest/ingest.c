/* ingest.c - records to state, stacks and REC_* records (ingest.h).
 *
 * The record dispatch, the sample path and the records of processes,
 * names and mappings live here; each concern the sample path calls has
 * a file and a state struct of its own (ingest-private.h): off-CPU
 * intervals and wakers (offcpu.c), JIT code (jit.c), the user stack
 * beyond its copy (ustack.c), Python frames (python.c), /proc recovery
 * and seeding (recover.c), the symbols chunk (symbols.c).
 */
#include "ingest/ingest-private.h"
#include "symbol/chunk.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

void ingest_init(struct ingest *g, struct store_writer *w, enum unwind_mode mode)
{
	memset(g, 0, sizeof(*g));
	g->w = w;
	g->mode = mode;
	state_init(&g->st);
	stack_table_init(&g->stacks);
	if (mode != UNWIND_MODE_FP)
		g->unwinder = unwinder_new();
	ingest_offcpu_init(&g->off);
	ingest_jit_init(&g->jit);
	hmap_init(&g->go.asked);
	ingest_ustack_init(&g->us);
	recover_init(&g->recover);
	hmap_init(&g->missing);
}

void ingest_set_arch(struct ingest *g, enum unwind_arch a)
{
	if (g->unwinder)
		unwinder_set_arch(g->unwinder, a);
}

void ingest_release(struct ingest *g)
{
	if (g->unwinder)
		unwinder_free(g->unwinder);
	state_release(&g->st);
	stack_table_release(&g->stacks);
	ingest_offcpu_release(&g->off);
	ingest_jit_release(&g->jit);
	ingest_ustack_release(&g->us);
	ingest_python_release(&g->py);
	hmap_release(&g->go.asked);
	recover_release(&g->recover);
	hmap_release(&g->missing);
	sym_chunk_cache_free(g->symcache);
}

/* ---- stacks ---- */

void ingest_put_nodes(struct ingest *g)
{
	while (g->stacks.written < g->stacks.n) {
		size_t i = g->stacks.written++;
		store_put_node(g->w, (uint32_t)(i + 1), &g->stacks.nodes[i]);
	}
}

struct module_ref ingest_mapping_ref(const struct state_mapping *m)
{
	return module_ref_make(m->path, m->build_id, m->build_id_size, m->start, m->end, m->pgoff);
}

bool ingest_module_of(const struct state_mapping *m, struct module_ref *out)
{
	if (!m)
		return false;
	*out = ingest_mapping_ref(m);
	return true;
}

/* Frame k from the root of the sample's stack: user frames, then kernel. */
static void frame_at(const struct ingest *g, size_t k, size_t nu, bool unwound, size_t nk,
		     uint64_t *addr, uint32_t *flags)
{
	size_t i;
	bool ra;
	if (k < nu) {
		i = nu - 1 - k;
		bool late;
		if (g->ukind_on) {
			ra = (g->ukind[i] & UKIND_RA) != 0;
			late = (g->ukind[i] & UKIND_LATE) != 0;
		} else {
			ra = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
			late = unwound && (g->frames[i].flags & UNWIND_F_LATE);
		}
		*addr = g->uframes[i];
		*flags = NODE_USER | (ra ? NODE_F_RA : 0) | (late ? NODE_F_LATE : 0);
	} else {
		i = nk - 1 - (k - nu);
		*addr = g->kframes[i];
		*flags = NODE_KERNEL | (i ? NODE_F_RA : 0);
	}
}

/* The node of the sample's stack (uframes[0..nu) and kframes[0..nk),
 * leaf first) under its process's root, sampled at time. Frames that the thread slot's
 * last stack has at the same depth, with the same frames above them,
 * take their node from it. */
static uint32_t intern_stack(struct ingest *g, uint64_t time, uint32_t pid, uint32_t tid, size_t nu,
			     bool unwound, size_t nk)
{
	struct state_proc *p = state_proc(&g->st, pid);
	struct ingest_last *last = &g->last[tid % INGEST_LAST_WAYS];
	uint32_t node, flags;
	uint64_t addr;
	size_t k, n = nu + nk;
	bool same;

	p->used = time ? time : 1;
	if (!p->root)
		p->root = stack_intern(&g->stacks, 0, pid, p->image, NODE_ROOT);
	node = p->root;
	same = last->gen == p->gen;
	for (k = 0; k < n; k++) {
		frame_at(g, k, nu, unwound, nk, &addr, &flags);
		if (same && k < last->n && last->addr[k] == addr && last->flags[k] == flags) {
			node = last->node[k];
			continue;
		}
		same = false;
		node = stack_intern(&g->stacks, node, addr,
				    k < nu && !(g->ukind_on && (g->ukind[nu - 1 - k] & UKIND_PY)) ?
				    state_find(&g->st, pid, addr) : 0, flags);
		if (k < INGEST_LAST_FRAMES) {
			last->addr[k] = addr;
			last->flags[k] = flags;
			last->node[k] = node;
		}
	}
	last->gen = p->gen;
	last->n = (uint32_t)MIN(n, (size_t)INGEST_LAST_FRAMES);
	return node;
}

static void on_sample(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_sample s;
	if (perf_sample_parse(f, h, &s)) {
		g->bad_records++;
		return;
	}
	ingest_sample(g, f, &s);
}

void ingest_sample(struct ingest *g, const struct perf_format *f, const struct perf_sample *s)
{
	struct rec_sample rs;
	uint64_t i, ctx = PERF_CONTEXT_USER;
	size_t nk = 0, nu = 0, nchain = 0;
	bool unwound = false, capped, wake, switch_out, extended = false;
	struct offcpu_wake woken;

	/* a wake-up matters only when it ends a wait: unwind no other */
	switch (ingest_offcpu_wake(g, s, &woken)) {
	case OFFCPU_WAKE_DONE:
		return;
	case OFFCPU_WAKE_STACK:
		wake = true;
		break;
	default:
		wake = false;
		break;
	}
	switch_out = !wake && ingest_offcpu_is_switch(g, s);

	for (i = 0; i < s->callchain_nr; i++) {
		uint64_t a;
		memcpy(&a, s->callchain + i, 8);
		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		nchain++;
		if (ctx == PERF_CONTEXT_KERNEL && nk < INGEST_MAX_FRAMES) {
			g->kframes[nk++] = a;
		} else if (ctx == PERF_CONTEXT_USER && nu < INGEST_MAX_FRAMES) {
			/* A zero (or page-zero) return address ends the chain:
			 * the outermost frame pointer was 0 or garbage. */
			if (a < 4096) {
				ctx = PERF_CONTEXT_MAX; /* ignore the rest */
				continue;
			}
			g->uframes[nu++] = a;
		}
	}
	/* The kernel stops both chains together at sample_max_stack entries
	 * (kernel.perf_event_max_stack): callers beyond it are lost, unless
	 * DWARF unwinding reached the root anyway (counted below). */
	capped = g->max_stack && nchain >= g->max_stack;
	g->cur_capped = capped;
	if (!nk && !nu && (f->sample_type & PERF_SAMPLE_IP)) {
		if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			g->kframes[nk++] = s->ip;
		else
			g->uframes[nu++] = s->ip;
	}
	/* names and mappings whose records were lost: from /proc, before
	 * the unwinder looks the frames up. Only a pc in user mode is sure
	 * to be mapped: in the kernel, an exec has replaced the mappings
	 * before the user registers. */
	if (g->recover.on)
		recover_sample(g, s->pid, s->tid, s->time,
			       nu && (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER ?
			       g->uframes[0] : 0);
	memset(&rs, 0, sizeof(rs));
	rs.time = s->time;
	rs.weight = (f->sample_type & PERF_SAMPLE_PERIOD) ? s->period : 1;
	rs.pid = s->pid;
	rs.tid = s->tid;
	rs.cpu = (uint16_t)s->cpu;
	rs.quality = UNWIND_Q_UNKNOWN;
	rs.method = UNWIND_M_FP;
	/* what the in-kernel reader read at this sample (a wake-up is no
	 * sample of the reader's events) */
	g->have_mo = g->moment && !wake && g->moment->take(g->moment->arg, s, &g->mo);
	g->moment_samples += g->have_mo;
	if (g->unwinder)
		unwound = ingest_unwind_user(g, s, &nu, &rs, switch_out, &extended);
	if (capped && SAMPLE_Q(rs.quality) != UNWIND_Q_COMPLETE) {
		g->chains_capped++;
		if (SAMPLE_Q(rs.quality) == UNWIND_Q_UNKNOWN)
			rs.quality = (uint8_t)(UNWIND_STOP_CHAIN << SAMPLE_Q_STOP_SHIFT | (rs.quality & SAMPLE_Q_LATE));
	}
	g->method[(rs.method & 3) < 3 ? rs.method & 3 : 0]++;

	nu = ingest_expand_python(g, s, nu, unwound, &rs);
	g->have_mo = false;
	/* frames read after the sample: never complete (format.h) */
	if (rs.quality & SAMPLE_Q_LATE)
		rs.quality &= (uint8_t)~3u;
	g->quality[SAMPLE_VERDICT(rs.quality)]++;
	rs.stack = intern_stack(g, rs.time, rs.pid, rs.tid, nu, unwound, nk);
	g->ukind_on = false;
	ingest_put_nodes(g);
	if (wake) {
		ingest_offcpu_woken(g, &woken, s, &rs);
		return;
	}
	if (switch_out) {
		ingest_offcpu_switch_out(g, s, &rs, nu, unwound, nk, extended);
		return;
	}
	/* the recorder's queue kept only the top of the stack copy */
	if (g->live && (s->misc & QUEUE_MISC_TRIMMED)) {
		rs.quality |= SAMPLE_Q_TRIMMED;
		g->trimmed++;
	}
	store_put_sample(g->w, &rs);
	g->samples++;
	ingest_jit_sampled(g, rs.time);
	if (!g->first_time || rs.time < g->first_time)
		g->first_time = rs.time;
	if (rs.time > g->last_time)
		g->last_time = rs.time;
}

/* ---- processes, names, mappings ---- */

void ingest_put_state_mapping(struct ingest *g, const struct state_mapping *m, uint64_t time)
{
	struct rec_mapping rm;
	memset(&rm, 0, sizeof(rm));
	rm.id = m->id;
	rm.pid = m->pid;
	rm.time = time;
	rm.start = m->start;
	rm.end = m->end;
	rm.pgoff = m->pgoff;
	rm.inode = m->inode;
	rm.maj = m->maj;
	rm.min = m->min;
	rm.prot = 5;
	rm.build_id_size = m->build_id_size;
	memcpy(rm.build_id, m->build_id, sizeof(rm.build_id));
	store_put_mapping(g->w, &rm, m->path);
}

void ingest_seed_mapping(struct ingest *g, uint32_t pid, uint64_t time, const struct state_mapping *in)
{
	const struct state_mapping *m = state_add_mapping(&g->st, pid, in);
	/* a big binary's unwind table, compiled before its first sample */
	if (g->live && g->unwinder)
		unwind_prefetch(g->unwinder, m->path, m->build_id, m->build_id_size);
	ingest_jit_mapped(g, pid, m);
	ingest_python_mapped(g, pid, m);
	ingest_go_mapped(g, pid, m);
	ingest_put_state_mapping(g, m, time);
}

void ingest_seed_comm(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, const char *name)
{
	struct rec_comm c;
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.tid = tid;
	c.time = time;
	store_put_comm(g->w, &c, name);
	recover_note_comm(g, pid, tid, name);
	ingest_offcpu_recorded(&g->off, pid);
}

void ingest_mapping_of_mmap(const struct perf_mmap *mm, struct state_mapping *m)
{
	memset(m, 0, sizeof(*m));
	m->start = mm->start;
	m->end = mm->start + mm->len;
	m->pgoff = mm->pgoff;
	m->maj = mm->maj;
	m->min = mm->min;
	m->inode = mm->inode;
	m->build_id_size = mm->build_id_size;
	memcpy(m->build_id, mm->build_id, mm->build_id_size);
	m->path = (char *)mm->name;
}

/* MMAP (type 1) and MMAP2 (type 10): executable mappings only. */
static void on_mmap(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_mmap mm;
	struct state_mapping m;
	struct perf_sample id;

	if (perf_mmap_parse(f, h, &mm)) {
		g->bad_records++;
		return;
	}
	if (mm.data)
		return;
	if (!mm.name) {
		g->bad_records++;
		return;
	}
	if (!(mm.prot & 4 /* PROT_EXEC */))
		return;
	ingest_mapping_of_mmap(&mm, &m);
	if (sym_path_is_jitdump(mm.name))
		ingest_jit_dump_mapped(&g->jit, mm.pid, mm.name);
	perf_sample_id_parse(f, h, &id);
	ingest_seed_mapping(g, mm.pid, id.time, &m);
}

static void on_comm(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	const uint8_t *end = (const uint8_t *)h + h->size - perf_sample_id_size(f);
	struct perf_sample id;
	struct rec_comm c;
	uint32_t pidtid[2];
	const char *name = (const char *)p + 8;

	if (end < p + 9 || strnlen(name, (size_t)(end - p - 8)) == (size_t)(end - p - 8)) {
		g->bad_records++;
		return;
	}
	memcpy(pidtid, p, 8);
	perf_sample_id_parse(f, h, &id);
	memset(&c, 0, sizeof(c));
	c.pid = pidtid[0];
	c.tid = pidtid[1];
	c.time = id.time;
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		c.flags = COMM_F_EXEC;
		state_exec(&g->st, c.pid);
		ingest_python_exec(g, c.pid);
		ingest_go_exec(g, c.pid);
	}
	store_put_comm(g->w, &c, name);
	recover_note_comm(g, c.pid, c.tid, name);
	ingest_offcpu_recorded(&g->off, c.pid);
}

static void on_task(struct ingest *g, const struct perf_event_header *h)
{
	struct rec_task t;
	if (h->size < sizeof(*h) + 24) {
		g->bad_records++;
		return;
	}
	memcpy(&t, h + 1, 24);
	if (h->type == PERF_RECORD_FORK) {
		ingest_offcpu_fork(&g->off, t.pid, t.tid);
		state_fork(&g->st, t.pid, t.ppid);
		store_put_task(g->w, REC_FORK, &t);
		recover_note_fork(g, t.pid, t.ppid, t.tid);
	} else {
		store_put_task(g->w, REC_EXIT, &t);
		if (t.pid == t.tid)
			state_exit(&g->st, t.pid);
		recover_note_exit(g, t.pid, t.tid, t.time);
		ingest_ustack_exit(g, t.tid);
		if (t.pid == t.tid) {
			ingest_python_exec(g, t.pid); /* no interpreter there any more */
			ingest_go_exec(g, t.pid);
		}
		if (g->moment)
			g->moment->exited(g->moment->arg, t.pid, t.tid);
		ingest_offcpu_exit(&g->off, t.pid, t.tid);
	}
}

void ingest_record(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t body = h->size >= sizeof(*h) ? h->size - sizeof(*h) : 0;
	struct perf_sample id;
	struct rec_lost l;
	struct rec_throttle t;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(g, f, h);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		on_mmap(g, f, h);
		break;
	case PERF_RECORD_COMM:
		on_comm(g, f, h);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		on_task(g, h);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		ingest_offcpu_on_switch(g, f, h);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		memset(&l, 0, sizeof(l));
		if (body < (h->type == PERF_RECORD_LOST ? 16u : 8u)) {
			g->bad_records++;
			break;
		}
		memcpy(&l.count, p + (h->type == PERF_RECORD_LOST ? 8 : 0), 8);
		perf_sample_id_parse(f, h, &id);
		l.time = id.time;
		l.kind = h->type == PERF_RECORD_LOST_SAMPLES ? LOST_SAMPLES : LOST_RING;
		if (l.kind)
			g->lost_samples += l.count;
		else
			g->lost += l.count;
		store_put_lost(g->w, &l);
		recover_note_lost(g);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		memset(&t, 0, sizeof(t));
		if (body >= 8)
			memcpy(&t.time, p, 8);
		t.throttled = h->type == PERF_RECORD_THROTTLE;
		if (t.throttled)
			g->throttles++;
		else
			g->unthrottles++;
		store_put_throttle(g->w, &t);
		break;
	default:
		g->unknown_records++;
		break;
	}
}
