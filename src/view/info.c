/* info.c - what was recorded and how good its stacks are. */
#include "view/view.h"
#include "unwind/unwind.h"
#include "lib/json.h"
#include "lib/perm.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct module_row {
	const char *module;
	uint64_t frames, unknown;
	uint64_t ends;                 /* truncated or broken stacks ending here */
	uint64_t stops[UNWIND_NSTOPS]; /* of those, by why */
};

static int cmp_module(const void *a, const void *b)
{
	const struct module_row *x = a, *y = b;
	if (x->unknown != y->unknown)
		return x->unknown > y->unknown ? -1 : 1;
	if (x->frames != y->frames)
		return x->frames > y->frames ? -1 : 1;
	return strcmp(x->module, y->module);
}

static struct module_row *module_row(struct module_row **rows, size_t *n, size_t *cap, const char *m)
{
	size_t i;
	for (i = 0; i < *n; i++)
		if (!strcmp((*rows)[i].module, m))
			return &(*rows)[i];
	GROW(*rows, *cap, *n + 1);
	memset(&(*rows)[*n], 0, sizeof(**rows));
	(*rows)[*n].module = m;
	return &(*rows)[(*n)++];
}

/* Where a module's symbols and lines came from ("symtab, lines from
 * binary"), as the recorder (META symbols:MODULE) or live symbolization
 * noted it. */
static const char *module_source(const struct profile *p, const char *module)
{
	char key[300];
	const char *v;
	snprintf(key, sizeof(key), "symbols:%s", module);
	v = profile_meta(p, key);
	if (v)
		return v;
	if (!strcmp(module, PYFRAME_MODULE))
		return "the interpreter's memory";
	if (module[0] == '[')
		return "kallsyms";
	if (!strncmp(module, "perf-", 5) || !strncmp(module, "jit-", 4))
		return "jit";
	return "-";
}

static const char *meta_or(const struct profile *p, const char *key, const char *def)
{
	const char *v = profile_meta(p, key);
	return v && *v ? v : def;
}

/* "off-cpu:" line: intervals, time by reason, stacks complete: of the
 * intervals that are not preemptions (a preempted thread is switched out
 * without a stack, and how often that happens depends on the load). */
static void print_offcpu_line(const struct profile *p, const struct view_filter *f, FILE *out)
{
	uint64_t n = 0, ns = 0, complete = 0, stacked = 0, reason[OFFCPU_NREASONS] = { 0 };
	size_t i;
	int r;
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[i];
		if (!view_keep_offcpu(p, f, o))
			continue;
		n++;
		ns += o->duration;
		reason[o->reason < OFFCPU_NREASONS ? o->reason : 0] += o->duration;
		if (o->reason != OFFCPU_PREEMPT) {
			stacked++;
			complete += OFFCPU_QUALITY(o->flags) == UNWIND_Q_COMPLETE;
		}
	}
	if (!n)
		return;
	fprintf(out, "off-cpu:     %" PRIu64 " intervals, %.1f ms (", n, ns / 1e6);
	for (r = 1; r <= OFFCPU_NREASONS; r++)
		fprintf(out, "%s%s %.1f", r > 1 ? ", " : "", view_offcpu_reason((enum offcpu_reason)(r % OFFCPU_NREASONS)),
			reason[r % OFFCPU_NREASONS] / 1e6);
	fprintf(out, " ms); stacks complete %.1f%%\n", stacked ? 100.0 * complete / stacked : 0.0);
}

/* The recorder's ring size, and what it read from /proc for processes
 * whose records were lost (META ring_bytes, recovered_*, unrecovered_*;
 * recordings without them print nothing). */
static void print_recovery(const struct profile *p, bool json, FILE *out)
{
	uint64_t ring = profile_meta_u64(p, "ring_bytes");
	uint64_t procs = profile_meta_u64(p, "recovered_processes");
	uint64_t threads = profile_meta_u64(p, "recovered_threads");
	uint64_t gone = profile_meta_u64(p, "unrecovered_processes");
	uint64_t gone_samples = profile_meta_u64(p, "unrecovered_samples");
	char size[32];

	if (json) {
		if (ring)
			fprintf(out, ",\"ring_bytes\":%" PRIu64, ring);
		if (profile_meta(p, "recovered_processes"))
			fprintf(out, ",\"recovered\":{\"processes\":%" PRIu64 ",\"threads\":%" PRIu64
				",\"unrecovered_processes\":%" PRIu64 ",\"unrecovered_samples\":%" PRIu64 "}",
				procs, threads, gone, gone_samples);
		return;
	}
	if (ring) {
		format_size_exact(size, sizeof(size), ring);
		fprintf(out, "rings:       %s per cpu\n", size);
	}
	if (procs || threads || gone)
		fprintf(out, "recovered:   from /proc, for records the kernel lost: names and mappings of %"
			PRIu64 " process%s, names of %" PRIu64 " thread%s; %" PRIu64 " process%s gone"
			" first (%" PRIu64 " sample%s without a name)\n", procs, procs == 1 ? "" : "es",
			threads, threads == 1 ? "" : "s", gone, gone == 1 ? "" : "es", gone_samples,
			gone_samples == 1 ? "" : "s");
}

static int cmp_ends(const void *a, const void *b)
{
	const struct module_row *x = *(const struct module_row *const *)a;
	const struct module_row *y = *(const struct module_row *const *)b;
	if (x->ends != y->ends)
		return x->ends > y->ends ? -1 : 1;
	return strcmp(x->module, y->module);
}

/* The main reason stacks ending in m stopped. */
static const char *main_stop(const struct module_row *m)
{
	size_t i, top = 0;
	for (i = 1; i < UNWIND_NSTOPS; i++)
		if (m->stops[i] > m->stops[top])
			top = i;
	return top ? unwind_stop_name((enum unwind_stop)top) : "not known";
}

#define INFO_STOPS 5

/* The modules where most truncated or broken stacks end, most first:
 * up to INFO_STOPS of them into out; returns how many. */
static size_t stop_modules(struct module_row *mods, size_t nmods, const struct module_row **out)
{
	const struct module_row **v = xcalloc(nmods ? nmods : 1, sizeof(*v));
	size_t i, n = 0;
	for (i = 0; i < nmods; i++)
		if (mods[i].ends)
			v[n++] = &mods[i];
	qsort(v, n, sizeof(*v), cmp_ends);
	n = MIN(n, (size_t)INFO_STOPS);
	memcpy(out, v, n * sizeof(*v));
	free(v);
	return n;
}

void view_info(const struct profile *p, const struct view_filter *f, bool json, FILE *out)
{
	const struct module_row *stops[INFO_STOPS];
	size_t nstops;
	uint64_t kept = 0, weight = 0, rooted = 0, quality[4] = { 0 }, method[3] = { 0 };
	uint64_t trimmed = 0; /* SAMPLE_Q_TRIMMED: the recorder fell behind */
	uint64_t jit[4] = { 0 }; /* samples through: any JIT rule, trampoline, fp, jitdump CFI */
	uint64_t nread = 0;      /* samples with frames read from the live process */
	/* the recorder's deep-stack counts (META): read on, stale, cut
	 * within and beyond the largest copy */
	static const char *const deep_keys[5] = { "deep_stacks_read", "deep_stacks_stale",
						  "copy_cut_within_max", "copy_cut_beyond_max",
						  "deep_stacks_gone" };
	uint64_t deep[5], ndeep = 0;
	uint64_t npy = 0, npyfail = 0; /* SAMPLE_M_PYTHON, SAMPLE_M_PYTHON_FAILED */
	uint64_t start = profile_meta_u64(p, "start_ns");
	uint64_t end = profile_meta_u64(p, "end_ns");
	uint64_t freq = profile_meta_u64(p, "freq");
	uint64_t cpu_ns = profile_meta_u64(p, "cpu_ns");
	bool clock = !strcmp(meta_or(p, "event_is_clock", "0"), "1");
	struct module_row *mods = NULL;
	size_t nmods = 0, modcap = 0, i;
	double secs, eff = 0;
	struct hmap pids;      /* every process with a sample kept */
	struct hmap cpus;      /* every cpu with a sample kept */
	size_t npids;
	bool sys = !strcmp(meta_or(p, "system_wide", "0"), "1");
	uint64_t ncpus = profile_meta_u64(p, "cpus");
	const char *per = clock ? " (samples per second of CPU time)" : "";

	for (i = 0; i < 5; i++)
		ndeep += deep[i] = profile_meta_u64(p, deep_keys[i]);
	hmap_init(&pids);
	hmap_init(&cpus);

	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		size_t outer = SIZE_MAX;   /* index: mods may move as it grows */
		bool root = false, cut;
		unsigned q;
		size_t k;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		weight += s->weight;
		trimmed += (s->quality & SAMPLE_Q_TRIMMED) != 0;
		if (SAMPLE_M_METHOD(s->method) < 3)
			method[SAMPLE_M_METHOD(s->method)]++;
		nread += (s->method & SAMPLE_M_READ) != 0;
		npy += (s->method & SAMPLE_M_PYTHON) != 0;
		npyfail += (s->method & SAMPLE_M_PYTHON_FAILED) != 0;
		if (SAMPLE_M_JIT(s->method)) {
			jit[0]++;
			for (k = 0; k < 3; k++)
				jit[k + 1] += (s->method >> (SAMPLE_M_JIT_SHIFT + k)) & 1;
		}
		hmap_put(&pids, s->pid, 1);
		hmap_put(&cpus, s->cpu, 1);
		cut = false;
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			struct module_row *m;
			cut |= (nd->flags & NODE_F_LOST) != 0;
			if (!fn)
				continue;
			if (fn->known && unwind_is_root_name(fn->name))
				root = true;
			m = module_row(&mods, &nmods, &modcap, fn->module);
			m->frames++;
			if (!fn->known)
				m->unknown++;
			if (!fn->kernel)
				outer = (size_t)(m - mods);
		}
		rooted += root;
		/* One rule for every quality line: a stack that reaches main or
		 * a thread start function is complete, whatever the unwinder
		 * said of the frames beyond it; truncated and broken are the
		 * stacks that stop short of one. A stack cut where a damaged
		 * chunk's frames are missing (it ends in "[damaged]") is
		 * truncated. */
		q = root ? UNWIND_Q_COMPLETE : cut ? UNWIND_Q_TRUNCATED : SAMPLE_Q(s->quality);
		quality[q]++;
		/* where stacks stop, for the unwinder's reasons (not the damage) */
		if (outer != SIZE_MAX && !cut && (q == UNWIND_Q_TRUNCATED || q == UNWIND_Q_BROKEN)) {
			unsigned stop = SAMPLE_Q_STOP(s->quality);
			mods[outer].ends++;
			mods[outer].stops[stop < UNWIND_NSTOPS ? stop : 0]++;
		}
	}
	npids = pids.len;
	hmap_release(&pids);
	if (!ncpus) /* before stax stored it: the cpus that have samples */
		ncpus = cpus.len;
	hmap_release(&cpus);
	if (!end)
		end = p->last_time;
	if (!start)
		start = p->first_time;
	secs = end > start ? (end - start) / 1e9 : 0;
	if (clock && sys && ncpus && secs > 0 && f->pid < 0 && f->tid < 0 && !f->comm) {
		/* -a (with or without CMD): every recorded cpu is sampled all
		 * the time, idle ones too (the idle task's samples), so per
		 * second of the recording per cpu, as perf's -F means it with
		 * -a; CMD's own CPU time (cpu_ns) is not what was sampled */
		eff = kept / (secs * (double)ncpus);
		per = " (samples per second per recorded CPU)";
	} else if (clock && cpu_ns && f->pid < 0 && f->tid < 0 && !f->comm)
		/* samples per second of the CPU time the targets used, measured
		 * apart from the samples: losses and throttling show */
		eff = kept / (cpu_ns / 1e9);
	else if (clock && weight)
		eff = kept / (weight / 1e9);      /* what the samples' periods say */
	else if (secs > 0)
		eff = kept / secs;
	if (nmods)
		qsort(mods, nmods, sizeof(*mods), cmp_module);
	nstops = stop_modules(mods, nmods, stops);

	if (json) {
		fputs(JSON_OPEN "\"file\":", out);
		json_str(out, p->path);
		fputs(",\"command\":", out);
		json_str(out, meta_or(p, "command", "?"));
		fputs(",\"event\":", out);
		json_str(out, meta_or(p, "event", "?"));
		/* null: written before stax stored its version, or a perf.data */
		fputs(",\"stax_version\":", out);
		if (profile_meta(p, "stax_version"))
			json_str(out, profile_meta(p, "stax_version"));
		else
			fputs("null", out);
		fprintf(out, ",\"state\":\"%s\",\"duration_s\":%.3f,\"requested_hz\":%" PRIu64
			",\"effective_hz\":%.1f,\"samples\":%" PRIu64 ",\"lost\":%" PRIu64
			",\"throttled\":%" PRIu64 ",\"processes\":%zu,\"reached_root\":%" PRIu64,
			!p->partial ? "finished" : p->live ? "recording" : "truncated", secs, freq, eff, kept,
			p->lost_records + p->lost_samples, p->throttles, npids, rooted);
		fprintf(out, ",\"lost_by_cause\":{\"ring\":%" PRIu64 ",\"kernel_samples\":%" PRIu64
			",\"queue\":%" PRIu64 "},\"trimmed\":%" PRIu64, p->lost_records,
			p->lost_samples - p->lost_queue, p->lost_queue, trimmed);
		print_recovery(p, true, out);
		if (p->noffcpu) {
			uint64_t n = 0, ns = 0, complete = 0;
			size_t j;
			for (j = 0; j < p->noffcpu; j++)
				if (view_keep_offcpu(p, f, &p->offcpu[j])) {
					n++;
					ns += p->offcpu[j].duration;
					complete += OFFCPU_QUALITY(p->offcpu[j].flags) == UNWIND_Q_COMPLETE;
				}
			fprintf(out, ",\"off_cpu\":{\"intervals\":%" PRIu64 ",\"ms\":%.1f,\"complete\":%" PRIu64 "}",
				n, ns / 1e6, complete);
		}
		fprintf(out, ",\"damaged_chunks\":%" PRIu64 ",\"warnings\":[", p->damage.chunks);
		{
			struct prof_warning w[PROF_WARNINGS_MAX];
			size_t nw = profile_warnings(p, w), j;
			for (j = 0; j < nw; j++) {
				fputs(j ? "," : "", out);
				json_str(out, w[j].text);
			}
		}
		fputs("],\"unwind\":", out);
		json_str(out, meta_or(p, "unwind", "fp"));
		fprintf(out, ",\"quality\":{\"unverified\":%" PRIu64 ",\"complete\":%" PRIu64
			",\"truncated\":%" PRIu64 ",\"broken\":%" PRIu64 "}", quality[0], quality[1],
			quality[2], quality[3]);
		fprintf(out, ",\"method\":{\"fp\":%" PRIu64 ",\"dwarf\":%" PRIu64 ",\"spliced\":%" PRIu64 "}",
			method[0], method[1], method[2]);
		fprintf(out, ",\"jit\":{\"samples\":%" PRIu64 ",\"trampoline\":%" PRIu64 ",\"fp\":%" PRIu64
			",\"jitdump_cfi\":%" PRIu64 "}", jit[0], jit[1], jit[2], jit[3]);
		fprintf(out, ",\"read_from_process\":%" PRIu64, nread);
		fprintf(out, ",\"deep\":{\"read\":%" PRIu64 ",\"stale\":%" PRIu64 ",\"exited\":%"
			PRIu64 ",\"cut_within_max\":%" PRIu64 ",\"cut_beyond_max\":%" PRIu64 "}",
			deep[0], deep[1], deep[4], deep[2], deep[3]);
		fprintf(out, ",\"python\":{\"read\":%s,\"expanded\":%" PRIu64 ",\"failed\":%" PRIu64
			",\"stale\":%s,\"invalid\":%s,\"unreadable\":%s,\"no_access\":",
			!strcmp(meta_or(p, "python_frames", "0"), "1") ? "true" : "false", npy, npyfail,
			meta_or(p, "python_stale", "0"), meta_or(p, "python_invalid", "0"),
			meta_or(p, "python_unreadable", "0"));
		if (profile_meta(p, "python_no_access"))
			json_str(out, profile_meta(p, "python_no_access"));
		else
			fputs("null", out);
		fputc('}', out);
		fputs(",\"stops\":[", out);
		for (i = 0; i < nstops; i++) {
			fprintf(out, "%s{\"module\":", i ? "," : "");
			json_str(out, stops[i]->module);
			fprintf(out, ",\"samples\":%" PRIu64 ",\"why\":", stops[i]->ends);
			json_str(out, main_stop(stops[i]));
			fputc('}', out);
		}
		fputs("]", out);
		fputs(",\"modules\":[", out);
		for (i = 0; i < nmods; i++) {
			fprintf(out, "%s{\"module\":", i ? "," : "");
			json_str(out, mods[i].module);
			fprintf(out, ",\"frames\":%" PRIu64 ",\"unsymbolized\":%" PRIu64, mods[i].frames,
				mods[i].unknown);
			fputs(",\"symbols\":", out);
			json_str(out, module_source(p, mods[i].module));
			fputc('}', out);
		}
		fputs("]}\n", out);
		free(mods);
		return;
	}
	fprintf(out, "file:        %s (%s)\n", p->path,
		!p->partial ? "finished" :
		p->live ? "still being recorded; read up to its last complete chunk" :
			  "truncated: no end chunk, and no recorder holds it; read up to its last complete chunk");
	if (p->damage.chunks) {
		char size[32];
		format_size(size, sizeof(size), p->damage.bytes);
		fprintf(out, "damaged:     %" PRIu64 " chunk%s (%s), skipped; the first at offset %" PRIu64 ": %s\n",
			p->damage.chunks, p->damage.chunks == 1 ? "" : "s", size, p->damage.first, p->damage.why);
	}
	fprintf(out, "written by:  %s%s\n", profile_meta(p, "stax_version") ? "stax " : "",
		meta_or(p, "stax_version", "not stored (an older stax, or a perf.data)"));
	fprintf(out, "command:     %s\n", meta_or(p, "command", "?"));
	if (profile_meta(p, "exit_status"))
		fprintf(out, "exit status: %s\n", profile_meta(p, "exit_status"));
	if (!freq && profile_meta(p, "period"))
		fprintf(out, "event:       %s, every %s%s, effective %.1f Hz%s\n",
			meta_or(p, "event", "?"), profile_meta(p, "period"), clock ? " ns" : " events", eff, per);
	else
		fprintf(out, "event:       %s, requested %" PRIu64 " Hz, effective %.1f Hz%s\n",
			meta_or(p, "event", "?"), freq, eff, per);
	fprintf(out, "duration:    %.3f s\n", secs);
	fprintf(out, "samples:     %" PRIu64 " in %zu process%s; lost %" PRIu64 "; throttled %" PRIu64 " time%s\n",
		kept, npids, npids == 1 ? "" : "es", p->lost_records + p->lost_samples, p->throttles,
		p->throttles == 1 ? "" : "s");
	if (p->lost_records + p->lost_samples)
		fprintf(out, "lost:        %" PRIu64 " in the kernel's rings (full), %" PRIu64 " samples"
			" dropped by the kernel, %" PRIu64 " samples dropped by stax (its queue was full)\n",
			p->lost_records, p->lost_samples - p->lost_queue, p->lost_queue);
	if (trimmed)
		fprintf(out, "degraded:    %" PRIu64 " sample%s (%.1f%%) kept only the top of %s stack copy:"
			" the recorder fell behind, and their user frames beyond it come from the frame"
			" pointers\n", trimmed, trimmed == 1 ? "" : "s", 100.0 * trimmed / kept,
			trimmed == 1 ? "its" : "their");
	print_recovery(p, false, out);
	print_offcpu_line(p, f, out);
	if (!strcmp(meta_or(p, "kernel_frames", "0"), "1")) {
		fputs("kernel:      kernel frames recorded\n", out);
	} else if (!profile_meta(p, "kernel_frames")) {
		fputs("kernel:      not known (the recording does not say)\n", out);
	} else {
		struct perm_facts pf;
		char why[512];
		perm_parse(&pf, meta_or(p, "perm", ""));
		fprintf(out, "kernel:      user-space frames only: %s\n", perm_why(PERM_KERNEL, &pf, 0, why, sizeof(why)));
	}
	fprintf(out, "unwinding:   %s\n", meta_or(p, "unwind", "fp"));
	fprintf(out, "stacks:      %" PRIu64 " of %" PRIu64 " (%.1f%%) reach main or a thread start function\n",
		rooted, kept, kept ? 100.0 * rooted / kept : 0.0);
	fprintf(out, "  verdict:   complete %" PRIu64 ", truncated %" PRIu64 ", broken %" PRIu64
		", unverified frame-pointer chains %" PRIu64 "\n", quality[1], quality[2], quality[3], quality[0]);
	fprintf(out, "  method:    fp %" PRIu64 ", dwarf %" PRIu64 ", spliced %" PRIu64 "\n",
		method[0], method[1], method[2]);
	if (nread)
		fprintf(out, "  read:      %" PRIu64 " with outer frames read from the live process beyond"
			" the stack copy\n", nread);
	if (ndeep)
		fprintf(out, "  deep:      of the stacks deeper than the copy, %" PRIu64 " read on from the"
			" process, %" PRIu64 " not (the thread had returned from where the copy ended), %"
			PRIu64 " not (the process had exited before the recorder unwound them); of those"
			" cut where the copy ended, %" PRIu64 " within 65528 bytes of their thread's stack top, %"
			PRIu64 " beyond, the rest unknown\n", deep[0], deep[1], deep[4], deep[2], deep[3]);
	if (npy || npyfail) {
		fprintf(out, "  python:    %" PRIu64 " (%.1f%%) with Python frames read from the interpreter",
			npy, 100.0 * npy / kept);
		if (npyfail) {
			/* why, from the recorder's counts (of every process) */
			uint64_t stale = profile_meta_u64(p, "python_stale");
			uint64_t invalid = profile_meta_u64(p, "python_invalid");
			uint64_t unread = profile_meta_u64(p, "python_unreadable");
			fprintf(out, "; %" PRIu64 " (%.1f%%) with _PyEval_EvalFrameDefault left unexpanded",
				npyfail, 100.0 * npyfail / kept);
			if (stale + invalid + unread)
				fprintf(out, " (of all recorded: %" PRIu64 " the interpreter had moved on when read,"
					" %" PRIu64 " whose chain did not validate, %" PRIu64 " unreadable)",
					stale, invalid, unread);
		}
		fputc('\n', out);
		if (profile_meta(p, "python_no_access"))
			fprintf(out, "  python:    not read: %s\n", profile_meta(p, "python_no_access"));
	} else if (profile_meta(p, "python_no_access")) {
		fprintf(out, "  python:    not read: %s\n", profile_meta(p, "python_no_access"));
	}
	if (jit[0])
		fprintf(out, "  jit:       %" PRIu64 " through code without CFI: CPython trampoline %" PRIu64
			", frame pointer %" PRIu64 ", jitdump CFI %" PRIu64 "\n", jit[0], jit[1], jit[2], jit[3]);
	for (i = 0; i < nstops; i++)
		fprintf(out, "%s%s %" PRIu64 " (%s)%s", i ? ", " : "  stop in:   ", stops[i]->module,
			stops[i]->ends, main_stop(stops[i]), i + 1 == nstops ? "\n" : "");
	fprintf(out, "modules:     %-28s %10s %12s  %s\n", "MODULE", "FRAMES", "UNSYMBOLIZED", "SYMBOLS FROM");
	for (i = 0; i < nmods; i++)
		fprintf(out, "             %-28s %10" PRIu64 " %11.1f%%  %s\n", mods[i].module, mods[i].frames,
			mods[i].frames ? 100.0 * mods[i].unknown / mods[i].frames : 0.0,
			module_source(p, mods[i].module));
	for (i = 0; i < nmods; i++)
		if (mods[i].unknown == mods[i].frames && mods[i].frames)
			fprintf(out, "without symbols: %s\n", mods[i].module);
	free(mods);
}
