/* fuzz_jit.c - fuzz target for the JIT symbol parsers: /tmp/perf-PID.map
 * text and jitdump files (both written by the profiled program).
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: byte 0 picks the parser (even: perf map, odd: jitdump), the rest
 * is the file. Every table built is queried at addresses near the ones
 * the input mentions and at a spread of others.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "symbol/symbol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_jit *j;
	struct err err = { 0 };
	uint64_t off, a;
	size_t i;

	if (size < 1)
		return 0;
	j = sym_jit_new();
	if (data[0] & 1)
		sym_jit_add_jitdump(j, data + 1, size - 1, "fuzz.dump", &err);
	else
		sym_jit_add_perfmap(j, (const char *)data + 1, size - 1, "fuzz.map", &err);
	for (i = 0; i + 8 <= size && i < 512; i += 8) {
		memcpy(&a, data + i, 8);
		sym_jit_find(j, a, &off);
		sym_jit_find(j, a + 1, &off);
	}
	for (a = 0; a < 0x100000; a += 0x1111)
		sym_jit_find(j, a, &off);
	sym_jit_free(j);
	return 0;
}
