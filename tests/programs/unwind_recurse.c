/* unwind_recurse.c - deep recursion with large frames.
 *
 * main calls recurse(DEPTH) which recurses down to recurse(0), each frame
 * holding a 1 KiB array, then the hot leaf. Expected samples, root first:
 *   _start;...;main;recurse x (DEPTH+1);leaf   ~100%
 * The stack below the leaf is about (DEPTH+1) KiB: more than the default
 * 32 KiB copy (and the kernel's 65528-byte maximum), and DEPTH+6 < 127
 * frames, the kernel's chain cap (kernel.perf_event_max_stack).
 *   unwind_recurse-fp    (clang, frame pointers): CFI covers the copy, the
 *                        kernel's chain the rest: complete, spliced stacks
 *   unwind_recurse-nofp  (gcc, no frame pointers): the frames beyond the
 *                        copy cannot be recovered: truncated, never guessed
 * usage: unwind_recurse [SCALE [DEPTH]]   (about 1 s of CPU at scale 1;
 *        DEPTH above 120 goes beyond the kernel's 127-entry chain cap)
 */
#define _GNU_SOURCE
#include "common.h"

#define DEPTH 70
#define UNIT 2000000UL
#define ROUNDS 600UL

volatile unsigned long sink;

NOINLINE unsigned long leaf(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long recurse(int depth, unsigned long n)
{
	char pad[1024];
	unsigned long r;

	pad[0] = (char)n;
	__asm__ volatile("" : : "r"(pad) : "memory"); /* keep the array */
	if (depth == 0)
		r = leaf(n);
	else
		r = recurse(depth - 1, n);
	KEEP_FRAME();
	return r + (unsigned char)pad[0];
}

int main(int argc, char **argv)
{
	unsigned long rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	int depth = argc > 2 ? atoi(argv[2]) : DEPTH;
	unsigned long i, r = 0;
	for (i = 0; i < rounds || i == 0; i++)
		r += recurse(depth > 0 ? depth : DEPTH, UNIT);
	KEEP_FRAME();
	sink += r;
	return 0;
}
