#include "record/ingest.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <stdio.h>
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
}

void ingest_release(struct ingest *g)
{
	if (g->unwinder)
		unwinder_free(g->unwinder);
	state_release(&g->st);
	stack_table_release(&g->stacks);
}

/* ---- stacks ---- */

static void put_new_nodes(struct ingest *g)
{
	while (g->stacks.written < g->stacks.n) {
		size_t i = g->stacks.written++;
		store_put_node(g->w, (uint32_t)(i + 1), &g->stacks.nodes[i]);
	}
}

static uint32_t proc_root(struct ingest *g, uint32_t pid)
{
	struct state_proc *p = state_proc(&g->st, pid);
	if (!p->root)
		p->root = stack_intern(&g->stacks, 0, pid, p->image, NODE_ROOT);
	return p->root;
}

static bool find_module(void *arg, uint64_t pc, struct unwind_module *out)
{
	struct ingest *g = arg;
	const struct state_mapping *m = state_mapping(&g->st, state_find(&g->st, g->cur_pid, pc));
	if (!m)
		return false;
	out->path = m->path;
	out->build_id = m->build_id_size ? m->build_id : NULL;
	out->build_id_size = m->build_id_size;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	return true;
}

/* perf_event_x86_regs numbering (AX BX CX DX SI DI BP SP IP FLAGS CS SS DS
 * ES FS GS R8..R15) to DWARF numbering; 0xff = not used for unwinding. */
static const uint8_t perf_to_dwarf[24] = {
	UNW_RAX, UNW_RBX, UNW_RCX, UNW_RDX, UNW_RSI, UNW_RDI, UNW_RBP, UNW_RSP, UNW_RIP,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	UNW_R8, UNW_R9, UNW_R10, UNW_R11, UNW_R12, UNW_R13, UNW_R14, UNW_R15,
};

/* Unwind the user part of s from its registers and stack copy. Replaces
 * uframes[0..*nu); returns false when the sample has no user registers. */
static bool unwind_user(struct ingest *g, const struct perf_sample *s, size_t *nu,
			struct rec_sample *out)
{
	struct unwind_input in;
	struct unwind_result res;
	size_t k = 0;
	int bit;

	if (!s->regs_abi || !s->regs)
		return false;
	memset(&in, 0, sizeof(in));
	for (bit = 0; bit < 64; bit++) {
		uint64_t v;
		if (!(s->regs_mask & (1ull << bit)))
			continue;
		memcpy(&v, s->regs + 8 * k++, 8);
		if (bit < 24 && perf_to_dwarf[bit] != 0xff) {
			in.regs.r[perf_to_dwarf[bit]] = v;
			in.regs.valid |= 1u << perf_to_dwarf[bit];
		}
	}
	if (!(in.regs.valid & (1u << UNW_RIP)) || !(in.regs.valid & (1u << UNW_RSP)))
		return false;
	in.stack = s->stack;
	in.stack_size = s->stack ? (size_t)s->stack_dyn_size : 0;
	in.fp_chain = g->uframes;
	in.fp_chain_len = *nu;
	in.find = find_module;
	in.find_arg = g;
	g->cur_pid = s->pid;
	unwind_sample(g->unwinder, g->mode, &in, g->frames, INGEST_MAX_FRAMES, &res);
	for (k = 0; k < res.n && g->frames[k].pc >= 4096; k++)
		g->uframes[k] = g->frames[k].pc;
	*nu = k;
	out->quality = (uint8_t)res.quality;
	out->method = (uint8_t)res.method;
	return true;
}

static void on_sample(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_sample s;
	struct rec_sample rs;
	uint64_t i, ctx = PERF_CONTEXT_USER;
	size_t nk = 0, nu = 0;
	uint32_t node;
	bool unwound = false;

	if (perf_sample_parse(f, h, &s)) {
		g->bad_records++;
		return;
	}
	for (i = 0; i < s.callchain_nr; i++) {
		uint64_t a;
		memcpy(&a, s.callchain + i, 8);
		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
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
	if (!nk && !nu && (f->sample_type & PERF_SAMPLE_IP)) {
		if ((s.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			g->kframes[nk++] = s.ip;
		else
			g->uframes[nu++] = s.ip;
	}
	memset(&rs, 0, sizeof(rs));
	rs.time = s.time;
	rs.weight = (f->sample_type & PERF_SAMPLE_PERIOD) ? s.period : 1;
	rs.pid = s.pid;
	rs.tid = s.tid;
	rs.cpu = (uint16_t)s.cpu;
	rs.quality = UNWIND_Q_UNKNOWN;
	rs.method = UNWIND_M_FP;
	if (g->unwinder)
		unwound = unwind_user(g, &s, &nu, &rs);
	g->quality[rs.quality & 3]++;
	g->method[rs.method < 3 ? rs.method : 0]++;

	node = proc_root(g, rs.pid);
	for (i = nu; i-- > 0;) {
		uint64_t a = g->uframes[i];
		bool ra = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
		node = stack_intern(&g->stacks, node, a, state_find(&g->st, rs.pid, a),
				    NODE_USER | (ra ? NODE_F_RA : 0));
	}
	for (i = nk; i-- > 0;)
		node = stack_intern(&g->stacks, node, g->kframes[i], 0,
				    NODE_KERNEL | (i ? NODE_F_RA : 0));
	rs.stack = node;
	put_new_nodes(g);
	store_put_sample(g->w, &rs);
	g->samples++;
	if (!g->first_time || rs.time < g->first_time)
		g->first_time = rs.time;
	if (rs.time > g->last_time)
		g->last_time = rs.time;
}

/* ---- processes, names, mappings ---- */

void ingest_seed_mapping(struct ingest *g, uint32_t pid, uint64_t time, const struct state_mapping *in)
{
	const struct state_mapping *m = state_add_mapping(&g->st, pid, in);
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

void ingest_seed_comm(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, const char *name)
{
	struct rec_comm c;
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.tid = tid;
	c.time = time;
	store_put_comm(g->w, &c, name);
}

/* MMAP (type 1) and MMAP2 (type 10): executable mappings only. */
static void on_mmap(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	const uint8_t *end = (const uint8_t *)h + h->size - perf_sample_id_size(f);
	struct state_mapping m;
	struct perf_sample id;
	uint32_t pidtid[2], prot = 5;
	uint64_t len;
	const char *name;
	size_t fixed = h->type == PERF_RECORD_MMAP2 ? 64 : 32;

	if (end < p || (size_t)(end - p) <= fixed) {
		g->bad_records++;
		return;
	}
	memset(&m, 0, sizeof(m));
	memcpy(pidtid, p, 8);
	memcpy(&m.start, p + 8, 8);
	memcpy(&len, p + 16, 8);
	memcpy(&m.pgoff, p + 24, 8);
	if (h->type == PERF_RECORD_MMAP2) {
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m.build_id_size = MIN(p[32], 20);
			memcpy(m.build_id, p + 36, m.build_id_size);
		} else {
			memcpy(&m.maj, p + 32, 4);
			memcpy(&m.min, p + 36, 4);
			memcpy(&m.inode, p + 40, 8);
		}
		memcpy(&prot, p + 56, 4);
	} else if (h->misc & PERF_RECORD_MISC_MMAP_DATA) {
		return;
	}
	name = (const char *)p + fixed;
	if (strnlen(name, (size_t)(end - (const uint8_t *)name)) == (size_t)(end - (const uint8_t *)name)) {
		g->bad_records++;
		return;
	}
	if (!(prot & 4 /* PROT_EXEC */))
		return;
	m.end = m.start + len;
	m.path = (char *)name;
	perf_sample_id_parse(f, h, &id);
	ingest_seed_mapping(g, pidtid[0], id.time, &m);
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
	}
	store_put_comm(g->w, &c, name);
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
		state_fork(&g->st, t.pid, t.ppid);
		store_put_task(g->w, REC_FORK, &t);
	} else {
		store_put_task(g->w, REC_EXIT, &t);
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
		l.kind = h->type == PERF_RECORD_LOST_SAMPLES;
		if (l.kind)
			g->lost_samples += l.count;
		else
			g->lost += l.count;
		store_put_lost(g->w, &l);
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

void ingest_seed_proc(struct ingest *g, int pid, uint64_t time)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct state_mapping m;
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
			   &off, &maj, &min, &ino, &pos) < 7 || !strchr(perms, 'x'))
			continue;
		line[strcspn(line, "\n")] = 0;
		m.start = start;
		m.end = end;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.inode = ino;
		m.path = line + pos;
		if (m.path[0] == '/')
			m.build_id_size = (uint8_t)sym_read_build_id(m.path, m.build_id, 20);
		ingest_seed_mapping(g, (uint32_t)pid, time, &m);
	}
	fclose(f);
}

/* ---- symbols at stop ---- */

struct symkey {
	uint64_t addr;
	uint32_t mapping;
	uint32_t flags;   /* node kind | NODE_F_RA */
};

static int cmp_symkey(const void *a, const void *b)
{
	const struct symkey *x = a, *y = b;
	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

void ingest_put_symbols(struct ingest *g)
{
	struct sym_session *ss = sym_session_new();
	struct symkey *keys = xmalloc((g->stacks.n + 1) * sizeof(*keys));
	size_t n = 0, i;

	for (i = 0; i < g->stacks.n; i++) {
		const struct rec_node *nd = &g->stacks.nodes[i];
		if ((nd->flags & 0xff) == NODE_ROOT)
			continue;
		keys[n].addr = nd->addr;
		keys[n].mapping = nd->mapping;
		keys[n].flags = nd->flags & (0xff | NODE_F_RA);
		n++;
	}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_symkey);
	for (i = 0; i < n; i++) {
		struct sym_result res;
		struct rec_symbol rs;
		uint64_t a = keys[i].addr - ((keys[i].flags & NODE_F_RA) ? 1 : 0);
		const struct state_mapping *m;
		if (i && !cmp_symkey(&keys[i - 1], &keys[i]))
			continue;
		memset(&res, 0, sizeof(res));
		if ((keys[i].flags & 0xff) == NODE_KERNEL) {
			sym_lookup_kernel(ss, a, &res);
		} else if ((m = state_mapping(&g->st, keys[i].mapping))) {
			struct sym_module_ref ref = {
				m->path, m->build_id_size ? m->build_id : NULL, m->build_id_size,
				m->start, m->end, m->pgoff,
			};
			sym_lookup(ss, &ref, a, &res);
		} else {
			res.module = "[unknown]";
			res.file_offset = a;
		}
		memset(&rs, 0, sizeof(rs));
		rs.addr = keys[i].addr;
		rs.mapping = keys[i].mapping;
		rs.flags = keys[i].flags;
		if (res.name) {
			rs.flags |= SYMBOL_F_KNOWN;
			rs.offset = res.sym_offset;
		} else {
			rs.offset = res.file_offset;
		}
		store_put_symbol(g->w, &rs, res.name ? res.name : "", res.module ? res.module : "");
	}
	free(keys);
	sym_session_free(ss);
}
