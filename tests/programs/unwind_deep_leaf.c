/* unwind_deep_leaf.c - the part of unwind_deep built WITHOUT frame
 * pointers (gcc -O2 -fomit-frame-pointer): the hot leaf and its caller.
 * See unwind_deep.c. */
#include "common.h"

extern volatile unsigned long sink;

NOINLINE unsigned long hot_leaf(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long leaf_caller(unsigned long n)
{
	unsigned long r = hot_leaf(n);
	KEEP_FRAME();
	sink += r;
	return r;
}
