/* test_store.c - the recording file: write, read back, cut, corrupt. */
#include "test.h"
#include "profile/profile.h"
#include "store/reader.h"
#include "store/stacks.h"
#include "store/writer.h"
#include "lib/util.h"

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint8_t *slurp(const char *path, size_t *n)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	uint8_t *p;
	if (fd < 0 || fstat(fd, &st))
		return NULL;
	p = xmalloc((size_t)st.st_size);
	*n = (size_t)read(fd, p, (size_t)st.st_size);
	close(fd);
	return p;
}

/* Write a small recording with two chunks of samples and a symbols chunk. */
static void write_fixture(const char *path, size_t *chunk1_end)
{
	struct store_writer w;
	struct stack_table t;
	struct rec_mapping m;
	struct rec_comm c;
	struct rec_symbol sym;
	uint32_t root, a, b, leaf;
	int i;

	stack_table_init(&t);
	store_writer_open(&w, path);
	store_put_meta(&w, "command", "fixture --arg");
	store_put_meta(&w, "event", "cpu-clock");
	store_put_meta(&w, "event_is_clock", "1");
	memset(&c, 0, sizeof(c));
	c.pid = c.tid = 42;
	c.time = 1;
	store_put_comm(&w, &c, "fixture");
	memset(&m, 0, sizeof(m));
	m.id = 1;
	m.pid = 42;
	m.start = 0x400000;
	m.end = 0x500000;
	store_put_mapping(&w, &m, "/nonexistent/fixture");
	root = stack_intern(&t, 0, 42, 0, NODE_ROOT);
	a = stack_intern(&t, root, 0x401000, 1, NODE_USER | NODE_F_RA);
	b = stack_intern(&t, a, 0x402000, 1, NODE_USER | NODE_F_RA);
	leaf = stack_intern(&t, b, 0x403000, 1, NODE_USER);
	for (i = 1; i <= 4; i++)
		store_put_node(&w, (uint32_t)i, stack_node(&t, (uint32_t)i));
	for (i = 0; i < 100; i++) {
		struct rec_sample s = { (uint64_t)i * 1000000, 1001001, 42, 42, i % 4 ? leaf : b, 0, 0, 0 };
		store_put_sample(&w, &s);
	}
	store_flush(&w, CHUNK_DATA);
	store_sync(&w);
	*chunk1_end = (size_t)w.bytes;
	for (i = 0; i < 50; i++) {
		struct rec_sample s = { (uint64_t)(100 + i) * 1000000, 1001001, 42, 42, leaf, 0, 0, 0 };
		store_put_sample(&w, &s);
	}
	store_flush(&w, CHUNK_DATA);
	memset(&sym, 0, sizeof(sym));
	sym.addr = 0x403000;
	sym.mapping = 1;
	sym.flags = NODE_USER | SYMBOL_F_KNOWN;
	store_put_symbol(&w, &sym, "leaf_fn", "fixture");
	sym.addr = 0x402000;
	sym.flags = NODE_USER | NODE_F_RA | SYMBOL_F_KNOWN;
	store_put_symbol(&w, &sym, "middle_fn", "fixture");
	store_flush(&w, CHUNK_SYMBOLS);
	store_writer_close(&w);
	stack_table_release(&t);
}

int main(void)
{
	char path[] = "/tmp/stax-test-store-XXXXXX";
	int fd = mkstemp(path);
	struct profile p;
	size_t n = 0, chunk1_end, cut, crashes = 0, oks = 0, errs = 0;
	uint8_t *data, *copy;
	char err[512];

	close(fd);
	write_fixture(path, &chunk1_end);
	CHECK(profile_load(&p, path) == 0, "finished file loads");
	CHECK(p.nsamples == 150, "all samples read back");
	CHECK(p.nnodes == 4 && p.nodes[3].depth == 3, "stack nodes and depths");
	CHECK(!p.partial && p.has_symbols, "finished with symbols");
	CHECK(p.nmaps == 1 && !strcmp(p.maps[0].path, "/nonexistent/fixture"), "mapping path");
	profile_symbolize(&p, true);
	CHECK(!strcmp(profile_func(&p, p.nodes[3].func)->name, "leaf_fn"), "symbol from file (leaf)");
	CHECK(!strcmp(profile_func(&p, p.nodes[2].func)->name, "middle_fn"), "symbol from file (return address)");
	CHECK(!strncmp(profile_func(&p, p.nodes[1].func)->name, "fixture+0x", 10),
	      "address without a symbol prints as module+0xoffset");
	CHECK(!strcmp(profile_comm(&p, 42, 42, 5), "fixture"), "thread name");
	CHECK(!strcmp(profile_meta(&p, "command"), "fixture --arg"), "meta");
	profile_release(&p);

	data = slurp(path, &n);
	/* a recorder killed mid-write leaves a short tail: read up to the last chunk */
	CHECK(profile_load_mem(&p, "cut", data, chunk1_end + 10, err, sizeof(err)) == 0 &&
	      p.nsamples == 100 && p.partial, "cut file reads its complete chunks and says partial");
	profile_release(&p);

	/* every cut length either loads a prefix or fails with a message */
	for (cut = 0; cut <= n; cut++) {
		err[0] = 0;
		if (profile_load_mem(&p, "cut", data, cut, err, sizeof(err)) == 0)
			oks++;
		else if (err[0])
			errs++;
		else
			crashes++;
		profile_release(&p);
	}
	CHECK(crashes == 0 && oks > 0, "every truncation reads a prefix or reports an error");

	/* flip each byte: must never crash, and corruption inside a chunk is reported */
	copy = xmalloc(n);
	crashes = 0;
	for (cut = 0; cut < n; cut++) {
		memcpy(copy, data, n);
		copy[cut] ^= 0x5a;
		err[0] = 0;
		if (profile_load_mem(&p, "flip", copy, n, err, sizeof(err)) && !err[0])
			crashes++;
		profile_release(&p);
	}
	CHECK(crashes == 0, "every flipped byte loads or reports an error");
	memcpy(copy, data, n);
	copy[chunk1_end + 30] ^= 0xff;
	CHECK(profile_load_mem(&p, "flip", copy, n, err, sizeof(err)) == -1 && strstr(err, "offset"),
	      "corruption is reported with its offset");
	profile_release(&p);
	memcpy(copy, data, n);
	copy[8] = 9;
	CHECK(profile_load_mem(&p, "v9", copy, n, err, sizeof(err)) == -1 && strstr(err, "version 9"),
	      "unknown version rejected with a clear message");
	profile_release(&p);
	CHECK(profile_load_mem(&p, "junk", "hello world, not a recording", 28, err, sizeof(err)) == -1 &&
	      strstr(err, "not a stax recording"), "junk rejected");
	profile_release(&p);
	free(copy);
	free(data);
	unlink(path);
	TEST_DONE();
}
