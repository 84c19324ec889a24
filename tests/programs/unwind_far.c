/* unwind_far.c - a stack deeper than the copy with a 512 KiB frame in
 * the middle: main calls far_frame, which holds a 512 KiB array and calls
 * a recursion of DEPTH+1 frames of 1 KiB that ends in hot_leaf. Expected
 * samples, root first:
 *   _start;...;main;far_frame;deep x (DEPTH+1);hot_leaf   ~100%
 * The recursion (about 41 KiB) is more than the default copy (32 KiB),
 * so the frames beyond it are read from the process; far_frame's own
 * caller is 512 KiB further up, far from where the copy ends: the read
 * there is checked by the return address the copy holds last (still in
 * place while the leaf runs), not by bytes next to the copy.
 * usage: unwind_far [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#define DEPTH 40
#define FAR (512 * 1024)
#define UNIT 2000000UL
#define ROUNDS 600UL

volatile unsigned long sink;

NOINLINE unsigned long hot_leaf(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long deep(int depth, unsigned long n)
{
	char pad[1024];
	unsigned long r;

	pad[0] = (char)n;
	__asm__ volatile("" : : "r"(pad) : "memory"); /* keep the array */
	if (depth == 0)
		r = hot_leaf(n);
	else
		r = deep(depth - 1, n);
	KEEP_FRAME();
	return r + (unsigned char)pad[0];
}

NOINLINE unsigned long far_frame(unsigned long n)
{
	char big[FAR];
	unsigned long r;

	big[0] = (char)n;
	big[FAR - 1] = (char)n;
	__asm__ volatile("" : : "r"(big) : "memory");
	r = deep(DEPTH, n);
	KEEP_FRAME();
	return r + (unsigned char)big[0] + (unsigned char)big[FAR - 1];
}

int main(int argc, char **argv)
{
	unsigned long rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	unsigned long i, r = 0;
	for (i = 0; i < rounds || i == 0; i++)
		r += far_frame(UNIT);
	KEEP_FRAME();
	sink += r;
	return 0;
}
