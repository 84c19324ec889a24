#include "view/view.h"
#include "lib/json.h"
#include "lib/util.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel keeps the first 15 bytes of a name (TASK_COMM_LEN 16). */
#define COMM_MAX 15

static bool comm_is(const char *name, const char *want)
{
	return !strcmp(name, want) || (strlen(want) > COMM_MAX && !strncmp(name, want, COMM_MAX) &&
				       strlen(name) == COMM_MAX);
}

bool view_keep(const struct profile *p, const struct view_filter *f, const struct rec_sample *s)
{
	if (f->pid >= 0 && s->pid != (uint64_t)f->pid)
		return false;
	if (f->tid >= 0 && s->tid != (uint64_t)f->tid)
		return false;
	if (f->t1 && (s->time < f->t0 || s->time > f->t1))
		return false;
	/* --comm: the thread's name, or its process's (the main thread's,
	 * so that --comm server keeps the threads that named themselves) */
	if (f->comm && !comm_is(profile_comm(p, s->pid, s->tid, s->time), f->comm) &&
	    (s->pid == s->tid || !comm_is(profile_comm(p, s->pid, s->pid, s->time), f->comm)))
		return false;
	return true;
}

const char *view_func_name(const struct profile *p, uint32_t func)
{
	const struct prof_func *fn = profile_func(p, func);
	return fn ? fn->label : "[unknown]";
}

double view_weight_ms(const struct profile *p, uint64_t weight)
{
	const char *clock = profile_meta(p, "event_is_clock");
	if (clock && !strcmp(clock, "1"))
		return weight / 1e6;
	return 0;
}

bool view_keep_offcpu(const struct profile *p, const struct view_filter *f, const struct rec_offcpu *o)
{
	struct rec_sample s;
	memset(&s, 0, sizeof(s));
	s.time = o->start;
	s.pid = o->pid;
	s.tid = o->tid;
	s.stack = o->stack;
	return view_keep(p, f, &s);
}

static const char *const reasons[OFFCPU_NREASONS] = {
	"other", "lock", "read", "write", "sleep", "poll", "fault", "preempted", "wait",
};

const char *view_offcpu_reason(enum offcpu_reason r)
{
	return (unsigned)r < OFFCPU_NREASONS ? reasons[r] : "other";
}

const char *view_offcpu_frame(enum offcpu_reason r)
{
	static const char *const frames[OFFCPU_NREASONS] = {
		"[off-cpu: other]", "[off-cpu: lock]", "[off-cpu: read]", "[off-cpu: write]",
		"[off-cpu: sleep]", "[off-cpu: poll]", "[off-cpu: fault]", "[off-cpu: preempted]",
		"[off-cpu: wait]",
	};
	return (unsigned)r < OFFCPU_NREASONS ? frames[r] : frames[0];
}

uint64_t view_sample_ns(const struct profile *p, const struct rec_sample *s)
{
	const char *clock = profile_meta(p, "event_is_clock"), *freq;
	uint64_t hz;
	if (clock && !strcmp(clock, "1"))
		return s->weight;
	freq = profile_meta(p, "freq");
	hz = freq ? strtoull(freq, NULL, 10) : 0;
	return hz ? 1000000000ull / hz : 0;
}

uint32_t view_find_funcs(const struct profile *p, const char *what, bool *set, struct err *err)
{
	uint32_t first = 0, by_addr = 0;
	size_t i, nmod = 0;
	const char *mods[16]; /* listed when the name is in several */

	if (!strncmp(what, "0x", 2) || !strncmp(what, "0X", 2)) {
		char *end;
		uint64_t addr;
		errno = 0;
		addr = strtoull(what, &end, 16);
		if (errno || *end) {
			err_set(err, -1, "'%s' is not an address (give 0xHEX or a function name)", what);
			return 0;
		}
		for (i = 0; i < p->nnodes && !first; i++)
			if (p->nodes[i].addr == addr && (p->nodes[i].flags & 0xff) != NODE_ROOT)
				first = p->nodes[i].func;
		if (!first) {
			err_set(err, -1, "no frame has address %s (see stax script for addresses)", what);
			return 0;
		}
		what = profile_func(p, first)->name;
		by_addr = first;
	}
	for (i = 0; i < p->nfuncs; i++) {
		const struct prof_func *fn = &p->funcs[i];
		size_t k;
		if (strcmp(fn->name, what) && strcmp(fn->label, what))
			continue;
		if (by_addr && strcmp(fn->module, profile_func(p, by_addr)->module))
			continue; /* the address chose the module */
		for (k = 0; k < nmod && strcmp(mods[k], fn->module); k++)
			;
		if (k == nmod && nmod < ARRAY_SIZE(mods))
			mods[nmod++] = fn->module;
		set[i + 1] = true;
		if (!first)
			first = (uint32_t)(i + 1);
	}
	if (!first) {
		err_set(err, -1, "no sampled function is named '%s' (see stax top for names;"
			 " C++ names are demangled)", what);
		return 0;
	}
	if (nmod > 1) {
		/* the same name in several modules: say which, by an address */
		size_t k;
		err_set(err, -1, "several functions are named '%s':", what);
		for (k = 0; k < nmod; k++) {
			uint64_t addr = 0;
			for (i = 0; i < p->nnodes; i++) {
				const struct prof_func *fn = profile_func(p, p->nodes[i].func);
				if ((p->nodes[i].flags & 0xff) != NODE_ROOT && set[p->nodes[i].func] && fn &&
				    !strcmp(fn->module, mods[k])) {
					addr = p->nodes[i].addr;
					break;
				}
			}
			err_append(err, "%s %s in %s (0x%" PRIx64 ")", k ? "," : "", what, mods[k], addr);
		}
		err_append(err, "; give one as 0xADDRESS");
		return 0;
	}
	return first;
}

void view_json_pcts(struct jw *w, uint64_t self, uint64_t total, uint64_t all)
{
	jw_double(w, "self_pct", all ? 100.0 * self / all : 0.0, 2);
	jw_double(w, "total_pct", all ? 100.0 * total / all : 0.0, 2);
}

void view_no_samples(const struct profile *p, FILE *out)
{
	fprintf(out, "no samples%s\n", p->nsamples ? " match the filter" : " in this recording");
}

void view_json_func(struct jw *w, const struct prof_func *fn)
{
	jw_str(w, "name", fn->name);
	jw_str(w, "module", fn->module);
	if (fn->file) {
		jw_str(w, "file", fn->file);
		if (fn->line)
			jw_u64(w, "line", fn->line);
	}
	if (profile_func_is_python(fn))
		jw_bool(w, "python", true);
	jw_bool(w, "kernel", fn->kernel);
}

/* Does module (a base name) belong to the system's C and C++ runtime,
 * the dynamic loader, the vDSO or the Python interpreter? Their frames
 * are how a program waits or wakes, not which part of it does. */
static bool system_module(const char *m)
{
	static const char *const prefixes[] = {
		"libc.so", "libc-", "libpthread", "ld-linux", "ld.so", "ld-2.", "libstdc++", "libc++",
		"libgcc_s", "libm.so", "libm-", "librt", "libdl", "linux-vdso", "[vdso]", "libpython",
		"python2", "python3",
	};
	size_t i;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(m, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool view_func_is_system(const struct prof_func *fn)
{
	if (!fn || fn->kernel || !fn->known)
		return true;
	if (fn->module && system_module(fn->module) && !profile_func_is_python(fn))
		return true;
	/* Go's scheduler and runtime, and the roots of every stack (main
	 * excepted: it may well be the caller that waits) */
	if (!strncmp(fn->name, "runtime.", 8))
		return true;
	return strcmp(fn->name, "main") && unwind_is_root_name(fn->name);
}

bool view_is_scheduler_name(const char *name)
{
	static const char *const prefixes[] = {
		"schedule", "__schedule", "io_schedule", "preempt_schedule", "_cond_resched",
		"__cond_resched", "finish_task_switch",
	};
	size_t i;
	for (i = 0; i < ARRAY_SIZE(prefixes); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

size_t view_offcpu_frames(const struct profile *p, uint32_t stack, bool kernel, struct prof_frame *out,
			  size_t max)
{
	size_t n = profile_stack_frames(p, stack, out, max), user, k;
	if (kernel || !n)
		return n;
	for (user = 0; user < n && out[user].kernel; user++)
		;
	if (user == n) {
		/* a kernel thread: only the scheduler's frames go */
		for (user = 0; user < n - 1; user++) {
			const struct prof_func *fn = profile_func(p, out[user].func);
			if (!fn || !view_is_scheduler_name(fn->name))
				break;
		}
	}
	if (!user)
		return n;
	for (k = user; k < n; k++)
		out[k - user] = out[k];
	return n - user;
}

size_t view_blocking_frame(const struct profile *p, const struct prof_frame *fr, size_t nf)
{
	size_t i;
	for (i = 0; i < nf; i++)
		if (!view_func_is_system(profile_func(p, fr[i].func)))
			return i;
	for (i = 0; i < nf; i++) {
		const struct prof_func *fn = profile_func(p, fr[i].func);
		if (fn && fn->known && !fn->kernel)
			return i;
	}
	/* only kernel frames: the first that is not the wake-up or the
	 * scheduler machinery */
	for (i = 0; i < nf; i++) {
		const struct prof_func *fn = profile_func(p, fr[i].func);
		if (fn && fn->known && !strstr(fn->name, "wake") && !view_is_scheduler_name(fn->name))
			return i;
	}
	return 0;
}
