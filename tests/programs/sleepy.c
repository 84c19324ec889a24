/* sleepy.c - alternate computing and sleeping in known proportions.
 *
 * main runs CYCLES cycles of compute_phase (20 ms of the thread's own CPU
 * time, busy in compute_phase itself) then sleep_phase (nanosleep for
 * 30 ms). On an idle machine: about 40% of the wall time on the CPU in
 * main;compute_phase and 60% off the CPU (reason sleep) in
 * main;sleep_phase;nanosleep-or-clock_nanosleep.
 * Expected stacks: ...;main;compute_phase and ...;main;sleep_phase;...
 *
 * Build: see Makefile (sleepy-fp with clang and frame pointers,
 * sleepy-nofp with gcc -fomit-frame-pointer).
 * usage: sleepy [SCALE]   40 cycles (2 s) at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <time.h>

volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void compute_phase(double ms)
{
	unsigned long x = 1;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE void sleep_phase(double ms)
{
	struct timespec ts = { 0, (long)(ms * 1e6) };
	nanosleep(&ts, NULL);
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	int cycles = (int)(40 * arg_scale(argc, argv, 1, 1.0)), i;
	for (i = 0; i < cycles; i++) {
		compute_phase(20);
		sleep_phase(30);
	}
	return 0;
}
