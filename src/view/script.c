/* script.c - every sample with its frames, like perf script. */
#include "view/view.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>

static void script_json(const struct profile *p, const struct view_filter *f, FILE *out)
{
	struct jw w;
	size_t i;

	jw_begin(&w, out);
	jw_array(&w, "samples");
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		if (!view_keep(p, f, s))
			continue;
		jw_object(&w, NULL);
		jw_str(&w, "comm", profile_comm(p, s->pid, s->tid, s->time));
		jw_u64(&w, "pid", s->pid);
		jw_u64(&w, "tid", s->tid);
		jw_u64(&w, "cpu", s->cpu);
		/* time: seconds with microseconds, as the text says it (exact
		 * as a double: 2^53 us is 285 years of uptime); time_ns: the
		 * nanoseconds exactly, a string (as a number they pass 2^53,
		 * which JSON parsers round, after 104 days of uptime) */
		jw_raw(&w, "time", "%" PRIu64 ".%06" PRIu64, s->time / 1000000000, (s->time / 1000) % 1000000);
		jw_raw(&w, "time_ns", "\"%" PRIu64 "\"", s->time);
		jw_u64(&w, "period", s->weight);
		jw_array(&w, "frames");
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			jw_object(&w, NULL);
			jw_addr(&w, "addr", nd->addr);
			jw_str(&w, "name", fn ? fn->name : "[unknown]");
			jw_str(&w, "module", fn ? fn->module : "[unknown]");
			if (profile_func_is_python(fn))
				jw_bool(&w, "python", true);
			jw_bool(&w, "kernel", fn && fn->kernel);
			jw_bool(&w, "inlined", (nd->flags & NODE_F_INLINE) != 0);
			if (nd->file) {
				jw_str(&w, "file", nd->file);
				if (nd->line) /* 0: DWARF says the code has no line */
					jw_u64(&w, "line", nd->line);
			}
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_end(&w);
}

void view_script(const struct profile *p, const struct view_filter *f, bool json, FILE *out)
{
	const char *event = profile_meta(p, "event");
	size_t i;

	if (json) {
		script_json(p, f, out);
		return;
	}
	if (!event)
		event = "cpu-clock";
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		if (!view_keep(p, f, s))
			continue;
		fprintf(out, "%s %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n",
			profile_comm(p, s->pid, s->tid, s->time), s->pid, s->tid, s->cpu, s->time / 1000000000,
			(s->time / 1000) % 1000000, s->weight, event);
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			fprintf(out, "\t%16" PRIx64 " %s (%s)", nd->addr, fn ? fn->name : "[unknown]",
				fn ? fn->module : "[unknown]");
			if (nd->file && nd->line)
				fprintf(out, " %s:%u", nd->file, nd->line);
			else if (nd->file) /* line 0: the file alone, as addr2line */
				fprintf(out, " %s", nd->file);
			fputs((nd->flags & NODE_F_INLINE) ? " (inlined)\n" : "\n", out);
		}
		fputc('\n', out);
	}
}
