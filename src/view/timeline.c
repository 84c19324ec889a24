/* timeline.c - samples per time bucket per thread (stax timeline). */
#include "view/view.h"
#include "profile/filter.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct tl_row {
	uint32_t pid, tid;
	uint64_t samples, last_time;
	uint64_t *counts;         /* per bucket */
	uint32_t *hot;            /* per bucket: hottest function (self), 0 none */
};

static int cmp_tl(const void *a, const void *b)
{
	const struct tl_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void view_timeline(const struct profile *p, const struct view_filter *f, const struct timeline_opts *o,
		   FILE *out)
{
	static const char glyph[] = " .:-=+*#%@";
	size_t nb = o->buckets ? o->buckets : 60, nrows = 0, cap = 0, i, b;
	uint64_t start = profile_start_ns(p), end = p->last_time, span, width, kept = 0, max = 0;
	struct tl_row *rows = NULL;
	struct hmap idx, cell;
	uint32_t *cellv = NULL;   /* samples per (row, bucket, function) */
	size_t ncell = 0, cellcap = 0;

	hmap_init(&idx);
	hmap_init(&cell);
	span = end > start ? end - start : 0;
	width = o->interval_ns ? o->interval_ns : span / nb + 1;
	if (o->interval_ns)
		nb = (size_t)(span / width + 1);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		uint32_t at;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		if (!hmap_get(&idx, s->tid, &at)) {
			GROW(rows, cap, nrows + 1);
			memset(&rows[nrows], 0, sizeof(rows[nrows]));
			rows[nrows].pid = s->pid;
			rows[nrows].tid = s->tid;
			rows[nrows].counts = xcalloc(nb, sizeof(uint64_t));
			rows[nrows].hot = xcalloc(nb, sizeof(uint32_t));
			at = (uint32_t)nrows++;
			hmap_put(&idx, s->tid, at);
		}
		b = s->time > start ? (size_t)((s->time - start) / width) : 0;
		if (b >= nb)
			b = nb - 1;
		rows[at].samples++;
		rows[at].counts[b]++;
		if (s->time > rows[at].last_time)
			rows[at].last_time = s->time;
		if (o->hottest) {
			uint32_t fn[1], c;
			uint64_t key;
			if (!profile_stack_funcs(p, s->stack, fn, 1))
				continue;
			key = ((uint64_t)at * nb + b) << 32 | fn[0];
			if (!hmap_get(&cell, key, &c)) {
				GROW(cellv, cellcap, ncell + 1);
				cellv[ncell] = 0;
				c = (uint32_t)ncell++;
				hmap_put(&cell, key, c);
			}
			cellv[c]++;
			/* the hottest so far; ties keep the first */
			{
				uint32_t cur = rows[at].hot[b], cc;
				if (!cur || (cur != fn[0] && hmap_get(&cell, ((uint64_t)at * nb + b) << 32 | cur, &cc) &&
					     cellv[c] > cellv[cc]))
					rows[at].hot[b] = fn[0];
			}
		}
	}
	/* rows are sorted after the cells were keyed by row index */
	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), cmp_tl);
	for (i = 0; i < nrows; i++)
		for (b = 0; b < nb; b++)
			if (rows[i].counts[b] > max)
				max = rows[i].counts[b];

	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		jw_u64(&w, "samples", kept);
		jw_u64(&w, "start_ns", start);
		jw_double(&w, "bucket_s", width / 1e9, 6);
		jw_u64(&w, "buckets", nb);
		jw_array(&w, "threads");
		for (i = 0; i < nrows; i++) {
			const struct tl_row *r = &rows[i];
			jw_object(&w, NULL);
			jw_u64(&w, "pid", r->pid);
			jw_u64(&w, "tid", r->tid);
			jw_str(&w, "name", profile_comm(p, r->pid, r->tid, r->last_time));
			jw_u64(&w, "samples", r->samples);
			jw_array(&w, "counts");
			for (b = 0; b < nb; b++)
				jw_u64(&w, NULL, r->counts[b]);
			jw_array_end(&w);
			if (o->hottest) {
				jw_array(&w, "hottest");
				for (b = 0; b < nb; b++)
					jw_str(&w, NULL, r->hot[b] ? view_func_name(p, r->hot[b]) : NULL);
				jw_array_end(&w);
			}
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
		goto out;
	}
	if (!kept) {
		view_no_samples(p, out);
		goto out;
	}
	fprintf(out, "%zu buckets of %.3f s from the start of the recording; each mark: samples in that"
		" bucket (' .:-=+*#%%@', @ = %" PRIu64 ")\n", nb, width / 1e9, max);
	for (i = 0; i < nrows; i++) {
		const struct tl_row *r = &rows[i];
		char name[64];
		snprintf(name, sizeof(name), "%s/%u", profile_comm(p, r->pid, r->tid, r->last_time), r->tid);
		fprintf(out, "%-24s %8" PRIu64 " |", name, r->samples);
		for (b = 0; b < nb; b++) {
			size_t g = !r->counts[b] ? 0 : 1 + (size_t)((r->counts[b] * 8 + max - 1) / max);
			fputc(glyph[g > 9 ? 9 : g], out);
		}
		fputs("|\n", out);
		if (o->hottest)
			for (b = 0; b < nb; b++)
				if (r->hot[b])
					fprintf(out, "    %8.3f-%.3f s %6" PRIu64 "  %s\n", b * width / 1e9,
						(b + 1) * width / 1e9, r->counts[b], view_func_name(p, r->hot[b]));
	}
out:
	for (i = 0; i < nrows; i++) {
		free(rows[i].counts);
		free(rows[i].hot);
	}
	free(rows);
	free(cellv);
	hmap_release(&idx);
	hmap_release(&cell);
}
