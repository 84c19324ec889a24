/* pull.h - the pull endpoint of Go's net/http/pprof over a directory of
 * recordings: what `go tool pprof http://HOST:PORT/debug/pprof/profile`,
 * Parca's scraper and Grafana Alloy's pyroscope.scrape read.
 *
 *   GET /debug/pprof/profile?seconds=N[&pid=PID][&comm=NAME]
 *       Waits N seconds from the request (default 30; 1 to max_seconds,
 *       anything else is 400), then a little more so the recorder's last
 *       chunk reaches the file (0.5 s, and up to 1.5 s more until a file
 *       in dir was written after the window), and answers the samples
 *       the recordings in dir (profile_load_dir()) took in those N
 *       seconds by the wall clock, as a gzip'd profile.proto
 *       (export_pprof(): Content-Type application/octet-stream, as Go);
 *       pid= keeps one process, comm= the threads of that name. 503 when
 *       the recordings cannot be read, or the server is stopping.
 *   GET /debug/pprof/   an HTML index: that endpoint, and the recordings
 *       in dir (name, size, last write).
 *   Anything else is 404 (other Go profiles: heap, goroutine, ... are
 *   not CPU profiles stax has); a method other than GET is 405.
 *
 * Every request's Host header is checked (serve/http.h: loopback names,
 * and for a server asked to listen beyond loopback also address literals
 * and this machine's name): 403 otherwise. At most max_connections
 * connections at once, each with a thread of its own (a request waits N
 * seconds); one profile is built at a time (the symbolizer's parts are
 * used by one thread at a time), and a request that cannot be answered
 * within 60 s of its window's end gets 503; a connection idle for 30 s
 * is closed.
 */
#ifndef STAX_SERVE_PULL_H
#define STAX_SERVE_PULL_H

#include "lib/err.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct pull_opts {
	const char *dir;           /* the directory of recordings (copied) */
	const char *listen;        /* "ADDR:PORT": 127.0.0.1, localhost, [::1], or
				    * with allow_remote any IPv4 or [IPv6] address
				    * (0.0.0.0: all of them); PORT 0: a free one */
	bool allow_remote;         /* a non-loopback ADDR is refused without it */
	unsigned max_seconds;      /* largest ?seconds= (0: 3600) */
	unsigned max_connections;  /* 0: 16 */
	bool no_demangle;          /* names as the binaries have them */
	/* Held while the server symbolizes a profile (NULL: none). A
	 * module's symbol table is used by one thread at a time
	 * (module/module.h): a process that symbolizes on another thread
	 * too, such as stax agent, whose recorder writes each file's
	 * symbols at rotation, passes the lock it holds around that. */
	pthread_mutex_t *symbol_lock;
};

struct pull_server;

/* Listen on o->listen and serve from threads of libmicrohttpd; returns
 * at once. Those threads block every signal (the caller's handling is
 * untouched). Says on standard error (warn()) that it listens beyond
 * loopback when it does. NULL with "what: why (what to do)" in *e: a
 * bad address, a remote one without allow_remote, the port taken,
 * libmicrohttpd missing, dir not a directory. */
struct pull_server *pull_start(const struct pull_opts *o, struct err *e);
/* The address it listens on, "ADDR:PORT" with the port it got (for
 * PORT 0); borrowed until pull_stop(). */
const char *pull_address(const struct pull_server *s);
unsigned pull_port(const struct pull_server *s);
/* Stop listening and close every connection (a request still waiting
 * for its window gets no answer; one being built finishes first);
 * returns when they are closed, and frees s. s may be NULL. */
void pull_stop(struct pull_server *s);

/* For tests and fuzzing: what pull_start() and a request parse. */
struct pull_request {
	unsigned seconds;
	int64_t pid;               /* -1: any */
	const char *comm;          /* NULL: any (borrowed) */
};
/* ?seconds=, ?pid=, ?comm= (each NULL when absent): 0, or -1 with what
 * is wrong in *e (the 400's text). */
int pull_parse_request(const char *seconds, const char *pid, const char *comm, unsigned max_seconds,
		       struct pull_request *r, struct err *e);
/* "ADDR:PORT" into *ss (*len bytes); *loopback: ADDR is a loopback
 * address. 0, or -1 with why in *e. */
int pull_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len, bool *loopback,
		      struct err *e);

#endif
