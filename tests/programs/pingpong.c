/* pingpong.c - two threads bouncing a byte over two pipes: a program
 * that does almost nothing but context switches (two per round trip per
 * thread), to measure the cost of off-CPU recording.
 *
 * main and the thread "pong" exchange one byte ROUNDS times: ping writes
 * to pipe a and reads pipe b, pong reads a and writes b. Prints the
 * rounds per second on stderr.
 * Expected stacks off the CPU: ...;main;ping;read... and
 * ...;pong_main;pong;read..., reason read.
 *
 * Build: see Makefile; -pthread.
 * usage: pingpong [ROUNDS]   default 100000 round trips.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static int a[2], b[2];
static long rounds;

NOINLINE void ping(void)
{
	char c = 'p';
	if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
		_exit(1);
	KEEP_FRAME();
}

NOINLINE void pong(void)
{
	char c;
	if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
		_exit(1);
	KEEP_FRAME();
}

NOINLINE void *pong_main(void *arg)
{
	long i;
	for (i = 0; i < rounds; i++)
		pong();
	KEEP_FRAME();
	return arg;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	pthread_t t;
	long i;
	double s;
	rounds = argc > 1 ? atol(argv[1]) : 100000;
	if (rounds <= 0)
		rounds = 100000;
	if (pipe(a) || pipe(b))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&t, NULL, pong_main, NULL);
	pthread_setname_np(t, "pong");
	for (i = 0; i < rounds; i++)
		ping();
	pthread_join(t, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(stderr, "pingpong: %ld round trips in %.3f s (%.0f/s)\n", rounds, s, rounds / s);
	return 0;
}
