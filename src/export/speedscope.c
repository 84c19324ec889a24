/* speedscope.c - speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per thread, busiest first, frames shared by all of them.
 * A frame is a function: "file" is its source file where DWARF gave one
 * (else its module), "line" is set when the profile has one function per
 * source line (--lines). Inlined functions are frames of their own.
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

struct thread_run {
	size_t first, n;   /* range in the ordered sample indices */
};

static int cmp_run(const void *a, const void *b)
{
	const struct thread_run *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->first < y->first ? -1 : 1;
}

int export_speedscope(const struct profile *p, const struct view_filter *f, FILE *out, struct err *e)
{
	const char *clock = profile_meta(p, "event_is_clock");
	bool is_clock = clock && !strcmp(clock, "1");
	size_t n, i, j, k, nruns = 0, runcap = 0;
	size_t *idx = export_thread_order(p, f, &n);
	struct thread_run *runs = NULL;
	struct prof_frame *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	const char **file_of = xcalloc(p->nfuncs + 2, sizeof(*file_of)); /* func -> a source file */
	uint32_t *frame_of = xcalloc(p->nfuncs + 2, sizeof(*frame_of)); /* func -> index + 1 */
	uint32_t *order = xmalloc((p->nfuncs + 2) * sizeof(*order));
	uint32_t nframes = 0;
	char exporter[64];
	struct jw w;

	for (i = 0; i < n; i = j) {
		const struct rec_sample *s = &p->samples[idx[i]];
		for (j = i; j < n && p->samples[idx[j]].tid == s->tid && p->samples[idx[j]].pid == s->pid; j++) {
			size_t nf = profile_stack_frames(p, p->samples[idx[j]].stack, frames, MAX_DEPTH);
			for (k = 0; k < nf; k++) {
				uint32_t fn = frames[k].func <= p->nfuncs ? frames[k].func : 0;
				if (!file_of[fn] && frames[k].file)
					file_of[fn] = frames[k].file;
				if (!frame_of[fn]) {
					order[nframes] = fn;
					frame_of[fn] = ++nframes;
				}
			}
		}
		GROW(runs, runcap, nruns + 1);
		runs[nruns++] = (struct thread_run){ i, j - i };
	}
	if (nruns)
		qsort(runs, nruns, sizeof(*runs), cmp_run);

	/* speedscope's format: no json_version (its readers know the
	 * schema), the writer for commas and escapes */
	jw_init_value(&w, out);
	jw_object(&w, NULL);
	jw_str(&w, "$schema", "https://www.speedscope.app/file-format-schema.json");
	jw_str(&w, "name", p->path ? path_base(p->path) : "stax");
	snprintf(exporter, sizeof(exporter), "stax %s", stax_version);
	jw_str(&w, "exporter", exporter);
	jw_u64(&w, "activeProfileIndex", 0);
	jw_object(&w, "shared");
	jw_array(&w, "frames");
	for (i = 0; i < nframes; i++) {
		const struct prof_func *fn = profile_func(p, order[i]);
		jw_object(&w, NULL);
		jw_str(&w, "name", fn ? fn->name : "[unknown]");
		if (fn) {
			jw_str(&w, "file", fn->file ? fn->file : file_of[order[i]] ? file_of[order[i]] : fn->module);
			if (fn->file && fn->line)
				jw_u64(&w, "line", fn->line);
		}
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	jw_array(&w, "profiles");
	for (i = 0; i < nruns; i++) {
		const struct thread_run *r = &runs[i];
		const struct rec_sample *s0 = &p->samples[idx[r->first]];
		const struct rec_sample *sl = &p->samples[idx[r->first + r->n - 1]];
		uint64_t start = is_clock ? s0->time - p->first_time : 0, end, sum = 0;
		char name[300];
		snprintf(name, sizeof(name), "%s (pid %u, tid %u)", profile_comm(p, s0->pid, s0->tid, s0->time),
			 s0->pid, s0->tid);
		jw_object(&w, NULL);
		jw_str(&w, "type", "sampled");
		jw_str(&w, "name", name);
		jw_str(&w, "unit", is_clock ? "nanoseconds" : "none");
		jw_array(&w, "samples");
		for (j = 0; j < r->n; j++) {
			const struct rec_sample *s = &p->samples[idx[r->first + j]];
			size_t nf = profile_stack_frames(p, s->stack, frames, MAX_DEPTH);
			jw_array(&w, NULL);
			for (k = nf; k-- > 0;) /* root first */
				jw_u64(&w, NULL, frame_of[frames[k].func <= p->nfuncs ? frames[k].func : 0] - 1);
			jw_array_end(&w);
		}
		jw_array_end(&w);
		jw_array(&w, "weights");
		for (j = 0; j < r->n; j++) {
			uint64_t wt = export_weight(p, &p->samples[idx[r->first + j]]);
			sum += wt;
			jw_u64(&w, NULL, wt);
		}
		jw_array_end(&w);
		end = is_clock ? sl->time + sl->weight - p->first_time : sum;
		if (end < start + sum && !is_clock)
			end = start + sum;
		jw_u64(&w, "startValue", start);
		jw_u64(&w, "endValue", end);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_object_end(&w);
	fputc('\n', out);
	free(idx);
	free(runs);
	free(frames);
	free(frame_of);
	free(file_of);
	free(order);
	if (ferror(out))
		return err_set(e, errno ? -errno : -EIO, "speedscope: cannot write the profile: %s", strerror(errno));
	return 0;
}
