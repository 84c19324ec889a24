/* fuzz_kallsyms.c - fuzz target for the kernel symbol parsers: the text
 * of /proc/kallsyms and /proc/modules, and the kallsyms cache file
 * (~/.cache/stax/kallsyms, which anyone's disk may have corrupted).
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: byte 0 picks the parser.
 *   even: the rest is kallsyms text, then a NUL byte, then /proc/modules
 *         text. The table built is written as a cache and read back,
 *         which must succeed with the same symbols (a real check).
 *   odd:  the rest is a cache file; its own key (bytes 8..15) is the
 *         expected one, so the parser gets past the staleness check.
 * Every table is queried at addresses the input names and at a spread.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "lib/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void query(struct sym_kallsyms *k, const uint8_t *data, size_t size)
{
	const char *module;
	struct sym_entry *e;
	uint64_t a;
	size_t i;

	for (i = 0; i + 8 <= size && i < 1024; i += 8) {
		memcpy(&a, data + i, 8);
		if ((e = sym_kallsyms_find(k, a, &module)))
			sym_kallsyms_name(k, e, true);
		if ((e = sym_kallsyms_find(k, a + 1, &module)))
			sym_kallsyms_name(k, e, false);
	}
	for (i = 0, a = 0xffffffff81000000ull; i < 256; i++, a += 0x2345)
		if ((e = sym_kallsyms_find(k, a, &module)))
			sym_kallsyms_name(k, e, true);
	sym_kallsyms_find(k, 0, &module);
	sym_kallsyms_find(k, UINT64_MAX, &module);
}

/* Symbol count and names of k, to compare two tables. */
static uint64_t digest(struct sym_kallsyms *k, size_t *n)
{
	const char *module;
	struct sym_entry *e;
	uint64_t a, h = 0;
	*n = 0;
	for (a = 0xffffffff81000000ull; a < 0xffffffff81000000ull + 0x100000; a += 0x1000)
		if ((e = sym_kallsyms_find(k, a, &module))) {
			(*n)++;
			h = h * 31 + e->start + e->end + strlen(e->name) + strlen(module);
		}
	return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_kallsyms *k, *back;
	struct buf b = BUF_INIT;
	uint64_t key = 0;

	if (size < 1)
		return 0;
	if (data[0] & 1) {
		if (size >= 17)
			memcpy(&key, data + 9, 8);
		k = sym_kallsyms_from_cache(data + 1, size - 1, key);
		if (k) {
			query(k, data + 1, size - 1);
			sym_kallsyms_free(k);
		}
		return 0;
	}
	{
		const char *text = (const char *)data + 1;
		size_t len = size - 1;
		const char *nul = memchr(text, '\0', len);
		size_t tlen = nul ? (size_t)(nul - text) : len;
		size_t n1, n2;
		uint64_t h1, h2;

		/* the parsers get exactly their bytes, no terminator */
		char *t = malloc(tlen ? tlen : 1);
		char *m = malloc(nul ? len - tlen - 1 + 1 : 1);
		memcpy(t, text, tlen);
		if (nul)
			memcpy(m, nul + 1, len - tlen - 1);
		k = sym_kallsyms_from_text(t, tlen, m, nul ? len - tlen - 1 : 0);
		query(k, data + 1, size - 1);
		if (!sym_kallsyms_empty(k)) {
			sym_kallsyms_to_cache(k, 42, &b);
			back = sym_kallsyms_from_cache(b.data, b.len, 42);
			if (!back) {
				fprintf(stderr, "fuzz_kallsyms: a table written as a cache does not read back\n");
				abort();
			}
			h1 = digest(k, &n1);
			h2 = digest(back, &n2);
			if (h1 != h2 || n1 != n2) {
				fprintf(stderr, "fuzz_kallsyms: the cache read back differs\n");
				abort();
			}
			sym_kallsyms_free(back);
			buf_release(&b);
		}
		sym_kallsyms_free(k);
		free(t);
		free(m);
	}
	return 0;
}
