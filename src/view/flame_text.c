/* flame_text.c - the call tree as indented text, and folded stacks.
 *
 * Both start each stack with the thread's command name, then functions
 * from the root to the leaf, the way stackcollapse-perf.pl does; kernel
 * frames carry a "_[k]" suffix in folded output.
 */
#include "view/calltree.h"
#include "store/stacks.h"
#include "lib/buf.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

/* ---- folded ---- */

struct fold_line {
	char *text;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct fold_line *)a)->text, ((const struct fold_line *)b)->text);
}

static void print_folded(const struct calltree *t, size_t max_depth, FILE *out)
{
	/* a stack's own count is its count minus its children's */
	uint64_t *self = xcalloc(t->keys.n + 1, sizeof(*self));
	struct fold_line *lines = NULL;
	size_t nl = 0, cap = 0, i, id;
	struct buf b = BUF_INIT;

	for (id = 1; id <= t->keys.n; id++)
		self[id] = t->count[0][id];
	for (id = 1; id <= t->keys.n; id++) {
		const struct rec_node *n = stack_node(&t->keys, (uint32_t)id);
		if (n->parent)
			self[n->parent] -= t->count[0][id];
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
			const struct calltree_label *n = calltree_label(t, chain[depth]);
			const char *s = n->name;
			size_t k;
			if (b.len)
				buf_add_u8(&b, ';');
			for (k = 0; s[k]; k++) /* ';' and ' ' would break the format */
				buf_add_u8(&b, s[k] == ';' ? ':' : s[k] == '\n' ? ' ' : s[k]);
			if (n->kernel)
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

static void print_node(const struct calltree *t, struct calltree_kids *kids,
		       uint32_t id, size_t depth, uint64_t total, const struct flame_opts *o,
		       FILE *out)
{
	const struct calltree_label *n = calltree_label(t, id);
	uint64_t count = t->count[0][id];
	size_t i;
	double pct = total ? 100.0 * count / total : 0;
	if (pct < o->threshold)
		return;
	if (o->weight != FLAME_SAMPLES)
		fprintf(out, "%6.2f%% %10.1f  %*s%s%s\n", pct, count / 1000.0, (int)(depth * 2), "",
			n->name, n->kernel ? " [k]" : "");
	else
		fprintf(out, "%6.2f%% %8" PRIu64 "  %*s%s%s\n", pct, count, (int)(depth * 2), "",
			n->name, n->kernel ? " [k]" : "");
	if (!o->max_depth || depth + 1 < o->max_depth)
		for (i = 0; i < kids[id].n; i++)
			print_node(t, kids, kids[id].ids[i], depth + 1, total, o, out);
}

static void json_node(const struct calltree *t, struct calltree_kids *kids,
		      uint32_t id, size_t depth, uint64_t total, const struct flame_opts *o, struct jw *w)
{
	const struct calltree_label *n = calltree_label(t, id);
	uint64_t count = t->count[0][id];
	size_t i;
	if ((total ? 100.0 * count / total : 0) < o->threshold)
		return;
	jw_object(w, NULL);
	jw_str(w, "name", n->name);
	if (n->python)
		jw_bool(w, "python", true);
	jw_bool(w, "kernel", n->kernel);
	if (o->weight != FLAME_SAMPLES)
		jw_double(w, "ms", count / 1000.0, 3);
	else
		jw_u64(w, "samples", count);
	jw_array(w, "children");
	if (!o->max_depth || depth + 1 < o->max_depth)
		for (i = 0; i < kids[id].n; i++)
			json_node(t, kids, kids[id].ids[i], depth + 1, total, o, w);
	jw_array_end(w);
	jw_object_end(w);
}

void view_flame(const struct profile *p, const struct view_filter *f, const struct flame_opts *o, FILE *out)
{
	struct calltree t;
	struct calltree_kids *kids;
	uint64_t kept;
	size_t id;

	calltree_init(&t);
	if (o->weight == FLAME_SAMPLES)
		kept = calltree_add_profile(&t, p, f, 0, o->inverted ? CALLTREE_INVERTED : 0);
	else
		kept = calltree_add_time(&t, p, f, 0, (o->weight == FLAME_WALL ? CALLTREE_WALL : CALLTREE_OFFCPU) |
					 (o->inverted ? CALLTREE_INVERTED : 0) |
					 (o->kernel_waits ? CALLTREE_KERNEL_WAITS : 0));
	if (o->folded) {
		print_folded(&t, o->max_depth, out);
		calltree_release(&t);
		return;
	}
	kids = calltree_kids(&t, false);
	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		if (o->weight != FLAME_SAMPLES)
			jw_double(&w, "ms", kept / 1000.0, 3);
		else
			jw_u64(&w, "samples", kept);
		jw_array(&w, "roots");
		for (id = 0; id < kids[0].n; id++)
			json_node(&t, kids, kids[0].ids[id], 0, kept, o, &w);
		jw_array_end(&w);
		jw_end(&w);
		calltree_kids_free(&t, kids);
		calltree_release(&t);
		return;
	}
	if (!kept && o->weight == FLAME_OFFCPU)
		fprintf(out, "no off-CPU time%s\n", p->noffcpu ? " matches the filter" :
			" in this recording (record with stax record --off-cpu)");
	else if (o->weight != FLAME_SAMPLES && kept)
		fprintf(out, "%7s %10s  %s\n", "TOTAL%", "MS", o->weight == FLAME_WALL ?
			"WALL TIME BY THREAD (on and off the CPU, root first)" :
			"OFF-CPU TIME (root first, longest first)");
	else if (!kept)
		view_no_samples(p, out);
	else
		fprintf(out, "%7s %8s  %s\n", "TOTAL%", "SAMPLES", o->inverted ?
			"INVERTED CALL TREE (running function first, then its callers)" :
			"CALL TREE (root first, hottest first)");
	for (id = 0; id < kids[0].n; id++)
		print_node(&t, kids, kids[0].ids[id], 0, kept, o, out);
	calltree_kids_free(&t, kids);
	calltree_release(&t);
}
