/* unwind_deep.c - the splice test: deep frame-pointer recursion whose hot
 * leaf and the leaf's caller are built without frame pointers.
 *
 * This file is built with frame pointers (clang); unwind_deep_leaf.c,
 * which holds leaf_caller and hot_leaf, without (gcc -fomit-frame-pointer);
 * the two objects are linked into build/unwind_deep. Expected samples,
 * root first:
 *   _start;...;main;deep x (DEPTH+1);leaf_caller;hot_leaf   ~100%
 *   _start;...;main;shallow_phase                         ~5%, first
 * shallow_phase runs first: its stacks are short enough for DWARF alone to
 * reach _start, so stax learns the main thread's outermost frames
 * (_start, __libc_start_main) that the kernel's chain never gives (libc
 * keeps no frame pointers) and completes the spliced stacks with them.
 * Each deep frame holds a 1 KiB array, so the stack below hot_leaf is
 * about 71 KiB: more than any stack copy (at most 65528 bytes), while the
 * DEPTH+8 frames stay under the kernel's 127-entry chain cap. The kernel's
 * frame-pointer chain alone skips leaf_caller (it has no frame record);
 * DWARF alone stops where the copy ends; hybrid unwinding gives CFI frames
 * from hot_leaf up through the copy, then the kernel's chain to the root.
 * usage: unwind_deep [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#define DEPTH 70
#define UNIT 2000000UL
#define ROUNDS 600UL

volatile unsigned long sink;

unsigned long leaf_caller(unsigned long n);   /* unwind_deep_leaf.c */

NOINLINE unsigned long deep(int depth, unsigned long n)
{
	char pad[1024];
	unsigned long r;

	pad[0] = (char)n;
	__asm__ volatile("" : : "r"(pad) : "memory"); /* keep the array */
	if (depth == 0)
		r = leaf_caller(n);
	else
		r = deep(depth - 1, n);
	KEEP_FRAME();
	return r + (unsigned char)pad[0];
}

NOINLINE unsigned long shallow_phase(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

int main(int argc, char **argv)
{
	unsigned long rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	unsigned long i, r = 0;
	r += shallow_phase(UNIT * rounds / 20);
	for (i = 0; i < rounds || i == 0; i++)
		r += deep(DEPTH, UNIT);
	KEEP_FRAME();
	sink += r;
	return 0;
}
