/* calltree.h - the call tree every flamegraph-like view draws.
 *
 * A node is (parent, label); a label is a function name plus a kernel
 * flag, so trees built from two recordings (stax diff) share nodes by
 * name. The first level is the thread's command name unless built with
 * CALLTREE_NO_COMM. Node ids start at 1 and a parent's id is always
 * smaller than its children's (views rely on it to sum bottom-up).
 * Never fails; everything is freed by calltree_release().
 */
#ifndef STAX_VIEW_CALLTREE_H
#define STAX_VIEW_CALLTREE_H

#include "view/view.h"
#include "store/stacks.h"

#include <stdbool.h>
#include <stdint.h>

struct calltree_label {
	const char *name;        /* borrowed from the profile (or owned: names) */
	bool kernel, comm;
	bool python;             /* a Python function (python -X perf) */
	bool offcpu;             /* an "[off-cpu: REASON]" frame */
};

/* Node flags (calltree_node(t, id)->flags): the frame is a function
 * inlined into its parent frame. A function inlined at one call site and
 * called at another gives two nodes under the same caller. */
#define CALLTREE_F_INLINE 1u

struct calltree {
	struct stack_table keys; /* (parent, label index) -> node id */
	uint64_t *count[2];      /* per node: samples at or below it, per side */
	size_t cap[2];
	struct calltree_label *labels;
	size_t nlabels, labelcap;
	struct hmap label_index;
	uint64_t total[2];       /* samples kept, per side */
	char **owned;            /* label names made here (thread roots) */
	size_t nowned, ownedcap;
};

/* CALLTREE_INVERTED: the tree of stacks read leaf first (the roots are
 * the functions that were running, their children their callers); the
 * thread's name, when kept, is the last level. */
enum { CALLTREE_NO_COMM = 1, CALLTREE_INVERTED = 8 };

void calltree_init(struct calltree *t);
void calltree_release(struct calltree *t);
/* Add the samples of p that f keeps to side (0, or 1 for a diff's base).
 * Returns the number added. */
uint64_t calltree_add_profile(struct calltree *t, const struct profile *p,
			      const struct view_filter *f, int side, unsigned flags);
/* Time instead of samples (counts are microseconds): off-CPU intervals
 * (CALLTREE_OFFCPU), or on-CPU samples converted to time by their period
 * plus off-CPU intervals under one root per thread "name/tid"
 * (CALLTREE_WALL). An off-CPU stack ends in a "[off-cpu: REASON]" frame
 * right below its innermost user-space frame (view_offcpu_frames(): the
 * kernel's frames folded into the wait), or below the kernel's frames
 * with CALLTREE_KERNEL_WAITS. Returns the microseconds added. */
enum { CALLTREE_OFFCPU = 2, CALLTREE_WALL = 4, CALLTREE_KERNEL_WAITS = 16 };
uint64_t calltree_add_time(struct calltree *t, const struct profile *p,
			   const struct view_filter *f, int side, unsigned flags);

static inline const struct rec_node *calltree_node(const struct calltree *t, uint32_t id)
{
	return stack_node(&t->keys, id);
}
static inline const struct calltree_label *calltree_label(const struct calltree *t, uint32_t id)
{
	return &t->labels[calltree_node(t, id)->addr];
}
static inline size_t calltree_size(const struct calltree *t)
{
	return t->keys.n;
}

/* Children of every node (index 0 = the roots), sorted by side-0 count,
 * hottest first, or by name when by_name. Free with calltree_kids_free(). */
struct calltree_kids {
	uint32_t *ids;
	size_t n, cap;
};
struct calltree_kids *calltree_kids(const struct calltree *t, bool by_name);
void calltree_kids_free(const struct calltree *t, struct calltree_kids *k);

#endif
