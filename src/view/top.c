/* top.c - functions by self and total samples. */
#include "view/view.h"
#include "lib/hash.h"
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


static int cmp_row(const void *a, const void *b, void *arg)
{
	bool sort_by_total = *(const bool *)arg;
	const struct top_row *x = a, *y = b;
	uint64_t kx = sort_by_total ? x->total : x->self, ky = sort_by_total ? y->total : y->self;
	uint64_t sx = sort_by_total ? x->self : x->total, sy = sort_by_total ? y->self : y->total;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* top --off-cpu: the same rows, weights in microseconds off the CPU. */
static void print_offcpu(const struct profile *p, const struct top_row *rows, size_t limit,
			 size_t n, uint64_t kept, bool json, FILE *out)
{
	size_t i;
	if (json) {
		struct jw w;
		jw_begin(&w, out);
		jw_double(&w, "off_cpu_ms", kept / 1000.0, 3);
		jw_array(&w, "functions");
		for (i = 0; i < limit; i++) {
			const struct top_row *r = &rows[i + 1];
			jw_object(&w, NULL);
			view_json_func(&w, profile_func(p, r->func));
			jw_double(&w, "self_ms", r->self / 1000.0, 3);
			jw_double(&w, "total_ms", r->total / 1000.0, 3);
			view_json_pcts(&w, r->self, r->total, kept);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
		return;
	}
	if (!kept) {
		fprintf(out, "no off-CPU time%s\n", p->noffcpu ? " matches the filter" :
			" in this recording (record with stax record --off-cpu)");
		return;
	}
	fprintf(out, "%7s %10s %7s %10s  %-40s %s\n", "SELF%", "SELF_MS", "TOTAL%", "TOTAL_MS",
		"FUNCTION (off the CPU)", "MODULE");
	for (i = 0; i < limit; i++) {
		const struct top_row *r = &rows[i + 1];
		const struct prof_func *fn = profile_func(p, r->func);
		fprintf(out, "%6.2f%% %10.1f %6.2f%% %10.1f  %-40s %s\n",
			100.0 * r->self / kept, r->self / 1000.0, 100.0 * r->total / kept, r->total / 1000.0,
			fn->label, fn->module);
	}
	if (limit < n)
		fprintf(out, "... %zu more functions (use -n 0 to see all)\n", n - limit);
}

/* top --by module|thread|process: rows are modules (self: the leaf's
 * module; total: any frame's, once per sample), threads or processes
 * (self == total: the samples they took). */
struct group_row {
	const char *name;
	uint32_t pid, tid;
	uint64_t self, total;
	uint64_t stamp; /* modules: the last sample counted (index + 1);
			 * threads, processes: the time of their last sample */
};

static int cmp_group(const void *a, const void *b, void *arg)
{
	const struct group_row *x = a, *y = b;
	bool sort_by_total = *(const bool *)arg;
	uint64_t kx = sort_by_total ? x->total : x->self, ky = sort_by_total ? y->total : y->self;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

static size_t group_of(const struct profile *p, struct hmap *idx, struct group_row **rows, size_t *n,
		       size_t *cap, enum top_by by, const struct rec_sample *s, const char *module)
{
	uint64_t key;
	uint32_t at;
	if (by == TOP_BY_MODULE)
		key = hash_bytes(module, strlen(module));
	else
		key = by == TOP_BY_THREAD ? s->tid : s->pid;
	/* module names: walk the collision chain by name */
	for (;; key = hash_mix(key, 0x9d)) {
		if (!hmap_get(idx, key, &at))
			break;
		if (by != TOP_BY_MODULE || !strcmp((*rows)[at].name, module))
			return at;
	}
	GROW(*rows, *cap, *n + 1);
	memset(&(*rows)[*n], 0, sizeof(**rows));
	(*rows)[*n].pid = s->pid;
	(*rows)[*n].tid = s->tid;
	if (by == TOP_BY_MODULE)
		(*rows)[*n].name = module;
	else
		(*rows)[*n].name = profile_comm(p, s->pid, by == TOP_BY_THREAD ? s->tid : s->pid, s->time);
	hmap_put(idx, key, (uint32_t)*n);
	return (*n)++;
}

static void view_top_by(const struct profile *p, const struct view_filter *f, const struct top_opts *o,
			FILE *out)
{
	static const char *const what[] = { "FUNCTION", "MODULE", "THREAD", "PROCESS" };
	static const char *const key[] = { "functions", "modules", "threads", "processes" };
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	struct group_row *rows = NULL;
	size_t n = 0, cap = 0, i, j, limit;
	uint64_t kept = 0;
	struct hmap idx;

	hmap_init(&idx);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		size_t nf, g;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		if (o->by != TOP_BY_MODULE) {
			g = group_of(p, &idx, &rows, &n, &cap, o->by, s, NULL);
			rows[g].self++;
			rows[g].total++;
			rows[g].stamp = MAX(rows[g].stamp, s->time);
			continue;
		}
		nf = profile_stack_funcs(p, s->stack, frames, MAX_DEPTH);
		for (j = 0; j < nf; j++) {
			const struct prof_func *fn = profile_func(p, frames[j]);
			g = group_of(p, &idx, &rows, &n, &cap, o->by, s, fn && fn->module ? fn->module : "[unknown]");
			if (!j)
				rows[g].self++;
			if (rows[g].stamp != i + 1) {
				rows[g].stamp = i + 1; /* once per sample */
				rows[g].total++;
			}
		}
	}
	/* a thread or process is named as at its last sample, as stax
	 * threads names it: a child that exec()ed shows the program it
	 * became, not its parent's name it had for its first samples */
	for (i = 0; o->by != TOP_BY_MODULE && i < n; i++)
		rows[i].name = profile_comm(p, rows[i].pid, o->by == TOP_BY_THREAD ? rows[i].tid : rows[i].pid,
					    rows[i].stamp);
	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), cmp_group, (void *)&o->sort_total);
	limit = o->limit && o->limit < n ? o->limit : n;
	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		jw_u64(&w, "samples", kept);
		jw_array(&w, key[o->by]);
		for (i = 0; i < limit; i++) {
			const struct group_row *r = &rows[i];
			jw_object(&w, NULL);
			jw_str(&w, "name", r->name);
			if (o->by == TOP_BY_THREAD || o->by == TOP_BY_PROCESS)
				jw_u64(&w, "pid", r->pid);
			if (o->by == TOP_BY_THREAD)
				jw_u64(&w, "tid", r->tid);
			jw_u64(&w, "self", r->self);
			jw_u64(&w, "total", r->total);
			view_json_pcts(&w, r->self, r->total, kept);
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
	fprintf(out, "%7s %8s %7s %8s  %s\n", "SELF%", "SELF", "TOTAL%", "TOTAL", what[o->by]);
	for (i = 0; i < limit; i++) {
		const struct group_row *r = &rows[i];
		fprintf(out, "%6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64 "  ", 100.0 * r->self / kept, r->self,
			100.0 * r->total / kept, r->total);
		if (o->by == TOP_BY_THREAD)
			fprintf(out, "%s/%u (pid %u)\n", r->name, r->tid, r->pid);
		else if (o->by == TOP_BY_PROCESS)
			fprintf(out, "%s/%u\n", r->name, r->pid);
		else
			fprintf(out, "%s\n", r->name);
	}
	if (limit < n)
		fprintf(out, "... %zu more %s (use -n 0 to see all)\n", n - limit, key[o->by]);
out:
	hmap_release(&idx);
	free(rows);
	free(frames);
}

/* The off-CPU stack of interval oc as top counts it: function ids, leaf
 * first, in frames (the kernel's frames folded, view_offcpu_frames()),
 * and in *self the index of the one its time is the self time of: the
 * blocking caller (view_blocking_frame()). With kernel_waits, the stack
 * as recorded and its leaf. */
static size_t offcpu_funcs(const struct profile *p, const struct rec_offcpu *oc, bool kernel_waits,
			   struct prof_frame *pf, uint32_t *frames, size_t *self)
{
	size_t nf = view_offcpu_frames(p, oc->stack, kernel_waits, pf, MAX_DEPTH), j;
	*self = kernel_waits ? 0 : view_blocking_frame(p, pf, nf);
	for (j = 0; j < nf; j++)
		frames[j] = pf[j].func;
	return nf;
}

void view_top(const struct profile *p, const struct view_filter *f, const struct top_opts *o, FILE *out)
{
	struct top_row *rows = xcalloc(p->nfuncs + 1, sizeof(*rows));
	uint64_t *stamp = xcalloc(p->nfuncs + 1, sizeof(*stamp));
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	struct prof_frame *pf = xmalloc(MAX_DEPTH * sizeof(*pf)); /* off-CPU stacks */
	uint64_t kept = 0;
	size_t i, j, n = 0, limit;

	if (o->by != TOP_BY_FUNCTION && !o->off_cpu) {
		view_top_by(p, f, o, out);
		goto out;
	}
	for (i = 0; i <= p->nfuncs; i++)
		rows[i].func = (uint32_t)i;
	/* with --off-cpu the items are intervals weighted by microseconds */
	for (i = 0; i < (o->off_cpu ? p->noffcpu : p->nsamples); i++) {
		uint64_t w = 1;
		size_t nf, self = 0;
		if (o->off_cpu) {
			const struct rec_offcpu *oc = &p->offcpu[i];
			if (!view_keep_offcpu(p, f, oc))
				continue;
			w = oc->duration / 1000;
			nf = offcpu_funcs(p, oc, o->kernel_waits, pf, frames, &self);
		} else {
			const struct rec_sample *s = &p->samples[i];
			if (!view_keep(p, f, s))
				continue;
			nf = profile_stack_funcs(p, s->stack, frames, MAX_DEPTH);
		}
		kept += w;
		if (!nf)
			continue;
		rows[frames[self]].self += w;
		for (j = 0; j < nf; j++) {
			if (stamp[frames[j]] == i + 1)
				continue; /* recursion: count a function once per sample */
			stamp[frames[j]] = i + 1;
			rows[frames[j]].total += w;
		}
	}
	qsort_r(rows + 1, p->nfuncs, sizeof(*rows), cmp_row, (void *)&o->sort_total);
	for (i = 1; i <= p->nfuncs && rows[i].total; i++)
		n++;
	limit = o->limit && o->limit < n ? o->limit : n;

	if (o->off_cpu) {
		print_offcpu(p, rows, limit, n, kept, o->json, out);
		goto out;
	}
	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		jw_u64(&w, "samples", kept);
		jw_array(&w, "functions");
		for (i = 0; i < limit; i++) {
			const struct top_row *r = &rows[i + 1];
			jw_object(&w, NULL);
			view_json_func(&w, profile_func(p, r->func));
			jw_u64(&w, "self", r->self);
			jw_u64(&w, "total", r->total);
			view_json_pcts(&w, r->self, r->total, kept);
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
	fprintf(out, "%7s %8s %7s %8s  %-40s %s\n", "SELF%", "SELF", "TOTAL%", "TOTAL", "FUNCTION", "MODULE");
	for (i = 0; i < limit; i++) {
		const struct top_row *r = &rows[i + 1];
		const struct prof_func *fn = profile_func(p, r->func);
		fprintf(out, "%6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64 "  %-40s %s\n",
			100.0 * r->self / kept, r->self, 100.0 * r->total / kept, r->total,
			fn->label, fn->module);
	}
	if (limit < n)
		fprintf(out, "... %zu more functions (use -n 0 to see all)\n", n - limit);
out:
	free(rows);
	free(stamp);
	free(frames);
	free(pf);
}
