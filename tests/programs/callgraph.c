/* callgraph.c - a known call graph for stack tests.
 *
 * Expected samples (cpu-clock), root first:
 *   main;a;b;leaf_b   75%   (leaf_b runs 3 units per round)
 *   main;a;c;leaf_c   25%   (leaf_c runs 1 unit per round)
 * main, a, b and c have almost no self time. Both leaves run the same loop,
 * so the 3:1 split is a ratio of iteration counts, not of timing.
 *
 * No tail calls: every call is followed by a use of its result (KEEP_FRAME
 * and a store to the volatile sink), so each caller keeps its frame; checked
 * with "objdump -d build/callgraph-fp | grep -E 'jmp.*<(a|b|c|leaf_b|leaf_c)>'"
 * (no output). Built by tests/programs/Makefile:
 *   clang -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer  -> callgraph-fp
 *   gcc   -O2 -g -fomit-frame-pointer                                 -> callgraph-nofp
 *
 * usage: callgraph [SCALE]   SCALE multiplies the run time (default 1,
 * about 1.5 s of CPU).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>

#define UNIT 2000000UL          /* iterations of one unit of work */
#define ROUNDS 150UL            /* rounds at scale 1 */

volatile unsigned long sink;

NOINLINE unsigned long leaf_b(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long leaf_c(unsigned long n)
{
	unsigned long x = n + 1;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long b(unsigned long n)
{
	unsigned long r = leaf_b(3 * n);
	KEEP_FRAME();
	sink += r;
	return r;
}

NOINLINE unsigned long c(unsigned long n)
{
	unsigned long r = leaf_c(n);
	KEEP_FRAME();
	sink += r;
	return r;
}

NOINLINE unsigned long a(unsigned long rounds)
{
	unsigned long i, r = 0;
	for (i = 0; i < rounds; i++) {
		r += b(UNIT);
		r += c(UNIT);
	}
	KEEP_FRAME();
	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	unsigned long rounds = (unsigned long)(ROUNDS * scale);
	unsigned long r;
	if (rounds == 0)
		rounds = 1;
	r = a(rounds);
	KEEP_FRAME();
	sink += r;
	return 0;
}
