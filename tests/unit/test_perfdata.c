/* test_perfdata.c - the perf.data reader.
 *
 * Hand-built streams check the rules one at a time (time ordering by
 * FINISHED_ROUND, payloads that follow a record, unknown records, build-ids
 * from the feature section, byte-swapped files); real files made with
 * `perf record` at test time (skipped without perf) check that perf's own
 * output parses, then are cut at many offsets and have bytes flipped:
 * every result is a clean error line naming an offset, or a prefix.
 */
/* stax-test: seconds=7 */
#include "test.h"
#include "source/perfdata.h"
#include "profile/profile.h"
#include "store/writer.h"
#include "view/view.h"
#include "lib/buf.h"
#include "lib/util.h"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/stax-test-perfdata.XXXXXX";

/* ---- building perf.data by hand ---- */

#define ST (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | \
	    PERF_SAMPLE_CALLCHAIN)
#define PID 77

static void rec_begin(struct buf *b, size_t *start, uint32_t type, uint16_t misc)
{
	*start = b->len;
	buf_add_u32(b, type);
	buf_add_u16(b, misc);
	buf_add_u16(b, 0);
}

static void rec_end(struct buf *b, size_t start)
{
	uint16_t size;
	buf_align(b, 8);
	size = (uint16_t)(b->len - start);
	memcpy(b->data + start + 6, &size, 2);
}

static void trailer(struct buf *b, uint64_t time)
{
	buf_add_u32(b, PID);
	buf_add_u32(b, PID);
	buf_add_u64(b, time);
}

static void attr_bytes(struct buf *b)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.size = sizeof(a);
	a.sample_freq = 999;
	a.freq = 1;
	a.sample_type = ST;
	a.sample_id_all = 1;
	buf_add(b, &a, sizeof(a));
}

static void put_comm(struct buf *b, uint64_t time, const char *name)
{
	size_t s;
	rec_begin(b, &s, PERF_RECORD_COMM, 0);
	buf_add_u32(b, PID);
	buf_add_u32(b, PID);
	buf_add(b, name, strlen(name) + 1);
	buf_align(b, 8);
	trailer(b, time);
	rec_end(b, s);
}

static void put_mmap2(struct buf *b, uint64_t time, uint64_t start, const char *path)
{
	size_t s;
	rec_begin(b, &s, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	buf_add_u32(b, PID);
	buf_add_u32(b, PID);
	buf_add_u64(b, start);
	buf_add_u64(b, 0x10000);
	buf_add_u64(b, 0);
	buf_add_u32(b, 8);      /* maj */
	buf_add_u32(b, 1);      /* min */
	buf_add_u64(b, 1234);   /* ino */
	buf_add_u64(b, 0);
	buf_add_u32(b, PROT_READ | PROT_EXEC);
	buf_add_u32(b, MAP_PRIVATE);
	buf_add(b, path, strlen(path) + 1);
	buf_align(b, 8);
	trailer(b, time);
	rec_end(b, s);
}

static void put_sample(struct buf *b, uint64_t time, uint64_t ip)
{
	size_t s;
	rec_begin(b, &s, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	buf_add_u64(b, ip);
	buf_add_u32(b, PID);
	buf_add_u32(b, PID);
	buf_add_u64(b, time);
	buf_add_u64(b, 1000000);
	buf_add_u64(b, 2);
	buf_add_u64(b, PERF_CONTEXT_USER);
	buf_add_u64(b, ip);
	rec_end(b, s);
}

static void put_simple(struct buf *b, uint32_t type)
{
	size_t s;
	rec_begin(b, &s, type, 0);
	rec_end(b, s);
}

/* Round 1 holds a sample (t=300) before, in file order, the mapping it
 * needs (t=200, another cpu's buffer). Then a tracing-data record whose
 * payload follows it, an unknown record, a SWITCH, a second round. */
static void build_pipe(struct buf *b)
{
	size_t s;
	buf_add_u64(b, 0x32454c4946524550ull);
	buf_add_u64(b, 16);
	rec_begin(b, &s, 64 /* HEADER_ATTR */, 0);
	attr_bytes(b);
	buf_add_u64(b, 5);  /* id */
	rec_end(b, s);
	rec_begin(b, &s, 66 /* HEADER_TRACING_DATA */, 0);
	buf_add_u32(b, 24);
	buf_add_u32(b, 0);
	rec_end(b, s);
	buf_add(b, "\0\0\0\0\0\0\0\0garbage that is no record", 24);
	put_comm(b, 100, "handmade");
	put_sample(b, 300, 0x401234);
	put_mmap2(b, 200, 0x400000, "/nonexistent/handmade");
	put_simple(b, 60);           /* unknown kernel record */
	put_simple(b, 200);          /* unknown perf record */
	rec_begin(b, &s, PERF_RECORD_SWITCH, 0);
	trailer(b, 310);
	rec_end(b, s);
	put_simple(b, 68);           /* FINISHED_ROUND */
	put_sample(b, 400, 0x402000);
	put_simple(b, 68);
}

/* The same records in the file format, with CMDLINE and BUILD_ID features. */
static void build_file(struct buf *b)
{
	struct buf data = BUF_INIT, feat = BUF_INIT;
	uint64_t attrs_off = 104, ids_off, data_off, feat_off;
	size_t s, i;
	uint8_t bid[20];

	put_comm(&data, 100, "handmade");
	put_sample(&data, 300, 0x401234);
	put_mmap2(&data, 200, 0x400000, "/nonexistent/handmade");
	put_simple(&data, 68);
	put_sample(&data, 400, 0x402000);

	ids_off = attrs_off + sizeof(struct perf_event_attr) + 16;
	data_off = ids_off + 8;
	feat_off = data_off + data.len;
	buf_add_u64(b, 0x32454c4946524550ull);
	buf_add_u64(b, 104);
	buf_add_u64(b, sizeof(struct perf_event_attr) + 16);
	buf_add_u64(b, attrs_off);
	buf_add_u64(b, sizeof(struct perf_event_attr) + 16);
	buf_add_u64(b, data_off);
	buf_add_u64(b, data.len);
	buf_add_u64(b, 0);
	buf_add_u64(b, 0);
	/* features: BUILD_ID (bit 2) and CMDLINE (bit 11) */
	buf_add_u64(b, (1ull << 2) | (1ull << 11));
	buf_add_u64(b, 0);
	buf_add_u64(b, 0);
	buf_add_u64(b, 0);
	attr_bytes(b);
	buf_add_u64(b, ids_off);
	buf_add_u64(b, 8);
	buf_add_u64(b, 5);
	buf_add(b, data.data, data.len);

	/* feature contents after the table of two sections */
	rec_begin(&feat, &s, 0, PERF_RECORD_MISC_USER);
	buf_add_u32(&feat, (uint32_t)-1);
	for (i = 0; i < 20; i++)
		bid[i] = (uint8_t)(0xa0 + i);
	buf_add(&feat, bid, 20);
	buf_add(&feat, "\0\0\0\0", 4);
	buf_add(&feat, "/nonexistent/handmade", 22);
	rec_end(&feat, s);
	{
		size_t bid_len = feat.len;
		const char *args[] = { "perf", "record", "-g" };
		buf_add_u32(&feat, 3);
		for (i = 0; i < 3; i++) {
			buf_add_u32(&feat, 8);
			buf_add(&feat, args[i], strlen(args[i]));
			buf_add(&feat, "\0\0\0\0\0\0\0\0", 8 - strlen(args[i]));
		}
		buf_add_u64(b, feat_off + 32);
		buf_add_u64(b, bid_len);
		buf_add_u64(b, feat_off + 32 + bid_len);
		buf_add_u64(b, feat.len - bid_len);
	}
	buf_add(b, feat.data, feat.len);
	buf_release(&data);
	buf_release(&feat);
}

/* ---- running the importer ---- */

static int import_mem(const void *data, size_t size, bool binaries, struct perfdata_stats *st,
		      struct err *err, const char *out)
{
	struct store_writer w;
	struct perfdata_opts o = { 0 };
	int ret;
	o.quiet = true;
	o.no_binaries = !binaries;
	if (store_writer_open(&w, out ? out : "/dev/null"))
		return -2;
	ret = perfdata_import_mem(data, size, "t.data", &w, &o, st, err);
	store_writer_close(&w);
	return ret;
}

static uint32_t leaf_mapping(const struct profile *p, size_t i)
{
	const struct prof_node *n = profile_node(p, p->samples[i].stack);
	return n ? n->mapping : 0;
}

static void test_handmade(void)
{
	struct buf b = BUF_INIT;
	struct perfdata_stats st;
	struct profile p;
	char out[256];
	struct err err = { 0 };
	int ret;

	snprintf(out, sizeof(out), "%s/pipe.stax", dir);
	build_pipe(&b);
	ret = import_mem(b.data, b.len, false, &st, &err, out);
	CHECK(ret == 0, "pipe: hand-built stream imports");
	if (ret)
		printf("# %s\n", err.msg);
	CHECK(st.pipe && st.samples == 2, "pipe: two samples");
	CHECK(st.switches == 1 && st.unknown == 2, "pipe: switch and unknown records counted");
	CHECK(!st.cut, "pipe: tracing-data payload skipped, stream ends cleanly");
	if (profile_load_err(&p, out, NULL) == 0) {
		CHECK(p.nsamples == 2 && leaf_mapping(&p, 0) != 0 && leaf_mapping(&p, 1) != 0,
		      "pipe: the mapping is known to the sample before it in the file (round order)");
		CHECK(p.nsamples == 2 && p.samples[0].time == 300 && p.samples[1].time == 400,
		      "pipe: samples in time order");
		CHECK(profile_meta(&p, "event") && !strcmp(profile_meta(&p, "event"), "cpu-clock") &&
		      !strcmp(profile_meta(&p, "event_is_clock"), "1") &&
		      !strcmp(profile_meta(&p, "freq"), "999") &&
		      !strcmp(profile_meta(&p, "start_ns"), "300") &&
		      !strcmp(profile_meta(&p, "end_ns"), "400"),
		      "pipe: META event, event_is_clock, freq, start_ns, end_ns");
		profile_release(&p);
	} else {
		CHECK(0, "pipe: result loads");
	}

	/* a cut inside the tracing payload is a prefix, not an error */
	ret = import_mem(b.data, (size_t)((uint8_t *)memmem(b.data, b.len, "garbage", 7) - b.data),
			 false, &st, &err, NULL);
	CHECK(ret == 0 && st.cut, "pipe: cut inside a record payload imports a prefix");

	/* byte-swapped */
	{
		uint64_t m = 0x50455246494c4532ull;
		memcpy(b.data, &m, 8);
		ret = import_mem(b.data, b.len, false, &st, &err, NULL);
		CHECK(ret == -1 && strstr(err.msg, "byte-swapped") && strstr(err.msg, "at offset 0"),
		      "byte-swapped file rejected with a clear message");
	}
	buf_reset(&b);

	snprintf(out, sizeof(out), "%s/file.stax", dir);
	build_file(&b);
	ret = import_mem(b.data, b.len, false, &st, &err, out);
	CHECK(ret == 0 && !st.pipe && st.samples == 2 && st.build_ids == 1,
	      "file: hand-built file imports with its build-id");
	if (ret)
		printf("# %s\n", err.msg);
	if (profile_load_err(&p, out, NULL) == 0) {
		CHECK(p.nmaps == 1 && p.maps[0].build_id_size == 20 && p.maps[0].build_id[0] == 0xa0,
		      "file: the mapping carries the build-id from HEADER_BUILD_ID");
		CHECK(p.nsamples == 2 && leaf_mapping(&p, 0) == 1, "file: round order");
		CHECK(profile_meta(&p, "command") && !strcmp(profile_meta(&p, "command"), "perf record -g"),
		      "file: META command from HEADER_CMDLINE");
		profile_release(&p);
	} else {
		CHECK(0, "file: result loads");
	}
	/* cut inside the last record (the header claims more data): a prefix */
	{
		uint64_t off, size;
		memcpy(&off, b.data + 40, 8);
		memcpy(&size, b.data + 48, 8);
		ret = import_mem(b.data, (size_t)(off + size - 8), false, &st, &err, NULL);
		CHECK(ret == 0 && st.cut && st.samples == 1, "file: a file cut in its data imports a prefix");
	}
	buf_release(&b);
}

/* ---- files made by perf ---- */

static uint8_t *slurp(const char *path, size_t *n)
{
	struct stat sb;
	int fd = open(path, O_RDONLY);
	uint8_t *p;
	if (fd < 0 || fstat(fd, &sb)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	p = xmalloc((size_t)sb.st_size + 1);
	*n = (size_t)read(fd, p, (size_t)sb.st_size);
	close(fd);
	return p;
}

/* Cut at many offsets and flip bytes: every run ends in 0 or in one
 * error line that names the file and an offset. */
static void damage(const char *name, const uint8_t *data, size_t n)
{
	uint8_t *copy = xmalloc(n);
	struct perfdata_stats st;
	char label[128];
	struct err err = { 0 };
	size_t cut, step = n / 400 + 1, bad_msgs = 0, errors = 0, prefixes = 0, k;
	unsigned seed = 12345;

	for (cut = 0; cut < n; cut += step) {
		err.msg[0] = 0;
		if (import_mem(data, cut, false, &st, &err, NULL)) {
			errors++;
			if (strncmp(err.msg, "t.data: ", 8) || !strstr(err.msg, " at offset ") || strchr(err.msg, '\n'))
				bad_msgs++;
		} else {
			prefixes++;
		}
	}
	snprintf(label, sizeof(label), "%s: cut at %zu offsets: %zu errors, %zu prefixes, no crash",
		 name, errors + prefixes, errors, prefixes);
	CHECK(bad_msgs == 0, label);

	bad_msgs = errors = prefixes = 0;
	for (k = 0; k < 400; k++) {
		size_t pos, j;
		memcpy(copy, data, n);
		for (j = 0; j < 4; j++) {
			seed = seed * 1103515245 + 12345;
			pos = (seed >> 8) % (k < 200 ? MIN(n, (size_t)4096) : n);
			copy[pos] ^= (uint8_t)(1u << ((seed >> 4) & 7)) | (uint8_t)(seed >> 24);
		}
		err.msg[0] = 0;
		if (import_mem(copy, n, false, &st, &err, NULL)) {
			errors++;
			if (strncmp(err.msg, "t.data: ", 8) || !strstr(err.msg, " at offset ") || strchr(err.msg, '\n'))
				bad_msgs++;
		} else {
			prefixes++;
		}
	}
	snprintf(label, sizeof(label), "%s: 400 corrupted copies: %zu errors, %zu imported, no crash",
		 name, errors, prefixes);
	CHECK(bad_msgs == 0, label);
	free(copy);
}

static void test_real(void)
{
	static const struct {
		const char *name, *args;
		bool pipe, dwarf;
	} runs[] = {
		{ "perf -g", "-e cpu-clock -g -o %s", false, false },
		{ "perf -g pipe", "-e cpu-clock -g -o - > %s", true, false },
		{ "perf dwarf", "-e cpu-clock --call-graph dwarf,4096 -o %s", false, true },
		{ "perf dwarf pipe", "-e cpu-clock --call-graph dwarf,4096 -o - > %s", true, true },
	};
	const char *prog = "tests/programs/build/callgraph-fp";
	char work[256];
	size_t i;

	if (system("perf --version >/dev/null 2>&1")) {
		SKIP("perf.data from perf record", "perf is not installed (apt-get install linux-perf)");
		return;
	}
	if (access(prog, X_OK))
		snprintf(work, sizeof(work), "sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'");
	else
		snprintf(work, sizeof(work), "%s 0.1", prog);
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		char path[256], out[256], cmd[1024], args[512], label[160];
		struct err err = { 0 };
		struct perfdata_stats st;
		uint8_t *data;
		size_t n;
		int ret;

		snprintf(path, sizeof(path), "%s/%zu.data", dir, i);
		snprintf(out, sizeof(out), "%s/%zu.stax", dir, i);
		snprintf(args, sizeof(args), runs[i].args, path);
		snprintf(cmd, sizeof(cmd), "perf record -q %s -- %s 2>/dev/null", args, work);
		if (system(cmd) || !(data = slurp(path, &n)) || n < 16) {
			snprintf(label, sizeof(label), "%s", runs[i].name);
			SKIP(label, "perf record failed here (perf_event_paranoid? no cpu-clock?)");
			continue;
		}
		ret = import_mem(data, n, true, &st, &err, out);
		snprintf(label, sizeof(label), "%s: imports (%.100s)", runs[i].name, ret ? err.msg : "ok");
		CHECK(ret == 0 && st.samples > 10 && st.pipe == runs[i].pipe && !st.cut, label);
		snprintf(label, sizeof(label), "%s: unwinding %s", runs[i].name,
			 runs[i].dwarf ? "hybrid" : "fp");
		CHECK(ret == 0 && st.unwind && !strcmp(st.unwind, runs[i].dwarf ? "hybrid" : "fp"), label);
		/* the recording the import wrote loads, with every sample and
		 * their stacks (a failed load is a failure, not a check left out) */
		if (ret == 0) {
			struct profile p;
			if (profile_load_err(&p, out, NULL) == 0) {
				size_t k, deep = 0;
				for (k = 0; k < p.nsamples; k++) {
					const struct prof_node *nd = profile_node(&p, p.samples[k].stack);
					deep += nd && nd->depth >= 4;
				}
				snprintf(label, sizeof(label), "%s: %zu of %zu samples have 4+ frames",
					 runs[i].name, deep, p.nsamples);
				CHECK(p.nsamples > 10 && p.nsamples == st.samples && deep * 10 >= p.nsamples * 8, label);
				profile_release(&p);
			} else {
				snprintf(label, sizeof(label), "%s: the imported recording loads", runs[i].name);
				CHECK(0, label);
			}
		}
		damage(runs[i].name, data, n);
		free(data);
	}
}

/* Rounds of three cpu buffers each, as perf writes them: each buffer in
 * time order, the buffers interleaved in time, later rounds overlapping
 * the records held back from the one before, and ties in time. Every
 * sample must come out in time order, ties in file order (the ip says
 * which record it was). */
static void test_order(void)
{
	struct buf b = BUF_INIT;
	struct perfdata_stats st;
	struct profile p;
	char out[256];
	struct err err = { 0 };
	uint64_t n = 0, r, c, k, bad = 0;
	size_t i;
	int ret;

	buf_add_u64(&b, 0x32454c4946524550ull);
	buf_add_u64(&b, 16);
	{
		size_t s;
		rec_begin(&b, &s, 64 /* HEADER_ATTR */, 0);
		attr_bytes(&b);
		buf_add_u64(&b, 5);
		rec_end(&b, s);
	}
	put_comm(&b, 1, "order");
	for (r = 0; r < 6; r++) {
		for (c = 0; c < 3; c++)
			for (k = 0; k < 40; k++)
				/* every fifth record ties with the one before it in its buffer */
				put_sample(&b, 1000 + r * 100 + (k - (k % 5 == 4)) * 4 + c, 0x400000 + n++);
		put_simple(&b, 68); /* FINISHED_ROUND */
	}
	snprintf(out, sizeof(out), "%s/order.stax", dir);
	ret = import_mem(b.data, b.len, false, &st, &err, out);
	CHECK(ret == 0 && st.samples == n, "rounds: every sample imported");
	if (ret == 0 && profile_load_err(&p, out, NULL) == 0) {
		for (i = 1; i < p.nsamples; i++) {
			const struct rec_sample *x = &p.samples[i - 1], *y = &p.samples[i];
			uint64_t ax = profile_node(&p, x->stack)->addr, ay = profile_node(&p, y->stack)->addr;
			if (x->time > y->time || (x->time == y->time && ax > ay))
				bad++;
		}
		CHECK(p.nsamples == n && bad == 0, "rounds: samples in time order, ties in file order");
		profile_release(&p);
	} else {
		CHECK(0, "rounds: result loads");
	}
	buf_release(&b);
}

/* script --json of a sample at 2^60 + 123456789 ns (36 years of
 * uptime; nanosecond times pass 2^53, where JSON parsers round numbers,
 * after 104 days): "time_ns" holds it exactly as a string, "time" is
 * seconds with microseconds, which a double keeps. */
static void test_script_time(void)
{
	const uint64_t t = (1ull << 60) + 123456789ull;
	struct buf b = BUF_INIT;
	struct perfdata_stats st;
	struct view_filter f = { -1, -1, NULL, 0, 0 };
	struct profile p;
	char out[256], want[128], *js = NULL;
	struct err err = { 0 };
	size_t jslen = 0, s;
	FILE *m;

	snprintf(out, sizeof(out), "%s/bigtime.stax", dir);
	buf_add_u64(&b, 0x32454c4946524550ull);
	buf_add_u64(&b, 16);
	rec_begin(&b, &s, 64 /* HEADER_ATTR */, 0);
	attr_bytes(&b);
	buf_add_u64(&b, 5);
	rec_end(&b, s);
	put_comm(&b, t - 2, "bigtime");
	put_mmap2(&b, t - 1, 0x400000, "/nonexistent/handmade");
	put_sample(&b, t, 0x401234);
	put_simple(&b, 68);
	if (import_mem(b.data, b.len, false, &st, &err, out) || profile_load_err(&p, out, NULL)) {
		CHECK(0, "script --json time: a sample at 2^60 ns imports and loads");
		printf("# %s\n", err.msg);
		buf_release(&b);
		return;
	}
	m = open_memstream(&js, &jslen);
	view_script(&p, &f, true, m);
	fclose(m);
	snprintf(want, sizeof(want), "\"time\":%llu.%06llu,\"time_ns\":\"%llu\",",
		 (unsigned long long)(t / 1000000000), (unsigned long long)(t / 1000 % 1000000),
		 (unsigned long long)t);
	CHECK(js && strstr(js, want) != NULL,
	      "script --json: a time past 2^53 ns is exact in \"time_ns\" (a string), \"time\" in seconds");
	if (!js || !strstr(js, want))
		printf("# want %s in %.300s\n", want, js ? js : "(nothing)");
	free(js);
	profile_release(&p);
	buf_release(&b);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_handmade();
	test_order();
	test_script_time();
	test_real();
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd)) {
			/* leave it */
		}
	}
	TEST_DONE();
}
