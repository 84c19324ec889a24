/* fuzz_walltime.c - fuzz target for --since and --until
 * (lib/walltime.c): any bytes must parse or be refused with a message,
 * never read past their end; a time that parses prints, and what
 * walltime_format() prints in UTC parses back to the same time (to the
 * millisecond it shows), or this target aborts.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: the option's value (cut at the first NUL, as argv is).
 */
#include "lib/walltime.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 2026-12-05 15:30:45.25 UTC */
#define NOW (1796484645ull * 1000000000ull + 250000000ull)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int tz;
	char *in = malloc(size + 1), out[96];
	uint64_t v, back;
	struct err e;

	if (!tz++) {
		setenv("TZ", "UTC0", 1);
		tzset();
	}
	memcpy(in, data, size);
	in[size] = '\0';
	if (walltime_parse(in, NOW, &v, &e)) {
		if (!strstr(e.msg, "cannot read '")) {
			fprintf(stderr, "fuzz_walltime: refused without the message: %s\n", e.msg);
			abort();
		}
	} else {
		walltime_format(v, true, out, sizeof(out));
		if (walltime_parse(out, NOW, &back, &e) || back != v - v % 1000000) {
			fprintf(stderr, "fuzz_walltime: '%s' is %llu, printed '%s', read back as %llu\n", in,
				(unsigned long long)v, out, (unsigned long long)back);
			abort();
		}
		walltime_format(v, false, out, sizeof(out));
	}
	free(in);
	return 0;
}
