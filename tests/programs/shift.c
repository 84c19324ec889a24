/* shift.c - a program whose hot path moves between two versions, for
 * stax diff.
 *
 * Expected samples (cpu-clock), root first, by VERSION:
 *   1:  main;run;parse_input   40%   main;run;emit_output 40%
 *       main;run;hash_update   20%
 *   2:  main;run;parse_input   20%   main;run;emit_output 20%
 *       main;run;hash_update   60%
 * so from version 1 to 2 hash_update gains 40 points of self share and
 * parse_input and emit_output lose 20 each: stax diff names hash_update
 * first. The shares are ratios of iteration counts of one loop.
 * Built by tests/programs/Makefile (shift-fp with clang and frame
 * pointers, shift-nofp with gcc without).
 *
 * usage: shift VERSION [SCALE]   SCALE multiplies the run time (default 1,
 * about 1 s of CPU).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

#define UNIT 1000000UL          /* iterations of one unit of work */
#define ROUNDS 100UL            /* rounds at scale 1 */

volatile unsigned long sink;

NOINLINE unsigned long parse_input(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long emit_output(unsigned long n)
{
	unsigned long x = n + 1;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long hash_update(unsigned long n)
{
	unsigned long x = n + 2;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long run(unsigned long rounds, int version)
{
	/* units per round: parse, emit, hash */
	unsigned long p = version == 1 ? 2 : 1, e = p, h = version == 1 ? 1 : 3, i, r = 0;
	for (i = 0; i < rounds; i++) {
		r += parse_input(p * UNIT);
		r += emit_output(e * UNIT);
		r += hash_update(h * UNIT);
	}
	KEEP_FRAME();
	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	int version = argc > 1 ? atoi(argv[1]) : 1;
	double scale = arg_scale(argc, argv, 2, 1.0);
	unsigned long rounds = (unsigned long)(ROUNDS * scale), r;
	if (version != 1 && version != 2) {
		fprintf(stderr, "usage: shift 1|2 [SCALE]\n");
		return 2;
	}
	if (rounds == 0)
		rounds = 1;
	r = run(rounds, version);
	KEEP_FRAME();
	sink += r;
	return 0;
}
