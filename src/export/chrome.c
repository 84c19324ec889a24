/* chrome.c - the Chrome trace event format (JSON object form), read by
 * chrome://tracing, Perfetto and speedscope.
 *
 * Per thread, samples are walked in time order and each frame becomes a
 * complete ("X") event that lasts while consecutive samples keep it at
 * the same depth with the same callers: a flame chart over time. A sample
 * stands for its period (its weight for clock events); a gap longer than
 * two periods closes every open frame. Times are microseconds since the
 * first record.
 */
#include "export/export.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/version.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

struct open_frame {
	uint32_t func;
	uint64_t start;
};

static void slice(const struct profile *p, const struct rec_sample *s, const struct open_frame *o,
		  uint64_t end, struct jw *w)
{
	const struct prof_func *fn = profile_func(p, o->func);
	jw_object(w, NULL);
	jw_str(w, "ph", "X");
	jw_str(w, "name", fn ? fn->name : "[unknown]");
	jw_str(w, "cat", fn && fn->kernel ? "kernel" : "user");
	jw_u64(w, "pid", s->pid);
	jw_u64(w, "tid", s->tid);
	jw_double(w, "ts", (o->start - p->first_time) / 1e3, 3);
	jw_double(w, "dur", (end - o->start) / 1e3, 3);
	jw_object_end(w);
}

/* A metadata event naming a thread or process ("thread_name"). */
static void name_event(struct jw *w, const char *what, const struct rec_sample *s, const char *name)
{
	jw_object(w, NULL);
	jw_str(w, "ph", "M");
	jw_str(w, "name", what);
	jw_u64(w, "pid", s->pid);
	jw_u64(w, "tid", s->tid);
	jw_object(w, "args");
	jw_str(w, "name", name);
	jw_object_end(w);
	jw_object_end(w);
}

int export_chrome(const struct profile *p, const struct view_filter *f, FILE *out, struct err *e)
{
	size_t n, i, j;
	size_t *idx = export_thread_order(p, f, &n);
	uint32_t *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	struct open_frame *open = xmalloc(MAX_DEPTH * sizeof(*open));
	uint64_t period = 0;
	char exporter[64];
	struct jw w;

	/* the usual sample period, to tell a pause from the next sample */
	for (i = 0; i < n && !period; i++)
		period = p->samples[idx[i]].weight;
	if (!period || export_weight(p, &p->samples[idx[0]]) == 1) /* n > 0 here */
		period = 1000000; /* not a clock event: assume 1 ms */

	/* Chrome's trace format: no json_version, the writer for commas and
	 * escapes */
	jw_init_value(&w, out);
	jw_object(&w, NULL);
	jw_str(&w, "displayTimeUnit", "ms");
	jw_object(&w, "otherData");
	snprintf(exporter, sizeof(exporter), "stax %s", stax_version);
	jw_str(&w, "exporter", exporter);
	jw_object_end(&w);
	jw_array(&w, "traceEvents");
	for (i = 0; i < n; i = j) {
		const struct rec_sample *s0 = &p->samples[idx[i]];
		const struct rec_sample *prev = NULL;
		size_t nopen = 0, k;
		uint64_t prev_end = 0;

		name_event(&w, "thread_name", s0, profile_comm(p, s0->pid, s0->tid, s0->time));
		if (s0->pid == s0->tid)
			name_event(&w, "process_name", s0, profile_comm(p, s0->pid, s0->tid, s0->time));
		for (j = i; j < n && p->samples[idx[j]].tid == s0->tid && p->samples[idx[j]].pid == s0->pid; j++) {
			const struct rec_sample *s = &p->samples[idx[j]];
			size_t nf = profile_stack_funcs(p, s->stack, frames, MAX_DEPTH), same = 0;
			uint64_t dur = export_weight(p, s) == 1 ? period : s->weight;
			/* frames[] is leaf first; open[] root first */
			if (prev && s->time <= prev_end + 2 * period)
				while (same < nopen && same < nf && open[same].func == frames[nf - 1 - same])
					same++;
			for (k = nopen; k-- > same;)
				slice(p, prev, &open[k], prev_end, &w);
			for (k = same; k < nf; k++)
				open[k] = (struct open_frame){ frames[nf - 1 - k], s->time };
			nopen = nf;
			prev = s;
			prev_end = s->time + dur;
		}
		for (k = nopen; k-- > 0;)
			slice(p, prev, &open[k], prev_end, &w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	fputc('\n', out);
	free(idx);
	free(frames);
	free(open);
	if (ferror(out))
		return err_set(e, errno ? -errno : -EIO, "chrome: cannot write the trace: %s", strerror(errno));
	return 0;
}
