/* pull.c - Go's net/http/pprof pull endpoint over a directory of
 * recordings (pull.h). */
#include "serve/pull.h"
#include "serve/http.h"
#include "export/export.h"
#include "profile/filter.h"
#include "lib/util.h"
#include "lib/version.h"
#include "lib/walltime.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PULL_DEFAULT_SECONDS 30     /* Go's default */
#define PULL_MAX_SECONDS 3600
#define PULL_CONNECTIONS 16
#define PULL_IDLE_SECONDS 30
/* after the window: the recorder's last chunk reaches the file within
 * 250 ms of a sample (store/writer.c), so wait this long, then up to
 * PULL_FRESH_MS more until a file was written after the window */
#define PULL_GRACE_MS 500
#define PULL_FRESH_MS 1500
/* a profile not built within this long after its window's end: 503 */
#define PULL_WORK_SECONDS 60

struct pull_server {
	char *dir;
	char addr[80];
	unsigned port;
	bool remote;
	unsigned max_seconds;
	bool demangle;
	pthread_mutex_t *symbol_lock;  /* the caller's, or NULL */
	struct MHD_Daemon *d;
	pthread_mutex_t lock;       /* stopping */
	pthread_cond_t cond;        /* signalled when stopping */
	bool stopping;
	pthread_mutex_t work;       /* one profile built at a time */
};

int pull_parse_request(const char *seconds, const char *pid, const char *comm, unsigned max_seconds,
		       struct pull_request *r, struct err *e)
{
	uint64_t v;
	if (!max_seconds)
		max_seconds = PULL_MAX_SECONDS;
	r->seconds = PULL_DEFAULT_SECONDS < max_seconds ? PULL_DEFAULT_SECONDS : max_seconds;
	r->pid = -1;
	r->comm = NULL;
	if (seconds) {
		if (parse_u64(seconds, &v) || v < 1 || v > max_seconds)
			return err_set(e, -1, "seconds=%.40s: give a whole number of seconds from 1 to %u\n",
				       seconds, max_seconds);
		r->seconds = (unsigned)v;
	}
	if (pid) {
		if (parse_u64(pid, &v) || v > 0x7fffffff)
			return err_set(e, -1, "pid=%.40s: give a process id\n", pid);
		r->pid = (int64_t)v;
	}
	if (comm) {
		if (!*comm || strlen(comm) > 255)
			return err_set(e, -1, "comm=: give a thread name (1 to 255 bytes)\n");
		r->comm = comm;
	}
	return 0;
}

int pull_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, bool *loopback,
		      struct err *e)
{
	const char *colon, *host_end, *given = s;
	char host[64];
	uint64_t port;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	if (*s == '[') {
		host_end = strchr(s, ']');
		colon = host_end ? host_end + 1 : NULL;
		if (!colon || *colon != ':')
			goto bad;
		s++;
	} else {
		colon = strrchr(s, ':');
		host_end = colon;
	}
	if (!colon || parse_u64(colon + 1, &port) || port > 65535)
		goto bad;
	n = (size_t)(host_end - s);
	if (!n)
		return err_set(e, -1, "listen address '%.100s' has no host (127.0.0.1:PORT serves this machine"
			       " only; 0.0.0.0:PORT every interface, when asked for)", given);
	if (n >= sizeof(host))
		goto bad;
	memcpy(host, s, n);
	host[n] = 0;
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (*given == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			goto bad;
		*loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			goto bad;
		*loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
		*len = sizeof(*a);
	}
	return 0;
bad:
	return err_set(e, -1, "cannot read listen address '%.100s' (give ADDR:PORT: 127.0.0.1:PORT,"
		       " [::1]:PORT, localhost:PORT, or an address of this machine; PORT 0 picks a free one)", given);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, char *body,
			     size_t len, bool attachment)
{
	struct MHD_Response *r = http_mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;
	http_mhd.add_response_header(r, "Content-Type", type);
	http_mhd.add_response_header(r, "X-Content-Type-Options", "nosniff");
	http_mhd.add_response_header(r, "Cache-Control", "no-store");
	if (attachment) /* as Go's net/http/pprof names it */
		http_mhd.add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
	ret = http_mhd.queue_response(c, status, r);
	http_mhd.destroy_response(r);
	return ret;
}

static enum MHD_Result text_reply(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return reply(c, status, "text/plain; charset=utf-8", xstrdup(msg), strlen(msg), false);
}

static void html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

struct entry {
	char *name;
	uint64_t size, mtime_ns;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* The recordings in dir as profile_load_dir() picks them. */
static struct entry *list_dir(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct entry *v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char *path;
		struct stat st;
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".data"))
			continue;
		path = xasprintf("%s/%s", dir, de->d_name);
		if (!stat(path, &st) && S_ISREG(st.st_mode)) {
			GROW(v, cap, *n + 1);
			v[(*n)++] = (struct entry){ xstrdup(de->d_name), (uint64_t)st.st_size,
						    (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
						    (uint64_t)st.st_mtim.tv_nsec };
		}
		free(path);
	}
	closedir(d);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_entry);
	return v;
}

static void free_list(struct entry *v, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* GET /debug/pprof/ */
static enum MHD_Result index_reply(struct pull_server *s, struct MHD_Connection *c)
{
	char *body = NULL, when[64], size[32];
	size_t len = 0, n, i;
	struct entry *v = list_dir(s->dir, &n);
	FILE *out = open_memstream(&body, &len);

	if (!out) {
		free_list(v, n);
		return text_reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>/debug/pprof/</title>\n"
		"<style>body{font-family:sans-serif} td,th{padding:2px 12px;text-align:left}</style>"
		"</head><body>\n<h1>/debug/pprof/</h1>\n<p>stax %s serves CPU profiles of the recordings in ",
		stax_version);
	html_text(out, s->dir);
	fprintf(out, ", the way Go's net/http/pprof does.</p>\n<table>\n<tr><th>Profile</th><th>What</th></tr>\n"
		"<tr><td><a href=\"profile?seconds=%u\">profile</a></td><td>CPU profile of the next N seconds"
		" (?seconds=N, 1 to %u; default %u): gzip'd profile.proto, as go tool pprof reads it; only"
		" one process with ?pid=PID, only the threads of one name with ?comm=NAME</td></tr>\n</table>\n",
		MIN(PULL_DEFAULT_SECONDS, s->max_seconds), s->max_seconds, MIN(PULL_DEFAULT_SECONDS, s->max_seconds));
	fprintf(out, "<h2>Recordings (%zu)</h2>\n<table>\n<tr><th>File</th><th>Size</th><th>Last written</th></tr>\n", n);
	for (i = 0; i < n; i++) {
		format_size(size, sizeof(size), v[i].size);
		walltime_format(v[i].mtime_ns, false, when, sizeof(when));
		fputs("<tr><td>", out);
		html_text(out, v[i].name);
		fprintf(out, "</td><td>%s</td><td>%s</td></tr>\n", size, when);
	}
	fputs("</table>\n</body></html>\n", out);
	fclose(out);
	free_list(v, n);
	return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", body, len, false);
}

/* Wait on s->cond until monotonic time t (ns); false when stopping. */
static bool wait_until(struct pull_server *s, uint64_t t)
{
	struct timespec ts = { (time_t)(t / 1000000000ull), (long)(t % 1000000000ull) };
	bool stopping;
	pthread_mutex_lock(&s->lock);
	while (!s->stopping && now_ns() < t)
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	stopping = s->stopping;
	pthread_mutex_unlock(&s->lock);
	return !stopping;
}

/* Was a recording in dir written at or after wall time t? */
static bool written_since(const char *dir, uint64_t t)
{
	size_t n, i;
	struct entry *v = list_dir(dir, &n);
	bool yes = false;
	for (i = 0; i < n && !yes; i++)
		yes = v[i].mtime_ns >= t;
	free_list(v, n);
	return yes;
}

/* The profile of [since, until) as gzip'd profile.proto into *body;
 * -1 with why in *e. Under s->work. */
static int build(struct pull_server *s, const struct pull_request *rq, uint64_t since, uint64_t until,
		 uint64_t deadline, char **body, size_t *len, struct err *e)
{
	struct prof_window w = { since, until, deadline };
	struct view_filter f = { rq->pid, -1, rq->comm, 0, 0 };
	struct profile p;
	FILE *out;
	int ret;

	if (profile_load_dir(&p, s->dir, &w, e)) {
		profile_release(&p);
		return -1;
	}
	if (s->symbol_lock)
		pthread_mutex_lock(s->symbol_lock);
	profile_symbolize(&p, s->demangle);
	if (s->symbol_lock)
		pthread_mutex_unlock(s->symbol_lock);
	out = open_memstream(body, len);
	if (!out) {
		profile_release(&p);
		return err_set(e, -ENOMEM, "out of memory");
	}
	ret = export_pprof(&p, &f, out, e);
	fclose(out);
	profile_release(&p);
	if (ret) {
		free(*body);
		*body = NULL;
	}
	return ret;
}

/* GET /debug/pprof/profile */
static enum MHD_Result profile_reply(struct pull_server *s, struct MHD_Connection *c)
{
	struct pull_request rq;
	struct err e;
	uint64_t since = walltime_now(), until, mono = now_ns(), deadline;
	struct timespec ts;
	char *body = NULL;
	size_t len = 0;
	int ret;

	if (pull_parse_request(http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds"),
			       http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid"),
			       http_mhd.lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "comm"),
			       s->max_seconds, &rq, &e))
		return text_reply(c, MHD_HTTP_BAD_REQUEST, e.msg);
	until = since + rq.seconds * 1000000000ull;
	mono += rq.seconds * 1000000000ull;
	if (!wait_until(s, mono + PULL_GRACE_MS * 1000000ull))
		return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is stopping\n");
	while (!written_since(s->dir, until) && now_ns() < mono + (PULL_GRACE_MS + PULL_FRESH_MS) * 1000000ull)
		if (!wait_until(s, now_ns() + 100000000ull))
			return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "the server is stopping\n");
	deadline = mono + PULL_WORK_SECONDS * 1000000000ull;
	/* pthread_mutex_timedlock counts in CLOCK_REALTIME */
	clock_gettime(CLOCK_REALTIME, &ts);
	mono = now_ns();
	ts.tv_sec += (time_t)(deadline > mono ? (deadline - mono) / 1000000000ull : 0);
	if (pthread_mutex_timedlock(&s->work, &ts))
		return text_reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "busy: other profiles are being built;"
				  " try again\n");
	ret = build(s, &rq, since, until, deadline, &body, &len, &e);
	pthread_mutex_unlock(&s->work);
	if (ret) {
		char *msg = xasprintf("%s\n", e.msg);
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", msg, strlen(msg), false);
	}
	return reply(c, MHD_HTTP_OK, "application/octet-stream", body, len, true);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **state)
{
	struct pull_server *s = cls;
	const char *host = http_mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);

	if (!http_host_allowed(host, s->port, s->remote))
		return text_reply(c, MHD_HTTP_FORBIDDEN, s->remote ?
				  "stax answers only requests for this machine's addresses or name with its port"
				  " (the Host header names another)\n" :
				  "stax answers only requests for 127.0.0.1, localhost or [::1] with its port"
				  " (the Host header names another)\n");
	if (strcmp(method, "GET"))
		return text_reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		return index_reply(s, c);
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile_reply(s, c);
	if (!strncmp(url, "/debug/pprof/", 13))
		return text_reply(c, MHD_HTTP_NOT_FOUND, "stax has CPU profiles only: /debug/pprof/profile"
				  " (see /debug/pprof/)\n");
	return text_reply(c, MHD_HTTP_NOT_FOUND, "not found (see /debug/pprof/)\n");
}

/* A listening socket on o->listen; -1 with why in *e. */
static int open_socket(struct pull_server *s, const struct pull_opts *o, struct err *e)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
	int fd, one = 1;
	const char *listen_on = o->listen ? o->listen : "127.0.0.1:0";
	char host[64];

	if (pull_parse_listen(listen_on, &ss, &len, &loopback, e))
		return -1;
	if (!loopback && !o->allow_remote)
		return err_set(e, -1, "%s is not a loopback address: anyone who can reach it could read the"
			       " profiles (ask for it explicitly to serve beyond this machine, or listen on"
			       " 127.0.0.1)", listen_on);
	s->remote = !loopback;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		int e2 = errno;
		if (fd >= 0)
			close(fd);
		return err_set(e, -e2, "cannot listen on %s: %s (pick another port, or 0 for any)", listen_on,
			       strerror(e2));
	}
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		s->port = ntohs(a->sin6_port);
		snprintf(s->addr, sizeof(s->addr), "[%s]:%u", host, s->port);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		s->port = ntohs(a->sin_port);
		snprintf(s->addr, sizeof(s->addr), "%s:%u", host, s->port);
	}
	return fd;
}

struct pull_server *pull_start(const struct pull_opts *o, struct err *e)
{
	struct pull_server *s;
	struct stat st;
	pthread_condattr_t ca;
	sigset_t all, old;
	unsigned conns = o->max_connections ? o->max_connections : PULL_CONNECTIONS;
	int fd;

	if (http_open(e))
		return NULL;
	if (!o->dir || stat(o->dir, &st) || !S_ISDIR(st.st_mode)) {
		err_set(e, -1, "%s: not a directory (the pprof endpoint serves a directory of recordings)",
			o->dir ? o->dir : "(none)");
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(o->dir);
	s->max_seconds = o->max_seconds ? MIN(o->max_seconds, PULL_MAX_SECONDS) : PULL_MAX_SECONDS;
	s->demangle = !o->no_demangle;
	s->symbol_lock = o->symbol_lock;
	if ((fd = open_socket(s, o, e)) < 0) {
		free(s->dir);
		free(s);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->work, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	/* libmicrohttpd's threads inherit this mask: no signal of the
	 * caller's lands in them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	s->d = http_mhd.start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
				     (o->listen && o->listen[0] == '[' ? MHD_USE_IPv6 : 0),
				     0, NULL, NULL, handle, s,
				     MHD_OPTION_LISTEN_SOCKET, fd,
				     MHD_OPTION_CONNECTION_LIMIT, conns,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PULL_IDLE_SECONDS,
				     MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!s->d) {
		int e2 = errno;
		close(fd);
		err_set(e, -1, "cannot start the HTTP server on %s: %s", s->addr, strerror(e2 ? e2 : EINVAL));
		pull_stop(s);
		return NULL;
	}
	if (s->remote)
		warn("serving profiles at http://%s/debug/pprof/ beyond this machine: anyone who can reach"
		     " it can read what the recordings in %s hold (no authentication)", s->addr, s->dir);
	return s;
}

const char *pull_address(const struct pull_server *s)
{
	return s->addr;
}

unsigned pull_port(const struct pull_server *s)
{
	return s->port;
}

void pull_stop(struct pull_server *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
	if (s->d)
		http_mhd.stop_daemon(s->d);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->work);
	free(s->dir);
	free(s);
}
