/* idlepool.c - worker threads idle on a condition variable.
 *
 * Three worker threads (named "worker") wait in wait_for_work for items
 * in a queue guarded by a mutex and a condition variable
 * (pthread_cond_wait). main runs CYCLES times make_work (10 ms of its own
 * CPU time) then queues one item and signals; a worker takes it and runs
 * do_work (1 ms of CPU). So the workers spend nearly all their wall time
 * off the CPU in worker_main;wait_for_work;pthread_cond_wait: waiting for
 * work (reason wait), not for a lock; the mutex is held for a few
 * instructions and is hardly ever contended.
 *
 * Build: see Makefile; -pthread.
 * usage: idlepool [SCALE]   100 cycles (about 1 s) at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define WORKERS 3

volatile unsigned long sink;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int queued, done;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void make_work(double ms)
{
	unsigned long x = 1;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE void do_work(double ms)
{
	unsigned long x = 2;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

/* 1: an item was taken; 0: no more work */
NOINLINE int wait_for_work(void)
{
	int got = 0;
	pthread_mutex_lock(&mu);
	while (!queued && !done)
		pthread_cond_wait(&cv, &mu);
	if (queued) {
		queued--;
		got = 1;
	}
	pthread_mutex_unlock(&mu);
	KEEP_FRAME();
	return got;
}

NOINLINE void *worker_main(void *arg)
{
	while (wait_for_work())
		do_work(1);
	KEEP_FRAME();
	return arg;
}

int main(int argc, char **argv)
{
	int cycles = (int)(100 * arg_scale(argc, argv, 1, 1.0)), i;
	pthread_t t[WORKERS];
	for (i = 0; i < WORKERS; i++) {
		pthread_create(&t[i], NULL, worker_main, NULL);
		pthread_setname_np(t[i], "worker");
	}
	for (i = 0; i < cycles; i++) {
		make_work(10);
		pthread_mutex_lock(&mu);
		queued++;
		pthread_cond_signal(&cv);
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
