/* fuzz_tcache.c - fuzz target for the unwind table cache's files
 * (src/unwind/tcache.c).
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: a cache file (header and payload). Its checksum and payload
 * size are set right first, so that mutations reach the payload's
 * parser rather than stop at the checksum; the key is the header's own.
 * A table the parser accepts is queried at every row and at addresses
 * the input mentions, its SLOW FDEs interpreted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"
#include "unwind/table.h"
#include "unwind/tcache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { HDR = 128 };
	struct cache_key k;
	size_t psize;
	uint64_t v;

	if (size < HDR)
		return 0;
	uint8_t *d = malloc(size);
	memcpy(d, data, size);
	tcache_seal(d, size, &k);
	const uint8_t *p = tcache_check(d, size, &k, &psize);
	/* the payload alone too, whatever the header says */
	const uint8_t *q[2] = { p, d + HDR };
	size_t n[2] = { p ? psize : 0, size - HDR };
	for (int i = 0; i < 2; i++) {
		if (!q[i])
			continue;
		struct utable *t = calloc(1, sizeof(*t));
		if (tcache_parse(q[i], n[i], t) == 0) {
			for (uint32_t r = 0; r < t->nrows; r++) {
				uint64_t a = t->base + t->addr[r];
				(void)utable_find(t, a - 1);
				(void)utable_find(t, a);
			}
			for (size_t o = HDR; o + 8 <= size && o < 4096; o += 8) {
				memcpy(&v, d + o, 8);
				(void)utable_find(t, v);
			}
			for (uint32_t s = 0; s < t->nslow; s++) {
				struct cfi_row row;
				struct cfi_cie cie;
				(void)utable_slow_row(t, t->slow[s].pc_begin, &row, &cie);
				(void)utable_slow_row(t, t->slow[s].pc_end - 1, &row, &cie);
			}
		}
		utable_free(t);
	}
	free(d);
	return 0;
}
