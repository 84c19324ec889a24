/* serve.h - the local web view (stax serve).
 *
 * An HTTP server on 127.0.0.1 only (libmicrohttpd, one internal thread)
 * that serves one page with no outside assets: the flamegraph (the same
 * SVG as 'stax flame --svg', in a frame), the top functions, the threads,
 * and the sampled addresses of a function on click. Every request checks
 * the recording's size and modification time and reloads it when it
 * changed, so a recording still being written updates; the page polls.
 */
#ifndef STAX_SERVE_SERVE_H
#define STAX_SERVE_SERVE_H

#include "profile/filter.h"

#include <stdbool.h>
#include <stdint.h>

struct serve_opts {
	const char *path;      /* the recording */
	unsigned port;         /* 0: any free port */
	bool demangle;
	struct prof_filter filter; /* --time, --focus, ...: applied at every load */
};

/* Serve until SIGINT or SIGTERM. Returns 0, or -1 with the message in
 * *e when the server cannot start. While it serves, what it has to say
 * (the recording's warnings, a reload that failed) goes to the terminal
 * through lib/util.c's warn() and error(), as it happens. */
struct err;
int serve_run(const struct serve_opts *o, struct err *e);

/* The page (HTML with its style) and its script: $(B)/gen/page.c, which
 * make generates from page.html and page-*.js (gen-page.sh). */
extern const char serve_page[];
extern const char serve_page_js[];

#endif
