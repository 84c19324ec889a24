#include "store/stacks.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

void stack_table_init(struct stack_table *t)
{
	memset(t, 0, sizeof(*t));
}

void stack_table_release(struct stack_table *t)
{
	free(t->nodes);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static uint64_t node_hash(uint32_t parent, uint64_t addr, uint32_t mapping, uint32_t flags)
{
	return hash_mix(hash_mix(hash_mix(parent, addr), mapping), flags);
}

static void rehash(struct stack_table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 4096, i;
	free(t->slots);
	t->slots = xcalloc(n, sizeof(*t->slots));
	t->nslots = n;
	for (i = 0; i < t->n; i++) {
		const struct rec_node *nd = &t->nodes[i];
		size_t s = node_hash(nd->parent, nd->addr, nd->mapping, nd->flags) & (n - 1);
		while (t->slots[s])
			s = (s + 1) & (n - 1);
		t->slots[s] = (uint32_t)(i + 1);
	}
}

uint32_t stack_intern(struct stack_table *t, uint32_t parent, uint64_t addr,
		      uint32_t mapping, uint32_t flags)
{
	size_t s;
	struct rec_node *nd;

	if ((t->n + 1) * 2 > t->nslots)
		rehash(t);
	s = node_hash(parent, addr, mapping, flags) & (t->nslots - 1);
	while (t->slots[s]) {
		nd = &t->nodes[t->slots[s] - 1];
		if (nd->parent == parent && nd->addr == addr &&
		    nd->mapping == mapping && nd->flags == flags)
			return t->slots[s];
		s = (s + 1) & (t->nslots - 1);
	}
	GROW(t->nodes, t->cap, t->n + 1);
	nd = &t->nodes[t->n++];
	memset(nd, 0, sizeof(*nd));
	nd->parent = parent;
	nd->addr = addr;
	nd->mapping = mapping;
	nd->flags = flags;
	t->slots[s] = (uint32_t)t->n;
	return (uint32_t)t->n;
}
