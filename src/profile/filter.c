/* filter.c - --time, --focus, --exclude, --hide and --module: the part of
 * a recording every view and export sees (see filter.h). */
#include "profile/filter.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096

bool profile_filter_active(const struct prof_filter *f)
{
	return f->has_time || f->focus || f->exclude || f->hide || f->module;
}

uint64_t profile_start_ns(const struct profile *p)
{
	uint64_t start = profile_meta_u64(p, "start_ns");
	if (!start || (p->first_time && start > p->first_time))
		start = p->first_time;
	return start;
}

double profile_duration_s(const struct profile *p)
{
	uint64_t start = profile_start_ns(p), end = profile_meta_u64(p, "end_ns");
	if (end < p->last_time)
		end = p->last_time;
	return end > start ? (double)(end - start) / 1e9 : 0;
}

/* One bound: a number of seconds (or percent when the other has '%'),
 * empty for "open". */
static int parse_bound(const char *s, size_t n, bool *pct, double *out, bool *open)
{
	char buf[64], *end;
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*open = !n;
	if (!n)
		return 0;
	if (buf[n - 1] == '%') {
		*pct = true;
		buf[n - 1] = '\0';
	}
	errno = 0;
	*out = strtod(buf, &end);
	if (errno || *end || end == buf || !isfinite(*out) || *out < 0)
		return -1;
	return 0;
}

int profile_filter_parse_time(struct prof_filter *f, const char *arg, struct err *err)
{
	const char *comma = strchr(arg, ',');
	bool pa = false, pb = false, oa, ob;
	double a = 0, b = 0;

	if (!comma || parse_bound(arg, (size_t)(comma - arg), &pa, &a, &oa) ||
	    parse_bound(comma + 1, strlen(comma + 1), &pb, &b, &ob) || (oa && ob)) {
		err_set(err, -1, "--time takes START,END in seconds from the start of the recording"
			 " (e.g. 1.5,3) or percent of it (e.g. 0%%,50%%), not '%s'", arg);
		return -1;
	}
	if ((!oa && !ob && pa != pb)) {
		err_set(err, -1, "--time '%s' mixes seconds and percent (give both in one unit)", arg);
		return -1;
	}
	f->time_pct = pa || pb;
	if (ob)
		b = f->time_pct ? 100 : INFINITY;
	if (b < a || (f->time_pct && b > 100)) {
		err_set(err, -1, "--time '%s' is not a range (START <= END%s)", arg,
			 f->time_pct ? ", percent at most 100" : "");
		return -1;
	}
	f->has_time = true;
	f->t_start = a;
	f->t_end = b;
	return 0;
}

static int compile(regex_t *re, const char *opt, const char *pat, struct err *err)
{
	int rc = regcomp(re, pat, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char why[256];
		regerror(rc, re, why, sizeof(why));
		err_set(err, -1, "%s '%s' is not a regular expression: %s", opt, pat, why);
		return -1;
	}
	return 0;
}

int profile_filter_check(const struct prof_filter *f, struct err *err)
{
	const char *opt[3] = { "--focus", "--exclude", "--hide" };
	const char *pat[3] = { f->focus, f->exclude, f->hide };
	int i;
	for (i = 0; i < 3; i++) {
		regex_t re;
		if (!pat[i])
			continue;
		if (compile(&re, opt[i], pat[i], err))
			return -1;
		regfree(&re);
	}
	return 0;
}

/* Per function: which patterns its name matches. */
enum { M_FOCUS = 1, M_EXCLUDE = 2, M_HIDE = 4, M_MODULE = 8 };

static bool module_is(const char *module, const char *want)
{
	const char *slash = strrchr(want, '/');
	size_t n;
	if (!module)
		return false;
	/* a path names the same module as its base name */
	want = slash ? slash + 1 : want;
	if (!strcmp(module, want))
		return true;
	/* a shared object by its name without ".so" and its version:
	 * liblzma for liblzma.so.5.4.1, libc for libc.so.6 */
	n = strlen(want);
	return n && !strncmp(module, want, n) && !strncmp(module + n, ".so", 3) &&
	       (!module[n + 3] || module[n + 3] == '.');
}

struct rewrite {
	struct profile *p;
	const uint8_t *match;        /* per func id */
	const struct prof_filter *f;
	struct hmap made;            /* (new parent << 32 | old node) -> new node */
	uint32_t *chain;
};

static uint8_t node_match(const struct rewrite *w, const struct prof_node *nd)
{
	if ((nd->flags & 0xff) == NODE_ROOT || nd->func > w->p->nfuncs)
		return 0;
	return w->match[nd->func];
}

/* The node id (parent new_parent, a copy of old) made once. */
static uint32_t node_copy(struct rewrite *w, uint32_t new_parent, uint32_t old)
{
	struct profile *p = w->p;
	uint64_t key = (uint64_t)new_parent << 32 | old;
	struct prof_node nd;
	uint32_t id;

	if (hmap_get(&w->made, key, &id))
		return id;
	nd = p->nodes[old - 1];
	if (nd.parent != new_parent) {
		/* its caller is gone: it is no longer inlined into it */
		nd.flags &= ~NODE_F_INLINE;
		nd.parent = new_parent;
	}
	nd.depth = new_parent ? p->nodes[new_parent - 1].depth + 1 : 0;
	GROW(p->nodes, p->nodecap, p->nnodes + 1);
	p->nodes[p->nnodes++] = nd;
	id = (uint32_t)p->nnodes;
	hmap_put(&w->made, key, id);
	return id;
}

/* The stack that replaces *stack; false: drop the sample. */
static bool rewrite_stack(struct rewrite *w, uint32_t *stack)
{
	struct profile *p = w->p;
	const struct prof_filter *f = w->f;
	size_t n = 0, j, outer = SIZE_MAX, leaf = SIZE_MAX;
	uint32_t id = *stack, node;
	bool changed = false;

	/* leaf first, the root (if any) last */
	while (id && n < MAX_DEPTH) {
		const struct prof_node *nd = profile_node(p, id);
		if (!nd)
			break;
		w->chain[n++] = id;
		id = nd->parent;
	}
	for (j = 0; j < n; j++) {
		uint8_t m = node_match(w, &p->nodes[w->chain[j] - 1]);
		if (f->exclude && (m & M_EXCLUDE))
			return false;
		if (m & M_FOCUS)
			outer = j;
		if (leaf == SIZE_MAX && (p->nodes[w->chain[j] - 1].flags & 0xff) != NODE_ROOT &&
		    !(f->hide && (m & M_HIDE)))
			leaf = j;
	}
	if (f->focus && outer == SIZE_MAX)
		return false;
	if (f->module && (leaf == SIZE_MAX || !(node_match(w, &p->nodes[w->chain[leaf] - 1]) & M_MODULE)))
		return false;
	/* frames to keep: chain[0 .. outer] (and the root), without hidden ones */
	if (f->focus && outer + 1 < n) {
		size_t last = n - 1;
		bool root = (p->nodes[w->chain[last] - 1].flags & 0xff) == NODE_ROOT;
		if (outer + 1 != last || !root)
			changed = true;
		/* drop the frames between the outermost match and the root */
		if (root) {
			w->chain[outer + 1] = w->chain[last];
			n = outer + 2;
		} else {
			n = outer + 1;
		}
	}
	if (f->hide)
		for (j = 0; j < n; j++)
			if (node_match(w, &p->nodes[w->chain[j] - 1]) & M_HIDE)
				changed = true;
	if (!changed)
		return true;
	node = 0;
	for (j = n; j-- > 0;) {
		uint32_t old = w->chain[j];
		const struct prof_node *nd = &p->nodes[old - 1];
		if (f->hide && (node_match(w, nd) & M_HIDE))
			continue;
		node = node_copy(w, node, old);
	}
	/* a stack whose every frame was hidden keeps its root (or nothing) */
	*stack = node;
	return true;
}

int profile_filter(struct profile *p, const struct prof_filter *f, struct err *err)
{
	regex_t re[3];
	const char *pat[3] = { f->focus, f->exclude, f->hide };
	const char *opt[3] = { "--focus", "--exclude", "--hide" };
	bool have[3] = { false, false, false };
	uint8_t *match = NULL;
	uint64_t t0 = 0, t1 = UINT64_MAX;
	struct rewrite w;
	size_t i, k, n;
	int ret = -1;

	for (i = 0; i < 3; i++) {
		if (!pat[i])
			continue;
		if (compile(&re[i], opt[i], pat[i], err))
			goto out;
		have[i] = true;
	}
	if (f->has_time) {
		uint64_t start = profile_start_ns(p);
		uint64_t end = p->last_time > start ? p->last_time : start;
		double a = f->t_start, b = f->t_end;
		if (f->time_pct) {
			a = a / 100 * (double)(end - start) / 1e9;
			b = b / 100 * (double)(end - start) / 1e9;
		}
		t0 = start + (uint64_t)(a * 1e9);
		/* an END of 100% or past the end keeps the last sample */
		t1 = isinf(b) || (f->time_pct && f->t_end >= 100) ? UINT64_MAX : start + (uint64_t)(b * 1e9);
	}
	match = xcalloc(p->nfuncs + 1, 1);
	for (i = 1; i <= p->nfuncs; i++) {
		const struct prof_func *fn = &p->funcs[i - 1];
		const char *name = fn->label ? fn->label : fn->name;
		for (k = 0; k < 3; k++)
			if (have[k] && !regexec(&re[k], name, 0, NULL, 0))
				match[i] |= (uint8_t)(1u << k);
		if (f->module && module_is(fn->module, f->module))
			match[i] |= M_MODULE;
	}
	memset(&w, 0, sizeof(w));
	w.p = p;
	w.match = match;
	w.f = f;
	hmap_init(&w.made);
	w.chain = xmalloc(MAX_DEPTH * sizeof(*w.chain));
	for (i = n = 0; i < p->nsamples; i++) {
		struct rec_sample s = p->samples[i];
		if (s.time < t0 || s.time > t1)
			continue;
		if (f->focus || f->exclude || f->hide || f->module) {
			/* a sample without a stack has no frame to match */
			if (!s.stack && (f->focus || f->module))
				continue;
			uint32_t st = s.stack;
			if (st && !rewrite_stack(&w, &st))
				continue;
			s.stack = st;
		}
		p->samples[n++] = s;
	}
	p->nsamples = n;
	for (i = n = 0; i < p->noffcpu; i++) {
		struct rec_offcpu o = p->offcpu[i];
		/* an interval counts where it began */
		if (o.start < t0 || o.start > t1)
			continue;
		if (f->focus || f->exclude || f->hide || f->module) {
			if (!o.stack && (f->focus || f->module))
				continue;
			uint32_t st = o.stack;
			if (st && !rewrite_stack(&w, &st))
				continue;
			o.stack = st;
		}
		p->offcpu[n++] = o;
	}
	p->noffcpu = n;
	hmap_release(&w.made);
	free(w.chain);
	ret = 0;
out:
	for (i = 0; i < 3; i++)
		if (have[i])
			regfree(&re[i]);
	free(match);
	return ret;
}
