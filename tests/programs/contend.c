/* contend.c - two threads contending for one mutex.
 *
 * Each of two threads runs CYCLES times: lock the mutex, hold_phase
 * (15 ms of its own CPU time while holding it), unlock, outside_phase
 * (5 ms of CPU). A cycle needs 15 ms of exclusive time per thread, so in
 * steady state each thread waits about 10 ms of every 30 ms for the lock:
 * about a third of its wall time off the CPU, reason lock (futex), in
 * worker;take_lock;pthread_mutex_lock;... The machine needs 2 cpus for
 * the rest to be on the CPU.
 * Expected stacks: ...;worker;hold_phase, ...;worker;outside_phase, and
 * off the CPU ...;worker;take_lock;...pthread_mutex_lock...
 *
 * Build: see Makefile; -pthread.
 * usage: contend [SCALE]   50 cycles per thread (about 1.5 s) at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

volatile unsigned long sink;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int cycles;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void hold_phase(double ms)
{
	unsigned long x = 1;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE void outside_phase(double ms)
{
	unsigned long x = 2;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE void take_lock(void)
{
	pthread_mutex_lock(&lock);
	KEEP_FRAME();
}

NOINLINE void *worker(void *arg)
{
	int i;
	for (i = 0; i < cycles; i++) {
		take_lock();
		hold_phase(15);
		pthread_mutex_unlock(&lock);
		outside_phase(5);
	}
	KEEP_FRAME();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i;
	cycles = (int)(50 * arg_scale(argc, argv, 1, 1.0));
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
