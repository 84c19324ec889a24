/* calltree.c - the call tree shared by the text, SVG and diff views. */
#include "view/calltree.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

void calltree_init(struct calltree *t)
{
	memset(t, 0, sizeof(*t));
	stack_table_init(&t->keys);
	hmap_init(&t->label_index);
}

void calltree_release(struct calltree *t)
{
	stack_table_release(&t->keys);
	free(t->count[0]);
	free(t->count[1]);
	free(t->labels);
	hmap_release(&t->label_index);
	while (t->nowned)
		free(t->owned[--t->nowned]);
	free(t->owned);
	memset(t, 0, sizeof(*t));
}

/* Index of the label (name, kernel, comm), adding it when new. */
static uint32_t label_intern(struct calltree *t, const char *name, bool kernel, bool comm)
{
	uint64_t h = hash_mix(hash_bytes(name, strlen(name)), (kernel ? 1 : 0) | (comm ? 2 : 0));
	uint32_t id;
	for (;; h = hash_next(h)) {
		const struct calltree_label *l;
		if (!hmap_get(&t->label_index, h, &id))
			break;
		l = &t->labels[id];
		if (l->kernel == kernel && l->comm == comm && !strcmp(l->name, name))
			return id;
	}
	GROW(t->labels, t->labelcap, t->nlabels + 1);
	t->labels[t->nlabels] = (struct calltree_label){ .name = name, .kernel = kernel, .comm = comm };
	hmap_put(&t->label_index, h, (uint32_t)t->nlabels);
	return (uint32_t)t->nlabels++;
}

static uint32_t add_n(struct calltree *t, uint32_t parent, uint32_t label, uint32_t flags, int side,
		      uint64_t n)
{
	size_t before = t->keys.n;
	uint32_t node = stack_intern(&t->keys, parent, label, 0, flags);
	if (t->keys.n != before) {
		GROW(t->count[0], t->cap[0], t->keys.n + 1);
		GROW(t->count[1], t->cap[1], t->keys.n + 1);
		t->count[0][node] = t->count[1][node] = 0;
	}
	t->count[side][node] += n;
	return node;
}

/* Add the frames of a stack (leaf first) under node, root side first
 * (leaf side first when inverted); returns the last tree node added. */
static uint32_t add_frames(struct calltree *t, uint32_t node, const struct prof_frame *fr, size_t nf,
			   const uint32_t *flabel, size_t nfuncs, int side, uint64_t n, bool inverted)
{
	size_t j;
	if (inverted) {
		/* "inlined into its caller" is no edge to the parent here */
		for (j = 0; j < nf; j++)
			node = add_n(t, node, flabel[fr[j].func <= nfuncs ? fr[j].func : 0], 0, side, n);
		return node;
	}
	for (j = nf; j-- > 0;)
		node = add_n(t, node, flabel[fr[j].func <= nfuncs ? fr[j].func : 0],
			     fr[j].inlined ? CALLTREE_F_INLINE : 0, side, n);
	return node;
}

uint64_t calltree_add_profile(struct calltree *t, const struct profile *p,
			      const struct view_filter *f, int side, unsigned flags)
{
	struct prof_frame *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	uint32_t *flabel = xmalloc((p->nfuncs + 1) * sizeof(*flabel));
	uint64_t kept = 0;
	size_t i;

	/* function id -> label, so the per-frame work is one lookup */
	flabel[0] = label_intern(t, "[unknown]", false, false);
	for (i = 1; i <= p->nfuncs; i++) {
		const struct prof_func *fn = profile_func(p, (uint32_t)i);
		flabel[i] = label_intern(t, view_func_name(p, (uint32_t)i), fn->kernel, false);
		t->labels[flabel[i]].python |= profile_func_is_python(fn);
	}
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		size_t nf;
		uint32_t node = 0;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		nf = profile_stack_frames(p, s->stack, frames, MAX_DEPTH);
		if (flags & CALLTREE_INVERTED) {
			/* leaf first; the thread's name is the outermost caller */
			node = add_frames(t, 0, frames, nf, flabel, p->nfuncs, side, 1, true);
			if (!(flags & CALLTREE_NO_COMM))
				add_n(t, node, label_intern(t, profile_comm(p, s->pid, s->tid, s->time), false,
							    true), 0, side, 1);
			continue;
		}
		if (!(flags & CALLTREE_NO_COMM))
			node = add_n(t, 0, label_intern(t, profile_comm(p, s->pid, s->tid, s->time), false, true),
				     0, side, 1);
		add_frames(t, node, frames, nf, flabel, p->nfuncs, side, 1, false);
	}
	t->total[side] += kept;
	free(flabel);
	free(frames);
	return kept;
}

/* ---- time: off-CPU and wall ---- */

/* leaf: an off-CPU reason's label (the stack is an off-CPU one, folded
 * unless kernel), or UINT32_MAX for an on-CPU sample's stack */
static void add_time_stack(struct calltree *t, const struct profile *p, struct prof_frame *frames,
			   const uint32_t *flabel, uint32_t root, uint32_t stack, uint32_t leaf,
			   int side, uint64_t us, bool inverted, bool kernel)
{
	size_t nf = leaf != UINT32_MAX ? view_offcpu_frames(p, stack, kernel, frames, MAX_DEPTH) :
					 profile_stack_frames(p, stack, frames, MAX_DEPTH);
	uint32_t node;
	if (inverted) {
		node = leaf != UINT32_MAX ? add_n(t, 0, leaf, 0, side, us) : 0;
		node = add_frames(t, node, frames, nf, flabel, p->nfuncs, side, us, true);
		add_n(t, node, root, 0, side, us);
		return;
	}
	node = add_frames(t, add_n(t, 0, root, 0, side, us), frames, nf, flabel, p->nfuncs, side, us, false);
	if (leaf != UINT32_MAX)
		add_n(t, node, leaf, 0, side, us);
}

static uint32_t thread_label(struct calltree *t, const struct profile *p, struct hmap *threads,
			     uint32_t pid, uint32_t tid, uint64_t time, bool wall)
{
	uint32_t l;
	char *name;
	if (!wall)
		return label_intern(t, profile_comm(p, pid, tid, time), false, true);
	if (hmap_get(threads, tid, &l))
		return l;
	name = xasprintf("%s/%u", profile_comm(p, pid, tid, time), tid);
	GROW(t->owned, t->ownedcap, t->nowned + 1);
	t->owned[t->nowned++] = name;
	l = label_intern(t, name, false, true);
	hmap_put(threads, tid, l);
	return l;
}

uint64_t calltree_add_time(struct calltree *t, const struct profile *p,
			   const struct view_filter *f, int side, unsigned flags)
{
	struct prof_frame *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	uint32_t *flabel = xmalloc((p->nfuncs + 1) * sizeof(*flabel));
	uint32_t reason[OFFCPU_NREASONS];
	bool wall = flags & CALLTREE_WALL;
	struct hmap threads;
	uint64_t added = 0;
	size_t i;

	hmap_init(&threads);
	flabel[0] = label_intern(t, "[unknown]", false, false);
	for (i = 1; i <= p->nfuncs; i++) {
		const struct prof_func *fn = profile_func(p, (uint32_t)i);
		flabel[i] = label_intern(t, view_func_name(p, (uint32_t)i), fn->kernel, false);
		t->labels[flabel[i]].python |= profile_func_is_python(fn);
	}
	for (i = 0; i < OFFCPU_NREASONS; i++) {
		reason[i] = label_intern(t, view_offcpu_frame((enum offcpu_reason)i), false, false);
		t->labels[reason[i]].offcpu = true;
	}
	for (i = 0; wall && i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		uint64_t us = view_sample_ns(p, s) / 1000;
		if (!view_keep(p, f, s) || !us)
			continue;
		add_time_stack(t, p, frames, flabel, thread_label(t, p, &threads, s->pid, s->tid, s->time, wall),
			       s->stack, UINT32_MAX, side, us, flags & CALLTREE_INVERTED, true);
		added += us;
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[i];
		uint64_t us = o->duration / 1000;
		if (!view_keep_offcpu(p, f, o) || !us)
			continue;
		add_time_stack(t, p, frames, flabel, thread_label(t, p, &threads, o->pid, o->tid, o->start, wall),
			       o->stack, reason[o->reason < OFFCPU_NREASONS ? o->reason : 0], side, us,
			       flags & CALLTREE_INVERTED, flags & CALLTREE_KERNEL_WAITS);
		added += us;
	}
	t->total[side] += added;
	hmap_release(&threads);
	free(flabel);
	free(frames);
	return added;
}

struct kid_order {
	const struct calltree *tree;
	bool by_name;
};

static int cmp_kid(const void *a, const void *b, void *arg)
{
	const struct kid_order *o = arg;
	const struct calltree *sort_tree = o->tree;
	bool sort_by_name = o->by_name;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const uint64_t *c = sort_tree->count[0];
	if (sort_by_name) {
		int r = strcmp(calltree_label(sort_tree, x)->name, calltree_label(sort_tree, y)->name);
		if (r)
			return r;
	} else if (c[x] != c[y]) {
		return c[x] > c[y] ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

struct calltree_kids *calltree_kids(const struct calltree *t, bool by_name)
{
	struct calltree_kids *k = xcalloc(t->keys.n + 1, sizeof(*k));
	size_t id;
	for (id = 1; id <= t->keys.n; id++) {
		uint32_t parent = calltree_node(t, (uint32_t)id)->parent;
		GROW(k[parent].ids, k[parent].cap, k[parent].n + 1);
		k[parent].ids[k[parent].n++] = (uint32_t)id;
	}
	struct kid_order order = { t, by_name };
	for (id = 0; id <= t->keys.n; id++)
		if (k[id].n > 1)
			qsort_r(k[id].ids, k[id].n, sizeof(uint32_t), cmp_kid, &order);
	return k;
}

void calltree_kids_free(const struct calltree *t, struct calltree_kids *k)
{
	size_t id;
	if (!k)
		return;
	for (id = 0; id <= t->keys.n; id++)
		free(k[id].ids);
	free(k);
}
