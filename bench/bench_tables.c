/* bench_tables.c - cold unwind table build time per module (not a test).
 *
 * Build and run from the repository root (bench/run.sh does this):
 *   cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE -o /tmp/bench_tables \
 *      bench/bench_tables.c src/unwind/?*.c src/lib/?*.c -lelf -lz
 *   /tmp/bench_tables FILE...
 *
 * For each ELF file, loads it and compiles its CFI into a table with
 * utable_load(), as the unwinder does the first time a sample lands in
 * the module, 5 times, and prints one line:
 *   FILE FIRST_MS MEDIAN_MS ROWS FDES
 * FIRST_MS is the first build in this process (the file may be in the
 * page cache already); MEDIAN_MS the median of the 5 builds (wall time
 * around utable_load: open, parse, compile). No CFI prints ROWS 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>

#include "lib/util.h"
#include "unwind/table.h"

#define RUNS 5

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int i, r, ret = 0;
	for (i = 1; i < argc; i++) {
		uint64_t ns[RUNS];
		uint32_t rows = 0, fdes = 0;
		for (r = 0; r < RUNS; r++) {
			uint64_t t0 = now_ns();
			struct utable *t = utable_load(argv[i]);
			ns[r] = now_ns() - t0;
			rows = t->nrows;
			fdes = t->nfde;
			utable_free(t);
		}
		double first = ns[0] / 1e6;
		qsort(ns, RUNS, sizeof(ns[0]), cmp_u64);
		printf("%s %.3f %.3f %u %u\n", argv[i], first, ns[RUNS / 2] / 1e6, rows, fdes);
		if (!rows)
			ret = 1;
	}
	return ret;
}
