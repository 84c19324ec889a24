/* deepwait.c - threads that block at the bottom of a deep call chain with
 * large frames (built without frame pointers, the off-CPU stacks need
 * more than a small copy of the user stack).
 *
 * Three threads (named "deep") each run CYCLES times
 * deep_main;level1;level2;...;level8, each level with a 2 KiB local
 * buffer (about 17 KiB of stack below deep_main), and at the bottom
 * bottom_work burns 2 ms of CPU then bottom_wait blocks: nanosleep 3 ms
 * (thread 0), poll 3 ms (thread 1), or a mutex that main holds for 3 ms
 * at a time (thread 2). So on-CPU samples and off-CPU intervals both
 * have ~17 KiB stacks: deep_main;level1;...;level8;bottom_work and
 * ...;level8;bottom_wait;(nanosleep|poll|pthread_mutex_lock).
 *
 * Build: see Makefile; -pthread.
 * usage: deepwait [SCALE]   100 cycles (about 0.6 s) at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

volatile unsigned long sink;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int cycles;
static volatile int running;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void bottom_work(void)
{
	unsigned long x = 3;
	double end = cpu_ms() + 2;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE void bottom_wait(int kind)
{
	struct timespec ts = { 0, 3000000 };
	if (kind == 0) {
		nanosleep(&ts, NULL);
	} else if (kind == 1) {
		poll(NULL, 0, 3);
	} else {
		pthread_mutex_lock(&mu);
		pthread_mutex_unlock(&mu);
	}
	KEEP_FRAME();
}

/* a level: 2 KiB on the stack, kept live across the call */
#define LEVEL(name, next) \
	NOINLINE void name(int kind) \
	{ \
		volatile char buf[2048]; \
		memset((char *)buf, kind + 1, sizeof(buf)); \
		next; \
		sink += buf[kind * 100]; \
	}

LEVEL(level8, (bottom_work(), bottom_wait(kind)))
LEVEL(level7, level8(kind))
LEVEL(level6, level7(kind))
LEVEL(level5, level6(kind))
LEVEL(level4, level5(kind))
LEVEL(level3, level4(kind))
LEVEL(level2, level3(kind))
LEVEL(level1, level2(kind))

NOINLINE void *deep_main(void *arg)
{
	int kind = (int)(long)arg, i;
	for (i = 0; i < cycles; i++)
		level1(kind);
	KEEP_FRAME();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	struct timespec hold = { 0, 3000000 }, gap = { 0, 1000000 };
	long i;
	cycles = (int)(100 * arg_scale(argc, argv, 1, 1.0));
	running = 1;
	for (i = 0; i < 3; i++) {
		pthread_create(&t[i], NULL, deep_main, (void *)i);
		pthread_setname_np(t[i], "deep");
	}
	/* hold the mutex 3 ms of every 4 while thread 2 runs */
	while (pthread_tryjoin_np(t[2], NULL)) {
		pthread_mutex_lock(&mu);
		nanosleep(&hold, NULL);
		pthread_mutex_unlock(&mu);
		nanosleep(&gap, NULL);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
