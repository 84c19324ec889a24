/* info.c - what was recorded and how good its stacks are. */
#include "view/view.h"
#include "unwind/unwind.h"
#include "lib/json.h"
#include "lib/perm.h"
#include "lib/util.h"
#include "lib/walltime.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct module_row {
	const char *module;
	uint64_t frames, unknown;
	uint64_t ends;                 /* truncated or broken stacks ending here */
	uint64_t stops[UNWIND_NSTOPS]; /* of those, by why */
};

#define INFO_STOPS 5

/* What info says, computed once from the samples and META records kept
 * by the filter; printed as text (info_text) or JSON (info_json). */
struct info_summary {
	uint64_t kept, weight, rooted;
	uint64_t rooted_late;    /* of rooted: through frames read after the sample */
	uint64_t quality[5], method[3]; /* quality: by SAMPLE_VERDICT() */
	uint64_t trimmed;        /* SAMPLE_Q_TRIMMED: the recorder fell behind */
	uint64_t jit[4];         /* samples through: any JIT rule, trampoline, fp, jitdump CFI */
	uint64_t nread;          /* samples with frames read from the live process */
	/* the recorder's deep-stack counts (META): read on, stale, cut
	 * within and beyond the largest copy, gone */
	uint64_t deep[5], ndeep;
	uint64_t npy, npyfail;   /* SAMPLE_M_PYTHON, SAMPLE_M_PYTHON_FAILED */
	uint64_t freq;
	bool clock;
	double secs, eff;        /* duration, effective rate */
	const char *per;         /* what the effective rate counts */
	size_t npids;
	/* off-CPU intervals kept: count, time, time by reason, complete;
	 * and of those that are not preemptions (which have no stack of
	 * their own), how many and how many complete */
	uint64_t off_n, off_ns, off_reason[OFFCPU_NREASONS], off_complete;
	uint64_t off_stacked, off_stacked_complete;
	struct module_row *mods;  /* most unsymbolized first */
	size_t nmods;
	const struct module_row *stops[INFO_STOPS]; /* where most cut stacks end */
	size_t nstops;
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

/* The recorder's ring size, and what it read from /proc for processes
 * whose records were lost (META ring_bytes, recovered_*, unrecovered_*;
 * recordings without them print nothing). */
static void recovery_text(const struct profile *p, FILE *out)
{
	uint64_t ring = profile_meta_u64(p, "ring_bytes");
	uint64_t procs = profile_meta_u64(p, "recovered_processes");
	uint64_t threads = profile_meta_u64(p, "recovered_threads");
	uint64_t gone = profile_meta_u64(p, "unrecovered_processes");
	uint64_t gone_samples = profile_meta_u64(p, "unrecovered_samples");
	uint64_t released = profile_meta_u64(p, "released_samples");
	char size[32];

	if (ring) {
		format_size_exact(size, sizeof(size), ring);
		fprintf(out, "rings:       %s per cpu\n", size);
	}
	if (released)
		fprintf(out, "exited:      %" PRIu64 " sample%s of tasks the kernel had released when sampled"
			" (the end of an exit; pid -1), named [exited]\n", released, released == 1 ? "" : "s");
	if (procs || threads || gone)
		fprintf(out, "recovered:   from /proc, for records the kernel lost: names and mappings of %"
			PRIu64 " process%s, names of %" PRIu64 " thread%s; %" PRIu64 " process%s gone"
			" first (%" PRIu64 " sample%s without a name)\n", procs, procs == 1 ? "" : "es",
			threads, threads == 1 ? "" : "s", gone, gone == 1 ? "" : "es", gone_samples,
			gone_samples == 1 ? "" : "s");
}

/* A recording of stax agent, one file of several (META agent,
 * file_seq, ... by record/rotate.c): which one, why it ended, what its
 * start carried over and let go, and the agent's memory at its end. */
static void agent_text(const struct profile *p, FILE *out)
{
	char state[32], cache[32], rss[32], cap[32];
	uint64_t seq = profile_meta_u64(p, "file_seq"), rot = profile_meta_u64(p, "rotate_ns");

	if (!profile_meta(p, "agent"))
		return;
	fprintf(out, "agent:       recording %" PRIu64 " of stax agent's (a new one every %g s)", seq, rot / 1e9);
	if (profile_meta(p, "file_end"))
		fprintf(out, ", ended by %s", profile_meta(p, "file_end"));
	if (seq > 1)
		fprintf(out, "; at its start %" PRIu64 " live processes and %" PRIu64 " mappings carried over,"
			" %" PRIu64 " that had exited let go, %" PRIu64 " evicted (beyond %" PRIu64 ")",
			profile_meta_u64(p, "carried_processes"), profile_meta_u64(p, "carried_mappings"),
			profile_meta_u64(p, "dropped_processes"), profile_meta_u64(p, "evicted_processes"),
			profile_meta_u64(p, "max_processes"));
	fputc('\n', out);
	if (!profile_meta(p, "rss_bytes"))
		return;
	format_size(state, sizeof(state), profile_meta_u64(p, "state_bytes"));
	format_size(cap, sizeof(cap), profile_meta_u64(p, "file_cap_bytes"));
	format_size(cache, sizeof(cache), profile_meta_u64(p, "symbol_cache_bytes"));
	format_size(rss, sizeof(rss), profile_meta_u64(p, "rss_bytes"));
	fprintf(out, "memory:      at its end: %s resident; state of this recording %s (cap %s; %" PRIu64
		" recording%s ended early at it), symbol cache %s, unwind tables %" PRIu64 " held (%" PRIu64
		" let go so far)\n", rss, state, cap, profile_meta_u64(p, "files_ended_at_cap"),
		profile_meta_u64(p, "files_ended_at_cap") == 1 ? "" : "s", cache,
		profile_meta_u64(p, "unwind_tables_held"), profile_meta_u64(p, "unwind_tables_released"));
}

static void agent_json(const struct profile *p, struct jw *w)
{
	static const char *const keys[] = {
		"start_ns", "end_ns", "wall_start_ns", "file_seq", "rotate_ns", "max_processes", "file_cap_bytes", "carried_processes",
		"carried_mappings", "dropped_processes", "evicted_processes", "files_ended_at_cap",
		"unwind_tables_held", "unwind_tables_released", "state_bytes", "symbol_cache_bytes",
		"symbol_cache_hits", "symbol_cache_misses", "rss_bytes",
	};
	size_t i;
	if (!profile_meta(p, "agent"))
		return;
	jw_object(w, "agent");
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if (profile_meta(p, keys[i]))
			jw_u64(w, keys[i], profile_meta_u64(p, keys[i]));
	if (profile_meta(p, "file_end"))
		jw_str(w, "file_end", profile_meta(p, "file_end"));
	jw_object_end(w);
}

static void recovery_json(const struct profile *p, struct jw *w)
{
	uint64_t ring = profile_meta_u64(p, "ring_bytes");
	if (ring)
		jw_u64(w, "ring_bytes", ring);
	if (profile_meta(p, "recovered_processes")) {
		jw_object(w, "recovered");
		jw_u64(w, "processes", profile_meta_u64(p, "recovered_processes"));
		jw_u64(w, "threads", profile_meta_u64(p, "recovered_threads"));
		jw_u64(w, "unrecovered_processes", profile_meta_u64(p, "unrecovered_processes"));
		jw_u64(w, "unrecovered_samples", profile_meta_u64(p, "unrecovered_samples"));
		jw_u64(w, "released_samples", profile_meta_u64(p, "released_samples"));
		jw_object_end(w);
	}
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

/* The off-CPU intervals the filter keeps. */
static void count_offcpu(const struct profile *p, const struct view_filter *f, struct info_summary *s)
{
	size_t i;
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[i];
		if (!view_keep_offcpu(p, f, o))
			continue;
		s->off_n++;
		s->off_ns += o->duration;
		s->off_reason[o->reason < OFFCPU_NREASONS ? o->reason : 0] += o->duration;
		s->off_complete += OFFCPU_VERDICT(o->flags) == UNWIND_Q_COMPLETE;
		if (o->reason != OFFCPU_PREEMPT) {
			s->off_stacked++;
			s->off_stacked_complete += OFFCPU_VERDICT(o->flags) == UNWIND_Q_COMPLETE;
		}
	}
}

/* The samples the filter keeps: counts, verdicts, and the modules their
 * frames are in. */
static void count_samples(const struct profile *p, const struct view_filter *f, struct info_summary *s,
			  struct hmap *pids, struct hmap *cpus)
{
	size_t nmods = 0, modcap = 0, i, k;

	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *r = &p->samples[i];
		const struct prof_node *nd;
		size_t outer = SIZE_MAX;   /* index: mods may move as it grows */
		bool root = false, cut = false;
		unsigned q;
		if (!view_keep(p, f, r))
			continue;
		s->kept++;
		s->weight += r->weight;
		s->trimmed += (r->quality & SAMPLE_Q_TRIMMED) != 0;
		if (SAMPLE_M_METHOD(r->method) < 3)
			s->method[SAMPLE_M_METHOD(r->method)]++;
		s->nread += (r->method & SAMPLE_M_READ) != 0;
		s->npy += (r->method & SAMPLE_M_PYTHON) != 0;
		s->npyfail += (r->method & SAMPLE_M_PYTHON_FAILED) != 0;
		if (SAMPLE_M_JIT(r->method)) {
			s->jit[0]++;
			for (k = 0; k < 3; k++)
				s->jit[k + 1] += (r->method >> (SAMPLE_M_JIT_SHIFT + k)) & 1;
		}
		hmap_put(pids, r->pid, 1);
		hmap_put(cpus, r->cpu, 1);
		for (nd = profile_node(p, r->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			struct module_row *m;
			cut |= (nd->flags & NODE_F_LOST) != 0;
			if (!fn)
				continue;
			if (fn->known && unwind_is_root_name(fn->name))
				root = true;
			m = module_row(&s->mods, &nmods, &modcap, fn->module);
			m->frames++;
			if (!fn->known)
				m->unknown++;
			if (!fn->kernel)
				outer = (size_t)(m - s->mods);
		}
		s->rooted += root;
		/* One rule for every quality line: a stack that reaches main or
		 * a thread start function is complete, whatever the unwinder
		 * said of the frames beyond it; truncated and broken are the
		 * stacks that stop short of one. A stack cut where a damaged
		 * chunk's frames are missing (it ends in "[damaged]") is
		 * truncated. A stack with frames read after the sample is
		 * late, wherever it ends: nothing proves it the sample's. */
		if (r->quality & SAMPLE_Q_LATE) {
			q = UNWIND_Q_LATE;
			s->rooted_late += root;
		} else {
			q = root ? UNWIND_Q_COMPLETE : cut ? UNWIND_Q_TRUNCATED : SAMPLE_Q(r->quality);
		}
		s->quality[q]++;
		/* where stacks stop, for the unwinder's reasons (not the damage) */
		if (outer != SIZE_MAX && !cut && (q == UNWIND_Q_TRUNCATED || q == UNWIND_Q_BROKEN)) {
			unsigned stop = SAMPLE_Q_STOP(r->quality);
			s->mods[outer].ends++;
			s->mods[outer].stops[stop < UNWIND_NSTOPS ? stop : 0]++;
		}
	}
	s->nmods = nmods;
}

/* The effective rate, by what the recording can tell: per recorded cpu
 * with -a, per second of the targets' CPU time, by the samples' periods,
 * or per second of the recording. */
static void effective_rate(const struct profile *p, const struct view_filter *f, struct info_summary *s,
			   size_t ncpus)
{
	bool sys = !strcmp(meta_or(p, "system_wide", "0"), "1");
	uint64_t cpu_ns = profile_meta_u64(p, "cpu_ns");
	bool unfiltered = f->pid < 0 && f->tid < 0 && !f->comm;

	s->per = s->clock ? " (samples per second of CPU time)" : "";
	if (s->clock && sys && ncpus && s->secs > 0 && unfiltered) {
		/* -a (with or without CMD): every recorded cpu is sampled all
		 * the time, idle ones too (the idle task's samples), so per
		 * second of the recording per cpu, as perf's -F means it with
		 * -a; CMD's own CPU time (cpu_ns) is not what was sampled */
		s->eff = s->kept / (s->secs * (double)ncpus);
		s->per = " (samples per second per recorded CPU)";
	} else if (s->clock && cpu_ns && unfiltered) {
		/* samples per second of the CPU time the targets used, measured
		 * apart from the samples: losses and throttling show */
		s->eff = s->kept / (cpu_ns / 1e9);
	} else if (s->clock && s->weight) {
		s->eff = s->kept / (s->weight / 1e9);      /* what the samples' periods say */
	} else if (s->secs > 0) {
		s->eff = s->kept / s->secs;
	}
}

static void info_compute(const struct profile *p, const struct view_filter *f, struct info_summary *s)
{
	static const char *const deep_keys[5] = { "deep_stacks_read", "deep_stacks_stale",
						  "copy_cut_within_max", "copy_cut_beyond_max",
						  "deep_stacks_gone" };
	uint64_t start = profile_meta_u64(p, "start_ns");
	uint64_t end = profile_meta_u64(p, "end_ns");
	uint64_t ncpus = profile_meta_u64(p, "cpus");
	struct hmap pids;      /* every process with a sample kept */
	struct hmap cpus;      /* every cpu with a sample kept */
	size_t i;

	memset(s, 0, sizeof(*s));
	s->freq = profile_meta_u64(p, "freq");
	s->clock = !strcmp(meta_or(p, "event_is_clock", "0"), "1");
	for (i = 0; i < 5; i++)
		s->ndeep += s->deep[i] = profile_meta_u64(p, deep_keys[i]);
	hmap_init(&pids);
	hmap_init(&cpus);
	count_samples(p, f, s, &pids, &cpus);
	count_offcpu(p, f, s);
	s->npids = pids.len;
	if (!ncpus) /* before stax stored it: the cpus that have samples */
		ncpus = cpus.len;
	hmap_release(&pids);
	hmap_release(&cpus);
	if (!end)
		end = p->last_time;
	if (!start)
		start = p->first_time;
	s->secs = end > start ? (end - start) / 1e9 : 0;
	effective_rate(p, f, s, (size_t)ncpus);
	if (s->nmods)
		qsort(s->mods, s->nmods, sizeof(*s->mods), cmp_module);
	s->nstops = stop_modules(s->mods, s->nmods, s->stops);
}

static const char *const source_states[] = { "read", "outside", "failed", "no_time" };

/* Of a profile read from several recordings: the window asked for and
 * every file considered (what was read, what not and why). */
static void sources_json(const struct profile *p, struct jw *w)
{
	size_t i;
	if (p->since_ns || p->until_ns) {
		jw_object(w, "window");
		if (p->since_ns)
			jw_double(w, "since", p->since_ns / 1e9, 3);
		if (p->until_ns)
			jw_double(w, "until", p->until_ns / 1e9, 3);
		jw_object_end(w);
	}
	if (!p->nsources)
		return;
	jw_array(w, "files");
	for (i = 0; i < p->nsources; i++) {
		const struct prof_source *src = &p->sources[i];
		jw_object(w, NULL);
		jw_str(w, "path", src->path);
		jw_str(w, "read", source_states[src->state]);
		if (src->wall_start_ns)
			jw_double(w, "start", src->wall_start_ns / 1e9, 3);
		if (src->wall_end_ns)
			jw_double(w, "end", src->wall_end_ns / 1e9, 3);
		if (src->state == PROF_SRC_READ) {
			jw_str(w, "state", !src->partial ? "finished" : src->live ? "recording" : "truncated");
			jw_u64(w, "samples", src->samples);
			jw_u64(w, "off_cpu_intervals", src->offcpu);
			jw_u64(w, "damaged_chunks", src->damaged_chunks);
		}
		if (src->why)
			jw_str(w, "why", src->why);
		jw_object_end(w);
	}
	jw_array_end(w);
}

static void sources_text(const struct profile *p, FILE *out)
{
	char a[64], z[64];
	size_t i, nread = 0;
	int width = 0;
	if (p->since_ns || p->until_ns) {
		if (p->since_ns)
			walltime_format(p->since_ns, false, a, sizeof(a));
		if (p->until_ns)
			walltime_format(p->until_ns, false, z, sizeof(z));
		fprintf(out, "window:      %s to %s (wall clock: --since, --until)\n", p->since_ns ? a : "the start",
			p->until_ns ? z : "the end");
	}
	if (!p->nsources)
		return;
	for (i = 0; i < p->nsources; i++)
		nread += p->sources[i].state == PROF_SRC_READ;
	fprintf(out, "files:       %zu of %zu recording%s read\n", nread, p->nsources, p->nsources == 1 ? "" : "s");
	for (i = 0; i < p->nsources; i++)
		width = MAX(width, (int)strlen(path_base(p->sources[i].path)));
	for (i = 0; i < p->nsources; i++) {
		const struct prof_source *src = &p->sources[i];
		fprintf(out, "  %-*s", width, path_base(src->path));
		if (src->wall_start_ns) {
			walltime_format(src->wall_start_ns, false, a, sizeof(a));
			walltime_format(src->wall_end_ns ? src->wall_end_ns : src->wall_start_ns, false, z, sizeof(z));
			fprintf(out, "  %s to %s", a, z);
		}
		switch (src->state) {
		case PROF_SRC_READ:
			fprintf(out, "  %zu samples%s", src->samples, !src->partial ? "" : src->live ?
				", still being recorded" : ", truncated");
			if (src->offcpu)
				fprintf(out, ", %zu off-CPU intervals", src->offcpu);
			if (src->damaged_chunks)
				fprintf(out, ", %" PRIu64 " damaged chunk%s skipped", src->damaged_chunks,
					src->damaged_chunks == 1 ? "" : "s");
			break;
		case PROF_SRC_OUTSIDE:
			fprintf(out, "  not read: outside the window");
			break;
		case PROF_SRC_FAILED:
			fprintf(out, "  not read: %s", src->why ? src->why : "?");
			break;
		case PROF_SRC_NO_TIME:
			fprintf(out, "  not read: it does not say when it was recorded");
			break;
		}
		fputc('\n', out);
	}
}

/* Which way what lies outside a sample (Python frames, the stack past
 * its copy) was read: at the sample by the in-kernel reader, or after
 * it; nothing for a recording that does not say (older, perf.data). */
static void moment_text(const struct profile *p, const struct info_summary *s, FILE *out)
{
	const char *path = profile_meta(p, "moment");
	uint64_t late = s->quality[UNWIND_Q_LATE];

	if (!path)
		return;
	if (!strcmp(path, "bpf")) {
		uint64_t py = profile_meta_u64(p, "python_moment"), deep = profile_meta_u64(p, "deep_stacks_words");
		fputs("  moment:    read at the sample by the in-kernel reader (BPF)", out);
		if (py)
			fprintf(out, ": Python frames of %" PRIu64 " samples", py);
		if (deep)
			fprintf(out, "%s %" PRIu64 " stacks completed past the copy by the stack words it read",
				py ? "," : ":", deep);
		if (late)
			fprintf(out, "; %" PRIu64 " late (read after the sample: before the reader knew what to"
				" read for the thread)", late);
		fputc('\n', out);
		return;
	}
	fprintf(out, "  moment:    read after the sample, not by the in-kernel reader (%s): %" PRIu64
		" stack%s late (frames read later, not proven the sample's; --no-late-frames leaves"
		" them out)\n", meta_or(p, "moment_why", "why not recorded"), late, late == 1 ? "" : "s");
}

static void moment_json(const struct profile *p, const struct info_summary *s, struct jw *w)
{
	jw_object(w, "moment");
	jw_str(w, "path", profile_meta(p, "moment"));
	jw_str(w, "why", profile_meta(p, "moment_why"));
	jw_u64(w, "late", s->quality[UNWIND_Q_LATE]);
	jw_u64(w, "python_at_sample", profile_meta_u64(p, "python_moment"));
	jw_u64(w, "python_late", profile_meta_u64(p, "python_late"));
	jw_u64(w, "deep_words", profile_meta_u64(p, "deep_stacks_words"));
	jw_u64(w, "records", profile_meta_u64(p, "moment_records"));
	jw_u64(w, "joined", profile_meta_u64(p, "moment_joined"));
	jw_u64(w, "dropped", profile_meta_u64(p, "moment_dropped"));
	if (profile_meta(p, "moment_runs")) {
		uint64_t runs = profile_meta_u64(p, "moment_runs");
		jw_double(w, "ns_per_sample", runs ? (double)profile_meta_u64(p, "moment_run_ns") / (double)runs : 0, 1);
	}
	jw_object_end(w);
}

static void info_json(const struct profile *p, const struct info_summary *s, FILE *out)
{
	struct prof_warning warn[PROF_WARNINGS_MAX];
	size_t nw = profile_warnings(p, warn), i;
	struct jw w;

	jw_begin(&w, out);
	jw_str(&w, "file", p->path);
	jw_str(&w, "command", meta_or(p, "command", "?"));
	jw_str(&w, "event", meta_or(p, "event", "?"));
	/* null: written before stax stored its version, or a perf.data */
	jw_str(&w, "stax_version", profile_meta(p, "stax_version"));
	jw_str(&w, "state", !p->partial ? "finished" : p->live ? "recording" : "truncated");
	sources_json(p, &w);
	jw_double(&w, "duration_s", s->secs, 3);
	jw_u64(&w, "requested_hz", s->freq);
	jw_double(&w, "effective_hz", s->eff, 1);
	jw_u64(&w, "samples", s->kept);
	jw_u64(&w, "lost", p->lost_records + p->lost_samples);
	jw_u64(&w, "throttled", p->throttles);
	jw_u64(&w, "processes", s->npids);
	jw_u64(&w, "reached_root", s->rooted);
	jw_u64(&w, "reached_root_late", s->rooted_late);
	jw_object(&w, "lost_by_cause");
	jw_u64(&w, "ring", p->lost_records);
	jw_u64(&w, "kernel_samples", p->lost_samples - p->lost_queue);
	jw_u64(&w, "queue", p->lost_queue);
	jw_object_end(&w);
	jw_u64(&w, "trimmed", s->trimmed);
	recovery_json(p, &w);
	agent_json(p, &w);
	if (p->noffcpu) {
		jw_object(&w, "off_cpu");
		jw_u64(&w, "intervals", s->off_n);
		jw_double(&w, "ms", s->off_ns / 1e6, 1);
		jw_u64(&w, "complete", s->off_complete);
		jw_object_end(&w);
	}
	jw_u64(&w, "damaged_chunks", p->damage.chunks);
	jw_array(&w, "warnings");
	for (i = 0; i < nw; i++)
		jw_str(&w, NULL, warn[i].text);
	jw_array_end(&w);
	jw_str(&w, "unwind", meta_or(p, "unwind", "fp"));
	jw_object(&w, "quality");
	jw_u64(&w, "unverified", s->quality[0]);
	jw_u64(&w, "complete", s->quality[1]);
	jw_u64(&w, "truncated", s->quality[2]);
	jw_u64(&w, "broken", s->quality[3]);
	jw_u64(&w, "late", s->quality[4]);
	jw_object_end(&w);
	moment_json(p, s, &w);
	jw_object(&w, "method");
	jw_u64(&w, "fp", s->method[0]);
	jw_u64(&w, "dwarf", s->method[1]);
	jw_u64(&w, "spliced", s->method[2]);
	jw_object_end(&w);
	jw_object(&w, "jit");
	jw_u64(&w, "samples", s->jit[0]);
	jw_u64(&w, "trampoline", s->jit[1]);
	jw_u64(&w, "fp", s->jit[2]);
	jw_u64(&w, "jitdump_cfi", s->jit[3]);
	jw_object_end(&w);
	jw_u64(&w, "read_from_process", s->nread);
	jw_object(&w, "deep");
	jw_u64(&w, "read", s->deep[0]);
	jw_u64(&w, "stale", s->deep[1]);
	jw_u64(&w, "exited", s->deep[4]);
	jw_u64(&w, "cut_within_max", s->deep[2]);
	jw_u64(&w, "cut_beyond_max", s->deep[3]);
	jw_object_end(&w);
	jw_object(&w, "python");
	jw_bool(&w, "read", !strcmp(meta_or(p, "python_frames", "0"), "1"));
	jw_u64(&w, "expanded", s->npy);
	jw_u64(&w, "failed", s->npyfail);
	jw_u64(&w, "stale", profile_meta_u64(p, "python_stale"));
	jw_u64(&w, "invalid", profile_meta_u64(p, "python_invalid"));
	jw_u64(&w, "unreadable", profile_meta_u64(p, "python_unreadable"));
	jw_str(&w, "no_access", profile_meta(p, "python_no_access"));
	jw_object_end(&w);
	jw_array(&w, "stops");
	for (i = 0; i < s->nstops; i++) {
		jw_object(&w, NULL);
		jw_str(&w, "module", s->stops[i]->module);
		jw_u64(&w, "samples", s->stops[i]->ends);
		jw_str(&w, "why", main_stop(s->stops[i]));
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_array(&w, "modules");
	for (i = 0; i < s->nmods; i++) {
		jw_object(&w, NULL);
		jw_str(&w, "module", s->mods[i].module);
		jw_u64(&w, "frames", s->mods[i].frames);
		jw_u64(&w, "unsymbolized", s->mods[i].unknown);
		jw_str(&w, "symbols", module_source(p, s->mods[i].module));
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_end(&w);
}

/* The recording: what, how, how much. */
static void head_text(const struct profile *p, const struct info_summary *s, FILE *out)
{
	if (p->nsources > 1 || (p->nsources && strcmp(p->path, p->sources[0].path)))
		fprintf(out, "file:        %s (recordings read as one; the newest %s)\n", p->path,
			!p->partial ? "finished" : p->live ? "still being recorded" : "truncated");
	else
	fprintf(out, "file:        %s (%s)\n", p->path,
		!p->partial ? "finished" :
		p->live ? "still being recorded; read up to its last complete chunk" :
			  "truncated: no end chunk, and no recorder holds it; read up to its last complete chunk");
	sources_text(p, out);
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
	if (!s->freq && profile_meta(p, "period"))
		fprintf(out, "event:       %s, every %s%s, effective %.1f Hz%s\n",
			meta_or(p, "event", "?"), profile_meta(p, "period"), s->clock ? " ns" : " events", s->eff,
			s->per);
	else
		fprintf(out, "event:       %s, requested %" PRIu64 " Hz, effective %.1f Hz%s\n",
			meta_or(p, "event", "?"), s->freq, s->eff, s->per);
	fprintf(out, "duration:    %.3f s\n", s->secs);
	fprintf(out, "samples:     %" PRIu64 " in %zu process%s; lost %" PRIu64 "; throttled %" PRIu64 " time%s\n",
		s->kept, s->npids, s->npids == 1 ? "" : "es", p->lost_records + p->lost_samples, p->throttles,
		p->throttles == 1 ? "" : "s");
	if (p->lost_records + p->lost_samples)
		fprintf(out, "lost:        %" PRIu64 " in the kernel's rings (full), %" PRIu64 " samples"
			" dropped by the kernel, %" PRIu64 " samples dropped by stax (its queue was full)\n",
			p->lost_records, p->lost_samples - p->lost_queue, p->lost_queue);
	if (s->trimmed)
		fprintf(out, "degraded:    %" PRIu64 " sample%s (%.1f%%) kept only the top of %s stack copy:"
			" the recorder fell behind, and their user frames beyond it come from the frame"
			" pointers\n", s->trimmed, s->trimmed == 1 ? "" : "s", 100.0 * s->trimmed / s->kept,
			s->trimmed == 1 ? "its" : "their");
	recovery_text(p, out);
	agent_text(p, out);
	if (s->off_n) {
		int r;
		fprintf(out, "off-cpu:     %" PRIu64 " intervals, %.1f ms (", s->off_n, s->off_ns / 1e6);
		for (r = 1; r <= OFFCPU_NREASONS; r++)
			fprintf(out, "%s%s %.1f", r > 1 ? ", " : "",
				view_offcpu_reason((enum offcpu_reason)(r % OFFCPU_NREASONS)),
				s->off_reason[r % OFFCPU_NREASONS] / 1e6);
		fprintf(out, " ms); stacks complete %.1f%%\n",
			s->off_stacked ? 100.0 * s->off_stacked_complete / s->off_stacked : 0.0);
	}
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
}

/* The stacks: how many are whole, how they were found, where the rest end. */
static void stacks_text(const struct profile *p, const struct info_summary *s, FILE *out)
{
	size_t i;

	fprintf(out, "unwinding:   %s\n", meta_or(p, "unwind", "fp"));
	fprintf(out, "stacks:      %" PRIu64 " of %" PRIu64 " (%.1f%%) reach main or a thread start function",
		s->rooted, s->kept, s->kept ? 100.0 * s->rooted / s->kept : 0.0);
	if (s->rooted_late)
		fprintf(out, ", %" PRIu64 " of them through frames read after the sample", s->rooted_late);
	fputc('\n', out);
	fprintf(out, "  verdict:   complete %" PRIu64 ", truncated %" PRIu64 ", broken %" PRIu64 ", late %" PRIu64
		", unverified frame-pointer chains %" PRIu64 "\n", s->quality[1], s->quality[2], s->quality[3],
		s->quality[4], s->quality[0]);
	moment_text(p, s, out);
	fprintf(out, "  method:    fp %" PRIu64 ", dwarf %" PRIu64 ", spliced %" PRIu64 "\n",
		s->method[0], s->method[1], s->method[2]);
	if (s->nread)
		fprintf(out, "  read:      %" PRIu64 " with outer frames read from the live process beyond"
			" the stack copy\n", s->nread);
	if (s->ndeep)
		fprintf(out, "  deep:      of the stacks deeper than the copy, %" PRIu64 " read on from the"
			" process, %" PRIu64 " not (the thread had returned from where the copy ended), %"
			PRIu64 " not (the process had exited before the recorder unwound them); of those"
			" cut where the copy ended, %" PRIu64 " within 65528 bytes of their thread's stack top, %"
			PRIu64 " beyond, the rest unknown\n", s->deep[0], s->deep[1], s->deep[4], s->deep[2],
			s->deep[3]);
	if (s->npy || s->npyfail) {
		fprintf(out, "  python:    %" PRIu64 " (%.1f%%) with Python frames read from the interpreter",
			s->npy, 100.0 * s->npy / s->kept);
		if (s->npyfail) {
			/* why, from the recorder's counts (of every process) */
			uint64_t stale = profile_meta_u64(p, "python_stale");
			uint64_t invalid = profile_meta_u64(p, "python_invalid");
			uint64_t unread = profile_meta_u64(p, "python_unreadable");
			fprintf(out, "; %" PRIu64 " (%.1f%%) with _PyEval_EvalFrameDefault left unexpanded",
				s->npyfail, 100.0 * s->npyfail / s->kept);
			if (stale + invalid + unread)
				fprintf(out, " (of all recorded: %" PRIu64 " the interpreter had moved on when read,"
					" %" PRIu64 " whose chain did not validate, %" PRIu64 " unreadable)",
					stale, invalid, unread);
		}
		fputc('\n', out);
	}
	if (profile_meta(p, "python_no_access"))
		fprintf(out, "  python:    not read: %s\n", profile_meta(p, "python_no_access"));
	if (s->jit[0])
		fprintf(out, "  jit:       %" PRIu64 " through code without CFI: CPython trampoline %" PRIu64
			", frame pointer %" PRIu64 ", jitdump CFI %" PRIu64 "\n", s->jit[0], s->jit[1], s->jit[2],
			s->jit[3]);
	for (i = 0; i < s->nstops; i++)
		fprintf(out, "%s%s %" PRIu64 " (%s)%s", i ? ", " : "  stop in:   ", s->stops[i]->module,
			s->stops[i]->ends, main_stop(s->stops[i]), i + 1 == s->nstops ? "\n" : "");
}

static void info_text(const struct profile *p, const struct info_summary *s, FILE *out)
{
	size_t i;
	int w = 28; /* the module column: as wide as the longest name */

	head_text(p, s, out);
	stacks_text(p, s, out);
	for (i = 0; i < s->nmods; i++)
		if (strlen(s->mods[i].module) > (size_t)w && strlen(s->mods[i].module) < 200)
			w = (int)strlen(s->mods[i].module);
	fprintf(out, "modules:     %-*s %10s %12s  %s\n", w, "MODULE", "FRAMES", "UNSYMBOLIZED", "SYMBOLS FROM");
	for (i = 0; i < s->nmods; i++)
		fprintf(out, "             %-*s %10" PRIu64 " %11.1f%%  %s\n", w, s->mods[i].module, s->mods[i].frames,
			s->mods[i].frames ? 100.0 * s->mods[i].unknown / s->mods[i].frames : 0.0,
			module_source(p, s->mods[i].module));
	for (i = 0; i < s->nmods; i++)
		if (s->mods[i].unknown == s->mods[i].frames && s->mods[i].frames)
			fprintf(out, "without symbols: %s\n", s->mods[i].module);
}

void view_info(const struct profile *p, const struct view_filter *f, bool json, FILE *out)
{
	struct info_summary s;
	info_compute(p, f, &s);
	if (json)
		info_json(p, &s, out);
	else
		info_text(p, &s, out);
	free(s.mods);
}
