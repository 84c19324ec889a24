/* http.c - libmicrohttpd opened once, and the Host check (http.h). */
#include "serve/http.h"
#include "lib/util.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#ifndef MICROHTTPD_SONAME
#define MICROHTTPD_SONAME "libmicrohttpd.so.12"
#endif

struct http_mhd_fns http_mhd;
static const char *const mhd_names[] = {
	"MHD_add_response_header", "MHD_create_response_from_buffer", "MHD_destroy_response",
	"MHD_lookup_connection_value", "MHD_queue_response",
	"MHD_start_daemon", "MHD_stop_daemon",
};
_Static_assert(sizeof(http_mhd) == sizeof(mhd_names) / sizeof(mhd_names[0]) * sizeof(void *),
	       "one name per function");

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static bool opened;

int http_open(struct err *e)
{
	struct err le;
	int ret = 0;
	pthread_mutex_lock(&open_lock);
	if (!opened) {
		if (load_library(MICROHTTPD_SONAME, ARRAY_SIZE(mhd_names), mhd_names, (void **)&http_mhd, &le))
			ret = err_set(e, -1, "cannot start the HTTP server: %s (install it: apt-get install"
				      " libmicrohttpd12)", le.msg);
		else
			opened = true;
	}
	pthread_mutex_unlock(&open_lock);
	return ret;
}

/* host is name, then ":PORT" (or nothing, for port 80). */
static bool name_port(const char *host, size_t n, unsigned port)
{
	const char *p = host + n;
	if (!*p)
		return port == 80;
	if (*p++ != ':' || !*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5)
		return false;
	return strtoul(p, NULL, 10) == port;
}

/* An address literal: IPv4 dotted, or [IPv6]; its length in *n. */
static bool address_literal(const char *host, size_t *n)
{
	char buf[64];
	unsigned char addr[16];
	const char *end;
	if (*host == '[') {
		end = strchr(host, ']');
		if (!end || (size_t)(end - host - 1) >= sizeof(buf))
			return false;
		memcpy(buf, host + 1, (size_t)(end - host - 1));
		buf[end - host - 1] = 0;
		*n = (size_t)(end - host + 1);
		return inet_pton(AF_INET6, buf, addr) == 1;
	}
	*n = strcspn(host, ":");
	if (*n >= sizeof(buf))
		return false;
	memcpy(buf, host, *n);
	buf[*n] = 0;
	return inet_pton(AF_INET, buf, addr) == 1;
}

bool http_host_allowed(const char *host, unsigned port, bool remote)
{
	static const char *const names[] = { "127.0.0.1", "localhost", "[::1]" };
	char me[256];
	size_t i, n;
	if (!host)
		return false;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		n = strlen(names[i]);
		if (!strncasecmp(host, names[i], n) && (!host[n] || host[n] == ':'))
			return name_port(host, n, port);
	}
	if (!remote)
		return false;
	if (address_literal(host, &n))
		return name_port(host, n, port);
	if (gethostname(me, sizeof(me) - 1))
		return false;
	me[sizeof(me) - 1] = 0;
	n = strcspn(host, ":");
	if (n && n == strlen(me) && !strncasecmp(host, me, n))
		return name_port(host, n, port);
	/* the short name of a host whose name has dots */
	if (n && strchr(me, '.') && n == strcspn(me, ".") && !strncasecmp(host, me, n))
		return name_port(host, n, port);
	return false;
}
