#include "state/state.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

void state_init(struct state *s)
{
	memset(s, 0, sizeof(*s));
	hmap_init(&s->proc_index);
}

void state_release(struct state *s)
{
	size_t i;
	for (i = 0; i < s->nmaps; i++)
		free(s->maps[i].path);
	for (i = 0; i < s->nprocs; i++)
		free(s->procs[i].ranges);
	free(s->maps);
	free(s->procs);
	hmap_release(&s->proc_index);
	memset(s, 0, sizeof(*s));
}

struct state_proc *state_proc(struct state *s, uint32_t pid)
{
	uint32_t idx;
	struct state_proc *p;
	if (hmap_get(&s->proc_index, pid, &idx))
		return &s->procs[idx];
	GROW(s->procs, s->proccap, s->nprocs + 1);
	p = &s->procs[s->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->gen = ++s->gens;
	hmap_put(&s->proc_index, pid, (uint32_t)s->nprocs);
	s->nprocs++;
	return p;
}

/* Insert [start,end) -> id, cutting what it overlaps (a new mmap over an
 * old one replaces that part, as in the kernel). */
static void insert_range(struct state_proc *p, uint64_t start, uint64_t end, uint32_t id)
{
	struct state_range *out;
	size_t i, n = 0, cap = p->nranges + 2;
	out = xmalloc(cap * sizeof(*out));
	for (i = 0; i < p->nranges; i++) {
		struct state_range r = p->ranges[i];
		if (r.end <= start || r.start >= end) {
			out[n++] = r;
			continue;
		}
		if (r.start < start)
			out[n++] = (struct state_range){ r.start, start, r.id };
		if (r.end > end)
			out[n++] = (struct state_range){ end, r.end, r.id };
	}
	/* sorted insert of the new range */
	for (i = n; i > 0 && out[i - 1].start > start; i--)
		out[i] = out[i - 1];
	out[i] = (struct state_range){ start, end, id };
	n++;
	/* the cut pieces kept their order relative to each other; re-sort tail */
	for (i = 1; i < n; i++) {
		size_t j = i;
		struct state_range t = out[i];
		while (j > 0 && out[j - 1].start > t.start) {
			out[j] = out[j - 1];
			j--;
		}
		out[j] = t;
	}
	free(p->ranges);
	p->ranges = out;
	p->nranges = n;
	p->cap = cap;
}

const struct state_mapping *state_add_mapping(struct state *s, uint32_t pid,
		const struct state_mapping *m)
{
	struct state_mapping *nm;
	GROW(s->maps, s->mapcap, s->nmaps + 1);
	nm = &s->maps[s->nmaps++];
	*nm = *m;
	nm->id = (uint32_t)s->nmaps;
	nm->pid = pid;
	nm->path = xstrdup(m->path ? m->path : "");
	if (m->end > m->start) {
		struct state_proc *p = state_proc(s, pid);
		insert_range(p, m->start, m->end, nm->id);
		p->gen = ++s->gens;
	}
	return nm;
}

void state_fork(struct state *s, uint32_t pid, uint32_t ppid)
{
	struct state_proc *parent, *child;
	if (pid == ppid)
		return;
	state_proc(s, ppid);
	child = state_proc(s, pid); /* may move procs */
	parent = state_proc(s, ppid);
	free(child->ranges);
	child->ranges = NULL;
	child->nranges = child->cap = 0;
	if (parent->nranges) {
		child->ranges = xmalloc(parent->nranges * sizeof(*child->ranges));
		memcpy(child->ranges, parent->ranges, parent->nranges * sizeof(*child->ranges));
		child->nranges = child->cap = parent->nranges;
	}
	child->root = 0;
	child->image = 0;
	child->exited = false;
	child->used = 0;
	child->gen = ++s->gens;
}

void state_exec(struct state *s, uint32_t pid)
{
	struct state_proc *p = state_proc(s, pid);
	free(p->ranges);
	p->ranges = NULL;
	p->nranges = p->cap = 0;
	p->image++;
	p->root = 0;
	p->exited = false;
	p->gen = ++s->gens;
}

void state_exit(struct state *s, uint32_t pid)
{
	uint32_t idx;
	if (hmap_get(&s->proc_index, pid, &idx))
		s->procs[idx].exited = true;
}

uint32_t *state_compact(struct state *s, bool (*keep)(void *arg, const struct state_proc *p), void *arg,
			size_t *old_n)
{
	uint32_t *remap = xcalloc(s->nmaps + 1, sizeof(*remap)), next = 0;
	size_t i, j, n = 0;
	struct state_mapping *maps;

	/* the processes kept, in their order; the mappings their ranges use */
	hmap_release(&s->proc_index);
	hmap_init(&s->proc_index);
	for (i = 0; i < s->nprocs; i++) {
		struct state_proc *p = &s->procs[i];
		if (!keep(arg, p)) {
			free(p->ranges);
			continue;
		}
		for (j = 0; j < p->nranges; j++)
			remap[p->ranges[j].id] = 1;
		s->procs[n] = *p;
		hmap_put(&s->proc_index, p->pid, (uint32_t)n);
		n++;
	}
	s->nprocs = n;
	/* new ids in the order of the old ones */
	maps = xmalloc((s->nmaps ? s->nmaps : 1) * sizeof(*maps));
	for (i = 1; i <= s->nmaps; i++) {
		if (!remap[i]) {
			free(s->maps[i - 1].path);
			continue;
		}
		remap[i] = ++next;
		maps[next - 1] = s->maps[i - 1];
		maps[next - 1].id = next;
	}
	free(s->maps);
	s->maps = maps;
	*old_n = s->nmaps;
	s->nmaps = next;
	s->mapcap = s->nmaps ? s->nmaps : 1;
	for (i = 0; i < s->nprocs; i++) {
		struct state_proc *p = &s->procs[i];
		for (j = 0; j < p->nranges; j++)
			p->ranges[j].id = remap[p->ranges[j].id];
		p->root = 0;
		p->gen = ++s->gens;
	}
	/* give back what a burst of processes took */
	if (s->nprocs < s->proccap / 4) {
		s->proccap = MAX(s->nprocs, (size_t)16);
		s->procs = xrealloc(s->procs, s->proccap * sizeof(*s->procs));
	}
	return remap;
}

uint64_t state_gen(struct state *s, uint32_t pid)
{
	uint32_t idx;
	return hmap_get(&s->proc_index, pid, &idx) ? s->procs[idx].gen : 0;
}

uint32_t state_find(struct state *s, uint32_t pid, uint64_t addr)
{
	uint64_t start, end;
	return state_find_part(s, pid, addr, &start, &end);
}

uint32_t state_find_part(struct state *s, uint32_t pid, uint64_t addr, uint64_t *start,
			 uint64_t *end)
{
	uint32_t idx;
	const struct state_proc *p;
	size_t lo = 0, hi;
	if (!hmap_get(&s->proc_index, pid, &idx))
		return 0;
	p = &s->procs[idx];
	hi = p->nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->ranges[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nranges && p->ranges[lo].start <= addr && addr < p->ranges[lo].end) {
		*start = p->ranges[lo].start;
		*end = p->ranges[lo].end;
		return p->ranges[lo].id;
	}
	return 0;
}

const struct state_mapping *state_mapping(const struct state *s, uint32_t id)
{
	if (id == 0 || id > s->nmaps)
		return NULL;
	return &s->maps[id - 1];
}
