/* unwind_twopaths.c - two deep call paths that alternate, alike inside.
 *
 * main alternates, round after round, between path_a and path_b; each
 * calls the same recursion deep() (DEPTH+1 frames of 1 KiB: about 100 KiB
 * of stack, more than any stack copy, whose 65528 bytes hold only the
 * inner frames) which ends in the leaf its path gave it. Expected
 * samples, root first:
 *   _start;...;main;path_a;deep x (DEPTH+1);leaf_a    ~50%
 *   _start;...;main;path_b;deep x (DEPTH+1);leaf_b    ~50%
 * The inner frames of the two paths look alike (the same return
 * addresses at the same stack addresses): only the frames beyond the
 * copy tell them apart. A stack with leaf_a under path_b (or leaf_b
 * under path_a) took its outer frames from another moment than the
 * sample's. DEPTH+8 frames stay under the kernel's 127-entry chain.
 * Built -fp (clang, frame pointers everywhere) and -nofp (gcc).
 * usage: unwind_twopaths [SCALE]   (about 1 s of CPU at scale 1; a round
 * of each path is about 1 ms)
 */
#define _GNU_SOURCE
#include "common.h"

#define DEPTH 96
#define UNIT 200000UL
#define ROUNDS 3000UL

volatile unsigned long sink;

typedef unsigned long (*leaf_fn)(unsigned long);

NOINLINE unsigned long leaf_a(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long leaf_b(unsigned long n)
{
	unsigned long x = n + 1;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long deep(int depth, leaf_fn leaf, unsigned long n)
{
	char pad[1024];
	unsigned long r;

	pad[0] = (char)n;
	__asm__ volatile("" : : "r"(pad) : "memory"); /* keep the array */
	if (depth == 0)
		r = leaf(n);
	else
		r = deep(depth - 1, leaf, n);
	KEEP_FRAME();
	return r + (unsigned char)pad[0];
}

NOINLINE unsigned long path_a(unsigned long n)
{
	unsigned long r = deep(DEPTH, leaf_a, n);
	KEEP_FRAME();
	return r;
}

NOINLINE unsigned long path_b(unsigned long n)
{
	unsigned long r = deep(DEPTH, leaf_b, n);
	KEEP_FRAME();
	return r;
}

int main(int argc, char **argv)
{
	unsigned long rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	unsigned long i, r = 0;
	for (i = 0; i < rounds || i == 0; i++) {
		r += path_a(UNIT);
		r += path_b(UNIT);
	}
	KEEP_FRAME();
	sink += r;
	return 0;
}
