/* serve.c - stax serve: HTTP endpoints over the views.
 *
 *   /               the page (page.c: page.html), /page.js its script
 *   /api/profile    the whole recording for the page to compute every
 *                   panel from (data.c: samples, stack tree, functions,
 *                   threads, off-CPU intervals and their wakers)
 *   /api/asm        ?node=I (a page node index of /api/profile's nodes)
 *                   &v=VERSION: the disassembly of the function holding
 *                   that frame's code, each instruction with its source
 *                   line, and "nodes": [page node, instruction] for every
 *                   frame whose code is in it; 404 {"error"} when there is
 *                   none (kernel, JIT code, the binary gone), 409 when the
 *                   recording changed since VERSION
 *   /api/source     ?file=PATH: the text of a source file the recording
 *                   names (a frame's or a function's file, or a line of a
 *                   disassembly served); 403 for any other path, 404 when
 *                   it cannot be read
 *   /flame.svg      view_flame_svg()            ?tid=N filters; ?mode=offcpu
 *                   or ?mode=wall weighs by time (record --off-cpu)
 *   /api/info       {"version" (changes on reload), "partial" (no end
 *                   chunk yet), "samples", "off_cpu" (has off-CPU data),
 *                   "live" (partial, and still being written),
 *                   "warnings" (what stax warns about the recording,
 *                   profile_warnings(), then what the library layers
 *                   warned about while loading and answering), "info":
 *                   view_info() JSON}
 *   /api/top        view_top() JSON             ?tid=N
 *   /api/threads    view_threads() JSON (with off-CPU columns when the
 *                   recording has them)
 *   /api/annotate   ?func=NAME: view_annotate() JSON, or 404 with
 *                   {"error": why} (a caller only, a kernel function, the
 *                   binary is gone) and, for an inlined function,
 *                   "inlined_into": the function holding its code
 *   /api/addrs      ?func=NAME: the addresses sampled in that function
 *                   (self samples), hottest first
 *   /api/callers, /api/callees  ?func=NAME: view_peek() JSON
 *   /api/wakers     ?func=NAME: view_wakers() JSON of the off-CPU waits
 *                   whose stack goes through NAME (or whose leaf is that
 *                   "[off-cpu: REASON]" frame): who ended them, weighted
 *                   by the off-CPU time they ended
 *   (each takes ?tid=N, and ?t0=NS&t1=NS for a time range)
 *
 * Only requests whose Host is 127.0.0.1, localhost or [::1] with the
 * server's port get an answer (403 otherwise): a page elsewhere whose
 * name it rebinds to 127.0.0.1 (DNS rebinding) must not read the
 * profile. At most SERVE_MAX_CONNECTIONS connections, each closed after
 * SERVE_IDLE_SECONDS without a request.
 */
#include "serve/serve.h"
#include "serve/data.h"
#include "serve/http.h"
#include "view/flame_svg.h"
#include "lib/json.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SERVE_MAX_CONNECTIONS 64
#define SERVE_IDLE_SECONDS 30
#define SERVE_LIB_WARNINGS 32   /* library warnings kept for the page */
#define SERVE_MAX_SOURCE (8u << 20)

struct server {
	const struct serve_opts *o;
	unsigned port;           /* the port it listens on */
	struct profile p;
	bool loaded;
	struct stat st;          /* of the recording when loaded */
	uint64_t version;
	struct prof_warning warn[PROF_WARNINGS_MAX];
	size_t nwarn;
	unsigned warned;         /* the kinds of warning last printed */
	bool load_failed;        /* err is profile_load_err()'s message */
	struct err err;
	/* what the library layers warned about while loading and answering
	 * (warn(), through the sink serve sets): each text once, for the
	 * page's warnings, and on the terminal as it happens */
	pthread_mutex_t wlock;
	char *libwarn[SERVE_LIB_WARNINGS];
	size_t nlibwarn;
	struct serve_data data;  /* /api/profile, built on demand */
	uint64_t data_version;   /* of data; 0: none */
};

static void warn_sink(void *arg, const char *msg)
{
	struct server *s = arg;
	size_t i;
	pthread_mutex_lock(&s->wlock);
	for (i = 0; i < s->nlibwarn && strcmp(s->libwarn[i], msg); i++)
		;
	if (i == s->nlibwarn) {
		warn_print(msg);
		if (s->nlibwarn < SERVE_LIB_WARNINGS)
			s->libwarn[s->nlibwarn++] = xstrdup(msg);
	}
	pthread_mutex_unlock(&s->wlock);
}

/* A directory of recordings changes when one of its *.data files does:
 * st_size becomes their sizes added up, st_mtim the latest write, and
 * st_ino their count (adding or removing one changes it). */
static void dir_stat(const char *dir, struct stat *st)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	st->st_size = 0;
	st->st_ino = 0;
	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat fs;
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".data") ||
		    fstatat(dirfd(d), de->d_name, &fs, 0) || !S_ISREG(fs.st_mode))
			continue;
		st->st_size += fs.st_size;
		st->st_ino++;
		if (fs.st_mtim.tv_sec > st->st_mtim.tv_sec ||
		    (fs.st_mtim.tv_sec == st->st_mtim.tv_sec && fs.st_mtim.tv_nsec > st->st_mtim.tv_nsec))
			st->st_mtim = fs.st_mtim;
	}
	closedir(d);
}

/* Load the recording (or directory of recordings) when it is new or
 * changed; false when it cannot be read (the message is in s->err). */
static bool refresh(struct server *s)
{
	struct stat st;
	struct err e;
	struct prof_window w = { s->o->filter.since_ns, s->o->filter.until_ns, 0 };
	if (stat(s->o->path, &st)) {
		err_set(&s->err, -errno, "cannot read %s: %s", s->o->path, strerror(errno));
		return false;
	}
	if (S_ISDIR(st.st_mode))
		dir_stat(s->o->path, &st);
	if (s->loaded && st.st_size == s->st.st_size && st.st_mtim.tv_sec == s->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == s->st.st_mtim.tv_nsec && st.st_ino == s->st.st_ino)
		return true;
	if (s->loaded)
		profile_release(&s->p);
	s->loaded = false;
	if (profile_load_path(&s->p, s->o->path, w.since_ns || w.until_ns ? &w : NULL, &e)) {
		profile_release(&s->p);
		s->err = e;
		s->load_failed = true;
		if (s->port) /* serving: the terminal hears of it as it happens */
			error("%s", e.msg);
		return false;
	}
	profile_symbolize(&s->p, s->o->demangle);
	if (profile_filter_active(&s->o->filter) &&
	    profile_filter(&s->p, &s->o->filter, &s->err)) {
		profile_release(&s->p);
		return false;
	}
	s->loaded = true;
	s->st = st;
	s->version++;
	/* on the terminal when what there is to warn about changes (a
	 * recording that is being written reloads at every poll) */
	s->nwarn = profile_warnings(&s->p, s->warn);
	{
		unsigned kinds = 0;
		size_t i;
		for (i = 0; i < s->nwarn; i++)
			kinds |= s->warn[i].kind;
		if (kinds != s->warned)
			for (i = 0; i < s->nwarn; i++)
				warn("%s", s->warn[i].text);
		s->warned = kinds;
	}
	return true;
}

struct addr_row {
	uint32_t node;
	uint64_t addr, samples;
};

static int cmp_addr(const void *a, const void *b)
{
	const struct addr_row *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Replace what a view wrote to out before it failed with
 * {"json_version":N,"error":MSG} (and "inlined_into" when the function
 * is only ever inlined), and close out. */
static void error_json(FILE *out, const char *msg, const char *holder)
{
	struct jw w;
	fflush(out);
	rewind(out);
	jw_begin(&w, out);
	jw_str(&w, "error", msg);
	if (holder)
		jw_str(&w, "inlined_into", holder);
	jw_end(&w);
	fclose(out);
}

/* The leaf addresses of samples whose leaf function is named name. */
static void addrs_json(const struct profile *p, const struct view_filter *f, const char *name, FILE *out)
{
	struct addr_row *rows = NULL;
	size_t n = 0, cap = 0, i, j;
	struct jw w;
	uint64_t total = 0;
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd = profile_node(p, s->stack);
		if (!nd || !view_keep(p, f, s) || strcmp(view_func_name(p, nd->func), name))
			continue;
		total++;
		for (j = 0; j < n; j++)
			if (rows[j].addr == nd->addr && p->nodes[rows[j].node - 1].mapping == nd->mapping)
				break;
		if (j == n) {
			GROW(rows, cap, n + 1);
			rows[n++] = (struct addr_row){ s->stack, nd->addr, 0 };
		}
		rows[j].samples++;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_addr);
	jw_begin(&w, out);
	jw_str(&w, "function", name);
	jw_u64(&w, "samples", total);
	jw_bool(&w, "annotate", false);
	jw_array(&w, "addrs");
	for (i = 0; i < n && i < 200; i++) {
		const struct prof_node *nd = profile_node(p, rows[i].node);
		const struct prof_func *fn = profile_func(p, nd->func);
		uint64_t off = rows[i].addr;
		if (nd->mapping && nd->mapping <= p->nmaps && (nd->flags & 0xff) == NODE_USER) {
			const struct prof_mapping *m = &p->maps[nd->mapping - 1];
			off = rows[i].addr - m->start + m->pgoff;
		}
		jw_object(&w, NULL);
		jw_addr(&w, "addr", rows[i].addr);
		jw_addr(&w, "file_offset", off);
		jw_str(&w, "module", fn ? fn->module : "[unknown]");
		jw_u64(&w, "samples", rows[i].samples);
		jw_double(&w, "pct", total ? 100.0 * rows[i].samples / total : 0, 2);
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_end(&w);
	free(rows);
}

/* The function holding the code of an inlined function named name (the
 * first non-inlined frame below one of its inline frames), or NULL when
 * it is never inlined. */
static const char *inline_holder(const struct profile *p, const char *name)
{
	size_t i;
	for (i = 0; i < p->nnodes; i++) {
		const struct prof_node *nd = &p->nodes[i];
		if (!(nd->flags & NODE_F_INLINE) || strcmp(view_func_name(p, nd->func), name))
			continue;
		while (nd && (nd->flags & NODE_F_INLINE))
			nd = profile_node(p, nd->parent);
		if (nd && nd->func)
			return view_func_name(p, nd->func);
	}
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body, size_t len)
{
	struct MHD_Response *r = http_mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;
	http_mhd.add_response_header(r, "Content-Type", type);
	http_mhd.add_response_header(r, "Cache-Control", "no-store");
	/* nothing outside this server: no scripts, styles or frames from elsewhere */
	http_mhd.add_response_header(r, "Content-Security-Policy",
				"default-src 'self'; script-src 'self' 'unsafe-inline'; "
				"style-src 'self' 'unsafe-inline'; frame-ancestors 'self'");
	http_mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
	ret = http_mhd.queue_response(c, status, r);
	http_mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result text_reply(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", xstrdup(msg), strlen(msg));
}

/* /api/asm?node=I&v=VERSION (see the top of the file). */
static enum MHD_Result asm_reply(struct server *s, struct MHD_Connection *c)
{
	const char *ns = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "node");
	const char *vs = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "v");
	struct serve_data *d = &s->data;
	struct view_disasm da;
	const struct prof_node *nd;
	struct jw w;
	struct err err;
	char *body = NULL;
	size_t len = 0, i, k;
	uint64_t node, ver;
	FILE *out;
	int rc;

	if (!ns || !vs || parse_u64(ns, &node) || parse_u64(vs, &ver))
		return text_reply(c, MHD_HTTP_BAD_REQUEST, "which frame? (?node=I&v=VERSION)\n");
	if (ver != s->version || s->data_version != s->version)
		return text_reply(c, MHD_HTTP_CONFLICT, "the recording changed: reload /api/profile\n");
	if (node >= d->n)
		return text_reply(c, MHD_HTTP_NOT_FOUND, "no such node\n");
	nd = profile_node(&s->p, d->order[node]);
	if (!nd)
		return text_reply(c, MHD_HTTP_NOT_FOUND, "no such node\n");
	rc = view_disasm(&s->p, d->order[node], &da, &err);
	out = open_memstream(&body, &len);
	if (!out) {
		view_disasm_release(&da);
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	jw_begin(&w, out);
	jw_u64(&w, "version", s->version);
	jw_u64(&w, "node", node);
	jw_str(&w, "function", view_func_name(&s->p, nd->func));
	if (rc) {
		/* the addresses of the function's frames, for the page to
		 * count without the code; a kernel function's as
		 * NAME+0xOFFSET where this boot's kallsyms says so */
		const struct prof_func *fn = profile_func(&s->p, nd->func);
		uint64_t *addr = xmalloc((d->n + 1) * sizeof(*addr)), *off = xmalloc((d->n + 1) * sizeof(*off));
		size_t *at = xmalloc((d->n + 1) * sizeof(*at));
		jw_str(&w, "error", err.msg);
		jw_array(&w, "addrs");
		for (i = k = 0; i < d->n; i++) {
			const struct prof_node *o = profile_node(&s->p, d->order[i]);
			if (!o || o->func != nd->func)
				continue;
			at[k] = i;
			addr[k++] = o->addr - ((o->flags & NODE_F_RA) ? 1 : 0);
		}
		if (!fn || !fn->kernel || !view_kernel_offsets(fn->name, addr, k, off))
			memset(off, 0xff, k * sizeof(*off));
		for (i = 0; i < k; i++) {
			jw_array(&w, NULL);
			jw_u64(&w, NULL, at[i]);
			jw_addr(&w, NULL, addr[i]);
			if (off[i] != UINT64_MAX)
				jw_raw(&w, NULL, "\"+0x%" PRIx64 "\"", off[i]);
			jw_array_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
		free(addr);
		free(off);
		free(at);
		fclose(out);
		return reply(c, MHD_HTTP_NOT_FOUND, "application/json", body, len);
	}
	jw_str(&w, "path", da.path);
	jw_addr(&w, "start", da.start);
	jw_u64(&w, "size", da.size);
	jw_array(&w, "instructions");
	for (i = 0; i < da.n; i++) {
		const struct view_insn *in = &da.insns[i];
		jw_object(&w, NULL);
		jw_addr(&w, "addr", in->addr);
		jw_str(&w, "asm", in->text);
		if (in->undecoded)
			jw_bool(&w, "undecoded", true);
		if (in->file && in->line) { /* line 0: code of no source line */
			jw_str(&w, "file", in->file);
			jw_u64(&w, "line", in->line);
			serve_data_allow(d, in->file);
		}
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_array(&w, "nodes");
	for (i = 0; i < d->n; i++) {
		long row = view_disasm_row(&s->p, &da, d->order[i]);
		if (row >= 0) {
			jw_array(&w, NULL);
			jw_u64(&w, NULL, i);
			jw_i64(&w, NULL, row);
			jw_array_end(&w);
		}
	}
	jw_array_end(&w);
	jw_end(&w);
	fclose(out);
	view_disasm_release(&da);
	return reply(c, MHD_HTTP_OK, "application/json", body, len);
}

/* /api/source?file=PATH: a regular file the recording names, as text. */
static enum MHD_Result source_reply(struct server *s, struct MHD_Connection *c)
{
	const char *path = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "file");
	struct stat st;
	char *body;
	size_t got = 0;
	ssize_t n;
	int fd;

	if (!path || !*path)
		return text_reply(c, MHD_HTTP_BAD_REQUEST, "which file? (?file=PATH)\n");
	if (!serve_data_allowed(&s->data, path))
		return text_reply(c, MHD_HTTP_FORBIDDEN, "not a source file of this recording\n");
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SERVE_MAX_SOURCE) {
		char msg[600];
		snprintf(msg, sizeof(msg), "cannot read %s: %s\n", path,
			 fd < 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" : "too big");
		if (fd >= 0)
			close(fd);
		return text_reply(c, MHD_HTTP_NOT_FOUND, msg);
	}
	body = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size && (n = read(fd, body + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	return reply(c, MHD_HTTP_OK, "text/plain; charset=utf-8", body, got);
}

/* The page's own endpoints: its script, its data, disassembly and
 * source; -1 (as an MHD_Result) when url is none of them. */
static int page_request(struct server *s, struct MHD_Connection *c, const char *url)
{
	if (!strcmp(url, "/page.js"))
		return reply(c, MHD_HTTP_OK, "text/javascript; charset=utf-8", xstrdup(serve_page_js),
			     strlen(serve_page_js));
	if (strcmp(url, "/api/profile") && strcmp(url, "/api/asm") && strcmp(url, "/api/source"))
		return -1;
	if (!refresh(s))
		return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, s->err.msg);
	if (s->data_version != s->version) {
		serve_data_build(&s->p, path_base(s->o->path), s->version, &s->data);
		s->data_version = s->version;
	}
	if (!strcmp(url, "/api/asm"))
		return asm_reply(s, c);
	if (!strcmp(url, "/api/source"))
		return source_reply(s, c);
	{
		char *body = xmalloc(s->data.len + 1);
		memcpy(body, s->data.json, s->data.len);
		return reply(c, MHD_HTTP_OK, "application/json", body, s->data.len);
	}
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct server *s = cls;
	struct view_filter f = { -1, -1, NULL, 0, 0 };
	const char *tid = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "tid");
	const char *type = "application/json";
	char *body = NULL;
	size_t len = 0;
	FILE *out;
	uint64_t v;

	if (!http_host_allowed(http_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST), s->port,
			       false))
		return text_reply(c, MHD_HTTP_FORBIDDEN, "stax serve answers only requests for 127.0.0.1,"
				  " localhost or [::1] with its port (the Host header names another)\n");
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", xstrdup(serve_page), strlen(serve_page));
	if (!strcmp(url, "/favicon.ico"))
		return reply(c, MHD_HTTP_NO_CONTENT, "image/x-icon", xstrdup(""), 0);
	{
		int r = page_request(s, c, url);
		if (r >= 0)
			return (enum MHD_Result)r;
	}
	if (strcmp(url, "/flame.svg") && strcmp(url, "/api/info") && strcmp(url, "/api/top") &&
	    strcmp(url, "/api/threads") && strcmp(url, "/api/addrs") && strcmp(url, "/api/annotate") &&
	    strcmp(url, "/api/timeline") && strcmp(url, "/api/callers") && strcmp(url, "/api/callees") &&
	    strcmp(url, "/api/wakers"))
		return text_reply(c, MHD_HTTP_NOT_FOUND, "not found\n");
	if (tid && *tid && !parse_u64(tid, &v) && v <= 0x7fffffff)
		f.tid = (int64_t)v;
	/* a time range selected on the timeline: sample times in ns */
	{
		const char *t0 = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "t0");
		const char *t1 = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "t1");
		uint64_t a, b;
		if (t0 && t1 && !parse_u64(t0, &a) && !parse_u64(t1, &b) && b >= a && b) {
			f.t0 = a;
			f.t1 = b;
		}
	}
	if (!refresh(s))
		return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, s->err.msg);

	out = open_memstream(&body, &len);
	if (!out)
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	if (!strcmp(url, "/flame.svg")) {
		struct svg_opts so = { .min_pct = -1, .weight = FLAME_SAMPLES };
		char title[300];
		snprintf(title, sizeof(title), "%s%s", path_base(s->o->path), s->p.partial ? " (recording)" : "");
		const char *mode = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
		const char *shape = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "view");
		so.title = title;
		so.icicle = shape && !strcmp(shape, "icicle");
		if (mode && !strcmp(mode, "offcpu"))
			so.weight = FLAME_OFFCPU;
		else if (mode && !strcmp(mode, "wall"))
			so.weight = FLAME_WALL;
		type = "image/svg+xml";
		view_flame_svg(&s->p, &f, &so, out);
	} else if (!strcmp(url, "/api/info")) {
		struct jw w;
		size_t i;
		jw_begin(&w, out);
		jw_u64(&w, "version", s->version);
		jw_bool(&w, "partial", s->p.partial);
		jw_u64(&w, "samples", s->p.nsamples);
		jw_bool(&w, "off_cpu", s->p.noffcpu);
		jw_bool(&w, "live", s->p.partial && s->p.live);
		jw_array(&w, "warnings");
		for (i = 0; i < s->nwarn; i++)
			jw_str(&w, NULL, s->warn[i].text);
		pthread_mutex_lock(&s->wlock);
		for (i = 0; i < s->nlibwarn; i++)
			jw_str(&w, NULL, s->libwarn[i]);
		pthread_mutex_unlock(&s->wlock);
		jw_array_end(&w);
		/* the view writes the value itself, a whole document */
		jw_key(&w, "info");
		view_info(&s->p, &f, true, out);
		jw_end(&w);
	} else if (!strcmp(url, "/api/top")) {
		struct top_opts to = { .limit = 100, .json = true };
		view_top(&s->p, &f, &to, out);
	} else if (!strcmp(url, "/api/threads")) {
		view_threads(&s->p, &f, true, out);
	} else if (!strcmp(url, "/api/timeline")) {
		/* the whole recording, whatever the selection: it is what
		 * one selects on */
		struct timeline_opts to = { .buckets = 200, .hottest = true, .json = true };
		const char *nb = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "buckets");
		if (nb && !parse_u64(nb, &v) && v >= 1 && v <= 2000)
			to.buckets = (size_t)v;
		f.t0 = f.t1 = 0;
		view_timeline(&s->p, &f, &to, out);
	} else {
		const char *fn = http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "func");
		struct err err;
		if (!fn || !*fn) {
			fclose(out);
			free(body);
			return text_reply(c, MHD_HTTP_BAD_REQUEST, "which function? (?func=NAME)\n");
		}
		if (!strcmp(url, "/api/addrs")) {
			addrs_json(&s->p, &f, fn, out);
		} else if (!strcmp(url, "/api/wakers")) {
			struct wakers_opts wo = { .json = true, .limit = 30, .through = fn };
			view_wakers(&s->p, &f, &wo, out);
		} else if (!strcmp(url, "/api/callers") || !strcmp(url, "/api/callees")) {
			struct peek_opts po = { .callees = !strcmp(url, "/api/callees"), .json = true, .limit = 30 };
			if (view_peek(&s->p, &f, fn, &po, out, &err)) {
				error_json(out, err.msg, NULL);
				return reply(c, MHD_HTTP_NOT_FOUND, type, body, strlen(body));
			}
		} else if (view_annotate(&s->p, &f, fn, true, false, out, &err)) {
			const char *holder = inline_holder(&s->p, fn);
			/* drop what view_annotate wrote before it failed */
			error_json(out, err.msg, holder);
			return reply(c, MHD_HTTP_NOT_FOUND, type, body, strlen(body));
		}
	}
	fclose(out);
	return reply(c, MHD_HTTP_OK, type, body, len);
}

static int run(struct server *s, struct err *e);

int serve_run(const struct serve_opts *o, struct err *e)
{
	struct server s;
	struct err le;
	size_t i;
	int ret;

	if (http_open(&le))
		return err_set(e, -1, "serve: %s", le.msg);
	memset(&s, 0, sizeof(s));
	s.o = o;
	pthread_mutex_init(&s.wlock, NULL);
	warn_set_sink(warn_sink, &s);
	ret = run(&s, e);
	warn_set_sink(NULL, NULL);
	for (i = 0; i < s.nlibwarn; i++)
		free(s.libwarn[i]);
	pthread_mutex_destroy(&s.wlock);
	return ret;
}

static int run(struct server *s, struct err *e)
{
	const struct serve_opts *o = s->o;
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct MHD_Daemon *d;
	sigset_t set;
	int sig, fd, one = 1;

	if (!refresh(s)) {
		if (s->load_failed)
			return err_set(e, -1, "%s", s->err.msg);
		return err_set(e, -1, "serve: %s (record first: stax record -o %s -- CMD)", s->err.msg, o->path);
	}
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)o->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* our own socket, so the port (with --port 0, the kernel's choice)
	 * is known before the first request is checked against it */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len)) {
		int e2 = errno;
		if (fd >= 0)
			close(fd);
		profile_release(&s->p);
		return err_set(e, -e2, "serve: cannot listen on 127.0.0.1:%u: %s (pick another --port, or 0 for any)",
			     o->port, strerror(e2));
	}
	s->port = ntohs(sin.sin_port);
	/* block the stop signals before the server thread starts, so only
	 * sigwait() below sees them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	d = http_mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL, handle, s,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_MAX_CONNECTIONS,
			     MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)SERVE_MAX_CONNECTIONS,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_IDLE_SECONDS,
			     MHD_OPTION_END);
	if (!d) {
		int e2 = errno;
		close(fd);
		profile_release(&s->p);
		return err_set(e, -1, "serve: cannot start the HTTP server on 127.0.0.1:%u: %s", s->port,
			     strerror(e2 ? e2 : EINVAL));
	}
	note("serving %s at http://127.0.0.1:%u/ (Ctrl-C to stop)", o->path, s->port);
	sigwait(&set, &sig);
	http_mhd.stop_daemon(d);
	serve_data_release(&s->data);
	if (s->loaded)
		profile_release(&s->p);
	return 0;
}
