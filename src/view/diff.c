/* diff.c - what changed between two recordings. */
#include "view/diff.h"
#include "lib/buf.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

struct fn_row {
	uint32_t label;
	uint64_t self[2], total[2];
	double dself, dtotal;
};

struct stack_row {
	uint32_t node;
	uint64_t self[2];
	double d;
};

static double pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * n / total : 0;
}

static double rank_fn(const struct fn_row *r)
{
	return MAX(fabs(r->dself), fabs(r->dtotal));
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;
	double kx = rank_fn(x), ky = rank_fn(y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->label < y->label ? -1 : x->label > y->label;
}

static int cmp_stack(const void *a, const void *b)
{
	const struct stack_row *x = a, *y = b;
	if (fabs(x->d) != fabs(y->d))
		return fabs(x->d) > fabs(y->d) ? -1 : 1;
	return x->node < y->node ? -1 : x->node > y->node;
}

/* "root;...;leaf" of tree node id */
static void stack_text(const struct calltree *t, uint32_t id, struct buf *b)
{
	uint32_t chain[MAX_DEPTH];
	size_t n = 0;
	buf_reset(b);
	for (; id && n < MAX_DEPTH; id = calltree_node(t, id)->parent)
		chain[n++] = id;
	while (n--) {
		const struct calltree_label *l = calltree_label(t, chain[n]);
		buf_printf(b, "%s%s%s", b->len ? ";" : "", l->name, l->kernel ? "_[k]" : "");
	}
	buf_add_u8(b, 0);
}

static void build(struct calltree *t, const struct profile *base, const struct profile *now,
		  const struct view_filter *f)
{
	calltree_init(t);
	calltree_add_profile(t, now, f, 0, CALLTREE_NO_COMM);
	calltree_add_profile(t, base, f, 1, CALLTREE_NO_COMM);
}

double view_diff(const struct profile *base, const struct profile *now, const struct view_filter *f,
		 const struct diff_opts *o, FILE *out, const char **grew_name)
{
	struct calltree t;
	struct fn_row *fns;
	struct stack_row *stacks = NULL;
	uint64_t (*self)[2];
	size_t n, id, i, nfn = 0, nst = 0, stcap = 0, lim;
	double grew = 0;
	struct buf b = BUF_INIT;
	int s;

	build(&t, base, now, f);
	n = calltree_size(&t);
	self = xcalloc(n + 1, sizeof(*self));
	fns = xcalloc(t.nlabels, sizeof(*fns));
	for (i = 0; i < t.nlabels; i++)
		fns[i].label = (uint32_t)i;
	for (id = 1; id <= n; id++)
		for (s = 0; s < 2; s++)
			self[id][s] += t.count[s][id];
	for (id = 1; id <= n; id++) {
		uint32_t parent = calltree_node(&t, (uint32_t)id)->parent;
		for (s = 0; s < 2 && parent; s++)
			self[parent][s] -= t.count[s][id];
	}
	for (id = 1; id <= n; id++) {
		uint32_t l = (uint32_t)calltree_node(&t, (uint32_t)id)->addr, up;
		bool outer = true;
		/* a recursive function counts once per stack: at its outermost node */
		for (up = calltree_node(&t, (uint32_t)id)->parent; up; up = calltree_node(&t, up)->parent)
			if (calltree_node(&t, up)->addr == l) {
				outer = false;
				break;
			}
		for (s = 0; s < 2; s++) {
			fns[l].self[s] += self[id][s];
			if (outer)
				fns[l].total[s] += t.count[s][id];
		}
		if (self[id][0] || self[id][1]) {
			GROW(stacks, stcap, nst + 1);
			stacks[nst].node = (uint32_t)id;
			stacks[nst].self[0] = self[id][0];
			stacks[nst].self[1] = self[id][1];
			stacks[nst].d = pct(self[id][0], t.total[0]) - pct(self[id][1], t.total[1]);
			nst++;
		}
	}
	for (i = 0; i < t.nlabels; i++) {
		struct fn_row *r = &fns[i];
		r->dself = pct(r->self[0], t.total[0]) - pct(r->self[1], t.total[1]);
		r->dtotal = pct(r->total[0], t.total[0]) - pct(r->total[1], t.total[1]);
		if (r->dself > grew) {
			grew = r->dself;
			if (grew_name)
				*grew_name = t.labels[i].name;
		}
	}
	qsort(fns, t.nlabels, sizeof(*fns), cmp_fn);
	for (nfn = 0; nfn < t.nlabels && (fns[nfn].total[0] || fns[nfn].total[1]); nfn++)
		;
	if (nst)
		qsort(stacks, nst, sizeof(*stacks), cmp_stack);

	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		jw_object(&w, "base");
		jw_str(&w, "path", base->path);
		jw_u64(&w, "samples", t.total[1]);
		jw_object_end(&w);
		jw_object(&w, "new");
		jw_str(&w, "path", now->path);
		jw_u64(&w, "samples", t.total[0]);
		jw_object_end(&w);
		jw_array(&w, "functions");
		lim = o->limit && o->limit < nfn ? o->limit : nfn;
		for (i = 0; i < lim; i++) {
			const struct fn_row *r = &fns[i];
			jw_object(&w, NULL);
			jw_str(&w, "name", t.labels[r->label].name);
			jw_bool(&w, "kernel", t.labels[r->label].kernel);
			jw_double(&w, "base_self_pct", pct(r->self[1], t.total[1]), 2);
			jw_double(&w, "new_self_pct", pct(r->self[0], t.total[0]), 2);
			jw_double(&w, "self_change", r->dself, 2);
			jw_double(&w, "base_total_pct", pct(r->total[1], t.total[1]), 2);
			jw_double(&w, "new_total_pct", pct(r->total[0], t.total[0]), 2);
			jw_double(&w, "total_change", r->dtotal, 2);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_array(&w, "stacks");
		lim = o->limit && o->limit < nst ? o->limit : nst;
		for (i = 0; i < lim; i++) {
			stack_text(&t, stacks[i].node, &b);
			jw_object(&w, NULL);
			jw_str(&w, "stack", (char *)b.data);
			jw_double(&w, "base_pct", pct(stacks[i].self[1], t.total[1]), 2);
			jw_double(&w, "new_pct", pct(stacks[i].self[0], t.total[0]), 2);
			jw_double(&w, "change", stacks[i].d, 2);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
		goto out;
	}
	fprintf(out, "base: %s (%" PRIu64 " samples)\nnew:  %s (%" PRIu64 " samples)\n\n",
		base->path, t.total[1], now->path, t.total[0]);
	if (!t.total[0] || !t.total[1]) {
		fprintf(out, "nothing to compare: the %s recording has no samples%s\n",
			!t.total[1] ? "base" : "new", f->pid >= 0 || f->tid >= 0 || f->comm ? " that match the filter" : "");
		goto out;
	}
	fputs("functions whose share changed, largest change first (points = new% - base%)\n", out);
	fprintf(out, "%8s %7s %7s %8s %7s %7s  %s\n", "SELF+-", "BASE%", "NEW%", "TOTAL+-", "BASE%", "NEW%", "FUNCTION");
	lim = o->limit && o->limit < nfn ? o->limit : nfn;
	for (i = 0; i < lim; i++) {
		const struct fn_row *r = &fns[i];
		fprintf(out, "%+8.2f %7.2f %7.2f %+8.2f %7.2f %7.2f  %s%s\n", r->dself,
			pct(r->self[1], t.total[1]), pct(r->self[0], t.total[0]), r->dtotal,
			pct(r->total[1], t.total[1]), pct(r->total[0], t.total[0]),
			t.labels[r->label].name, t.labels[r->label].kernel ? " [k]" : "");
	}
	if (lim < nfn)
		fprintf(out, "... %zu more (-n 0 shows all)\n", nfn - lim);
	fputs("\nstacks whose share changed (self samples of the stack's leaf)\n", out);
	fprintf(out, "%8s %7s %7s  %s\n", "CHANGE", "BASE%", "NEW%", "STACK (root;...;leaf)");
	lim = o->limit && o->limit < nst ? o->limit : nst;
	for (i = 0; i < lim; i++) {
		stack_text(&t, stacks[i].node, &b);
		fprintf(out, "%+8.2f %7.2f %7.2f  %s\n", stacks[i].d, pct(stacks[i].self[1], t.total[1]),
			pct(stacks[i].self[0], t.total[0]), (char *)b.data);
	}
	if (lim < nst)
		fprintf(out, "... %zu more (-n 0 shows all)\n", nst - lim);
out:
	buf_release(&b);
	free(stacks);
	free(fns);
	free(self);
	calltree_release(&t);
	return grew;
}

size_t view_diff_svg(const struct profile *base, const struct profile *now, const struct view_filter *f,
		     const struct svg_opts *o, FILE *out)
{
	struct calltree t;
	struct svg_opts so = *o;
	size_t merged;
	build(&t, base, now, f);
	so.diff = true;
	merged = svg_flamegraph(&t, &so, out);
	calltree_release(&t);
	return merged;
}
