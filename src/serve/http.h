/* http.h - what serve/'s two HTTP servers share: libmicrohttpd, opened
 * once when a server starts (dlopen: linking it cost every command
 * ~1.3 ms of start-up), and the check of a request's Host header.
 *
 * serve.c (the page, stax serve) and pull.c (the pprof pull endpoint,
 * stax serve --pprof and stax agent --listen) call http_open() before
 * they start a daemon, then use the functions in http_mhd.
 */
#ifndef STAX_SERVE_HTTP_H
#define STAX_SERVE_HTTP_H

#include "lib/err.h"

#include <microhttpd.h>
#include <stdbool.h>

/* libmicrohttpd's functions stax uses; valid after http_open(). */
struct http_mhd_fns {
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
};
extern struct http_mhd_fns http_mhd;

/* Open libmicrohttpd (once for the process; thread-safe). 0, or -1
 * with "what: why (apt-get install libmicrohttpd12)" in *e. */
int http_open(struct err *e);

/* Is host (a request's Host header, NULL when it has none) a name of
 * this server on port? Always: 127.0.0.1, localhost and [::1] with the
 * port (no port only for port 80). With remote (a server listening
 * beyond loopback, asked for): also any IPv4 or [IPv6] address literal
 * and this machine's host name (gethostname(), or its part before the
 * first dot), with the port. Anything else is a name a page elsewhere
 * points at this machine (DNS rebinding): refused, so that page cannot
 * read what the server answers. */
bool http_host_allowed(const char *host, unsigned port, bool remote);

#endif
