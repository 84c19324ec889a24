/* threads.c - three named threads, each in its own function.
 *
 * main starts three threads named (pthread_setname_np) "worker-a",
 * "worker-b", "worker-c". They wait at a barrier, then each runs the SAME
 * number of iterations of the same loop, in work_a / work_b / work_c. So
 * each thread gets about 1/3 of the samples however the scheduler shares
 * the CPUs (cpu-clock counts a thread's own CPU time). main only joins.
 * Expected stacks: ...;thread_main;work_a (thread worker-a), and so on.
 *
 * Build: see Makefile (threads-fp with clang and frame pointers,
 * threads-nofp with gcc -fomit-frame-pointer); -pthread.
 * usage: threads [SCALE]   about 1.5 s of CPU in total at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define ITERS 400000000UL        /* per thread at scale 1 */

volatile unsigned long sink;
static pthread_barrier_t start;
static unsigned long iters;

NOINLINE unsigned long work_a(unsigned long n)
{
	unsigned long x = 1;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long work_b(unsigned long n)
{
	unsigned long x = 2;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE unsigned long work_c(unsigned long n)
{
	unsigned long x = 3;
	BURN_LOOP(x, n);
	return x;
}

struct worker {
	const char *name;
	unsigned long (*work)(unsigned long);
	pthread_t thread;
};

NOINLINE void *thread_main(void *arg)
{
	struct worker *w = arg;
	unsigned long r;
	pthread_setname_np(pthread_self(), w->name);
	pthread_barrier_wait(&start);
	r = w->work(iters);
	KEEP_FRAME();
	sink += r;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct worker workers[] = {
		{ "worker-a", work_a, 0 },
		{ "worker-b", work_b, 0 },
		{ "worker-c", work_c, 0 },
	};
	int i, err;
	iters = (unsigned long)(ITERS * arg_scale(argc, argv, 1, 1.0));
	pthread_barrier_init(&start, NULL, 3);
	for (i = 0; i < 3; i++) {
		err = pthread_create(&workers[i].thread, NULL, thread_main, &workers[i]);
		if (err) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	for (i = 0; i < 3; i++)
		pthread_join(workers[i].thread, NULL);
	return 0;
}
