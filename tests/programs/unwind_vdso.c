/* unwind_vdso.c - samples inside the vDSO: a loop on clock_gettime.
 *
 * Expected samples, root first:
 *   _start;...;main;clock_loop;clock_gettime;<vDSO frames>   most samples
 * (libc's clock_gettime calls __vdso_clock_gettime through a pointer; the
 * vDSO has its own .eh_frame, read from the [vdso] mapping.) With a
 * clocksource the vDSO cannot read (not tsc/kvm-clock), time goes to the
 * kernel instead; the test checks current_clocksource.
 *
 * Built as unwind_vdso-fp and unwind_vdso-nofp by tests/programs/Makefile.
 * usage: unwind_vdso [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#include <time.h>

#define CALLS 30000000UL

volatile unsigned long sink;

NOINLINE unsigned long clock_loop(unsigned long n)
{
	struct timespec ts;
	unsigned long i, sum = 0;
	for (i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += (unsigned long)ts.tv_nsec;
	}
	KEEP_FRAME();
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long n = (unsigned long)(CALLS * arg_scale(argc, argv, 1, 1.0));
	unsigned long r = clock_loop(n ? n : 1);
	KEEP_FRAME();
	sink += r;
	return 0;
}
