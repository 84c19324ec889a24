/* test_state.c - processes and their mappings over time (state/state.h):
 * lookups through fork, exec and replacing mmaps, and the address-space
 * generation the unwinder relies on to keep its lookups across samples. */
#include "state/state.h"
#include "test.h"

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
	TEST_DONE();
}
