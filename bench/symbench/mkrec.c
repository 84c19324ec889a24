/* mkrec.c - a synthetic recording for the symbolization benchmark.
 *
 * Reads ELF virtual addresses (hex, one a line) of instructions of BINARY
 * on stdin, keeps ADDRS of them spread evenly, and writes a stax recording
 * of one process that has BINARY mapped at 0x555555554000 (file offset ==
 * address, as gcc's PIE layout has it) with SAMPLES samples whose leaf
 * frames cycle through those addresses under a fixed caller. The file has
 * no symbols chunk and no end chunk, so every query symbolizes all ADDRS
 * addresses from BINARY: that is what the benchmark times.
 *
 * build: cc -O2 -Isrc -D_GNU_SOURCE -o mkrec bench/symbench/mkrec.c \
 *          build/src/store/*.o build/src/lib/*.o -lzstd
 * usage: objdump -d --no-show-raw-insn symbench | awk '/^ +[0-9a-f]+:/ {print $1}' |
 *          ./mkrec symbench out.stax [SAMPLES=1000000] [ADDRS=50000]
 * then:  time ./stax top -i out.stax -n 5
 */
#include "store/stacks.h"
#include "store/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BASE 0x555555554000ull

int main(int argc, char **argv)
{
	struct store_writer w;
	struct stack_table t;
	struct rec_mapping m;
	struct rec_comm c;
	struct stat st;
	uint64_t *addrs = NULL, a, nsamples;
	size_t n = 0, cap = 0, want, i, step;
	uint32_t root, caller, *leaf;
	char line[256];

	if (argc < 3 || stat(argv[1], &st)) {
		fprintf(stderr, "usage: mkrec BINARY OUT [SAMPLES] [ADDRS] < addresses\n");
		return 2;
	}
	nsamples = argc > 3 ? strtoull(argv[3], NULL, 10) : 1000000;
	want = argc > 4 ? strtoul(argv[4], NULL, 10) : 50000;
	while (fgets(line, sizeof(line), stdin))
		if (sscanf(line, " %lx", &a) == 1) {
			if (n == cap)
				addrs = realloc(addrs, (cap = cap ? 2 * cap : 4096) * sizeof(*addrs));
			addrs[n++] = a;
		}
	if (!n || store_writer_open(&w, argv[2]))
		return 1;
	step = n > want ? n / want : 1;
	stack_table_init(&t);
	memset(&m, 0, sizeof(m));
	m.id = 1;
	m.pid = 1000;
	m.start = BASE;
	m.end = BASE + (uint64_t)st.st_size;
	m.prot = 5;
	store_put_meta(&w, "event", "cpu-clock");
	store_put_meta(&w, "event_is_clock", "1");
	store_put_mapping(&w, &m, argv[1]);
	memset(&c, 0, sizeof(c));
	c.pid = c.tid = 1000;
	store_put_comm(&w, &c, "symbench");
	root = stack_intern(&t, 0, 1000, 0, NODE_ROOT);
	caller = stack_intern(&t, root, BASE + addrs[0], 1, NODE_USER | NODE_F_RA);
	leaf = malloc((n / step + 1) * sizeof(*leaf));
	for (i = 0; i * step < n && i < want; i++)
		leaf[i] = stack_intern(&t, caller, BASE + addrs[i * step], 1, NODE_USER);
	want = i;
	for (i = 0; i < t.n; i++)
		store_put_node(&w, (uint32_t)(i + 1), &t.nodes[i]);
	for (a = 0; a < nsamples; a++) {
		struct rec_sample s = { a * 1000, 1000000, 1000, 1000, leaf[(a * 7919) % want], 0, 1, 0 };
		store_put_sample(&w, &s);
		if (a % 100000 == 99999)
			store_flush(&w, CHUNK_DATA);
	}
	store_flush(&w, CHUNK_DATA);
	/* the writer's thread writes the last chunk: wait for it */
	if (store_sync(&w))
		return 1;
	/* no symbols, no end chunk: readers symbolize from BINARY */
	fprintf(stderr, "mkrec: %llu samples over %zu addresses\n", (unsigned long long)nsamples, want);
	return 0;
}
