/* manythreads.c - a thousand threads at once.
 *
 * Starts N threads (default 1000), each named "mt-I" (pthread_setname_np),
 * which all spin in thread_work until SECONDS (default 2) after the start,
 * then joins them. With far more runnable threads than CPUs, the recorder
 * competes with all of them for CPU time. Expected stacks of the threads'
 * samples:
 *   ...;thread_main;thread_work    (nearly all samples)
 * Exits 0 when every thread was created.
 *
 * Build: see Makefile (manythreads-fp, manythreads-nofp).
 * usage: manythreads [N] [SECONDS]
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

volatile unsigned long sink;
static double deadline;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE unsigned long thread_work(void)
{
	unsigned long x = 3;
	do {
		BURN_LOOP(x, 200000UL);
	} while (now() < deadline);
	return x;
}

NOINLINE void *thread_main(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "mt-%ld", (long)arg);
	pthread_setname_np(pthread_self(), name);
	sink += thread_work();
	KEEP_FRAME();
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i, made = 0;
	double secs = arg_scale(argc, argv, 2, 2.0);
	pthread_t *t;
	pthread_attr_t a;
	if (n < 1) {
		fprintf(stderr, "usage: manythreads [N] [SECONDS]\n");
		return 2;
	}
	t = calloc((size_t)n, sizeof(*t));
	if (!t)
		return 1;
	deadline = now() + secs;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 256 * 1024);
	for (i = 0; i < n; i++) {
		int e = pthread_create(&t[i], &a, thread_main, (void *)i);
		if (e) {
			fprintf(stderr, "manythreads: thread %ld: %s\n", i, strerror(e));
			break;
		}
		made++;
	}
	for (i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	free(t);
	return made == n ? 0 : 1;
}
