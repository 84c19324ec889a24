/* top.c - functions by self and total samples. */
#include "view/view.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

struct top_row {
	uint32_t func;
	uint64_t self, total;
};

static bool sort_by_total;

static int cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	uint64_t kx = sort_by_total ? x->total : x->self, ky = sort_by_total ? y->total : y->self;
	uint64_t sx = sort_by_total ? x->self : x->total, sy = sort_by_total ? y->self : y->total;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

void view_top(const struct profile *p, const struct view_filter *f, const struct top_opts *o, FILE *out)
{
	struct top_row *rows = xcalloc(p->nfuncs + 1, sizeof(*rows));
	uint64_t *stamp = xcalloc(p->nfuncs + 1, sizeof(*stamp));
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	uint64_t kept = 0;
	size_t i, j, n = 0, limit;

	for (i = 0; i <= p->nfuncs; i++)
		rows[i].func = (uint32_t)i;
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		size_t nf;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		nf = profile_stack_funcs(p, s->stack, frames, MAX_DEPTH);
		if (!nf)
			continue;
		rows[frames[0]].self++;
		for (j = 0; j < nf; j++) {
			if (stamp[frames[j]] == i + 1)
				continue; /* recursion: count a function once per sample */
			stamp[frames[j]] = i + 1;
			rows[frames[j]].total++;
		}
	}
	sort_by_total = o->sort_total;
	qsort(rows + 1, p->nfuncs, sizeof(*rows), cmp_row);
	for (i = 1; i <= p->nfuncs && rows[i].total; i++)
		n++;
	limit = o->limit && o->limit < n ? o->limit : n;

	if (o->json) {
		fprintf(out, "{\"samples\":%" PRIu64 ",\"functions\":[", kept);
		for (i = 0; i < limit; i++) {
			const struct top_row *r = &rows[i + 1];
			const struct prof_func *fn = profile_func(p, r->func);
			fprintf(out, "%s{\"name\":", i ? "," : "");
			json_str(out, fn->name);
			fputs(",\"module\":", out);
			json_str(out, fn->module);
			fprintf(out, ",\"kernel\":%s,\"self\":%" PRIu64 ",\"total\":%" PRIu64
				",\"self_pct\":%.2f,\"total_pct\":%.2f}",
				fn->kernel ? "true" : "false", r->self, r->total,
				kept ? 100.0 * r->self / kept : 0.0, kept ? 100.0 * r->total / kept : 0.0);
		}
		fputs("]}\n", out);
		goto out;
	}
	if (!kept) {
		fprintf(out, "no samples%s\n", p->nsamples ? " match the filter" : " in this recording");
		goto out;
	}
	fprintf(out, "%7s %8s %7s %8s  %-40s %s\n", "SELF%", "SELF", "TOTAL%", "TOTAL", "FUNCTION", "MODULE");
	for (i = 0; i < limit; i++) {
		const struct top_row *r = &rows[i + 1];
		const struct prof_func *fn = profile_func(p, r->func);
		fprintf(out, "%6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64 "  %-40s %s\n",
			100.0 * r->self / kept, r->self, 100.0 * r->total / kept, r->total,
			fn->name, fn->module);
	}
	if (limit < n)
		fprintf(out, "... %zu more functions (use -n 0 to see all)\n", n - limit);
out:
	free(rows);
	free(stamp);
	free(frames);
}
