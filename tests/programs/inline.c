/* inline.c - inlined helpers between a caller and its callee.
 *
 * Built -O2 -g (gcc) so that the always_inline helpers have no code of
 * their own: their instructions sit in outer_work(), and only DWARF's
 * inline scopes say they are there.
 * Expected stacks (nearly all samples):
 *   main;outer_work;mix_step;hot_kernel      hot_kernel and mix_step inlined
 *   main;outer_work;mix_step;leaf_call       leaf_call is a real (noinline) call
 * The hot loop is the BURN_LOOP in hot_kernel (about 3/4 of the samples);
 * leaf_call gets about 1/4.
 * usage: inline [SCALE]   SCALE multiplies the run time (default 1 = ~0.5 s)
 * Build: gcc -O2 -g -no-pie -o inline inline.c (tests/e2e/symbols.sh)
 */
#include "common.h"

#include <stdio.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))

volatile unsigned long sink;

NOINLINE unsigned long leaf_call(unsigned long x)
{
	BURN_LOOP(x, 200000);
	KEEP_FRAME();
	return x;
}

ALWAYS_INLINE unsigned long hot_kernel(unsigned long x)
{
	BURN_LOOP(x, 600000);
	return x;
}

ALWAYS_INLINE unsigned long mix_step(unsigned long x)
{
	x = hot_kernel(x);
	x ^= leaf_call(x);
	return x;
}

NOINLINE unsigned long outer_work(unsigned long rounds)
{
	unsigned long x = 1, r;
	for (r = 0; r < rounds; r++)
		x = mix_step(x + r);
	KEEP_FRAME();
	return x;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	sink = outer_work((unsigned long)(600 * scale));
	printf("%lu\n", sink & 1);
	return 0;
}
