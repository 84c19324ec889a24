/* data.c - the page's data (/api/profile): the whole recording as one
 * compact JSON object of parallel arrays, from which the page computes
 * every panel with one selection applied to all of them.
 *
 *   strings   every name, module and file, once; the arrays below hold
 *             indexes into it (-1: none)
 *   threads   {pid, tid, name, pname (the process's name), outside (a
 *             waker that was not recorded: no samples of its own)}: the
 *             threads of the samples, then of the off-CPU intervals and
 *             wakers, then those the recording only names
 *   funcs     {name, module, kind, file, line}; index 0 is "[unknown]";
 *             kind is one character per function in one string: u the
 *             program's own code, s the system's (view_func_is_system():
 *             libc, ld.so, the interpreter, Go's runtime), k kernel,
 *             p Python, j JavaScript (perf map names "JS:*f file:L:C"),
 *             ? unknown. file and line: where the function is (Python and
 *             JavaScript names carry it), -1 and 0 when not known.
 *   nodes     the stack prefix tree without the process roots: {parent
 *             (-1 for an outermost frame; always a smaller index), func,
 *             file, line (the frame's source line), inline ("0"/"1" per
 *             node in one string: a function inlined into its parent
 *             frame)}
 *   samples   by time: {time (ns after the previous sample; the first
 *             after start_ns), thread, stack (the leaf node, -1 none),
 *             ns (CPU time it stands for: one number when all are the
 *             same)}
 *   offcpu    off-CPU intervals by start: {time (as samples'), duration
 *             (ns), thread, stack, reason (index into "reasons", +16 when
 *             still open at the end), waker (thread index, -1 none seen,
 *             -2 irq, -3 softirq), waker_stack}
 *
 * start_ns is a string (nanoseconds exceed 2^53). The page node index of
 * each profile node is kept (serve_data.index) for /api/asm.
 */
#include "serve/data.h"
#include "profile/filter.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct strtab {
	struct hmap index;
	const char **s;
	size_t n, cap;
};

static int64_t str_id(struct strtab *t, const char *s)
{
	uint64_t h;
	uint32_t at;
	if (!s)
		return -1;
	for (h = hash_bytes(s, strlen(s));; h = hash_next(h)) {
		if (!hmap_get(&t->index, h, &at))
			break;
		if (!strcmp(t->s[at], s))
			return at;
	}
	GROW(t->s, t->cap, t->n + 1);
	t->s[t->n] = s;
	hmap_put(&t->index, h, (uint32_t)t->n);
	return (int64_t)t->n++;
}

/* Integers are most of the output: written without printf, and the
 * arrays by hand rather than through lib/json.c's struct jw (a call and a
 * comma check per number): a million samples are several million
 * numbers, and this is the page's time to first draw (make bench 13). */
static void put_i64(FILE *out, int64_t v)
{
	char b[24], *e = b + sizeof(b), *q = e;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--q = '-';
	fwrite_unlocked(q, 1, (size_t)(e - q), out);
}

static void put_sep(FILE *out, size_t i)
{
	if (i)
		putc_unlocked(',', out);
}

struct threads {
	struct hmap index;       /* (pid << 32 | tid) -> index */
	uint32_t *pid, *tid;
	uint64_t *last;          /* time of the last sample or interval */
	bool *outside;
	const char **comm;       /* outside: the waker's name */
	size_t n, cap;
	uint64_t last_key;       /* the last thread asked for: samples come in runs */
	uint32_t last_at;
};

static uint32_t thread_of(struct threads *t, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t key = ((uint64_t)pid << 32) | tid;
	uint32_t at;
	if ((t->n && t->last_key == key && (at = t->last_at, true)) || hmap_get(&t->index, key, &at)) {
		t->last_key = key;
		t->last_at = at;
		if (time > t->last[at])
			t->last[at] = time;
		return at;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->pid = xrealloc(t->pid, t->cap * sizeof(*t->pid));
		t->tid = xrealloc(t->tid, t->cap * sizeof(*t->tid));
		t->last = xrealloc(t->last, t->cap * sizeof(*t->last));
		t->outside = xrealloc(t->outside, t->cap * sizeof(*t->outside));
		t->comm = xrealloc(t->comm, t->cap * sizeof(*t->comm));
	}
	t->pid[t->n] = pid;
	t->tid[t->n] = tid;
	t->last[t->n] = time;
	t->outside[t->n] = false;
	t->comm[t->n] = NULL;
	hmap_put(&t->index, key, (uint32_t)t->n);
	return (uint32_t)t->n++;
}

static char func_kind(const struct prof_func *fn)
{
	if (!fn)
		return '?';
	if (fn->kernel)
		return 'k';
	if (profile_func_is_python(fn))
		return 'p';
	if (fn->known && fn->module && (!strncmp(fn->module, "perf-", 5) || !strncmp(fn->module, "jit-", 4)) &&
	    (!strncmp(fn->name, "JS:", 3) || !strncmp(fn->name, "LazyCompile:", 12) ||
	     !strncmp(fn->name, "Function:", 9) || !strncmp(fn->name, "Script:", 7)))
		return 'j';
	return view_func_is_system(fn) ? 's' : 'u';
}

/* Where a Python or JavaScript function is, from its name: "py::f:FILE"
 * and "JS:*f FILE:LINE:COL"; the file is owned by the profile. */
static const char *func_file(struct profile *p, const struct prof_func *fn, char kind, uint32_t *line)
{
	const char *s, *c;
	*line = 0;
	if (fn->file) {
		*line = fn->line;
		return fn->file;
	}
	if (kind == 'p') {
		s = strchr(fn->name + 4, ':');
		return s && s[1] ? profile_own(p, s + 1, strlen(s + 1)) : NULL;
	}
	if (kind != 'j' || !(s = strchr(fn->name, ' ')))
		return NULL;
	s++;
	/* FILE:LINE:COL, FILE:LINE or FILE */
	c = strrchr(s, ':');
	if (c && c > s && strspn(c + 1, "0123456789") == strlen(c + 1)) {
		const char *c2 = c - 1;
		while (c2 > s && *c2 != ':')
			c2--;
		if (*c2 == ':' && strspn(c2 + 1, "0123456789") == (size_t)(c - c2 - 1)) {
			*line = (uint32_t)strtoul(c2 + 1, NULL, 10);
			c = c2;
		} else {
			*line = (uint32_t)strtoul(c + 1, NULL, 10);
		}
	} else {
		c = s + strlen(s);
	}
	if (!strncmp(s, "file://", 7))
		s += 7;
	return c > s ? profile_own(p, s, (size_t)(c - s)) : NULL;
}

/* Page node indexes: parents first, process roots left out. */
static uint32_t *node_order(const struct profile *p, uint32_t *index, size_t *n)
{
	uint32_t *order = xmalloc((p->nnodes + 1) * sizeof(*order));
	uint32_t *chain = xmalloc((p->nnodes + 1) * sizeof(*chain));
	size_t id, k;
	*n = 0;
	for (id = 1; id <= p->nnodes; id++) {
		uint32_t at = (uint32_t)id;
		size_t depth = 0;
		/* climb to the first node numbered already (or a root) */
		while (at && !index[at] && depth <= p->nnodes) {
			const struct prof_node *nd = profile_node(p, at);
			if (!nd || (nd->flags & 0xff) == NODE_ROOT)
				break;
			chain[depth++] = at;
			at = nd->parent;
		}
		for (k = depth; k-- > 0;) {
			order[*n] = chain[k];
			index[chain[k]] = (uint32_t)++*n;
		}
	}
	free(chain);
	return order;
}

static int cmp_by_time(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = p->samples[x].time, ty = p->samples[y].time;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_off_by_time(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = p->offcpu[x].start, ty = p->offcpu[y].start;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void put_node(FILE *out, const struct serve_data *d, uint32_t id)
{
	put_i64(out, id && id <= d->nindex && d->index[id] ? (int64_t)d->index[id] - 1 : -1);
}

/* view_sample_ns() without its two META look-ups per sample */
static uint64_t sample_ns(bool clock, uint64_t every, const struct rec_sample *s)
{
	return clock ? s->weight : every;
}

static void put_samples(FILE *out, const struct profile *p, struct serve_data *d, struct threads *th,
			uint64_t start)
{
	uint32_t *by = xmalloc((p->nsamples + 1) * sizeof(*by));
	const char *clk = profile_meta(p, "event_is_clock");
	bool clock = clk && !strcmp(clk, "1");
	uint64_t prev = start, ns0 = 0, every = profile_meta_u64(p, "freq");
	bool same = true;
	size_t i;
	every = every ? 1000000000ull / every : 0;
	for (i = 0; i < p->nsamples; i++) {
		uint64_t ns = sample_ns(clock, every, &p->samples[i]);
		by[i] = (uint32_t)i;
		if (!i)
			ns0 = ns;
		same = same && ns == ns0;
	}
	for (i = 1; i < p->nsamples && p->samples[i - 1].time <= p->samples[i].time; i++)
		;
	if (i < p->nsamples) /* not in time order already */
		qsort_r(by, p->nsamples, sizeof(*by), cmp_by_time, (void *)p);
	fputs("\"samples\":{\"time\":[", out);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[by[i]];
		put_sep(out, i);
		put_i64(out, (int64_t)(s->time - prev));
		prev = s->time;
	}
	fputs("],\"thread\":[", out);
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[by[i]];
		put_sep(out, i);
		put_i64(out, thread_of(th, s->pid, s->tid, s->time));
	}
	fputs("],\"stack\":[", out);
	for (i = 0; i < p->nsamples; i++) {
		put_sep(out, i);
		put_node(out, d, p->samples[by[i]].stack);
	}
	fputs("],\"ns\":", out);
	if (same) {
		put_i64(out, (int64_t)ns0);
	} else {
		fputc('[', out);
		for (i = 0; i < p->nsamples; i++) {
			put_sep(out, i);
			put_i64(out, (int64_t)sample_ns(clock, every, &p->samples[by[i]]));
		}
		fputc(']', out);
	}
	fputs("},", out);
	free(by);
}

static void put_offcpu(FILE *out, const struct profile *p, struct serve_data *d, struct threads *th,
		       uint64_t start)
{
	uint32_t *by = xmalloc((p->noffcpu + 1) * sizeof(*by));
	int64_t *waker = xmalloc((p->noffcpu + 1) * sizeof(*waker));
	uint32_t *wstack = xcalloc(p->noffcpu + 1, sizeof(*wstack));
	struct hmap idx;
	uint64_t prev = start;
	size_t i;

	hmap_init(&idx);
	for (i = 0; i < p->nwakers; i++)
		hmap_put(&idx, hash_mix(p->wakers[i].w.tid, p->wakers[i].w.start), (uint32_t)(i + 1));
	for (i = 0; i < p->noffcpu; i++)
		by[i] = (uint32_t)i;
	for (i = 1; i < p->noffcpu && p->offcpu[i - 1].start <= p->offcpu[i].start; i++)
		;
	if (i < p->noffcpu)
		qsort_r(by, p->noffcpu, sizeof(*by), cmp_off_by_time, (void *)p);
	/* the threads first, then the wakers (outside ones among them) */
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[by[i]];
		thread_of(th, o->pid, o->tid, o->start + o->duration);
	}
	for (i = 0; i < p->noffcpu; i++) {
		const struct prof_waker *w = view_waker_of(p, &idx, &p->offcpu[by[i]]);
		waker[i] = -1;
		if (!w)
			continue;
		if (w->w.kind == WAKER_IRQ) {
			waker[i] = -2;
		} else if (w->w.kind == WAKER_SOFTIRQ) {
			waker[i] = -3;
		} else {
			uint32_t t = thread_of(th, w->w.waker_pid, w->w.waker_tid, 0);
			if (w->w.kind == WAKER_OTHER && th->last[t] == 0) {
				th->outside[t] = true;
				th->comm[t] = w->comm;
			}
			waker[i] = t;
			if (w->w.kind == WAKER_THREAD)
				wstack[i] = w->w.stack;
		}
	}
	fputs("\"offcpu\":{\"time\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		put_sep(out, i);
		put_i64(out, (int64_t)(p->offcpu[by[i]].start - prev));
		prev = p->offcpu[by[i]].start;
	}
	fputs("],\"duration\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		put_sep(out, i);
		put_i64(out, (int64_t)p->offcpu[by[i]].duration);
	}
	fputs("],\"thread\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[by[i]];
		put_sep(out, i);
		put_i64(out, thread_of(th, o->pid, o->tid, o->start));
	}
	fputs("],\"stack\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		put_sep(out, i);
		put_node(out, d, p->offcpu[by[i]].stack);
	}
	fputs("],\"reason\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		const struct rec_offcpu *o = &p->offcpu[by[i]];
		put_sep(out, i);
		put_i64(out, (o->reason < OFFCPU_NREASONS ? o->reason : 0) + ((o->flags & OFFCPU_F_OPEN) ? 16 : 0));
	}
	fputs("],\"waker\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		put_sep(out, i);
		put_i64(out, waker[i]);
	}
	fputs("],\"waker_stack\":[", out);
	for (i = 0; i < p->noffcpu; i++) {
		put_sep(out, i);
		put_node(out, d, wstack[i]);
	}
	fputs("]},", out);
	hmap_release(&idx);
	free(wstack);
	free(waker);
	free(by);
}

static void put_strings(FILE *out, const char *key, const int64_t *ids, size_t n)
{
	size_t i;
	fprintf(out, "\"%s\":[", key);
	for (i = 0; i < n; i++) {
		put_sep(out, i);
		put_i64(out, ids[i]);
	}
	fputc(']', out);
}

static void put_funcs(FILE *out, struct profile *p, struct strtab *st, struct serve_data *d)
{
	size_t n = p->nfuncs + 1, i;
	int64_t *name = xmalloc(n * sizeof(*name)), *mod = xmalloc(n * sizeof(*mod));
	int64_t *file = xmalloc(n * sizeof(*file)), *line = xmalloc(n * sizeof(*line));
	char *kind = xmalloc(n + 1);

	name[0] = str_id(st, "[unknown]");
	mod[0] = str_id(st, "[unknown]");
	file[0] = -1;
	line[0] = 0;
	kind[0] = '?';
	for (i = 1; i < n; i++) {
		const struct prof_func *fn = profile_func(p, (uint32_t)i);
		uint32_t l;
		const char *f;
		kind[i] = func_kind(fn);
		name[i] = str_id(st, fn->label ? fn->label : fn->name);
		mod[i] = str_id(st, fn->module ? fn->module : "[unknown]");
		f = func_file(p, fn, kind[i], &l);
		file[i] = str_id(st, f);
		line[i] = l;
		if (f)
			serve_data_allow(d, f);
	}
	kind[n] = '\0';
	fputs("\"funcs\":{", out);
	put_strings(out, "name", name, n);
	fputc(',', out);
	put_strings(out, "module", mod, n);
	fputc(',', out);
	put_strings(out, "file", file, n);
	fputc(',', out);
	put_strings(out, "line", line, n);
	fputs(",\"kind\":", out);
	json_str(out, kind);
	fputs("},", out);
	free(name);
	free(mod);
	free(file);
	free(line);
	free(kind);
}

static void put_nodes(FILE *out, const struct profile *p, struct strtab *st, struct serve_data *d)
{
	size_t i;
	char *inl = xmalloc(d->n + 1);
	fputs("\"nodes\":{\"parent\":[", out);
	for (i = 0; i < d->n; i++) {
		const struct prof_node *nd = profile_node(p, d->order[i]);
		put_sep(out, i);
		put_node(out, d, nd->parent);
		inl[i] = (nd->flags & NODE_F_INLINE) ? '1' : '0';
	}
	inl[d->n] = '\0';
	fputs("],\"func\":[", out);
	for (i = 0; i < d->n; i++) {
		uint32_t fn = profile_node(p, d->order[i])->func;
		put_sep(out, i);
		put_i64(out, fn <= p->nfuncs ? fn : 0);
	}
	fputs("],\"file\":[", out);
	for (i = 0; i < d->n; i++) {
		const char *f = profile_node(p, d->order[i])->file;
		put_sep(out, i);
		put_i64(out, str_id(st, f));
		if (f)
			serve_data_allow(d, f);
	}
	fputs("],\"line\":[", out);
	for (i = 0; i < d->n; i++) {
		put_sep(out, i);
		put_i64(out, profile_node(p, d->order[i])->line);
	}
	fputs("],\"inline\":", out);
	json_str(out, inl);
	fputs("},", out);
	free(inl);
}

static void put_threads(FILE *out, const struct profile *p, struct threads *th, struct strtab *st)
{
	size_t i;
	fputs("\"threads\":{\"pid\":[", out);
	for (i = 0; i < th->n; i++) {
		put_sep(out, i);
		put_i64(out, th->pid[i]);
	}
	fputs("],\"tid\":[", out);
	for (i = 0; i < th->n; i++) {
		put_sep(out, i);
		put_i64(out, th->tid[i]);
	}
	fputs("],\"name\":[", out);
	for (i = 0; i < th->n; i++) {
		put_sep(out, i);
		put_i64(out, str_id(st, th->outside[i] && th->comm[i] ? th->comm[i] :
				    profile_comm(p, th->pid[i], th->tid[i], th->last[i])));
	}
	fputs("],\"pname\":[", out);
	for (i = 0; i < th->n; i++) {
		put_sep(out, i);
		put_i64(out, str_id(st, th->outside[i] && th->comm[i] ? th->comm[i] :
				    profile_comm(p, th->pid[i], th->pid[i], th->last[i])));
	}
	fputs("],\"outside\":\"", out);
	for (i = 0; i < th->n; i++)
		putc_unlocked(th->outside[i] ? '1' : '0', out);
	fputs("\"},", out);
}

void serve_data_build(struct profile *p, const char *name, uint64_t version, struct serve_data *d)
{
	struct strtab st;
	struct threads th;
	uint64_t start = profile_start_ns(p);
	const char *freq = profile_meta(p, "freq"), *ev = profile_meta(p, "event");
	const char *clock = profile_meta(p, "event_is_clock");
	char *body = NULL, *tail = NULL;
	size_t blen = 0, tlen = 0, i;
	FILE *out, *head;

	serve_data_release(d);
	memset(&st, 0, sizeof(st));
	memset(&th, 0, sizeof(th));
	hmap_init(&st.index);
	hmap_init(&th.index);
	hmap_init(&d->allowed);
	d->nindex = p->nnodes;
	d->index = xcalloc(p->nnodes + 1, sizeof(*d->index));
	d->order = node_order(p, d->index, &d->n);

	/* the arrays first (they fill the string and thread tables), then
	 * the head with the tables, then the arrays after it */
	out = open_memstream(&tail, &tlen);
	if (!out)
		die("out of memory");
	put_funcs(out, p, &st, d);
	put_nodes(out, p, &st, d);
	put_samples(out, p, d, &th, start);
	put_offcpu(out, p, d, &th, start);
	/* and the threads that took no sample and never waited */
	for (i = 0; i < p->ncomms; i++)
		if (p->comms[i].tid)
			thread_of(&th, p->comms[i].pid, p->comms[i].tid, p->comms[i].time);
	put_threads(out, p, &th, &st);
	fputs("\"end\":true}\n", out);
	fclose(out);

	head = open_memstream(&body, &blen);
	if (!head)
		die("out of memory");
	fputs(JSON_OPEN "\"format\":1,\"file\":", head);
	json_str(head, name);
	fprintf(head, ",\"version\":%" PRIu64 ",\"event\":", version);
	json_str(head, ev ? ev : "samples");
	fprintf(head, ",\"clock\":%s,\"freq\":%s,\"start_ns\":\"%" PRIu64 "\",\"duration_ns\":%" PRIu64
		",\"partial\":%s,\"live\":%s,\"off_cpu\":%s,\"wakers\":%s,\"reasons\":[",
		clock && !strcmp(clock, "1") ? "true" : "false", freq && *freq ? freq : "0", start,
		p->last_time > start ? p->last_time - start : 0, p->partial ? "true" : "false",
		p->partial && p->live ? "true" : "false", p->noffcpu ? "true" : "false",
		profile_meta(p, "wakers") && !strcmp(profile_meta(p, "wakers"), "1") ? "true" : "false");
	for (i = 0; i < OFFCPU_NREASONS; i++) {
		put_sep(head, i);
		json_str(head, view_offcpu_reason((enum offcpu_reason)i));
	}
	fputs("],\"strings\":[", head);
	for (i = 0; i < st.n; i++) {
		put_sep(head, i);
		json_str(head, st.s[i]);
	}
	fputs("],", head);
	fwrite(tail, 1, tlen, head);
	fclose(head);
	free(tail);
	d->json = body;
	d->len = blen;

	hmap_release(&st.index);
	free(st.s);
	hmap_release(&th.index);
	free(th.pid);
	free(th.tid);
	free(th.last);
	free(th.outside);
	free(th.comm);
}

void serve_data_allow(struct serve_data *d, const char *path)
{
	uint64_t h;
	uint32_t at;
	for (h = hash_bytes(path, strlen(path));; h = hash_next(h)) {
		if (!hmap_get(&d->allowed, h, &at))
			break;
		if (!strcmp(d->paths[at], path))
			return;
	}
	GROW(d->paths, d->pathcap, d->npaths + 1);
	d->paths[d->npaths] = xstrdup(path);
	hmap_put(&d->allowed, h, (uint32_t)d->npaths++);
}

bool serve_data_allowed(const struct serve_data *d, const char *path)
{
	uint64_t h;
	uint32_t at;
	if (!d->index)
		return false;
	for (h = hash_bytes(path, strlen(path));; h = hash_next(h)) {
		if (!hmap_get(&d->allowed, h, &at))
			return false;
		if (!strcmp(d->paths[at], path))
			return true;
	}
}

void serve_data_release(struct serve_data *d)
{
	size_t i;
	if (d->index)
		hmap_release(&d->allowed);
	for (i = 0; i < d->npaths; i++)
		free(d->paths[i]);
	free(d->paths);
	free(d->json);
	free(d->order);
	free(d->index);
	memset(d, 0, sizeof(*d));
}
