/* test_state.c - processes and their mappings over time (state/state.h):
 * lookups through fork, exec and replacing mmaps, and the address-space
 * generation the unwinder relies on to keep its lookups across samples;
 * state_compact() of a recording that goes on in another file: the
 * processes kept, their mappings numbered from 1 again, shared ones
 * still shared. */
#include "state/state.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static struct state_mapping map(uint64_t start, uint64_t end, const char *path)
{
	struct state_mapping m;
	memset(&m, 0, sizeof(m));
	m.start = start;
	m.end = end;
	m.path = (char *)path;
	return m;
}

static bool keep_odd(void *arg, const struct state_proc *p)
{
	(void)arg;
	return p->pid % 2 == 1 && !p->exited;
}

/* Four processes: 21 (two mappings), 22 (its own), 23 forked from 21
 * (shares them), 25 exited; compact keeps the odd ones not exited. */
static void compact(void)
{
	struct state s;
	struct state_mapping m;
	uint32_t a, b, c, *remap;
	uint64_t g;
	size_t old_n;

	state_init(&s);
	m = map(0x1000, 0x2000, "/bin/x");
	a = state_add_mapping(&s, 21, &m)->id;
	m = map(0x9000, 0xa000, "/bin/y");
	b = state_add_mapping(&s, 22, &m)->id;
	m = map(0x3000, 0x4000, "/lib/z.so");
	c = state_add_mapping(&s, 21, &m)->id;
	state_fork(&s, 23, 21);
	m = map(0x5000, 0x6000, "/bin/gone");
	state_add_mapping(&s, 25, &m);
	state_exit(&s, 25);
	state_proc(&s, 21)->root = 7;
	g = state_gen(&s, 21);
	remap = state_compact(&s, keep_odd, NULL, &old_n);
	CHECK(old_n == 4 && s.nmaps == 2 && s.nprocs == 2, "compact: 2 of 4 mappings and 2 of 4 processes kept");
	CHECK(remap[a] == 1 && remap[c] == 2 && remap[b] == 0, "compact: the kept ones numbered 1, 2 in their order");
	CHECK(state_find(&s, 21, 0x1800) == 1 && state_find(&s, 23, 0x3800) == 2 &&
	      state_find(&s, 22, 0x9800) == 0 && state_find(&s, 25, 0x5800) == 0,
	      "compact: lookups give the new ids; the processes let go have none");
	CHECK(!strcmp(state_mapping(&s, 2)->path, "/lib/z.so") && state_mapping(&s, 2)->id == 2 &&
	      state_mapping(&s, 3) == NULL, "compact: mapping 2 is z.so, there is no 3");
	CHECK(state_proc(&s, 21)->root == 0 && state_gen(&s, 21) != g,
	      "compact: stack roots cleared, generations changed");
	free(remap);
	m = map(0x7000, 0x8000, "/bin/new");
	CHECK(state_add_mapping(&s, 21, &m)->id == 3, "compact: a new mapping takes the next id");
	state_fork(&s, 25, 21);
	CHECK(!state_proc(&s, 25)->exited, "exit: a pid used again (FORK) is alive");
	state_release(&s);
}

int main(void)
{
	struct state s;
	struct state_mapping m;
	uint64_t g0, g1, g2, g3, gc;
	uint32_t a, b;

	state_init(&s);
	CHECK(state_gen(&s, 10) == 0, "gen: 0 for a process never seen");
	m = map(0x1000, 0x5000, "/bin/a");
	a = state_add_mapping(&s, 10, &m)->id;
	g0 = state_gen(&s, 10);
	CHECK(g0 != 0 && state_find(&s, 10, 0x2000) == a && state_find(&s, 10, 0x5000) == 0,
	      "find: an address in the mapping, none past its end");
	CHECK(state_gen(&s, 10) == g0, "gen: unchanged when nothing changed");
	m = map(0x3000, 0x4000, "/lib/b.so");
	b = state_add_mapping(&s, 10, &m)->id;
	g1 = state_gen(&s, 10);
	CHECK(g1 != g0 && state_find(&s, 10, 0x3800) == b && state_find(&s, 10, 0x2000) == a &&
	      state_find(&s, 10, 0x4800) == a, "mmap over a mapping replaces that part; gen changes");
	state_fork(&s, 11, 10);
	gc = state_gen(&s, 11);
	CHECK(gc != 0 && gc != g1 && state_find(&s, 11, 0x3800) == b,
	      "fork: the child has the parent's mappings and a generation of its own");
	CHECK(state_gen(&s, 10) == g1, "fork: the parent's generation is unchanged");
	state_exec(&s, 11);
	g2 = state_gen(&s, 11);
	CHECK(g2 != gc && state_find(&s, 11, 0x3800) == 0 && state_find(&s, 10, 0x3800) == b,
	      "exec: the child's mappings are gone, the parent's stay; gen changes");
	state_proc(&s, 12);
	g3 = state_gen(&s, 12);
	CHECK(g3 != 0 && g3 != g0 && g3 != g1 && g3 != gc && g3 != g2,
	      "gen: never the same for two processes or two versions");
	state_release(&s);
	compact();
	TEST_DONE();
}
