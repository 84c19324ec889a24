/* rotate.c - a live recording that goes on in another file (ingest.h:
 * ingest_end_file, ingest_new_file).
 *
 * The next file keeps the processes still alive: those whose main
 * thread's EXIT record came are let go, and so is one /proc has not had
 * at two file starts in a row without a sample meanwhile (its EXIT was
 * lost with a full ring). Beyond max_procs live ones, the least recently
 * sampled go too (evicted: a later sample of theirs reads their name and
 * mappings from /proc, recover.c). What the file starts with is written
 * at its start time: a COMM for every thread named, a MAPPING for every
 * executable mapping of the processes kept (numbered from 1; a child
 * shares its parent's, as before), then the stacks of the waits still
 * open (off-CPU), in a new stack table. Each concern lets go of what it
 * held for the processes that went (ingest-private.h: *_carry).
 */
#include "ingest/ingest-private.h"
#include "symbol/chunk.h"
#include "lib/util.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void ingest_end_file(struct ingest *g, uint64_t t)
{
	ingest_offcpu_end_file(g, t);
}

uint32_t ingest_copy_stack(struct ingest *g, const struct ingest_keep *k, uint32_t id)
{
	uint32_t chain[INGEST_MAX_FRAMES + 2], node = 0;
	size_t n = 0;

	while (id && n < ARRAY_SIZE(chain)) {
		const struct rec_node *nd = stack_node(k->old, id);
		if (!nd)
			break;
		chain[n++] = id;
		id = nd->parent;
	}
	while (n-- > 0) {
		const struct rec_node *nd = stack_node(k->old, chain[n]);
		uint32_t m;
		if (!nd) /* not so: the loop above found each */
			break;
		m = nd->mapping;
		/* a root's "mapping" is its process image, not a mapping id */
		if ((nd->flags & 0xff) != NODE_ROOT)
			m = m < k->nremap ? k->remap[m] : 0;
		node = stack_intern(&g->stacks, node, nd->addr, m, nd->flags);
	}
	return node;
}

/* Whether process pid may be gone for good: not in /proc now. */
static bool proc_missing(uint32_t pid)
{
	return pid && kill((pid_t)pid, 0) && errno == ESRCH;
}

/* The pids that go on map to 1, those evicted to 0. */
static bool has(const struct hmap *pids, uint32_t pid)
{
	uint32_t v;
	return hmap_get(pids, pid, &v) && v;
}

static bool keep_proc(void *arg, const struct state_proc *p)
{
	return has(arg, p->pid);
}

static int cmp_used(const void *a, const void *b)
{
	const struct state_proc *x = *(const struct state_proc *const *)a, *y = *(const struct state_proc *const *)b;
	return x->used < y->used ? -1 : x->used > y->used;
}

/* Whether pid goes on into the next file; missing gets the pids /proc
 * lacks now. */
static bool alive(struct ingest *g, uint32_t pid, const struct state_proc *p, struct hmap *missing)
{
	uint32_t v;
	if (!pid)
		return true; /* the idle tasks */
	if ((p && p->exited) || recover_exited(&g->recover, pid))
		return false;
	if (!proc_missing(pid))
		return true;
	hmap_put(missing, pid, 1);
	/* missing twice and nothing sampled since: its EXIT was lost */
	return !hmap_get(&g->missing, pid, &v) || (p && g->file_start && p->used >= g->file_start);
}

/* The pids that go on (pid -> 1 in pids), at most max_procs of the
 * processes the state has (the others -> 0). */
static void choose(struct ingest *g, struct hmap *pids, size_t max_procs, struct ingest_carry *c)
{
	struct hmap missing, seen;
	struct state_proc **byuse;
	size_t i, n = 0;
	uint32_t v;

	hmap_init(&missing);
	hmap_init(&seen);
	byuse = xmalloc((g->st.nprocs + 1) * sizeof(*byuse));
	for (i = 0; i < g->st.nprocs; i++) {
		struct state_proc *p = &g->st.procs[i];
		hmap_put(&seen, p->pid, 1);
		if (alive(g, p->pid, p, &missing)) {
			hmap_put(pids, p->pid, 1);
			byuse[n++] = p;
		} else {
			c->procs_dropped++;
		}
	}
	/* processes named but never sampled nor mapping anything (kernel
	 * threads seeded from /proc) */
	for (i = 0; i < g->recover.ntasks; i++) {
		uint32_t pid = g->recover.tasks[i].pid;
		if (hmap_get(&seen, pid, &v))
			continue;
		hmap_put(&seen, pid, 1);
		if (alive(g, pid, NULL, &missing))
			hmap_put(pids, pid, 1);
	}
	if (max_procs && n > max_procs) {
		/* the least recently sampled go, never the idle tasks */
		size_t over = n - max_procs;
		qsort(byuse, n, sizeof(*byuse), cmp_used);
		for (i = 0; i < n && over; i++) {
			if (!byuse[i]->pid)
				continue;
			hmap_put(pids, byuse[i]->pid, 0);
			c->procs_evicted++;
			over--;
		}
	}
	free(byuse);
	hmap_release(&seen);
	hmap_release(&g->missing);
	g->missing = missing;
}

/* Write every mapping of the state (numbered 1, 2, ... already) at t. */
static void put_mappings(struct ingest *g, uint64_t t)
{
	size_t i;
	for (i = 0; i < g->st.nmaps; i++)
		ingest_put_state_mapping(g, &g->st.maps[i], t);
}

void ingest_new_file(struct ingest *g, struct store_writer *w, uint64_t t, size_t max_procs,
		     struct ingest_carry *c)
{
	struct hmap pids, tids;
	struct ingest_keep k;
	struct stack_table old = g->stacks;
	uint32_t *remap;
	size_t nremap, i;

	memset(c, 0, sizeof(*c));
	g->w = w;
	hmap_init(&pids);
	choose(g, &pids, max_procs, c);
	recover_carry(g, &pids, t);
	remap = state_compact(&g->st, keep_proc, &pids, &nremap);
	put_mappings(g, t);
	/* a new stack table: the next file's node ids are its own */
	stack_table_init(&g->stacks);
	memset(g->last, 0, sizeof(g->last));
	k.pids = pids;
	k.remap = remap;
	k.nremap = nremap + 1;
	k.old = &old;
	ingest_offcpu_carry(g, &k);
	ingest_jit_carry(&g->jit, &k);
	hmap_init(&tids);
	for (i = 0; i < g->recover.ntasks; i++)
		hmap_put(&tids, g->recover.tasks[i].tid, 1);
	ingest_ustack_carry(&g->us, &tids);
	hmap_release(&tids);
	ingest_python_carry(g, &k);
	ingest_put_nodes(g);
	stack_table_release(&old);
	free(remap);

	c->procs = g->st.nprocs;
	c->maps = g->st.nmaps;
	c->tasks = g->recover.ntasks;
	/* this file's counts start again */
	g->samples = g->lost = g->lost_samples = g->throttles = g->unthrottles = 0;
	g->trimmed = g->unknown_records = g->bad_records = 0;
	g->chains_capped = 0;
	memset(g->quality, 0, sizeof(g->quality));
	memset(g->method, 0, sizeof(g->method));
	g->first_time = g->last_time = 0;
	g->file_start = t;
	hmap_release(&pids);
}

void ingest_keep_symbols(struct ingest *g)
{
	if (!g->symcache)
		g->symcache = sym_chunk_cache_new();
}

void ingest_symbols_cache(const struct ingest *g, uint64_t *bytes, uint64_t *hits, uint64_t *misses)
{
	*bytes = *hits = *misses = 0;
	if (!g->symcache)
		return;
	*bytes = sym_chunk_cache_bytes(g->symcache);
	sym_chunk_cache_counts(g->symcache, hits, misses);
}

size_t ingest_file_bytes(const struct ingest *g)
{
	size_t b = 0, i;

	b += g->stacks.cap * sizeof(struct rec_node) + g->stacks.nslots * sizeof(uint32_t);
	b += g->st.mapcap * sizeof(struct state_mapping) + g->st.proccap * sizeof(struct state_proc);
	for (i = 0; i < g->st.nmaps; i++)
		b += strlen(g->st.maps[i].path) + 1 + 16;
	for (i = 0; i < g->st.nprocs; i++)
		b += g->st.procs[i].cap * sizeof(struct state_range);
	b += g->st.proc_index.cap * sizeof(struct hmap_slot);
	b += g->recover.taskcap * sizeof(struct recover_task) + g->recover.index.cap * sizeof(struct hmap_slot);
	b += g->us.tailcap * sizeof(struct ingest_tail) + g->us.tail_index.cap * sizeof(struct hmap_slot);
	b += g->off.pendcap * sizeof(struct offcpu_pending) + g->off.pend_index.cap * sizeof(struct hmap_slot);
	return b;
}
