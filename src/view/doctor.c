/* doctor.c - why stacks are incomplete and what to do, most important first. */
#include "view/view.h"
#include "module/module.h"
#include "symbol/fpcheck.h"
#include "symbol/symbol.h"
#include "unwind/unwind.h"
#include "lib/json.h"
#include "lib/perm.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct finding {
	double weight;     /* share of samples affected, for ordering */
	char *text;
};

struct findings {
	struct finding *v;
	size_t n, cap;
};

static void add(struct findings *f, double weight, char *text)
{
	GROW(f->v, f->cap, f->n + 1);
	f->v[f->n].weight = weight;
	f->v[f->n].text = text;
	f->n++;
}

static int cmp_finding(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	return (x->weight < y->weight) - (x->weight > y->weight);
}

/* Per module: samples whose stack ends (outermost frame) there without
 * reaching a root, and frames without symbols. */
struct mod_stat {
	const char *module;
	uint32_t mapping;      /* one mapping id that holds it (for its path) */
	uint64_t ends, frames, unknown, broken, truncated;
	uint64_t stops[UNWIND_NSTOPS]; /* of ends, by why unwinding stopped */
};

static struct mod_stat *mod_get(struct mod_stat **v, size_t *n, size_t *cap, const char *m)
{
	size_t i;
	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i].module, m))
			return &(*v)[i];
	GROW(*v, *cap, *n + 1);
	memset(&(*v)[*n], 0, sizeof(**v));
	(*v)[*n].module = m;
	return &(*v)[(*n)++];
}

static const char *mapping_path(const struct profile *p, uint32_t id)
{
	return id && id <= p->nmaps ? p->maps[id - 1].path : NULL;
}

/* The frame-pointer report of mapping id's binary (module/module.h:
 * the module of its path and build-id). */
static int fp_check_mapping(const struct profile *p, uint32_t id, struct fp_report *r)
{
	const struct prof_mapping *pm = &p->maps[id - 1];
	struct module *mod = module_get(pm->path, pm->build_id, pm->build_id_size);
	int ret = fp_check_module(mod, r);

	module_put(mod);
	return ret;
}

/* The CPython version "3.12" of a mapping path (libpython3.12.so.1.0,
 * python3.12, libpython3.12d.so), or false when it is not CPython. */
static bool python_version(const char *path, int *major, int *minor)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	if (!strncmp(b, "lib", 3))
		b += 3;
	if (strncmp(b, "python", 6))
		return false;
	return sscanf(b + 6, "%d.%d", major, minor) == 2;
}

/* A process that ran CPython without a perf map or jitdump: its Python
 * functions all look like _PyEval_EvalFrameDefault. Say which mode its
 * version has. */
static void python_findings(const struct profile *p, const struct view_filter *flt,
			    struct findings *f, uint64_t kept)
{
	size_t i, j;
	uint32_t done[16];
	size_t ndone = 0;

	for (i = 0; i < p->nmaps && ndone < ARRAY_SIZE(done); i++) {
		const struct prof_mapping *m = &p->maps[i];
		uint64_t n = 0, nread = 0, nfail = 0;
		int major, minor;
		bool seen = false;
		if (!m->path || !python_version(m->path, &major, &minor) || major != 3)
			continue;
		for (j = 0; j < ndone; j++)
			seen |= done[j] == m->pid;
		if (seen)
			continue;
		done[ndone++] = m->pid;
		for (j = 0; j < p->nperfmaps; j++)
			seen |= p->perfmaps[j].pid == m->pid;
		for (j = 0; j < p->nmaps; j++) {
			const char *b = strrchr(p->maps[j].path, '/');
			seen |= p->maps[j].pid == m->pid && b && !strncmp(b, "/jit-", 5);
		}
		for (j = 0; j < p->nsamples; j++) {
			const struct rec_sample *s = &p->samples[j];
			if (s->pid != m->pid || !view_keep(p, flt, s))
				continue;
			n++;
			nread += (s->method & SAMPLE_M_PYTHON) != 0;
			nfail += (s->method & SAMPLE_M_PYTHON_FAILED) != 0;
		}
		if (seen || !n)
			continue;
		/* frames read from the interpreter while recording (3.11-3.13) */
		if (nread || nfail) {
			const char *why = profile_meta(p, "python_no_access");
			if (nfail * 10 > nread + nfail)
				add(f, 0.3 * nfail / kept + 0.05, xasprintf("process %u runs Python %d.%d: %.0f%% of"
					" its samples in the interpreter were left without their Python frames (%s)%s",
					m->pid, major, minor, 100.0 * nfail / (nread + nfail),
					why ? why : "the interpreter had moved on, or its frame chain did not validate, when"
					" read after the sample: see stax info",
					minor >= 12 ? "; -X perf names every frame at the sample's moment" : ""));
			continue;
		}
		if (minor >= 11 && minor <= 13 && !strcmp(profile_meta(p, "python_frames") ? profile_meta(p, "python_frames") : "", "0")) {
			add(f, 0.3 * n / kept + 0.1, xasprintf("process %u runs Python %d.%d without a perf map,"
				" recorded with --no-python-frames: its Python functions all show as"
				" _PyEval_EvalFrameDefault. Record without that option to read them from the"
				" interpreter%s", m->pid, major, minor,
				minor >= 12 ? ", or run it with -X perf" : ""));
			continue;
		}
		if (minor >= 12)
			add(f, 0.3 * n / kept + 0.1, xasprintf("process %u runs Python %d.%d without a perf map:"
				" its Python functions all show as _PyEval_EvalFrameDefault. Record it with"
				" python%d.%d -X perf (or PYTHONPERFSUPPORT=1)%s; stax unwinds through its"
				" trampolines even without frame pointers", m->pid, major, minor, major, minor,
				minor >= 13 ? ", or -X perf_jit" : ""));
		else
			add(f, 0.3 * n / kept + 0.05, xasprintf("process %u runs Python %d.%d: Python function"
				" names need Python 3.12 or later with -X perf (this version has no perf support)",
				m->pid, major, minor));
	}
}

/* Stacks cut short of the root (truncated), by why. */
static void truncation_findings(const struct profile *p, struct findings *f,
				const uint64_t *stops, uint64_t kept)
{
	uint64_t copy = stops[UNWIND_STOP_COPY], chain = stops[UNWIND_STOP_CHAIN];
	uint64_t depth = stops[UNWIND_STOP_DEPTH];
	uint64_t size = profile_meta_u64(p, "stack_size");
	uint64_t max_stack = profile_meta_u64(p, "max_stack");

	uint64_t within = profile_meta_u64(p, "copy_cut_within_max");
	uint64_t beyond = profile_meta_u64(p, "copy_cut_beyond_max");

	uint64_t stale = profile_meta_u64(p, "deep_stacks_stale");
	uint64_t gone = profile_meta_u64(p, "deep_stacks_gone");
	const char *rd = profile_meta(p, "read_stack");
	char how[200] = "";

	if (rd && !strcmp(rd, "0"))
		snprintf(how, sizeof(how), "; they were not read on from the process (--no-read-stack)");
	else if (stale || gone)
		snprintf(how, sizeof(how), "; reading on from the process came too late for %" PRIu64
			 " (%" PRIu64 " had returned from where the copy ended, %" PRIu64
			 " were of a process that had exited)", stale + gone, stale, gone);
	if (copy && beyond > within)
		/* most cut stacks are deeper than any copy */
		add(f, (double)copy / kept + 0.15, xasprintf("%" PRIu64 " stacks were cut where the stack"
			" copy ended (%" PRIu64 " bytes); %" PRIu64 " of those whose thread's stack top is known"
			" were deeper than 65528 bytes, the largest copy the kernel takes, so --stack-size does"
			" not help%s. Build the deep code with -fno-omit-frame-pointer: the kernel's chain"
			" continues such stacks", copy, size, beyond, how));
	else if (copy) {
		if (size && size < 65528)
			add(f, (double)copy / kept + 0.15, xasprintf("%" PRIu64 " stacks were cut where the stack"
				" copy ended (%" PRIu64 " bytes): the frames beyond it keep no frame pointers for the"
				" kernel's chain to continue (record with --stack-size 65528, or build the deep code"
				" with -fno-omit-frame-pointer)", copy, size));
		else
			add(f, (double)copy / kept + 0.15, xasprintf("%" PRIu64 " stacks were cut where the stack"
				" copy ended%s: the frames beyond it keep no frame pointers for the kernel's chain"
				" to continue (build the deep code, or the code with large stack frames, with"
				" -fno-omit-frame-pointer)", copy, size ? " (already the largest, 65528 bytes)" : ""));
	}
	if (chain)
		add(f, (double)chain / kept + 0.16, xasprintf("%" PRIu64 " stacks were cut at"
			" kernel.perf_event_max_stack (%" PRIu64 " frames): the kernel stops the frame-pointer"
			" chain there (run: sudo sysctl kernel.perf_event_max_stack=1024, then record again)",
			chain, max_stack ? max_stack : 127));
	if (depth)
		add(f, (double)depth / kept + 0.1, xasprintf("%" PRIu64 " stacks are deeper than stax's"
			" limit of %d frames: their outermost callers are left out", depth, UNWIND_MAX_DEPTH));
}

static bool is_ldso(const char *module)
{
	return !strncmp(module, "ld-linux", 8) || !strncmp(module, "ld.so", 5);
}

/* Where stacks stop without reaching a root, in module m, and why. */
/* A finished recording keeps the symbols of when it stopped: can module
 * be resolved better now (a symbol table found for the file the
 * recording names, by build-id or debug link)? */
static bool symbols_now(const struct profile *p, const char *module)
{
	struct sym_session *ss;
	const char *src = NULL, *was;
	size_t nsyms = 0, i;
	char key[300];
	bool now = false;

	if (p->partial || !p->has_symbols)
		return false; /* resolved from the binaries at every query already */
	snprintf(key, sizeof(key), "symbols:%s", module);
	was = profile_meta(p, key);
	for (i = 0; i < p->nmaps; i++) {
		const struct prof_mapping *m = &p->maps[i];
		struct module_ref ref;
		if (!m->path || strcmp(path_base(m->path), module))
			continue;
		ref = profile_mapping_ref(m);
		ss = sym_session_new();
		now = sym_module_info(ss, &ref, &src, &nsyms) && nsyms && strcmp(src, "none") &&
		      strcmp(src, "dynsym") && (!was || strncmp(was, src, strlen(src)));
		sym_session_free(ss);
		break;
	}
	return now;
}

static void module_finding(const struct profile *p, struct findings *f, const struct mod_stat *m,
			   uint64_t kept, bool fp_mode)
{
	const char *path = mapping_path(p, m->mapping);
	struct fp_report fr;
	double share = (double)m->ends / kept;
	char fpnote[160] = "";
	size_t i, top = UNWIND_STOP_NONE;

	if (m->ends * 100 < kept || m->module[0] == '[')
		return;
	for (i = 1; i < UNWIND_NSTOPS; i++)
		if (m->stops[i] > m->stops[top])
			top = i;
	if (path && fp_check_mapping(p, m->mapping, &fr) == 0 && fr.functions)
		snprintf(fpnote, sizeof(fpnote), " (%zu of %zu functions there keep frame pointers%s)",
			 fr.with_fp, fr.functions, fr.has_eh_frame ? "; it has .eh_frame CFI" : "");
	if (fp_mode) {
		add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s: it was built without frame"
			" pointers%s. Record with the default --unwind hybrid (DWARF), or rebuild it with"
			" -fno-omit-frame-pointer", 100 * share, m->module, fpnote));
		return;
	}
	switch (top) {
	case UNWIND_STOP_NO_CFI:
		add(f, share + 0.1, xasprintf("%.1f%% of stacks break in %s: no unwind information"
			" covers the code there and its frame pointer was not usable%s (rebuild it with"
			" -fno-omit-frame-pointer or with unwind tables)", 100 * share, m->module, fpnote));
		break;
	case UNWIND_STOP_REG:
		if (is_ldso(m->module))
			add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s, in the dynamic linker's"
				" lazy binding of a library call (_dl_runtime_resolve): its unwind rule needs"
				" rbx, which stax does not carry across frames (run the program with"
				" LD_BIND_NOW=1, or link it with -Wl,-z,now)", 100 * share, m->module));
		else
			add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s: its unwind rules need a"
				" register that stax does not carry across frames (only rsp, rbp and the return"
				" address are; rebuild it with -fno-omit-frame-pointer)", 100 * share, m->module));
		break;
	case UNWIND_STOP_BAD_ADDR:
		add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s: its unwind information reads"
			" below the stack pointer (hand-written assembly that saves registers there),"
			" which no stack copy holds", 100 * share, m->module));
		break;
	case UNWIND_STOP_SWITCH:
		/* not the copy's size: the other stack is elsewhere */
		add(f, share + 0.1, xasprintf("%.1f%% of stacks end in %s where the runtime switches"
			" stacks (Go's systemstack, mcall or morestack; Rust's psm segments) and the stack it"
			" came from could not be reached: the kernel's frame-pointer chain does not go there,"
			" and it could not be read from the process (gone by then, or a recording from a"
			" file). A larger --stack-size does not help", 100 * share, m->module));
		break;
	case UNWIND_STOP_NO_ACCESS:
		add(f, share + 0.1, xasprintf("%.1f%% of stacks end in %s at a stack switch whose other"
			" stack stax could not read from the process: it needs ptrace access to it (record"
			" as root, as the process's user under kernel.yama.ptrace_scope=0, or start the"
			" program under stax)", 100 * share, m->module));
		break;
	case UNWIND_STOP_NOT_CODE:
		add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s: the next return address"
			" would be outside any executable mapping (code there uses rbp for data, or switches"
			" stacks in a way stax does not know), so the stack ends there instead of showing"
			" a made-up caller", 100 * share, m->module));
		break;
	case UNWIND_STOP_LOOP:
		add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s: unwinding went round in a"
			" loop (a frame came again), so the stack ends there instead of repeating made-up"
			" callers", 100 * share, m->module));
		break;
	case UNWIND_STOP_SP:
	case UNWIND_STOP_BAD_CFI:
	case UNWIND_STOP_SIGNAL:
	case UNWIND_STOP_NO_REGS:
		add(f, share + 0.1, xasprintf("%.1f%% of stacks stop in %s: %s", 100 * share, m->module,
			unwind_stop_name((enum unwind_stop)top)));
		break;
	default:
		/* truncated (the findings above say why), or not known */
		add(f, share + 0.05, xasprintf("%.1f%% of stacks end in %s without reaching a root%s%s%s",
			100 * share, m->module, top ? " (" : "", top ? unwind_stop_name((enum unwind_stop)top) : "",
			top ? ")" : ""));
		break;
	}
}

/* Node.js with --perf-basic-prof names the functions V8 compiled, but a
 * function still run by the interpreter is a frame of the shared
 * Builtins_InterpreterEntryTrampoline: its callers lose their names unless
 * V8 gives each one a frame of its own. */
static void node_findings(const struct profile *p, const struct view_filter *flt,
			  struct findings *f, uint64_t kept)
{
	uint64_t interp = 0;
	size_t i;
	bool js = false;

	for (i = 0; i < p->nperfmaps && !js; i++)
		js = memmem(p->perfmaps[i].data, p->perfmaps[i].size, " JS:", 4) != NULL;
	if (!js)
		return;
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		if (!view_keep(p, flt, s))
			continue;
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			if (fn && fn->known && !strcmp(fn->name, "Builtins_InterpreterEntryTrampoline")) {
				interp++;
				break;
			}
		}
	}
	if (interp * 20 >= kept)
		add(f, 0.2 * interp / kept + 0.05, xasprintf("%.0f%% of stacks go through"
			" Builtins_InterpreterEntryTrampoline: JavaScript functions still run by V8's"
			" interpreter have no name there. Run node with --perf-basic-prof"
			" --interpreted-frames-native-stack to name them too", 100.0 * interp / kept));
}

/* What doctor learns from the samples the filter keeps. */
struct doctor_counts {
	uint64_t kept, rooted, q[5], cut;  /* cut: stacks a damaged chunk ended;
					    * q: by SAMPLE_VERDICT() */
	uint64_t stops[UNWIND_NSTOPS];     /* stacks short of a root, by why */
	struct mod_stat *mods;
	size_t nmods;
};

static void count_stacks(const struct profile *p, const struct view_filter *flt, struct doctor_counts *c)
{
	size_t i, modcap = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd, *outer = NULL;
		bool root = false, lost = false;
		if (!view_keep(p, flt, s))
			continue;
		c->kept++;
		c->q[SAMPLE_VERDICT(s->quality)]++;
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			struct mod_stat *m;
			lost |= (nd->flags & NODE_F_LOST) != 0; /* a damaged chunk cut the stack */
			if (!fn)
				continue;
			if (fn->known && unwind_is_root_name(fn->name))
				root = true;
			m = mod_get(&c->mods, &c->nmods, &modcap, fn->module);
			if (!m->mapping)
				m->mapping = nd->mapping;
			m->frames++;
			if (!fn->known)
				m->unknown++;
			if (!fn->kernel)
				outer = nd;
		}
		c->rooted += root;
		if (!root && lost) {
			c->cut++; /* the damage, not the unwinder, ended it */
		} else if (!root) {
			unsigned stop = SAMPLE_Q_STOP(s->quality);
			if (stop >= UNWIND_NSTOPS)
				stop = UNWIND_STOP_NONE;
			c->stops[stop]++;
			if (outer) {
				const struct prof_func *fn = profile_func(p, outer->func);
				struct mod_stat *m = mod_get(&c->mods, &c->nmods, &modcap, fn ? fn->module : "[unknown]");
				m->ends++;
				m->stops[stop]++;
				if (SAMPLE_Q(s->quality) == UNWIND_Q_BROKEN)
					m->broken++;
				if (SAMPLE_Q(s->quality) == UNWIND_Q_TRUNCATED)
					m->truncated++;
			}
		}
	}
}

/* Stacks with frames read after their sample (the late verdict): why,
 * and what reads them at the sample. */
static void late_findings(const struct profile *p, struct findings *f, uint64_t late, uint64_t kept)
{
	const char *path = profile_meta(p, "moment"), *why = profile_meta(p, "moment_why");
	double share = (double)late / (double)kept;

	if (!late)
		return;
	if (path && !strcmp(path, "bpf")) {
		add(f, share + 0.05, xasprintf("%" PRIu64 " stacks (%.1f%%) have frames read after their sample"
			" (late): the in-kernel reader read the rest at the sample, but did not know yet what to"
			" read for their thread (the first deep stack of a shape, the first samples of a Python"
			" process). Nothing proves such frames the sample's; --no-late-frames leaves them out of"
			" the views", late, 100 * share));
		return;
	}
	add(f, share + 0.3, xasprintf("%" PRIu64 " stacks (%.1f%%) have frames read after their sample (late):"
		" Python frames read from the interpreter, or the outer frames of a stack deeper than its"
		" copy read from the process, when the program may have moved on, so they can show callers"
		" that were not the sample's. The in-kernel reader reads them at the sample, and it was off"
		" (%s): record as root, or with CAP_BPF and CAP_PERFMON, on a kernel with BTF, without"
		" --no-bpf. Meanwhile --no-late-frames leaves those frames out of the views", late, 100 * share,
		why && *why ? why : "the recording does not say why"));
}

/* Every finding, each with its weight (most important first once sorted). */
static void doctor_findings(const struct profile *p, const struct view_filter *flt,
			    const struct doctor_counts *c, struct findings *f)
{
	uint64_t lost = p->lost_records + p->lost_samples;
	const char *unwind = profile_meta(p, "unwind");
	const char *kernel = profile_meta(p, "kernel_frames");
	bool fp_mode = !unwind || !strcmp(unwind, "fp");
	struct perm_facts pf;     /* as the recorder found them */
	char why[512];
	size_t i;

	perm_parse(&pf, profile_meta(p, "perm") ? profile_meta(p, "perm") : "");
	if (!c->kept) {
		add(f, 1.0, xasprintf("no samples%s: the program may have been idle or too short"
				       " (record a longer run, or a busier part of it)",
				       p->nsamples ? " match the filter" : " in this recording"));
	} else {
		double lost_share = (double)lost / (double)(c->kept + lost);
		if (lost)
			add(f, lost_share + 0.5, xasprintf("%" PRIu64 " records were lost (%.1f%%): the ring buffer"
				" filled faster than stax drained it (lower -F, or record fewer processes)",
				lost, 100 * lost_share));
		if (c->kept < 200)
			add(f, 0.05, xasprintf("only %" PRIu64 " samples: shares below ~5%% are noise"
				" (record longer, or raise -F)", c->kept));
		if (p->damage.chunks) {
			char stacks[128] = "";
			if (c->cut)
				snprintf(stacks, sizeof(stacks), ", and %" PRIu64 " stacks end early where frames it"
					 " defined are missing", c->cut);
			add(f, 0.6 + (double)c->cut / c->kept, xasprintf("the recording has %" PRIu64 " damaged chunk%s"
				" (the first at offset %" PRIu64 ": %s), skipped: the samples in %s are missing%s"
				" (copy the file again, or record again)", p->damage.chunks,
				p->damage.chunks == 1 ? "" : "s", p->damage.first, p->damage.why,
				p->damage.chunks == 1 ? "it" : "them", stacks));
		}
		if (p->throttles) {
			const char *freq = profile_meta(p, "freq");
			add(f, 0.04, xasprintf("the kernel throttled sampling %" PRIu64 " time%s: %s; the"
				" effective rate in 'stax info' is lower than requested", p->throttles,
				p->throttles == 1 ? "" : "s",
				perm_why(PERM_THROTTLE, &pf, freq ? atol(freq) : 0, why, sizeof(why))));
		}
		if (c->rooted + c->cut < c->kept) {
			double broken = 1.0 - (double)(c->rooted + c->cut) / c->kept;
			add(f, broken + 0.2, xasprintf("%.1f%% of stacks (%" PRIu64 " of %" PRIu64 ") do not reach main or"
				" a thread start function, so callers are missing from top and flame",
				100 * broken, c->kept - c->rooted - c->cut, c->kept));
			truncation_findings(p, f, c->stops, c->kept);
		}
		for (i = 0; i < c->nmods; i++)
			module_finding(p, f, &c->mods[i], c->kept, fp_mode);
		for (i = 0; i < c->nmods; i++) {
			struct mod_stat *m = &c->mods[i];
			double share = (double)m->unknown / (m->frames ? m->frames : 1);
			if (!m->unknown || share < 0.01 || !strcmp(m->module, "[unknown]"))
				continue;
			if (!strcmp(m->module, "[kernel.kallsyms]"))
				add(f, 0.03, xasprintf("kernel frames have no names: /proc/kallsyms hides its"
					" addresses from you (it shows them to root, to CAP_SYSLOG, and to everyone"
					" when kernel.kptr_restrict is 0 and kernel.perf_event_paranoid is 1 or less:"
					" run as root, or sudo sysctl kernel.kptr_restrict=0"
					" kernel.perf_event_paranoid=1)"));
			else if (symbols_now(p, m->module))
				add(f, 0.02 + share * m->frames / (c->kept ? c->kept : 1) * 0.1,
				    xasprintf("%.0f%% of frames in %s have no symbol, but symbols for it can be"
					" found now (by its build-id or debug link): run stax symbolize %s",
					100 * share, m->module, p->path ? p->path : "FILE"));
			else
				add(f, 0.02 + share * m->frames / (c->kept ? c->kept : 1) * 0.1,
				    xasprintf("%.0f%% of frames in %s have no symbol (install its debug symbols,"
					" e.g. the -dbgsym or -dbg package, or do not strip it)", 100 * share, m->module));
		}
		for (i = 0; i < c->nmods; i++)
			if (!strcmp(c->mods[i].module, "[unknown]") && c->mods[i].frames * 100 >= c->kept && !fp_mode)
				add(f, 0.06, xasprintf("%" PRIu64 " frames are in code outside any file mapping (JIT"
					" or generated code): names need /tmp/perf-PID.map (node --perf-basic-prof,"
					" python -X perf)", c->mods[i].frames));
			else if (!strcmp(c->mods[i].module, "[unknown]") && c->mods[i].frames * 100 >= c->kept)
				add(f, 0.06, xasprintf("%" PRIu64 " frames are at addresses outside any file mapping:"
					" in a frame-pointer recording these are mostly words a broken chain"
					" followed, not callers (record with the default --unwind hybrid); JIT code"
					" is named from /tmp/perf-PID.map", c->mods[i].frames));
		python_findings(p, flt, f, c->kept);
		node_findings(p, flt, f, c->kept);
		late_findings(p, f, c->q[UNWIND_Q_LATE], c->kept);
		if (kernel && !strcmp(kernel, "0"))
			add(f, 0.01, xasprintf("kernel frames were not recorded, so time in system calls"
				" shows as the calling user function: %s",
				perm_why(PERM_KERNEL, &pf, 0, why, sizeof(why))));
	}
}

void view_doctor(const struct profile *p, const struct view_filter *flt, bool json, FILE *out)
{
	struct doctor_counts c = { 0 };
	struct findings f = { 0 };
	size_t i;

	count_stacks(p, flt, &c);
	doctor_findings(p, flt, &c, &f);
	if (f.n)
		qsort(f.v, f.n, sizeof(*f.v), cmp_finding);
	if (json) {
		struct jw w;
		jw_begin(&w, out);
		jw_u64(&w, "samples", c.kept);
		jw_u64(&w, "reached_root", c.rooted);
		jw_array(&w, "findings");
		for (i = 0; i < f.n; i++)
			jw_str(&w, NULL, f.v[i].text);
		jw_array_end(&w);
		jw_end(&w);
	} else {
		fprintf(out, "%s: %" PRIu64 " samples, %.1f%% of stacks reach main or a thread start function\n",
			p->path, c.kept, c.kept ? 100.0 * c.rooted / c.kept : 0.0);
		if (!f.n)
			fputs("nothing to fix: stacks are complete, nothing was lost\n", out);
		for (i = 0; i < f.n; i++)
			fprintf(out, "%zu. %s\n", i + 1, f.v[i].text);
	}
	for (i = 0; i < f.n; i++)
		free(f.v[i].text);
	free(f.v);
	free(c.mods);
}
