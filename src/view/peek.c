/* peek.c - the callers or the callees of one function (stax callers,
 * stax callees), like pprof -peek.
 *
 * FUNC is found as annotate finds it: a function name as top prints it
 * (every function of that name in one module: inline copies and
 * per-line rows merge), or 0xADDRESS of one of its frames. Each sample
 * whose stack holds FUNC counts once for FUNC, and once for each
 * distinct caller (or callee) it has on that stack, wherever FUNC
 * appears on it; a call of FUNC by FUNC (recursion) is not a caller or
 * callee of its own. Shares are of FUNC's samples.
 */
#include "view/view.h"
#include "lib/json.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

struct peek_row {
	uint32_t func;           /* 0: no caller (FUNC was the outermost frame) */
	uint64_t count;
};

static int cmp_peek(const void *a, const void *b)
{
	const struct peek_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

int view_peek(const struct profile *p, const struct view_filter *f, const char *what,
	      const struct peek_opts *o, FILE *out, struct err *err)
{
	bool *set = xcalloc(p->nfuncs + 1, sizeof(*set));
	struct peek_row *rows = xcalloc(p->nfuncs + 1, sizeof(*rows));
	uint64_t *stamp = xcalloc(p->nfuncs + 1, sizeof(*stamp));
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	uint64_t kept = 0, in = 0, self = 0;
	const char *rel = o->callees ? "callees" : "callers";
	const struct prof_func *tf;
	uint32_t target;
	size_t i, j, n, limit;
	int ret = -1;

	target = view_find_funcs(p, what, set, err);
	if (!target)
		goto out;
	if (!(tf = profile_func(p, target))) {
		err_set(err, -1, "%s: function %u is not in the recording", what, target);
		goto out;
	}
	for (i = 0; i <= p->nfuncs; i++)
		rows[i].func = (uint32_t)i;
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		bool hit = false;
		size_t nf;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		nf = profile_stack_funcs(p, s->stack, frames, MAX_DEPTH);
		for (j = 0; j < nf; j++) {
			uint32_t other;
			if (frames[j] > p->nfuncs || !set[frames[j]])
				continue;
			hit = true;
			if (o->callees) {
				if (!j)
					continue; /* FUNC was running: self */
				other = frames[j - 1];
			} else {
				other = j + 1 < nf ? frames[j + 1] : 0;
			}
			if (other > p->nfuncs || (other && set[other]) || stamp[other] == i + 1)
				continue; /* recursion, or counted for this sample */
			stamp[other] = i + 1;
			rows[other].count++;
		}
		if (hit) {
			in++;
			if (nf && set[frames[0]])
				self++;
		}
	}
	qsort(rows, p->nfuncs + 1, sizeof(*rows), cmp_peek);
	for (n = 0; n <= p->nfuncs && rows[n].count; n++)
		;
	limit = o->limit && o->limit < n ? o->limit : n;

	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		jw_str(&w, "function", tf->name);
		jw_str(&w, "module", tf->module);
		jw_u64(&w, "samples", in);
		jw_u64(&w, "total_samples", kept);
		jw_double(&w, "pct", kept ? 100.0 * in / kept : 0.0, 2);
		jw_u64(&w, "self", self);
		jw_double(&w, "self_pct", in ? 100.0 * self / in : 0.0, 2);
		jw_array(&w, rel);
		for (i = 0; i < limit; i++) {
			const struct prof_func *fn = profile_func(p, rows[i].func);
			jw_object(&w, NULL);
			jw_str(&w, "name", fn ? fn->label : "[root]");
			jw_str(&w, "module", fn ? fn->module : "");
			jw_bool(&w, "kernel", fn && fn->kernel);
			jw_u64(&w, "samples", rows[i].count);
			jw_double(&w, "pct", in ? 100.0 * rows[i].count / in : 0.0, 2);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
		ret = 0;
		goto out;
	}
	if (!in) {
		fprintf(out, "no samples of %s%s\n", tf->name, kept ? " match the filter" : "");
		ret = 0;
		goto out;
	}
	fprintf(out, "%s of %s (%s): on the stack in %" PRIu64 " of %" PRIu64 " samples (%.2f%%)\n",
		rel, tf->name, tf->module, in, kept, 100.0 * in / kept);
	fprintf(out, "%7s %8s  %-40s %s\n", "SHARE", "SAMPLES", o->callees ? "CALLEE" : "CALLER", "MODULE");
	if (o->callees)
		fprintf(out, "%6.2f%% %8" PRIu64 "  %-40s\n", 100.0 * self / in, self, "[self]");
	for (i = 0; i < limit; i++) {
		const struct prof_func *fn = profile_func(p, rows[i].func);
		fprintf(out, "%6.2f%% %8" PRIu64 "  %-40s %s\n", 100.0 * rows[i].count / in, rows[i].count,
			fn ? fn->label : "[root]", fn ? fn->module : "");
	}
	if (limit < n)
		fprintf(out, "... %zu more %s (use -n 0 to see all)\n", n - limit, rel);
	ret = 0;
out:
	free(set);
	free(rows);
	free(stamp);
	free(frames);
	return ret;
}
