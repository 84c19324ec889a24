/* test_merge.c - several recordings read as one profile (profile/merge.c):
 * files of one boot and of another (their monotonic clocks unrelated,
 * lined up by wall_start_ns), mappings and stacks interned once, the
 * wall-clock window across files (exact counts: the recordings are
 * written here, 1 ms apart), files outside it or without a wall clock,
 * and a file that is not a recording. */
#include "test.h"
#include "profile/profile.h"
#include "store/stacks.h"
#include "store/writer.h"
#include "lib/util.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NS 1000000000ull
#define MS 1000000ull
/* 2026-12-05 15:30:00 UTC */
#define W (1796484600ull * NS)

/* A recording of pid with nsamples samples 1 ms apart from start+1 ms
 * on its own clock, all in function name at leaf; wall: its
 * wall_start_ns (0: none). Its mtime is set to its last sample's wall
 * time, as a recorder leaves it. */
static void write_rec(const char *path, uint64_t start, uint64_t wall, uint32_t pid, uint64_t leaf,
		      const char *name, int nsamples)
{
	struct store_writer w;
	struct stack_table t;
	struct rec_mapping m;
	struct rec_comm c;
	struct rec_symbol sym;
	uint32_t root, main_fn, fn;
	int i;

	stack_table_init(&t);
	store_writer_open(&w, path);
	store_put_meta(&w, "event", "cpu-clock");
	store_put_meta(&w, "event_is_clock", "1");
	store_put_meta(&w, "command", name);
	store_put_meta_u64(&w, "start_ns", start);
	if (wall) {
		store_put_meta_u64(&w, "wall_start", wall / NS);
		store_put_meta_u64(&w, "wall_start_ns", wall);
	}
	memset(&c, 0, sizeof(c));
	c.pid = c.tid = pid;
	c.time = start;
	store_put_comm(&w, &c, "worker");
	memset(&m, 0, sizeof(m));
	m.id = 1;
	m.pid = pid;
	m.start = 0x400000;
	m.end = 0x500000;
	m.time = start;
	store_put_mapping(&w, &m, "/nonexistent/worker");
	root = stack_intern(&t, 0, pid, 0, NODE_ROOT);
	main_fn = stack_intern(&t, root, 0x401000, 1, NODE_USER | NODE_F_RA);
	fn = stack_intern(&t, main_fn, leaf, 1, NODE_USER);
	for (i = 1; i <= 3; i++)
		store_put_node(&w, (uint32_t)i, stack_node(&t, (uint32_t)i));
	for (i = 1; i <= nsamples; i++) {
		struct rec_sample s = { start + (uint64_t)i * MS, 1000000, pid, pid, fn, 0, 0, 0 };
		store_put_sample(&w, &s);
	}
	store_flush(&w, CHUNK_DATA);
	memset(&sym, 0, sizeof(sym));
	sym.mapping = 1;
	sym.addr = leaf;
	sym.flags = NODE_USER | SYMBOL_F_KNOWN;
	store_put_symbol(&w, &sym, name, "worker");
	sym.addr = 0x401000;
	sym.flags = NODE_USER | NODE_F_RA | SYMBOL_F_KNOWN;
	store_put_symbol(&w, &sym, "main", "worker");
	store_flush(&w, CHUNK_SYMBOLS);
	store_put_meta_u64(&w, "end_ns", start + (uint64_t)nsamples * MS);
	store_writer_close(&w);
	stack_table_release(&t);
	if (wall) {
		uint64_t end = wall + (uint64_t)nsamples * MS;
		struct timespec ts[2] = { { (time_t)(end / NS), (long)(end % NS) },
					  { (time_t)(end / NS), (long)(end % NS) } };
		utimensat(AT_FDCWD, path, ts, 0);
	}
}

/* Samples of p in function name, and the first one's time. */
static size_t in_fn(const struct profile *p, const char *name, uint64_t *first)
{
	size_t i, n = 0;
	*first = UINT64_MAX;
	for (i = 0; i < p->nsamples; i++) {
		const struct prof_node *nd = profile_node(p, p->samples[i].stack);
		const struct prof_func *fn = nd ? profile_func(p, nd->func) : NULL;
		if (fn && !strcmp(fn->name, name)) {
			n++;
			*first = MIN(*first, p->samples[i].time);
		}
	}
	return n;
}

static const struct prof_source *source(const struct profile *p, const char *base)
{
	size_t i;
	for (i = 0; i < p->nsources; i++)
		if (!strcmp(path_base(p->sources[i].path), base))
			return &p->sources[i];
	return NULL;
}

static size_t funcs_named(const struct profile *p, const char *name)
{
	size_t i, n = 0;
	for (i = 0; i < p->nfuncs; i++)
		n += !strcmp(p->funcs[i].name, name);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/stax-test-merge.XXXXXX", path[256];
	struct profile p;
	struct err e;
	struct prof_window win;
	uint64_t ta = 0, tb = 0, tc = 0;
	const struct prof_source *s;
	int fd;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		TEST_DONE();
	}
	/* a.data and c.data: one boot (clock 10 s and 60 s at W and W+50 s);
	 * b.data: a later boot whose clock restarted (0.2 s at W+100 s) */
	snprintf(path, sizeof(path), "%s/a.data", dir);
	write_rec(path, 10 * NS, W, 100, 0x402000, "fn_a", 100);
	snprintf(path, sizeof(path), "%s/c.data", dir);
	write_rec(path, 60 * NS, W + 50 * NS, 100, 0x402000, "fn_a", 100);
	snprintf(path, sizeof(path), "%s/b.data", dir);
	write_rec(path, NS / 5, W + 100 * NS, 200, 0x403000, "fn_b", 100);

	CHECK(profile_load_dir(&p, dir, NULL, &e) == 0, "a directory of three recordings loads");
	profile_symbolize(&p, false);
	CHECK(p.nsamples == 300 && p.nsources == 3, "every sample of every file");
	CHECK(in_fn(&p, "fn_a", &ta) == 200 && in_fn(&p, "fn_b", &tb) == 100, "samples by function");
	CHECK(funcs_named(&p, "fn_a") == 1 && funcs_named(&p, "main") == 1, "a function is one function across files");
	CHECK(p.nmaps == 2, "a.data's and c.data's equal mapping once, b.data's (another pid) apart");
	CHECK(p.nnodes == 6, "equal stacks interned once: 3 nodes of pid 100, 3 of pid 200");
	CHECK(profile_wall_ns(&p, ta) == W + MS, "a.data's first sample at its wall time");
	CHECK(profile_wall_ns(&p, tb) == W + 100 * NS + MS, "b.data (another boot) lined up by its wall time");
	CHECK(tb > ta + 99 * NS, "b.data's samples after a.data's on the merged clock");
	CHECK(p.ncomms == 2, "the thread's repeated name kept once per thread");
	profile_release(&p);

	/* W+49.5 s to W+100.05 s: all of c.data (W+50.001 .. W+50.1), b.data's
	 * first 49 ms (W+100.001 .. W+100.049), none of a.data */
	memset(&win, 0, sizeof(win));
	win.since_ns = W + 49 * NS + NS / 2;
	win.until_ns = W + 100 * NS + 50 * MS;
	CHECK(profile_load_dir(&p, dir, &win, &e) == 0, "a window across two files loads");
	profile_symbolize(&p, false);
	CHECK(in_fn(&p, "fn_a", &tc) == 100 && in_fn(&p, "fn_b", &tb) == 49, "the window's samples, exactly");
	s = source(&p, "a.data");
	CHECK(s && s->state == PROF_SRC_OUTSIDE, "a.data, last written before the window, is not read");
	s = source(&p, "b.data");
	CHECK(s && s->state == PROF_SRC_READ && s->samples == 49, "b.data read, 49 samples kept");
	CHECK(profile_wall_ns(&p, profile_meta_u64(&p, "start_ns")) == win.since_ns,
	      "the profile starts at --since (--time counts from there)");
	CHECK(p.since_ns == win.since_ns && p.until_ns == win.until_ns, "the window is kept for info");
	profile_release(&p);

	/* a file that does not say when it was made, and one that is no recording */
	snprintf(path, sizeof(path), "%s/d.data", dir);
	write_rec(path, 5 * NS, 0, 300, 0x404000, "fn_d", 10);
	snprintf(path, sizeof(path), "%s/junk.data", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && write(fd, "not a recording at all, no", 26) == 26, "write junk.data");
	if (fd >= 0)
		close(fd);
	CHECK(profile_load_dir(&p, dir, &win, &e) == 0, "a directory with a junk file still loads");
	s = source(&p, "d.data");
	CHECK(s && s->state == PROF_SRC_NO_TIME, "d.data without a wall clock is not placed in a window");
	s = source(&p, "junk.data");
	CHECK(s && s->state == PROF_SRC_FAILED && s->why && strstr(s->why, "junk.data"),
	      "junk.data fails with a message that names it");
	CHECK(p.nsamples == 149, "the others are read as before");
	profile_release(&p);
	CHECK(profile_load_dir(&p, dir, NULL, &e) == 0 && p.nsamples == 310,
	      "without a window d.data is read too");
	profile_release(&p);

	/* no recording at all */
	snprintf(path, sizeof(path), "%s/empty", dir);
	mkdir(path, 0755);
	CHECK(profile_load_dir(&p, path, NULL, &e) == -1 && strstr(e.msg, "has no recordings"),
	      "a directory without *.data is an error");
	profile_release(&p);
	rmdir(path);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	CHECK(system(path) == 0, "clean up");
	TEST_DONE();
}
