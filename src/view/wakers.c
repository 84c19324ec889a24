/* wakers.c - who ended the off-CPU waits (record --off-cpu as root).
 *
 * Each off-CPU interval the filter keeps that ended by a wake-up (not a
 * preemption, not still open) is paired with its rec_waker (same tid and
 * start). The views weigh wakers by the off-CPU time they ended: the
 * waking threads (or [irq], [softirq], [not recorded]), the waking
 * functions (one per wake-up: view_blocking_frame() of the waker's stack,
 * the innermost frame of the program's own code, never a thread's root
 * such as start_thread or clone3, which is on every stack), and in the
 * folded form the waiter's stack (its kernel frames folded unless
 * kernel_waits), "--", and the waker's stack leaf first, as BCC's
 * offwaketime prints them.
 */
#include "view/view.h"
#include "lib/buf.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

struct wk_row {
	char *label;             /* "NAME/TID", "[irq]", "[softirq]", "[not recorded]" */
	uint32_t pid, tid;
	int kind;                /* enum waker_kind, or -1 not recorded */
	uint64_t ns, waits;
};

struct fn_row {
	uint32_t func;
	uint64_t ns, waits;
};

static int cmp_wk(const void *a, const void *b)
{
	const struct wk_row *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(x->label, y->label);
}

static int cmp_fn(const void *a, const void *b)
{
	const struct fn_row *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* The waker of each interval: p->wakers index + 1 by (tid, start). */
static void index_wakers(const struct profile *p, struct hmap *idx)
{
	size_t i;
	for (i = 0; i < p->nwakers; i++)
		hmap_put(idx, hash_mix(p->wakers[i].w.tid, p->wakers[i].w.start), (uint32_t)(i + 1));
}

const struct prof_waker *view_waker_of(const struct profile *p, const struct hmap *idx,
				       const struct rec_offcpu *o)
{
	uint32_t at;
	const struct prof_waker *w;
	if (!hmap_get(idx, hash_mix(o->tid, o->start), &at))
		return NULL;
	w = &p->wakers[at - 1];
	return w->w.tid == o->tid && w->w.start == o->start ? w : NULL;
}

/* The waits whose stack goes through one function (wakers_opts.through):
 * the function ids of that name or label, or the off-CPU reason whose
 * "[off-cpu: REASON]" frame it names. */
struct through {
	bool on;
	int reason;              /* -1: not a reason frame */
	bool *funcs;             /* [nfuncs + 1] */
	struct prof_frame *frames;
};

static void through_init(struct through *t, const struct profile *p, const char *name)
{
	size_t i;
	memset(t, 0, sizeof(*t));
	t->reason = -1;
	if (!name)
		return;
	t->on = true;
	for (i = 0; i < OFFCPU_NREASONS; i++)
		if (!strcmp(name, view_offcpu_frame((enum offcpu_reason)i)))
			t->reason = (int)i;
	t->funcs = xcalloc(p->nfuncs + 1, sizeof(*t->funcs));
	for (i = 0; i < p->nfuncs; i++)
		if (!strcmp(p->funcs[i].name, name) || (p->funcs[i].label && !strcmp(p->funcs[i].label, name)))
			t->funcs[i + 1] = true;
	t->frames = xmalloc(MAX_DEPTH * sizeof(*t->frames));
}

static void through_release(struct through *t)
{
	free(t->funcs);
	free(t->frames);
}

static bool through_keeps(const struct profile *p, const struct through *t, const struct rec_offcpu *o)
{
	size_t j, nf;
	if (!t->on)
		return true;
	if (t->reason >= 0)
		return (int)o->reason == t->reason;
	nf = profile_stack_frames(p, o->stack, t->frames, MAX_DEPTH);
	for (j = 0; j < nf; j++)
		if (t->frames[j].func <= p->nfuncs && t->funcs[t->frames[j].func])
			return true;
	return false;
}

/* Whether interval o counts: kept by f (and t), ended by a wake-up. */
static bool ended_by_wake(const struct profile *p, const struct view_filter *f, const struct through *t,
			  const struct rec_offcpu *o)
{
	return o->reason != OFFCPU_PREEMPT && !(o->flags & OFFCPU_F_OPEN) && o->duration &&
	       view_keep_offcpu(p, f, o) && through_keeps(p, t, o);
}

/* Whether the recording has wakers (META wakers = 1). */
static bool wakers_recorded(const struct profile *p)
{
	const char *rec = profile_meta(p, "wakers");
	return rec && !strcmp(rec, "1");
}

/* "[not recorded]", "[no wake-up seen]", "[irq]", "NAME/TID": a new
 * string. A wait with no WAKER record in a recording with wakers ended
 * by a wake-up the kernel sent no sched_waking sample for. */
static char *waker_label(const struct profile *p, const struct prof_waker *w)
{
	if (!w)
		return xstrdup(wakers_recorded(p) ? "[no wake-up seen]" : "[not recorded]");
	if (w->w.kind == WAKER_IRQ)
		return xstrdup("[irq]");
	if (w->w.kind == WAKER_SOFTIRQ)
		return xstrdup("[softirq]");
	if (w->w.kind == WAKER_OTHER)
		return xasprintf("[not recorded] %s/%u", w->comm ? w->comm : "?", w->w.waker_pid);
	return xasprintf("%s/%u", profile_comm(p, w->w.waker_pid, w->w.waker_tid, w->w.time),
			 w->w.waker_tid);
}

/* A frame as the folded views print it (kernel functions with _[k]). */
static void put_frame(struct buf *b, const struct profile *p, uint32_t func)
{
	const struct prof_func *fn = profile_func(p, func);
	buf_printf(b, "%s%s", fn ? view_func_name(p, func) : "[unknown]", fn && fn->kernel ? "_[k]" : "");
}

struct fold_line {
	char *text;
	uint64_t us;
};

static int cmp_fold(const void *a, const void *b)
{
	return strcmp(((const struct fold_line *)a)->text, ((const struct fold_line *)b)->text);
}

static void print_folded(const struct profile *p, const struct view_filter *f, const struct through *t,
			 const struct hmap *idx, bool kernel_waits, FILE *out)
{
	struct prof_frame *frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	struct fold_line *lines = NULL;
	size_t nl = 0, cap = 0, i, j, nf;
	struct buf b = BUF_INIT;

	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[i];
		const struct prof_waker *w;
		char *label;
		if (!ended_by_wake(p, f, t, o) || o->duration < 1000)
			continue;
		w = view_waker_of(p, idx, o);
		buf_reset(&b);
		buf_printf(&b, "%s", profile_comm(p, o->pid, o->tid, o->start));
		nf = view_offcpu_frames(p, o->stack, kernel_waits, frames, MAX_DEPTH);
		for (j = nf; j-- > 0;) {
			buf_printf(&b, ";");
			put_frame(&b, p, frames[j].func);
		}
		buf_printf(&b, ";--");
		if (w && w->w.kind == WAKER_THREAD) {
			nf = profile_stack_frames(p, w->w.stack, frames, MAX_DEPTH);
			for (j = 0; j < nf; j++) {
				buf_printf(&b, ";");
				put_frame(&b, p, frames[j].func);
			}
		}
		label = waker_label(p, w);
		buf_printf(&b, ";%s", label);
		free(label);
		buf_add_u8(&b, 0);
		GROW(lines, cap, nl + 1);
		lines[nl].text = xstrdup((const char *)b.data);
		lines[nl++].us = o->duration / 1000;
	}
	if (nl)
		qsort(lines, nl, sizeof(*lines), cmp_fold);
	for (i = 0; i < nl; i = j) {
		uint64_t us = 0;
		for (j = i; j < nl && !strcmp(lines[j].text, lines[i].text); j++)
			us += lines[j].us;
		fprintf(out, "%s %" PRIu64 "\n", lines[i].text, us);
	}
	for (i = 0; i < nl; i++)
		free(lines[i].text);
	free(lines);
	buf_release(&b);
	free(frames);
}

void view_wakers(const struct profile *p, const struct view_filter *f, const struct wakers_opts *o,
		 FILE *out)
{
	struct prof_frame *frames;
	struct wk_row *rows = NULL;
	struct fn_row *fns;
	struct hmap idx, rowidx;
	size_t nrows = 0, rowcap = 0, nfns = 0, i, nf, lim;
	uint64_t total = 0, waits = 0, unseen = 0, unseen_ns = 0;
	uint32_t at, fn;
	bool rec = wakers_recorded(p);
	struct through t;

	hmap_init(&idx);
	index_wakers(p, &idx);
	through_init(&t, p, o->through);
	if (o->folded) {
		print_folded(p, f, &t, &idx, o->kernel_waits, out);
		through_release(&t);
		hmap_release(&idx);
		return;
	}
	hmap_init(&rowidx);
	frames = xmalloc(MAX_DEPTH * sizeof(*frames));
	fns = xcalloc(p->nfuncs + 1, sizeof(*fns));
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *iv = &p->offcpu[i];
		const struct prof_waker *w;
		char *label;
		uint64_t h;
		if (!ended_by_wake(p, f, &t, iv))
			continue;
		w = view_waker_of(p, &idx, iv);
		total += iv->duration;
		waits++;
		if (!w && rec) {
			unseen++;
			unseen_ns += iv->duration;
		}
		label = waker_label(p, w);
		h = hash_bytes(label, strlen(label));
		while (hmap_get(&rowidx, h, &at) && strcmp(rows[at].label, label))
			h = hash_next(h);
		if (!hmap_get(&rowidx, h, &at)) {
			GROW(rows, rowcap, nrows + 1);
			memset(&rows[nrows], 0, sizeof(rows[nrows]));
			rows[nrows].label = label;
			rows[nrows].kind = w ? (int)w->w.kind : -1;
			if (w && (w->w.kind == WAKER_THREAD || w->w.kind == WAKER_OTHER)) {
				rows[nrows].pid = w->w.waker_pid;
				rows[nrows].tid = w->w.waker_tid;
			}
			at = (uint32_t)nrows++;
			hmap_put(&rowidx, h, at);
		} else {
			free(label);
		}
		rows[at].ns += iv->duration;
		rows[at].waits++;
		if (!w || w->w.kind != WAKER_THREAD)
			continue;
		/* the waking function: one per wake-up */
		nf = profile_stack_frames(p, w->w.stack, frames, MAX_DEPTH);
		if (!nf)
			continue;
		fn = frames[view_blocking_frame(p, frames, nf)].func;
		if (!fn || fn > p->nfuncs)
			continue;
		fns[fn].func = fn;
		fns[fn].ns += iv->duration;
		fns[fn].waits++;
	}
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), cmp_wk);
	for (i = 1; i <= p->nfuncs; i++)
		if (fns[i].ns)
			fns[nfns++] = fns[i];
	if (nfns)
		qsort(fns, nfns, sizeof(*fns), cmp_fn);
	if (o->json) {
		struct jw w;
		jw_begin(&w, out);
		if (o->through)
			jw_str(&w, "through", o->through);
		jw_bool(&w, "wakers_recorded", rec);
		jw_double(&w, "off_cpu_ms", total / 1e6, 3);
		jw_u64(&w, "waits", waits);
		jw_array(&w, "wakers");
		lim = o->limit && o->limit < nrows ? o->limit : nrows;
		for (i = 0; i < lim; i++) {
			const struct wk_row *r = &rows[i];
			jw_object(&w, NULL);
			jw_str(&w, "waker", r->label);
			jw_str(&w, "kind", r->kind < 0 ? (rec ? "not_seen" : "not_recorded") : r->kind == WAKER_IRQ ? "irq" :
				r->kind == WAKER_SOFTIRQ ? "softirq" : r->kind == WAKER_OTHER ? "other_process" : "thread");
			if (r->kind == WAKER_THREAD || r->kind == WAKER_OTHER) {
				jw_u64(&w, "pid", r->pid);
				jw_u64(&w, "tid", r->tid);
			}
			jw_double(&w, "off_cpu_ms", r->ns / 1e6, 3);
			jw_double(&w, "pct", total ? 100.0 * r->ns / total : 0.0, 2);
			jw_u64(&w, "waits", r->waits);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_array(&w, "functions");
		lim = o->limit && o->limit < nfns ? o->limit : nfns;
		for (i = 0; i < lim; i++) {
			const struct prof_func *fn = profile_func(p, fns[i].func);
			jw_object(&w, NULL);
			jw_str(&w, "name", view_func_name(p, fns[i].func));
			jw_str(&w, "module", fn->module);
			jw_bool(&w, "kernel", fn->kernel);
			jw_double(&w, "off_cpu_ms", fns[i].ns / 1e6, 3);
			jw_double(&w, "pct", total ? 100.0 * fns[i].ns / total : 0.0, 2);
			jw_u64(&w, "waits", fns[i].waits);
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
	} else if (!p->noffcpu) {
		fprintf(out, "no off-CPU time in this recording (record with stax record --off-cpu)\n");
	} else {
		if (!rec) {
			const char *why = profile_meta(p, "wakers_why");
			fprintf(out, "wakers were not recorded%s%s: every wait shows as [not recorded]\n",
				why ? ": " : "", why ? why : " (stax before wakers, or not --off-cpu)");
		}
		fprintf(out, "%" PRIu64 " waits ended by a wake-up, %.1f ms off the CPU (preempted and still open waits left out)\n\n",
			waits, total / 1e6);
		fprintf(out, "%10s %7s %7s  %s\n", "OFF_MS", "OFF%", "WAITS", "WAKER");
		lim = o->limit && o->limit < nrows ? o->limit : nrows;
		for (i = 0; i < lim; i++)
			fprintf(out, "%10.1f %6.2f%% %7" PRIu64 "  %s\n", rows[i].ns / 1e6,
				total ? 100.0 * rows[i].ns / total : 0.0, rows[i].waits, rows[i].label);
		fprintf(out, "\n%10s %7s %7s  %s\n", "OFF_MS", "OFF%", "WAITS", "WAKING FUNCTION");
		lim = o->limit && o->limit < nfns ? o->limit : nfns;
		for (i = 0; i < lim; i++) {
			const struct prof_func *fn = profile_func(p, fns[i].func);
			fprintf(out, "%10.1f %6.2f%% %7" PRIu64 "  %s%s\n", fns[i].ns / 1e6,
				total ? 100.0 * fns[i].ns / total : 0.0, fns[i].waits,
				view_func_name(p, fns[i].func), fn->kernel ? " [k]" : "");
		}
		if (unseen)
			fprintf(out, "\n%" PRIu64 " waits (%.1f ms) ended with no wake-up seen: the kernel sent no "
				"sched_waking sample for them (on some virtual machines the kernel sends no perf "
				"samples while a CPU idles: wake-ups by its interrupts are lost)\n", unseen, unseen_ns / 1e6);
	}
	for (i = 0; i < nrows; i++)
		free(rows[i].label);
	free(rows);
	free(fns);
	free(frames);
	through_release(&t);
	hmap_release(&rowidx);
	hmap_release(&idx);
}
