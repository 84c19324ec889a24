/* fuzz_jitcfi.c - fuzz target for jitdump unwinding info
 * (src/unwind/jitcfi.c): JIT_CODE_UNWINDING_INFO records whose .eh_frame
 * is compiled into unwind tables for the code of the next JIT_CODE_LOAD.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: byte 0, then a jitdump file. The file is parsed in two steps,
 * split at a point byte 0 picks (a file still being written), and every
 * table found is queried at addresses the input mentions and near them.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/err.h"
#include "unwind/jitcfi.h"
#include "unwind/table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_cfi *j;
	struct err err = { 0 };
	size_t off = 0, cut, i;
	uint64_t a;

	if (size < 1)
		return 0;
	cut = (size_t)data[0] * (size - 1) / 256;
	data++;
	size--;
	j = jit_cfi_new();
	jit_cfi_add(j, data, cut, &off, &err);
	jit_cfi_add(j, data, size, &off, &err);
	for (i = 0; i + 8 <= size && i < 4096; i += 4) {
		memcpy(&a, data + i, 8);
		for (uint64_t d = 0; d < 24; d += 3) {
			const struct utable *t = jit_cfi_find(j, a + d);
			if (t)
				(void)utable_find(t, a + d);
		}
	}
	jit_cfi_free(j);
	return 0;
}
