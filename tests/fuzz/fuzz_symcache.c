/* fuzz_symcache.c - fuzz target for the symbol table cache's files
 * (src/symbol/symcache.c).
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: a cache file (header and payload). Its checksum and payload
 * size are set right first, so that mutations reach the payload's
 * parser rather than stop at the checksum; the key is the header's own.
 * A table the parser accepts is looked up at every symbol's start and
 * last byte and at addresses the input mentions, and every name read.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbol/symcache.h"

static void use(struct sym_module *m, const uint8_t *d, size_t size)
{
	struct sym_table *t = &m->table;
	volatile size_t sum = 0;
	uint64_t v;

	for (size_t i = 0; i < t->nsyms; i++) {
		struct sym_entry *e = sym_table_find(t, t->syms[i].start);
		if (e)
			sum += strlen(e->name);
		e = sym_table_find(t, t->syms[i].end - 1);
		if (e)
			sum += strlen(e->name);
	}
	for (size_t o = 0; o + 8 <= size && o < 4096; o += 8) {
		memcpy(&v, d + o, 8);
		struct sym_entry *e = sym_table_find(t, v);
		if (e)
			sum += strlen(e->name);
	}
	(void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cache_key k;
	size_t psize;

	if (size < CACHE_FILE_HEADER)
		return 0;
	uint8_t *d = malloc(size);
	memcpy(d, data, size);
	symcache_seal(d, size, &k);
	const uint8_t *p = symcache_check(d, size, &k, &psize);
	/* the payload alone too, whatever the header says */
	const uint8_t *q[2] = { p, d + CACHE_FILE_HEADER };
	size_t n[2] = { p ? psize : 0, size - CACHE_FILE_HEADER };
	for (int i = 0; i < 2; i++) {
		struct sym_module m;
		if (!q[i])
			continue;
		memset(&m, 0, sizeof(m));
		if (symcache_parse(q[i], n[i], &m) == 0)
			use(&m, d, size);
		free(m.segs);
		free(m.fdes);
		sym_table_release(&m.table);
	}
	free(d);
	return 0;
}
