/* threads.c - samples and CPU time per thread. */
#include "view/view.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct thread_row {
	uint32_t pid, tid;
	uint64_t samples, weight, last_time;
	uint64_t cpu_ns, off_ns, reason_ns[OFFCPU_NREASONS];
};

static size_t row_at(struct hmap *index, struct thread_row **rows, size_t *n, size_t *cap,
		     uint32_t pid, uint32_t tid)
{
	uint64_t key = ((uint64_t)pid << 32) | tid;
	uint32_t at;
	if (!hmap_get(index, key, &at)) {
		GROW(*rows, *cap, *n + 1);
		memset(&(*rows)[*n], 0, sizeof(**rows));
		(*rows)[*n].pid = pid;
		(*rows)[*n].tid = tid;
		at = (uint32_t)(*n)++;
		hmap_put(index, key, at);
	}
	return at;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->off_ns != y->off_ns)
		return x->off_ns > y->off_ns ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* With off-CPU intervals: where each thread's wall time went. A thread's
 * wall time is its CPU time (samples times their period) plus its time
 * off the CPU; ONCPU% is the first over the sum. */
static void print_offcpu(const struct profile *p, struct thread_row *rows, size_t n,
			 uint64_t kept, bool json, FILE *out)
{
	size_t i, r;
	if (json) {
		struct jw w;
		jw_begin(&w, out);
		jw_array(&w, "threads");
		for (i = 0; i < n; i++) {
			const struct thread_row *t = &rows[i];
			uint64_t wall = t->cpu_ns + t->off_ns;
			jw_object(&w, NULL);
			jw_u64(&w, "pid", t->pid);
			jw_u64(&w, "tid", t->tid);
			jw_str(&w, "name", profile_comm(p, t->pid, t->tid, t->last_time));
			jw_u64(&w, "samples", t->samples);
			jw_double(&w, "pct", kept ? 100.0 * t->samples / kept : 0.0, 2);
			jw_double(&w, "cpu_ms", t->cpu_ns / 1e6, 1);
			jw_double(&w, "off_cpu_ms", t->off_ns / 1e6, 1);
			jw_double(&w, "wall_ms", wall / 1e6, 1);
			jw_double(&w, "on_cpu_pct", wall ? 100.0 * t->cpu_ns / wall : 0.0, 2);
			jw_object(&w, "off_cpu");
			for (r = 0; r < OFFCPU_NREASONS; r++)
				jw_double(&w, view_offcpu_reason((enum offcpu_reason)r), t->reason_ns[r] / 1e6, 1);
			jw_object_end(&w);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
		return;
	}
	if (!n) {
		fprintf(out, "no samples or off-CPU time%s\n",
			p->nsamples || p->noffcpu ? " match the filter" : " in this recording");
		return;
	}
	fprintf(out, "%8s %8s  %-16s %8s %10s %10s %10s %7s", "TID", "PID", "NAME", "SAMPLES",
		"CPU_MS", "OFF_MS", "WALL_MS", "ONCPU%");
	for (r = 1; r <= OFFCPU_NREASONS; r++) {
		char h[16];
		size_t k;
		snprintf(h, sizeof(h), "%s", view_offcpu_reason((enum offcpu_reason)(r % OFFCPU_NREASONS)));
		for (k = 0; h[k]; k++)
			h[k] = (char)(h[k] >= 'a' && h[k] <= 'z' ? h[k] - 32 : h[k]);
		fprintf(out, " %9s", h);
	}
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		const struct thread_row *t = &rows[i];
		uint64_t wall = t->cpu_ns + t->off_ns;
		fprintf(out, "%8u %8u  %-16s %8" PRIu64 " %10.1f %10.1f %10.1f %6.2f%%", t->tid, t->pid,
			profile_comm(p, t->pid, t->tid, t->last_time), t->samples, t->cpu_ns / 1e6,
			t->off_ns / 1e6, wall / 1e6, wall ? 100.0 * t->cpu_ns / wall : 0.0);
		/* reasons in bucket order, "other" last */
		for (r = 1; r <= OFFCPU_NREASONS; r++)
			fprintf(out, " %9.1f", t->reason_ns[r % OFFCPU_NREASONS] / 1e6);
		fputc('\n', out);
	}
}

void view_threads(const struct profile *p, const struct view_filter *f, bool json, FILE *out)
{
	struct hmap index;
	struct thread_row *rows = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t kept = 0;
	const char *oc = profile_meta(p, "off_cpu");
	bool offcpu = p->noffcpu || (oc && !strcmp(oc, "1"));

	hmap_init(&index);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		size_t at;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		at = row_at(&index, &rows, &n, &cap, s->pid, s->tid);
		rows[at].samples++;
		rows[at].weight += s->weight;
		rows[at].cpu_ns += view_sample_ns(p, s);
		if (s->time > rows[at].last_time)
			rows[at].last_time = s->time;
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[i];
		size_t at;
		if (!view_keep_offcpu(p, f, o))
			continue;
		at = row_at(&index, &rows, &n, &cap, o->pid, o->tid);
		rows[at].off_ns += o->duration;
		rows[at].reason_ns[o->reason < OFFCPU_NREASONS ? o->reason : 0] += o->duration;
		if (o->start > rows[at].last_time)
			rows[at].last_time = o->start;
	}
	hmap_release(&index);
	if (offcpu) {
		print_offcpu(p, rows, n, kept, json, out);
		free(rows);
		return;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_thread);
	if (json) {
		struct jw w;
		jw_begin(&w, out);
		jw_array(&w, "threads");
		for (i = 0; i < n; i++) {
			jw_object(&w, NULL);
			jw_u64(&w, "pid", rows[i].pid);
			jw_u64(&w, "tid", rows[i].tid);
			jw_str(&w, "name", profile_comm(p, rows[i].pid, rows[i].tid, rows[i].last_time));
			jw_u64(&w, "samples", rows[i].samples);
			jw_double(&w, "cpu_ms", view_weight_ms(p, rows[i].weight), 1);
			jw_double(&w, "pct", kept ? 100.0 * rows[i].samples / kept : 0.0, 2);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
	} else if (!n) {
		view_no_samples(p, out);
	} else {
		fprintf(out, "%8s %8s  %-16s %8s %7s %10s\n", "TID", "PID", "NAME", "SAMPLES", "PCT", "CPU_MS");
		for (i = 0; i < n; i++)
			fprintf(out, "%8u %8u  %-16s %8" PRIu64 " %6.2f%% %10.1f\n", rows[i].tid, rows[i].pid,
				profile_comm(p, rows[i].pid, rows[i].tid, rows[i].last_time), rows[i].samples,
				100.0 * rows[i].samples / kept, view_weight_ms(p, rows[i].weight));
	}
	free(rows);
}
