/* peek.c - a function with several callers and callees, and recursion,
 * for stax callers / callees and the --focus/--exclude/--hide filters.
 *
 * Expected samples (cpu-clock), root first, per round:
 *   main;x;hub;leaf_p                 2 units  (hub(3): leaf_p 2/3)
 *   main;x;hub;leaf_q                 1 unit
 *   main;y;hub;leaf_p                 2/3 unit (hub(1))
 *   main;y;hub;leaf_q                 1/3 unit
 *   main;z;rec;rec;rec;rec;hub;...    2 units  (hub(2) under 4 rec frames)
 * so of hub's samples (all but noise): callers x 50%, rec 33.3%, y 16.7%;
 * callees leaf_p 66.7%, leaf_q 33.3%. rec has 33.3% of all samples,
 * counted once although it is on each stack four times; its callers
 * (recursion aside) are z 100%, its callees hub 100%.
 * The shares are ratios of iteration counts of one loop. No tail calls
 * (KEEP_FRAME after each call). Built by tests/programs/Makefile
 * (peek-fp with clang and frame pointers, peek-nofp with gcc without,
 * peek-stripped: peek-nofp stripped of its symbol tables).
 *
 * usage: peek [SCALE]   SCALE multiplies the run time (default 1, about
 * 1.5 s of CPU).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>

#define UNIT 1000000UL          /* iterations of one unit of work */
#define ROUNDS 120UL            /* rounds at scale 1 */

volatile unsigned long sink;

NOINLINE unsigned long leaf_p(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long leaf_q(unsigned long n)
{
	unsigned long x = n + 1;
	BURN_LOOP(x, n);
	return x;
}

/* k units: 2k/3 in leaf_p, k/3 in leaf_q */
NOINLINE unsigned long hub(unsigned long k)
{
	unsigned long r = leaf_p(2 * k * UNIT / 3);
	KEEP_FRAME();
	r += leaf_q(k * UNIT / 3);
	KEEP_FRAME();
	sink += r;
	return r;
}

NOINLINE unsigned long rec(unsigned long depth)
{
	unsigned long r = depth > 1 ? rec(depth - 1) : hub(2);
	KEEP_FRAME();
	sink += r;
	return r;
}

NOINLINE unsigned long x(void)
{
	unsigned long r = hub(3);
	KEEP_FRAME();
	sink += r;
	return r;
}

NOINLINE unsigned long y(void)
{
	unsigned long r = hub(1);
	KEEP_FRAME();
	sink += r;
	return r;
}

NOINLINE unsigned long z(void)
{
	unsigned long r = rec(4);
	KEEP_FRAME();
	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	unsigned long rounds = (unsigned long)(ROUNDS * scale), i, r = 0;
	if (rounds == 0)
		rounds = 1;
	for (i = 0; i < rounds; i++) {
		r += x();
		r += y();
		r += z();
	}
	KEEP_FRAME();
	sink += r;
	printf("%lu\n", r & 1);
	return 0;
}
