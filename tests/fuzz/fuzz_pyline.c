/* fuzz_pyline.c - fuzz target for CPython line tables (src/symbol/pyline.c),
 * which the recorder reads from code objects of processes it does not
 * trust.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: byte 0 picks the version (0x030a + byte % 4), bytes 1-4 the
 * first line (little-endian int), then the table. Checks: a walk ends
 * (the table's end or a corruption report inside the table), its ranges
 * follow each other, and pyline_find() agrees with the walk at each
 * range's first offset.
 * Seeds: tests/fuzz/corpus/pyline (co_linetable of real code objects of
 * 3.10 to 3.13, with their first lines).
 */
#include "symbol/pyline.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pyline_iter it;
	uint64_t lo, hi, at = 0;
	uint32_t version;
	int32_t first;
	size_t bad = 0, steps = 0;
	int line, r;

	if (size < 5)
		return 0;
	version = 0x030a + data[0] % 4;
	memcpy(&first, data + 1, 4);
	data += 5;
	size -= 5;
	pyline_init(&it, data, data + size, first, version);
	while ((r = pyline_next(&it, &lo, &hi, &line, &bad)) == 1) {
		if (lo != at || hi < lo || ++steps > size)
			abort();
		if (hi > lo && lo <= UINT32_MAX) {
			int f = pyline_find(data, data + size, first, version, (uint32_t)lo, NULL);
			/* an earlier range may cover the offset too (3.10: empty and
			 * overlapping ones do not occur; ranges are contiguous) */
			if (f != line)
				abort();
		}
		at = hi;
	}
	if (r == PYLINE_CORRUPT && bad >= size)
		abort();
	if (r != 0 && r != PYLINE_CORRUPT)
		abort();
	return 0;
}
