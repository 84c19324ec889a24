/* dlloop_lib.c - the hot function of libdlloop_a.so and libdlloop_b.so
 * (built twice, with -DWHICH=a and -DWHICH=b; see dlloop.c). */
#include "common.h"

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

NOINLINE unsigned long CAT(dl_hot_, WHICH)(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}
