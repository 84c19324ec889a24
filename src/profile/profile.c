#include "profile/profile.h"
#include "store/reader.h"
#include "symbol/symbol.h"
#include "lib/cursor.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *own(struct profile *p, const char *s, size_t n)
{
	char *c = xstrndup(s, n);
	GROW(p->strings, p->strcap, p->nstrings + 1);
	p->strings[p->nstrings++] = c;
	return c;
}

const char *profile_own(struct profile *p, const char *s, size_t n)
{
	return own(p, s, n);
}

struct loader {
	struct profile *p;
	struct store_reader r;
	/* the last REC_OFFCPU_OPEN: threads off the CPU as of open_as_of */
	struct rec_offcpu *open;
	size_t nopen, opencap;
	uint64_t open_as_of;
	uint64_t made_up;     /* record bytes the stand-ins stood for (of damage.lost_raw) */
	/* times of the THROTTLE records not yet paired with an UNTHROTTLE,
	 * thr[thr_head .. nthr) (first in, first out) */
	uint64_t *thr;
	size_t nthr, thrcap, thr_head;
};

static int corrupt(struct loader *l, const struct store_record *rec, const char *what)
{
	return err_set(&l->r.err, -1,
		 "%s: corrupt %s record at offset %" PRIu64 "+%zu (the file is damaged; record again)",
		 l->r.path, what, rec->chunk_offset, rec->offset);
}

/* After damage, the nodes a lost chunk defined are missing, and later
 * chunks refer to them: stand-ins take their ids (a "[damaged]" frame
 * without a caller, NODE_F_LOST, so a stack through one ends there), as
 * many as the lost bytes could have held (so a forged id cannot make
 * millions). False when id is beyond that. */
static bool stand_in_nodes(struct loader *l, uint64_t id)
{
	struct profile *p = l->p;
	uint64_t n;
	if (id <= p->nnodes)
		return true;
	n = id - p->nnodes;
	if (n > (l->r.damage.lost_raw - l->made_up) / sizeof(struct rec_node))
		return false;
	l->made_up += n * sizeof(struct rec_node);
	GROW(p->nodes, p->nodecap, p->nnodes + n);
	memset(&p->nodes[p->nnodes], 0, n * sizeof(*p->nodes));
	for (; p->nnodes < id; p->nnodes++) {
		p->nodes[p->nnodes].addr = UINT64_MAX;
		p->nodes[p->nnodes].flags = NODE_USER | NODE_F_LOST;
	}
	p->lost_nodes += n;
	return true;
}

/* The same for mappings: stand-ins have no file, so their frames show
 * as [unknown]. */
static bool stand_in_maps(struct loader *l, uint64_t id)
{
	struct profile *p = l->p;
	uint64_t n;
	if (id <= p->nmaps)
		return true;
	n = id - p->nmaps;
	if (n > (l->r.damage.lost_raw - l->made_up) / sizeof(struct rec_mapping))
		return false;
	l->made_up += n * sizeof(struct rec_mapping);
	GROW(p->maps, p->mapcap, p->nmaps + n);
	memset(&p->maps[p->nmaps], 0, n * sizeof(*p->maps));
	for (; p->nmaps < id; p->nmaps++) {
		p->maps[p->nmaps].id = (uint32_t)(p->nmaps + 1);
		p->maps[p->nmaps].path = "";
	}
	p->lost_maps += n;
	return true;
}

/* REC_SYMBOL_SRC belongs to the REC_SYMBOL just before it. */
static int load_symbol_src(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	struct rec_symbol_src rs;
	struct prof_sym *sym;
	const char *s1, *s2;
	size_t n1, n2, i, first = p->nsym_inl;

	cur_get(c, &rs, sizeof(rs));
	cur_str(c, &s1, &n1);
	if (c->bad || rs.ninline > cur_left(c) / 8)
		return corrupt(l, rec, "symbol source");
	sym = p->nsyms ? &p->syms[p->nsyms - 1] : NULL;
	if (!sym || sym->rs.addr != rs.addr || sym->rs.mapping != rs.mapping || sym->rs.flags != rs.flags ||
	    sym->file || sym->ninl)
		return 0; /* not right after its symbol: ignore, as documented */
	for (i = 0; i < rs.ninline; i++) {
		uint32_t line = cur_u32(c);
		cur_str(c, &s2, &n2);
		cur_str(c, &s1, &n1);
		if (c->bad) {
			p->nsym_inl = first;
			return corrupt(l, rec, "symbol source");
		}
		GROW(p->sym_inl, p->sym_inlcap, p->nsym_inl + 1);
		p->sym_inl[p->nsym_inl++] = (struct prof_inline){ n2 ? own(p, s2, n2) : NULL,
								  n1 ? own(p, s1, n1) : NULL, line };
	}
	cur_init(c, rec->payload, rec->size);
	cur_get(c, &rs, sizeof(rs));
	cur_str(c, &s1, &n1);
	sym->file = n1 ? own(p, s1, n1) : NULL;
	sym->line = rs.line;
	sym->inl = (uint32_t)first;
	sym->ninl = rs.ninline;
	return 0;
}

static int load_mapping(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	struct rec_mapping rm;
	struct prof_mapping *m;
	const char *s1;
	size_t n1;

	cur_get(c, &rm, sizeof(rm));
	cur_str(c, &s1, &n1);
	if (!c->bad && rm.id > p->nmaps + 1)
		stand_in_maps(l, rm.id - 1ull);
	if (c->bad || rm.id != p->nmaps + 1 || rm.build_id_size > 20)
		return corrupt(l, rec, "mapping");
	GROW(p->maps, p->mapcap, p->nmaps + 1);
	m = &p->maps[p->nmaps++];
	memset(m, 0, sizeof(*m));
	m->id = rm.id;
	m->pid = rm.pid;
	m->time = rm.time;
	m->start = rm.start;
	m->end = rm.end;
	m->pgoff = rm.pgoff;
	m->inode = rm.inode;
	m->build_id_size = rm.build_id_size;
	memcpy(m->build_id, rm.build_id, 20);
	m->path = own(p, s1, n1);
	return 0;
}

static int load_nodes(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	uint32_t first = cur_u32(c), count = cur_u32(c);
	size_t i;

	if (!c->bad && first > p->nnodes + 1)
		stand_in_nodes(l, first - 1ull);
	if (c->bad || first != p->nnodes + 1 || count > cur_left(c) / sizeof(struct rec_node))
		return corrupt(l, rec, "nodes");
	GROW(p->nodes, p->nodecap, p->nnodes + count);
	for (i = 0; i < count; i++) {
		struct rec_node rn;
		struct prof_node *nd;
		uint32_t id = (uint32_t)(p->nnodes + 1);
		cur_get(c, &rn, sizeof(rn));
		if ((rn.flags & 0xff) != NODE_ROOT && rn.mapping > p->nmaps)
			stand_in_maps(l, rn.mapping);
		if (rn.parent >= id || ((rn.flags & 0xff) != NODE_ROOT && !rn.parent) ||
		    ((rn.flags & 0xff) == NODE_ROOT && rn.parent) || (rn.flags & 0xff) > NODE_KERNEL ||
		    ((rn.flags & 0xff) != NODE_ROOT && rn.mapping > p->nmaps))
			return corrupt(l, rec, "nodes");
		nd = &p->nodes[p->nnodes++];
		nd->addr = rn.addr;
		nd->parent = rn.parent;
		nd->mapping = rn.mapping;
		nd->flags = rn.flags;
		nd->func = 0;
		nd->depth = rn.parent ? p->nodes[rn.parent - 1].depth + 1 : 0;
		nd->line = 0;
		nd->file = NULL;
	}
	return 0;
}

static int load_samples(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	uint32_t count = cur_u32(c);
	size_t i;

	cur_u32(c);
	if (c->bad || count > cur_left(c) / sizeof(struct rec_sample))
		return corrupt(l, rec, "samples");
	GROW(p->samples, p->samplecap, p->nsamples + count);
	for (i = 0; i < count; i++) {
		struct rec_sample *s = &p->samples[p->nsamples];
		cur_get(c, s, sizeof(*s));
		if (!stand_in_nodes(l, s->stack))
			return corrupt(l, rec, "samples");
		if (!p->first_time || s->time < p->first_time)
			p->first_time = s->time;
		if (s->time > p->last_time)
			p->last_time = s->time;
		p->nsamples++;
	}
	return 0;
}

/* REC_OFFCPU (intervals), or REC_OFFCPU_OPEN (those still open as of
 * its time: they replace the previous record's) */
static int load_offcpu(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	bool open = rec->type == REC_OFFCPU_OPEN;
	const char *what = open ? "open off-cpu" : "off-cpu";
	uint32_t count = cur_u32(c);
	size_t i;

	cur_u32(c);
	if (open)
		l->open_as_of = cur_u64(c);
	if (c->bad || count > cur_left(c) / sizeof(struct rec_offcpu))
		return corrupt(l, rec, what);
	if (open) {
		l->nopen = 0;
		GROW(l->open, l->opencap, count);
	} else {
		GROW(p->offcpu, p->offcpucap, p->noffcpu + count);
	}
	for (i = 0; i < count; i++) {
		struct rec_offcpu *o = open ? &l->open[l->nopen] : &p->offcpu[p->noffcpu];
		cur_get(c, o, sizeof(*o));
		if (!stand_in_nodes(l, o->stack) || o->reason >= OFFCPU_NREASONS ||
		    (open && o->start > l->open_as_of))
			return corrupt(l, rec, what);
		if (open) {
			o->duration = l->open_as_of - o->start;
			o->flags |= OFFCPU_F_OPEN;
			l->nopen++;
		} else {
			p->noffcpu++;
		}
	}
	return 0;
}

static int load_throttle(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	struct rec_throttle t;

	if (!cur_get(c, &t, sizeof(t)))
		return corrupt(l, rec, "throttle");
	if (t.throttled) {
		p->throttles++;
		GROW(l->thr, l->thrcap, l->nthr + 1);
		l->thr[l->nthr++] = t.time;
	} else {
		p->unthrottles++;
		/* the records of all cpus interleave, but a sum of
		 * (end - start) pairs is the same whichever pairs up */
		if (l->thr_head < l->nthr) {
			uint64_t from = l->thr[l->thr_head++];
			p->throttled_ns += t.time > from ? t.time - from : 0;
		}
	}
	return 0;
}

static int load_symbol(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	struct rec_symbol rs;
	const char *s1, *s2;
	size_t n1, n2;

	cur_get(c, &rs, sizeof(rs));
	cur_str(c, &s1, &n1);
	cur_str(c, &s2, &n2);
	if (c->bad || !stand_in_maps(l, rs.mapping))
		return corrupt(l, rec, "symbol");
	GROW(p->syms, p->symcap, p->nsyms + 1);
	memset(&p->syms[p->nsyms], 0, sizeof(p->syms[0]));
	p->syms[p->nsyms].rs = rs;
	p->syms[p->nsyms].name = own(p, s1, n1);
	p->syms[p->nsyms].module = own(p, s2, n2);
	p->nsyms++;
	return 0;
}

/* META, COMM, task, waker, lost and perf map records: small ones. */
static int load_small(struct loader *l, const struct store_record *rec, struct cursor *c)
{
	struct profile *p = l->p;
	const char *s1, *s2;
	size_t n1, n2;

	switch (rec->type) {
	case REC_META:
		cur_str(c, &s1, &n1);
		cur_str(c, &s2, &n2);
		if (c->bad)
			return corrupt(l, rec, "meta");
		GROW(p->meta, p->metacap, p->nmeta + 1);
		p->meta[p->nmeta].key = own(p, s1, n1);
		p->meta[p->nmeta].value = own(p, s2, n2);
		p->nmeta++;
		break;
	case REC_COMM: {
		struct rec_comm rc;
		cur_get(c, &rc, sizeof(rc));
		cur_str(c, &s1, &n1);
		if (c->bad)
			return corrupt(l, rec, "comm");
		GROW(p->comms, p->commcap, p->ncomms + 1);
		p->comms[p->ncomms++] = (struct prof_comm){ rc.pid, rc.tid, rc.time, rc.flags, own(p, s1, n1) };
		break;
	}
	case REC_FORK:
	case REC_EXIT: {
		struct rec_task t;
		if (!cur_get(c, &t, sizeof(t)))
			return corrupt(l, rec, "task");
		if (rec->type == REC_EXIT) {
			p->exits++;
			break;
		}
		GROW(p->forks, p->forkcap, p->nforks + 1);
		p->forks[p->nforks++] = t;
		break;
	}
	case REC_WAKER: {
		struct rec_waker wk;
		cur_get(c, &wk, sizeof(wk));
		cur_str(c, &s1, &n1);
		if (c->bad || wk.kind >= WAKER_NKINDS || !stand_in_nodes(l, wk.stack))
			return corrupt(l, rec, "waker");
		GROW(p->wakers, p->wakercap, p->nwakers + 1);
		p->wakers[p->nwakers].w = wk;
		p->wakers[p->nwakers++].comm = n1 ? own(p, s1, n1) : NULL;
		break;
	}
	case REC_LOST: {
		struct rec_lost lo;
		if (!cur_get(c, &lo, sizeof(lo)))
			return corrupt(l, rec, "lost");
		if (lo.kind != LOST_RING)
			p->lost_samples += lo.count;
		else
			p->lost_records += lo.count;
		if (lo.kind == LOST_QUEUE)
			p->lost_queue += lo.count;
		break;
	}
	case REC_PERFMAP: {
		uint32_t pid = cur_u32(c), size = cur_u32(c);
		if (c->bad || size > cur_left(c))
			return corrupt(l, rec, "perf map");
		GROW(p->perfmaps, p->perfmapcap, p->nperfmaps + 1);
		p->perfmaps[p->nperfmaps++] = (struct prof_perfmap){ pid, own(p, (const char *)c->p, size), size };
		break;
	}
	}
	return 0;
}

static int load_record(struct loader *l, const struct store_record *rec)
{
	struct cursor c;

	cur_init(&c, rec->payload, rec->size);
	switch (rec->type) {
	case REC_MAPPING:
		return load_mapping(l, rec, &c);
	case REC_NODES:
		return load_nodes(l, rec, &c);
	case REC_SAMPLES:
		return load_samples(l, rec, &c);
	case REC_OFFCPU:
	case REC_OFFCPU_OPEN:
		return load_offcpu(l, rec, &c);
	case REC_THROTTLE:
		return load_throttle(l, rec, &c);
	case REC_SYMBOL:
		return load_symbol(l, rec, &c);
	case REC_SYMBOL_SRC:
		return load_symbol_src(l, rec, &c);
	case REC_META:
	case REC_COMM:
	case REC_FORK:
	case REC_EXIT:
	case REC_WAKER:
	case REC_LOST:
	case REC_PERFMAP:
		return load_small(l, rec, &c);
	default:
		/* unknown record types inside a known chunk kind: skip (forward compatible) */
		return 0;
	}
}

static int cmp_comm(const void *a, const void *b)
{
	const struct prof_comm *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return 0;
}

/* The threads the last REC_OFFCPU_OPEN says are off the CPU (none once a
 * recording has finished) become intervals ending at its time, unless a
 * later interval of the thread closed them. */
static void add_open(struct loader *l)
{
	struct profile *p = l->p;
	struct hmap last;     /* tid -> index of its latest closed interval */
	uint32_t at;
	size_t i;

	if (!l->nopen)
		return;
	hmap_init(&last);
	for (i = 0; i < p->noffcpu; i++)
		if (!hmap_get(&last, p->offcpu[i].tid, &at) || p->offcpu[at].start < p->offcpu[i].start)
			hmap_put(&last, p->offcpu[i].tid, (uint32_t)i);
	GROW(p->offcpu, p->offcpucap, p->noffcpu + l->nopen);
	for (i = 0; i < l->nopen; i++) {
		if (hmap_get(&last, l->open[i].tid, &at) && p->offcpu[at].start >= l->open[i].start)
			continue;
		p->offcpu[p->noffcpu++] = l->open[i];
	}
	hmap_release(&last);
}

static int load(struct loader *l)
{
	struct store_chunk ch;
	int ret;
	bool show = l->r.owned && show_progress();
	uint64_t start = now_ns(), last = 0;
	while ((ret = store_reader_next(&l->r, &ch)) > 0) {
		if (show && now_ns() - start > 300000000ull && now_ns() - last > 100000000ull) {
			last = now_ns();
			note_progress("reading %s: %3.0f%%", l->r.path, 100.0 * l->r.off / l->r.size);
		}
		struct store_record_iter it = { &ch, 0 };
		struct store_record rec;
		int rr;
		if (ch.kind == CHUNK_SYMBOLS)
			l->p->has_symbols = true;
		/* a record that does not parse damages its chunk: the records
		 * before it stay, the rest of the chunk is skipped */
		while ((rr = store_chunk_next_record(&l->r, &it, &rec)) > 0)
			if (load_record(l, &rec)) {
				rr = -1;
				it.off = rec.offset;
				break;
			}
		if (rr < 0)
			store_reader_damaged(&l->r, &ch, it.off, l->r.err.msg);
	}
	if (last)
		note_progress_clear();
	if (ret < 0)
		return -1;
	for (; l->thr_head < l->nthr; l->thr_head++) {
		uint64_t from = MAX(l->thr[l->thr_head], l->p->first_time);
		l->p->throttled_ns += l->p->last_time > from ? l->p->last_time - from : 0;
	}
	l->p->partial = !l->r.ended;
	l->p->live = l->r.live;
	l->p->file_size = l->r.size;
	l->p->tail = l->r.tail;
	l->p->data_bytes = l->r.data_bytes;
	l->p->damage = l->r.damage;
	add_open(l);
	if (l->p->ncomms)
		qsort(l->p->comms, l->p->ncomms, sizeof(*l->p->comms), cmp_comm);
	return 0;
}

static void profile_init(struct profile *p, const char *path)
{
	memset(p, 0, sizeof(*p));
	hmap_init(&p->func_index);
	p->path = path;
}

int profile_load_err(struct profile *p, const char *path, struct err *e)
{
	struct loader l = { .p = p };
	int ret;
	profile_init(p, path);
	if (store_reader_open(&l.r, path))
		return err_set(e, -1, "%s", l.r.err.msg);
	ret = load(&l);
	if (ret)
		err_set(e, -1, "%s", l.r.err.msg);
	store_reader_close(&l.r);
	free(l.open);
	free(l.thr);
	return ret;
}

int profile_load_mem(struct profile *p, const char *name, const void *data,
		     size_t size, struct err *err)
{
	struct loader l = { .p = p };
	int ret;
	profile_init(p, name);
	if (store_reader_open_mem(&l.r, name, data, size)) {
		err_set(err, -1, "%s", l.r.err.msg);
		return -1;
	}
	ret = load(&l);
	if (ret)
		err_set(err, -1, "%s", l.r.err.msg);
	store_reader_close(&l.r);
	free(l.open);
	free(l.thr);
	return ret;
}

void profile_release(struct profile *p)
{
	size_t i;
	for (i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	free(p->meta);
	free(p->nodes);
	free(p->samples);
	free(p->offcpu);
	free(p->wakers);
	free(p->maps);
	free(p->comms);
	free(p->forks);
	free(p->syms);
	free(p->sym_inl);
	free(p->perfmaps);
	free(p->sources);
	free(p->funcs);
	hmap_release(&p->func_index);
	memset(p, 0, sizeof(*p));
}

void profile_add_meta(struct profile *p, const char *key, const char *value)
{
	GROW(p->meta, p->metacap, p->nmeta + 1);
	p->meta[p->nmeta].key = own(p, key, strlen(key));
	p->meta[p->nmeta].value = own(p, value, strlen(value));
	p->nmeta++;
}

const char *profile_meta(const struct profile *p, const char *key)
{
	size_t i;
	for (i = p->nmeta; i-- > 0;)
		if (!strcmp(p->meta[i].key, key))
			return p->meta[i].value;
	return NULL;
}

uint64_t profile_meta_u64(const struct profile *p, const char *key)
{
	const char *v = profile_meta(p, key);
	return v ? strtoull(v, NULL, 10) : 0;
}

/* The name tid had at t; with first, the first name it had when it had
 * none yet at t. */
static const struct prof_comm *comm_at(const struct profile *p, uint32_t tid, uint64_t t, bool first)
{
	size_t lo = 0, hi = p->ncomms;
	const struct prof_comm *best = NULL;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->comms[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < p->ncomms && p->comms[lo].tid == tid; lo++) {
		if (p->comms[lo].time > t)
			return best ? best : first ? &p->comms[lo] : NULL;
		best = &p->comms[lo];
	}
	return best;
}

const char *profile_comm(const struct profile *p, uint32_t pid, uint32_t tid, uint64_t t)
{
	const struct prof_comm *c;
	uint32_t pid0 = pid, tid0 = tid;
	uint64_t t0 = t;
	int hops;
	/* a thread is named by its own COMM, else by its process's, else by the
	 * parent it was forked from (a fork inherits the name) */
	for (hops = 0; hops < 16; hops++) {
		size_t i;
		uint32_t ppid = 0;
		if ((c = comm_at(p, tid, t, false)))
			return c->name;
		if (tid != pid && (c = comm_at(p, pid, t, false)))
			return c->name;
		for (i = 0; i < p->nforks; i++)
			if (p->forks[i].pid == pid && p->forks[i].ppid != pid) {
				ppid = p->forks[i].ppid;
				t = p->forks[i].time;
				break;
			}
		if (!ppid)
			break;
		pid = tid = ppid;
	}
	/* named only after t (as perf does, its first name): a name the
	 * recorder read from /proc when it met the process, at a sample of
	 * another cpu that it took before this earlier one */
	if ((c = comm_at(p, tid0, t0, true)) || (tid0 != pid0 && (c = comm_at(p, pid0, t0, true))))
		return c->name;
	/* the kernel's pid of a task it had released when sampled (the end
	 * of an exit): which process it was, nothing says */
	return pid0 == UINT32_MAX ? "[exited]" : "[unknown]";
}

/* ---- symbolization: see symbolize.c ---- */

size_t profile_stack_funcs(const struct profile *p, uint32_t stack, uint32_t *out, size_t max)
{
	size_t n = 0;
	const struct prof_node *nd = profile_node(p, stack);
	while (nd && n < max) {
		if ((nd->flags & 0xff) != NODE_ROOT)
			out[n++] = nd->func;
		nd = profile_node(p, nd->parent);
	}
	return n;
}
