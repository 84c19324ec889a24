/* threads.c - samples and CPU time per thread. */
#include "view/view.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>

struct thread_row {
	uint32_t pid, tid;
	uint64_t samples, weight, last_time;
};

static int cmp_thread(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void view_threads(const struct profile *p, const struct view_filter *f, bool json, FILE *out)
{
	struct hmap index;
	struct thread_row *rows = NULL;
	size_t n = 0, cap = 0, i;
	uint64_t kept = 0;

	hmap_init(&index);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		uint64_t key = ((uint64_t)s->pid << 32) | s->tid;
		uint32_t at;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		if (!hmap_get(&index, key, &at)) {
			GROW(rows, cap, n + 1);
			rows[n] = (struct thread_row){ s->pid, s->tid, 0, 0, 0 };
			at = (uint32_t)n++;
			hmap_put(&index, key, at);
		}
		rows[at].samples++;
		rows[at].weight += s->weight;
		if (s->time > rows[at].last_time)
			rows[at].last_time = s->time;
	}
	hmap_release(&index);
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_thread);
	if (json) {
		fputs("{\"threads\":[", out);
		for (i = 0; i < n; i++) {
			fprintf(out, "%s{\"pid\":%u,\"tid\":%u,\"name\":", i ? "," : "", rows[i].pid, rows[i].tid);
			json_str(out, profile_comm(p, rows[i].pid, rows[i].tid, rows[i].last_time));
			fprintf(out, ",\"samples\":%" PRIu64 ",\"cpu_ms\":%.1f,\"pct\":%.2f}", rows[i].samples,
				view_weight_ms(p, rows[i].weight), kept ? 100.0 * rows[i].samples / kept : 0.0);
		}
		fputs("]}\n", out);
	} else if (!n) {
		fprintf(out, "no samples%s\n", p->nsamples ? " match the filter" : " in this recording");
	} else {
		fprintf(out, "%8s %8s  %-16s %8s %7s %10s\n", "TID", "PID", "NAME", "SAMPLES", "PCT", "CPU_MS");
		for (i = 0; i < n; i++)
			fprintf(out, "%8u %8u  %-16s %8" PRIu64 " %6.2f%% %10.1f\n", rows[i].tid, rows[i].pid,
				profile_comm(p, rows[i].pid, rows[i].tid, rows[i].last_time), rows[i].samples,
				100.0 * rows[i].samples / kept, view_weight_ms(p, rows[i].weight));
	}
	free(rows);
}
