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
 * The table cache is off (STAX_NO_CACHE=1): every build compiles.
 *
 *   /tmp/bench_tables --cache DIR [--fill] FILE...
 * uses the table cache in DIR (as XDG_CACHE_HOME): --fill loads each file
 * once (compiling it and writing its entry); without it the 5 loads must
 * all come from the cache (exit 1 otherwise) and the line ends with the
 * entry's size in bytes:
 *   FILE FIRST_MS MEDIAN_MS ROWS FDES BYTES
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	int i = 1, r, ret = 0;
	const char *cache = NULL;
	int fill = 0;

	if (argc > 2 && !strcmp(argv[1], "--cache")) {
		cache = argv[2];
		i = 3;
		if (i < argc && !strcmp(argv[i], "--fill")) {
			fill = 1;
			i++;
		}
		setenv("XDG_CACHE_HOME", cache, 1);
		unsetenv("STAX_NO_CACHE");
	} else {
		setenv("STAX_NO_CACHE", "1", 1);
	}
	for (; i < argc; i++) {
		uint64_t ns[RUNS];
		uint32_t rows = 0, fdes = 0;
		int cached = 0, runs = fill ? 1 : RUNS;
		for (r = 0; r < runs; r++) {
			uint64_t t0 = now_ns();
			struct utable *t = utable_load(argv[i]);
			ns[r] = now_ns() - t0;
			rows = t->nrows;
			fdes = t->nfde;
			cached += t->cached;
			utable_free(t);
		}
		double first = ns[0] / 1e6;
		qsort(ns, runs, sizeof(ns[0]), cmp_u64);
		printf("%s %.3f %.3f %u %u", argv[i], first, ns[runs / 2] / 1e6, rows, fdes);
		if (cache && !fill) {
			/* the entry: the newest file of DIR/stax/unwind */
			char cmd[4200];
			long long bytes = -1;
			snprintf(cmd, sizeof(cmd), "ls -t '%s/stax/unwind' 2>/dev/null | head -n 1", cache);
			FILE *p = popen(cmd, "r");
			char name[256] = "";
			if (p && fgets(name, sizeof(name), p)) {
				struct stat st;
				name[strcspn(name, "\n")] = 0;
				snprintf(cmd, sizeof(cmd), "%s/stax/unwind/%s", cache, name);
				if (!stat(cmd, &st))
					bytes = (long long)st.st_size;
			}
			if (p)
				pclose(p);
			printf(" %lld", bytes);
			if (cached != runs)
				ret = 1;
		}
		printf("\n");
		if (!rows)
			ret = 1;
	}
	return ret;
}
