/* stacks.h - intern call stacks as a prefix tree of frames.
 *
 * A node is (parent, addr, mapping, flags); equal nodes get one id, so a
 * stack is stored once and each sample refers to its leaf node id. Ids
 * start at 1 and grow by one; new nodes are reported to the caller so it
 * can write them to the file in order.
 */
#ifndef STAX_STORE_STACKS_H
#define STAX_STORE_STACKS_H

#include "store/format.h"

#include <stddef.h>
#include <stdint.h>

struct stack_table {
	struct rec_node *nodes;   /* nodes[id - 1] */
	size_t n, cap;
	uint32_t *slots;          /* open addressing, node ids, 0 = empty */
	size_t nslots;
	size_t written;           /* nodes already handed to the writer */
};

void stack_table_init(struct stack_table *t);
void stack_table_release(struct stack_table *t);
/* Id of the node, adding it when new. Never fails. */
uint32_t stack_intern(struct stack_table *t, uint32_t parent, uint64_t addr,
		      uint32_t mapping, uint32_t flags);
static inline const struct rec_node *stack_node(const struct stack_table *t, uint32_t id)
{
	return id && id <= t->n ? &t->nodes[id - 1] : NULL;
}

#endif
