/* fuzz_pull.c - fuzz target for what the pprof pull endpoint reads from
 * outside (serve/pull.c, serve/http.c): a request's ?seconds=, ?pid= and
 * ?comm= (URL-decoded by libmicrohttpd: any bytes but NUL), its Host
 * header, and the --listen address. Each parses or is refused, never
 * reads past its end; an accepted request is within its bounds, or
 * this target aborts.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: lines: seconds, pid, comm, Host, listen address (missing lines
 * are absent parameters).
 */
#include "serve/http.h"
#include "serve/pull.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *field[5] = { NULL }, *p;
	struct pull_request r;
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
	struct err e;
	int i;

	memcpy(in, data, size);
	in[size] = '\0';
	for (i = 0, p = in; i < 5 && p; i++) {
		field[i] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = '\0';
	}
	if (!pull_parse_request(field[0], field[1], field[2], 600, &r, &e) &&
	    (r.seconds < 1 || r.seconds > 600 || r.pid < -1 || r.pid > 0x7fffffff ||
	     (r.comm && (!*r.comm || strlen(r.comm) > 255)))) {
		fprintf(stderr, "fuzz_pull: accepted out of bounds: %u %lld\n", r.seconds, (long long)r.pid);
		abort();
	}
	http_host_allowed(field[3], 8470, false);
	http_host_allowed(field[3], 80, true);
	if (field[4] && !pull_parse_listen(field[4], &ss, &len, &loopback, &e) && len > sizeof(ss)) {
		fprintf(stderr, "fuzz_pull: address of %u bytes\n", (unsigned)len);
		abort();
	}
	free(in);
	return 0;
}
