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
#include <xxhash.h>

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

/* Set the kind of the chunk at h and make its checksum hold again. */
static void set_kind(uint8_t *h, uint16_t kind)
{
	struct store_chunk_header ch;
	struct store_chunk_sum sum;
	memcpy(&ch, h, sizeof(ch));
	ch.kind = kind;
	memcpy(h, &ch, sizeof(ch));
	memcpy(&sum, h + sizeof(ch) + ch.comp_size - sizeof(sum), sizeof(sum));
	sum.xxh3 = XXH3_64bits(h, sizeof(ch) + ch.comp_size - sizeof(sum));
	memcpy(h + sizeof(ch) + ch.comp_size - sizeof(sum), &sum, sizeof(sum));
}

/* The file as stax wrote it before chunks had checksums: flags 0, no
 * checksum frame. Returns its size (out has room for n). */
static size_t strip_sums(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t off = 16, o = 16;
	memcpy(out, in, 16);
	while (off + sizeof(struct store_chunk_header) <= n) {
		struct store_chunk_header h;
		memcpy(&h, in + off, sizeof(h));
		memcpy(out + o + sizeof(h), in + off + sizeof(h), h.comp_size - sizeof(struct store_chunk_sum));
		off += sizeof(h) + h.comp_size;
		h.flags = 0;
		h.comp_size -= sizeof(struct store_chunk_sum);
		h.check = h.raw_size ^ h.comp_size ^ h.seq ^ STORE_CHECK_XOR;
		memcpy(out + o, &h, sizeof(h));
		o += sizeof(h) + h.comp_size;
	}
	return o;
}

int main(void)
{
	char path[] = "/tmp/stax-test-store-XXXXXX";
	int fd = mkstemp(path);
	struct profile p;
	size_t n = 0, chunk1_end, cut, crashes = 0, oks = 0, errs = 0, undetected = 0;
	uint8_t *data, *copy;
	struct err err = { 0 };

	close(fd);
	write_fixture(path, &chunk1_end);
	CHECK(profile_load_err(&p, path, NULL) == 0, "finished file loads");
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
	CHECK(profile_load_mem(&p, "cut", data, chunk1_end + 10, &err) == 0 &&
	      p.nsamples == 100 && p.partial && p.tail == 10 && !p.live && !p.damage.chunks,
	      "cut file reads its complete chunks and says partial");
	profile_release(&p);

	/* every cut length either loads a prefix or fails with a message */
	for (cut = 0; cut <= n; cut++) {
		err.msg[0] = 0;
		if (profile_load_mem(&p, "cut", data, cut, &err) == 0)
			oks++;
		else if (err.msg[0])
			errs++;
		else
			crashes++;
		profile_release(&p);
	}
	CHECK(crashes == 0 && oks > 0, "every truncation reads a prefix or reports an error");

	/* flip each byte: must never crash; a flip inside a chunk is found
	 * (the checksum covers header and payload) and costs that chunk only */
	copy = xmalloc(n);
	crashes = 0;
	for (cut = 0; cut < n; cut++) {
		memcpy(copy, data, n);
		copy[cut] ^= 0x5a;
		err.msg[0] = 0;
		if (profile_load_mem(&p, "flip", copy, n, &err) && !err.msg[0])
			crashes++;
		else if (cut >= 16 && !err.msg[0] && p.damage.chunks == 0)
			undetected++;
		profile_release(&p);
	}
	CHECK(crashes == 0, "every flipped byte loads or reports an error");
	CHECK(undetected == 0, "every flipped byte in a chunk is counted as damage");

	/* one bit in the middle of the first chunk's payload: it is skipped,
	 * the second is read; its samples' stacks were defined in the first */
	memcpy(copy, data, n);
	copy[16 + 24 + 40] ^= 0x01;
	CHECK(profile_load_mem(&p, "flip", copy, n, &err) == 0 && p.nsamples == 50 &&
	      p.damage.chunks == 1 && p.damage.first == 16 && !p.partial && p.lost_nodes == 4 &&
	      strstr(p.damage.why, "checksum"), "a flipped payload bit costs its chunk, the rest is read");
	CHECK(p.nsamples == 50 && p.samples[0].stack == 4 && (p.nodes[3].flags & NODE_F_LOST),
	      "samples that referred to the damaged chunk's nodes keep stand-in stacks");
	profile_symbolize(&p, false);
	CHECK(!strcmp(profile_func(&p, p.nodes[3].func)->name, "[damaged]") && !p.nodes[3].parent,
	      "a stand-in is the frame [damaged], without a caller");
	{
		struct prof_warning w[PROF_WARNINGS_MAX];
		size_t nw = profile_warnings(&p, w), i, damaged = 0;
		for (i = 0; i < nw; i++)
			damaged += w[i].kind == PROF_W_DAMAGED && strstr(w[i].text, "1 damaged chunk at offset 16");
		CHECK(damaged == 1, "the damaged chunk is warned about with its offset");
	}
	profile_release(&p);

	/* the second chunk's kind, flags, size field and magic */
	{
		static const struct { size_t at; const char *why, *name; } hdr[] = {
			{ 4, "checksum", "a flipped chunk-kind byte is damage, not a newer format" },
			{ 6, "checksum", "a flipped flags byte is damage" },
			{ 13, "header check", "a flipped size byte is damage" },
			{ 1, "magic", "a flipped chunk magic is damage, and reading resumes after it" },
		};
		size_t k;
		for (k = 0; k < ARRAY_SIZE(hdr); k++) {
			memcpy(copy, data, n);
			copy[chunk1_end + hdr[k].at] ^= 0x04;
			CHECK(profile_load_mem(&p, "flip", copy, n, &err) == 0 && p.nsamples == 100 &&
			      p.damage.chunks == 1 && p.damage.first == chunk1_end && p.has_symbols && !p.partial &&
			      strstr(p.damage.why, hdr[k].why), hdr[k].name);
			profile_release(&p);
		}
	}

	/* a kind this stax does not know, with a checksum that holds: a
	 * newer stax wrote it */
	memcpy(copy, data, n);
	set_kind(copy + chunk1_end, 7);
	CHECK(profile_load_mem(&p, "new", copy, n, &err) == -1 && strstr(err.msg, "newer stax") &&
	      strstr(err.msg, "offset"), "an unknown chunk kind with a good checksum: written by a newer stax");
	profile_release(&p);

	/* files of stax before checksums (flags 0, no checksum frame) read
	 * the same; there an unknown kind is damage */
	{
		size_t on = strip_sums(data, n, copy);
		CHECK(profile_load_mem(&p, "old", copy, on, &err) == 0 && p.nsamples == 150 &&
		      !p.damage.chunks && !p.partial && p.has_symbols, "a recording without checksums reads as before");
		profile_release(&p);
		((struct store_chunk_header *)(copy + chunk1_end - 16))->kind = 7;
		CHECK(profile_load_mem(&p, "old", copy, on, &err) == 0 && p.damage.chunks == 1 &&
		      p.nsamples == 100 && strstr(p.damage.why, "kind 7"), "without a checksum, an unknown kind is damage");
		profile_release(&p);
	}

	/* garbage after the header: nothing to read, all of it damaged */
	memcpy(copy, data, 16);
	for (cut = 16; cut < n; cut++)
		copy[cut] = (uint8_t)(cut * 131 + 7);
	CHECK(profile_load_mem(&p, "junk", copy, n, &err) == 0 && p.nsamples == 0 &&
	      p.damage.chunks >= 1 && p.damage.bytes == n - 16, "a header followed by garbage: all of it damaged");
	profile_release(&p);

	/* a record that does not parse damages its chunk, not the file */
	{
		char path2[] = "/tmp/stax-test-store-XXXXXX";
		struct store_writer w;
		struct rec_node bad = { 0x401000, 7, 0, NODE_USER, 0 };
		struct rec_sample sm = { 1, 1, 42, 42, 0, 0, 0, 0 };
		close(mkstemp(path2));
		store_writer_open(&w, path2);
		store_put_sample(&w, &sm);
		store_flush(&w, CHUNK_DATA);
		store_put_node(&w, 1, &bad); /* its parent is not defined */
		store_put_sample(&w, &sm);
		store_flush(&w, CHUNK_DATA);
		store_put_sample(&w, &sm);
		store_writer_close(&w);
		CHECK(profile_load_err(&p, path2, NULL) == 0 && p.nsamples == 2 && p.damage.chunks == 1 &&
		      strstr(p.damage.why, "nodes"), "a corrupt record costs its chunk, the next is read");
		profile_release(&p);
		unlink(path2);
	}
	/* a chunk with a late stack is written as CHUNK_DATA_LATE (which
	 * stax before it refuses, as a newer stax's) and read as data */
	{
		char path3[] = "/tmp/stax-test-store-late-XXXXXX";
		struct store_writer w;
		struct store_reader r;
		struct store_chunk c;
		struct rec_sample ok1 = { 1, 1, 42, 42, 0, 0, UNWIND_Q_COMPLETE, 0 };
		struct rec_sample late = { 2, 1, 42, 42, 0, 0, SAMPLE_Q_LATE, 0 };
		int kinds[4] = { 0 }, lates = 0, got;
		close(mkstemp(path3));
		store_writer_open(&w, path3);
		store_put_sample(&w, &ok1);
		store_flush(&w, CHUNK_DATA);
		store_put_sample(&w, &late);
		store_flush(&w, CHUNK_DATA);
		store_put_sample(&w, &ok1);
		store_writer_close(&w);
		if (store_reader_open(&r, path3) == 0) {
			while ((got = store_reader_next(&r, &c)) == 1) {
				kinds[c.kind & 3]++;
				lates += c.late;
			}
			store_reader_close(&r);
		}
		CHECK(kinds[CHUNK_DATA] == 3 && lates == 1, "the chunk with a late sample is read as data, marked late");
		CHECK(profile_load_err(&p, path3, NULL) == 0 && p.nsamples == 3 &&
		      SAMPLE_VERDICT(p.samples[1].quality) == UNWIND_Q_LATE &&
		      SAMPLE_VERDICT(p.samples[0].quality) == UNWIND_Q_COMPLETE, "late samples read back late");
		profile_release(&p);
		{
			/* its kind in the file: what a stax before it refuses */
			FILE *f = fopen(path3, "rb");
			uint8_t buf[4096];
			size_t len = f ? fread(buf, 1, sizeof(buf), f) : 0, off = 16;
			int k4 = 0;
			if (f)
				fclose(f);
			while (off + sizeof(struct store_chunk_header) <= len) {
				struct store_chunk_header h;
				memcpy(&h, buf + off, sizeof(h));
				k4 += h.kind == CHUNK_DATA_LATE;
				off += sizeof(h) + h.comp_size;
			}
			CHECK(k4 == 1, "one chunk of kind CHUNK_DATA_LATE in the file");
		}
		unlink(path3);
	}
	memcpy(copy, data, n);
	copy[8] = 9;
	CHECK(profile_load_mem(&p, "v9", copy, n, &err) == -1 && strstr(err.msg, "version 9"),
	      "unknown version rejected with a clear message");
	profile_release(&p);
	CHECK(profile_load_mem(&p, "junk", "hello world, not a recording", 28, &err) == -1 &&
	      strstr(err.msg, "junk is not a stax recording or perf.data ("), "junk rejected");
	profile_release(&p);
	free(copy);
	free(data);
	unlink(path);
	TEST_DONE();
}
