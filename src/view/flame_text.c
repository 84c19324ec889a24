/* flame_text.c - the call tree as indented text, and folded stacks.
 *
 * Both start each stack with the thread's command name, then functions
 * from the root to the leaf, the way stackcollapse-perf.pl does; kernel
 * frames carry a "_[k]" suffix in folded output.
 */
#include "view/view.h"
#include "store/stacks.h"
#include "lib/buf.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096
#define COMM_KEY (1ull << 63)

struct tree {
	struct stack_table keys; /* (parent, label) -> tree node id */
	uint64_t *count;         /* samples ending at or below the node */
	size_t cap;
	const char **comms;      /* labels for the first level */
	size_t ncomms, commcap;
};

static uint32_t comm_label(struct tree *t, const char *name)
{
	size_t i;
	for (i = 0; i < t->ncomms; i++)
		if (!strcmp(t->comms[i], name))
			return (uint32_t)i;
	GROW(t->comms, t->commcap, t->ncomms + 1);
	t->comms[t->ncomms] = name;
	return (uint32_t)t->ncomms++;
}

static const char *label(const struct profile *p, const struct tree *t, const struct rec_node *n)
{
	if (n->addr & COMM_KEY)
		return t->comms[n->addr & ~COMM_KEY];
	return view_func_name(p, (uint32_t)n->addr);
}

static bool is_kernel(const struct profile *p, const struct rec_node *n)
{
	const struct prof_func *fn;
	if (n->addr & COMM_KEY)
		return false;
	fn = profile_func(p, (uint32_t)n->addr);
	return fn && fn->kernel;
}

/* Count one sample at the child labelled key of parent. */
static uint32_t add(struct tree *t, uint32_t parent, uint64_t key)
{
	size_t before = t->keys.n;
	uint32_t node = stack_intern(&t->keys, parent, key, 0, 0);
	GROW(t->count, t->cap, t->keys.n + 1);
	if (t->keys.n != before)
		t->count[node] = 0;
	t->count[node]++;
	return node;
}

/* Build the tree; returns the number of samples kept. */
static uint64_t build(const struct profile *p, const struct view_filter *f, struct tree *t)
{
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	uint64_t kept = 0;
	size_t i;

	memset(t, 0, sizeof(*t));
	stack_table_init(&t->keys);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		size_t nf, j;
		uint32_t node;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		nf = profile_stack_funcs(p, s->stack, frames, MAX_DEPTH);
		node = add(t, 0, COMM_KEY | comm_label(t, profile_comm(p, s->pid, s->tid, s->time)));
		for (j = nf; j-- > 0;)
			node = add(t, node, frames[j]);
	}
	free(frames);
	return kept;
}

static void tree_release(struct tree *t)
{
	stack_table_release(&t->keys);
	free(t->count);
	free(t->comms);
}

/* ---- folded ---- */

struct fold_line {
	char *text;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct fold_line *)a)->text, ((const struct fold_line *)b)->text);
}

static void print_folded(const struct profile *p, const struct tree *t, size_t max_depth, FILE *out)
{
	/* a stack's own count is its count minus its children's */
	uint64_t *self = xcalloc(t->keys.n + 1, sizeof(*self));
	struct fold_line *lines = NULL;
	size_t nl = 0, cap = 0, i, id;
	struct buf b = BUF_INIT;

	for (id = 1; id <= t->keys.n; id++)
		self[id] = t->count[id];
	for (id = 1; id <= t->keys.n; id++) {
		const struct rec_node *n = stack_node(&t->keys, (uint32_t)id);
		if (n->parent)
			self[n->parent] -= t->count[id];
	}
	for (id = 1; id <= t->keys.n; id++) {
		uint32_t chain[MAX_DEPTH];
		size_t depth = 0, lo;
		uint32_t cur = (uint32_t)id;
		if (!self[id])
			continue;
		while (cur && depth < MAX_DEPTH) {
			chain[depth++] = cur;
			cur = stack_node(&t->keys, cur)->parent;
		}
		buf_reset(&b);
		/* -d N keeps the N outermost levels; deeper samples are
		 * counted in their ancestor at that level (merged below) */
		lo = max_depth && depth > max_depth ? depth - max_depth : 0;
		while (depth-- > lo) {
			const struct rec_node *n = stack_node(&t->keys, chain[depth]);
			const char *s = label(p, t, n);
			size_t k;
			if (b.len)
				buf_add_u8(&b, ';');
			for (k = 0; s[k]; k++) /* ';' and ' ' would break the format */
				buf_add_u8(&b, s[k] == ';' ? ':' : s[k] == '\n' ? ' ' : s[k]);
			if (is_kernel(p, n))
				buf_add(&b, "_[k]", 4);
		}
		buf_add_u8(&b, 0);
		GROW(lines, cap, nl + 1);
		lines[nl].text = xstrdup((char *)b.data);
		lines[nl].count = self[id];
		nl++;
	}
	if (nl)
		qsort(lines, nl, sizeof(*lines), cmp_line);
	for (i = 0; i < nl; i++) {
		uint64_t c = lines[i].count;
		while (i + 1 < nl && !strcmp(lines[i].text, lines[i + 1].text)) {
			free(lines[i].text);
			c += lines[++i].count;
		}
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, c);
		free(lines[i].text);
	}
	free(lines);
	free(self);
	buf_release(&b);
}

/* ---- tree ---- */

struct child_list {
	uint32_t *ids;
	size_t n, cap;
};

static const struct tree *sort_tree;

static int cmp_child(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (sort_tree->count[x] != sort_tree->count[y])
		return sort_tree->count[x] > sort_tree->count[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void print_node(const struct profile *p, const struct tree *t, struct child_list *kids,
		       uint32_t id, size_t depth, uint64_t total, const struct flame_opts *o,
		       FILE *out, bool *first)
{
	const struct rec_node *n = stack_node(&t->keys, id);
	size_t i;
	double pct = total ? 100.0 * t->count[id] / total : 0;
	if (pct < o->threshold)
		return;
	if (o->json) {
		fprintf(out, "%s{\"name\":", *first ? "" : ",");
		*first = false;
		json_str(out, label(p, t, n));
		fprintf(out, ",\"kernel\":%s,\"samples\":%" PRIu64 ",\"children\":[",
			is_kernel(p, n) ? "true" : "false", t->count[id]);
	} else {
		fprintf(out, "%6.2f%% %8" PRIu64 "  %*s%s%s\n", pct, t->count[id], (int)(depth * 2), "",
			label(p, t, n), is_kernel(p, n) ? " [k]" : "");
	}
	if (!o->max_depth || depth + 1 < o->max_depth) {
		bool f2 = true;
		for (i = 0; i < kids[id].n; i++)
			print_node(p, t, kids, kids[id].ids[i], depth + 1, total, o, out, &f2);
	}
	if (o->json)
		fputs("]}", out);
}

void view_flame(const struct profile *p, const struct view_filter *f, const struct flame_opts *o, FILE *out)
{
	struct tree t;
	struct child_list *kids;
	uint64_t kept = build(p, f, &t);
	size_t id;
	bool first = true;

	if (o->folded) {
		print_folded(p, &t, o->max_depth, out);
		tree_release(&t);
		return;
	}
	kids = xcalloc(t.keys.n + 1, sizeof(*kids));
	for (id = 1; id <= t.keys.n; id++) {
		uint32_t parent = stack_node(&t.keys, (uint32_t)id)->parent;
		GROW(kids[parent].ids, kids[parent].cap, kids[parent].n + 1);
		kids[parent].ids[kids[parent].n++] = (uint32_t)id;
	}
	sort_tree = &t;
	for (id = 0; id <= t.keys.n; id++)
		if (kids[id].n)
			qsort(kids[id].ids, kids[id].n, sizeof(uint32_t), cmp_child);
	if (o->json)
		fprintf(out, "{\"samples\":%" PRIu64 ",\"roots\":[", kept);
	else if (!kept)
		fprintf(out, "no samples%s\n", p->nsamples ? " match the filter" : " in this recording");
	else
		fprintf(out, "%7s %8s  %s\n", "TOTAL%", "SAMPLES", "CALL TREE (root first, hottest first)");
	for (id = 0; id < kids[0].n; id++)
		print_node(p, &t, kids, kids[0].ids[id], 0, kept, o, out, &first);
	if (o->json)
		fputs("]}\n", out);
	for (id = 0; id <= t.keys.n; id++)
		free(kids[id].ids);
	free(kids);
	tree_release(&t);
}
