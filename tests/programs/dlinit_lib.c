/* dlinit_lib.c - build/libdlinit.so for dlinit.c: defines __gmon_start__,
 * which crti.o's _init calls when the library is loaded. */
#include "common.h"

#include <stdlib.h>

volatile unsigned long dlinit_sink;

NOINLINE unsigned long gmon_hot(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

void __gmon_start__(void)
{
	const char *s = getenv("DLINIT_SCALE");
	double scale = s ? atof(s) : 1.0;
	dlinit_sink += gmon_hot((unsigned long)(1200000000.0 * scale));
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}
