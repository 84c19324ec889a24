/* script.c - every sample with its frames, like perf script. */
#include "view/view.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>

void view_script(const struct profile *p, const struct view_filter *f, bool json, FILE *out)
{
	const char *event = profile_meta(p, "event");
	size_t i;
	bool first = true;

	if (!event)
		event = "cpu-clock";
	if (json)
		fputs(JSON_OPEN "\"samples\":[", out);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		const char *comm;
		bool ff = true;
		if (!view_keep(p, f, s))
			continue;
		comm = profile_comm(p, s->pid, s->tid, s->time);
		if (json) {
			fprintf(out, "%s{\"comm\":", first ? "" : ",");
			json_str(out, comm);
			/* time: seconds with microseconds, as the text says it
			 * (exact as a double: 2^53 us is 285 years of uptime);
			 * time_ns: the nanoseconds exactly, a string (as a
			 * number they pass 2^53, which JSON parsers round,
			 * after 104 days of uptime) */
			fprintf(out, ",\"pid\":%u,\"tid\":%u,\"cpu\":%u,\"time\":%" PRIu64 ".%06" PRIu64
				",\"time_ns\":\"%" PRIu64 "\",\"period\":%" PRIu64 ",\"frames\":[",
				s->pid, s->tid, s->cpu, s->time / 1000000000, (s->time / 1000) % 1000000, s->time,
				s->weight);
		} else {
			fprintf(out, "%s %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n", comm,
				s->pid, s->tid, s->cpu, s->time / 1000000000, (s->time / 1000) % 1000000,
				s->weight, event);
		}
		first = false;
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			bool inl = (nd->flags & NODE_F_INLINE) != 0;
			if (json) {
				fputs(ff ? "{\"addr\":" : ",{\"addr\":", out);
				json_addr(out, nd->addr);
				fputs(",\"name\":", out);
				json_str(out, fn ? fn->name : "[unknown]");
				fputs(",\"module\":", out);
				json_str(out, fn ? fn->module : "[unknown]");
				if (profile_func_is_python(fn))
					fputs(",\"python\":true", out);
				fprintf(out, ",\"kernel\":%s,\"inlined\":%s", fn && fn->kernel ? "true" : "false",
					inl ? "true" : "false");
				if (nd->file) {
					fputs(",\"file\":", out);
					json_str(out, nd->file);
					if (nd->line) /* 0: DWARF says the code has no line */
						fprintf(out, ",\"line\":%u", nd->line);
				}
				fputc('}', out);
			} else {
				fprintf(out, "\t%16" PRIx64 " %s (%s)", nd->addr, fn ? fn->name : "[unknown]",
					fn ? fn->module : "[unknown]");
				if (nd->file && nd->line)
					fprintf(out, " %s:%u", nd->file, nd->line);
				else if (nd->file) /* line 0: the file alone, as addr2line */
					fprintf(out, " %s", nd->file);
				fputs(inl ? " (inlined)\n" : "\n", out);
			}
			ff = false;
		}
		if (json)
			fputs("]}", out);
		else
			fputc('\n', out);
	}
	if (json)
		fputs("]}\n", out);
}
