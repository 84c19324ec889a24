/* phases.c - a program whose hot function changes half-way, for --time.
 *
 * Expected samples (cpu-clock), root first:
 *   first half of the run:   main;first_half     (~100% of that half)
 *   second half of the run:  main;second_half    (~100% of that half)
 * Each phase is the same number of iterations of one loop, so each takes
 * about half of the run's CPU time (the split point moves only with
 * frequency changes). Built by tests/programs/Makefile (phases-fp with
 * clang and frame pointers, phases-nofp with gcc without).
 *
 * usage: phases [SCALE]   SCALE multiplies the run time (default 1, about
 * 1 s of CPU).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>

#define WORK 300000000UL        /* iterations of one phase at scale 1 */

volatile unsigned long sink;

NOINLINE unsigned long first_half(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long second_half(unsigned long n)
{
	unsigned long x = n + 1;
	BURN_LOOP(x, n);
	return x;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	unsigned long n = (unsigned long)(WORK * scale), r;
	r = first_half(n);
	KEEP_FRAME();
	r += second_half(n);
	KEEP_FRAME();
	sink += r;
	printf("%lu\n", r & 1);
	return 0;
}
