/* spin.c - spin in spin_loop until killed, or for SECONDS.
 *
 * Prints its pid and a newline on stdout first (flushed), so a test can
 * start it in the background and attach with "stax record -p PID".
 * Expected stacks: main;spin_loop (nearly all samples).
 * usage: spin [SECONDS]   without SECONDS, spins until killed.
 * Build: see Makefile (spin-fp, spin-nofp).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Spin until the deadline (0: forever). The clock is read once per
 * ~10 ms chunk, so nearly all samples land in the loop itself. */
NOINLINE unsigned long spin_loop(double deadline)
{
	unsigned long x = 9;
	for (;;) {
		BURN_LOOP(x, 5000000UL);
		sink += x;
		if (deadline > 0 && now() >= deadline)
			return x;
	}
}

int main(int argc, char **argv)
{
	double secs = arg_scale(argc, argv, 1, 0);
	unsigned long r;
	printf("%d\n", (int)getpid());
	fflush(stdout);
	r = spin_loop(secs > 0 ? now() + secs : 0);
	KEEP_FRAME();
	sink += r;
	return 0;
}
