/* pipewait.c - a thread blocked on a pipe read.
 *
 * The reader thread (named "reader") loops in reader_main: wait_for_data
 * read()s one byte from a pipe, blocking until main writes it. main runs
 * CYCLES times produce (20 ms of its own CPU time) then writes a byte;
 * at the end it writes 'q' and joins. So the reader spends nearly all of
 * its wall time off the CPU, reason read, in
 * reader_main;wait_for_data;read...;pipe_read (kernel), and main about
 * all of its own on the CPU in main;produce.
 *
 * Build: see Makefile; -pthread.
 * usage: pipewait [SCALE]   50 cycles (1 s) at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;
static int fds[2];

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

NOINLINE void produce(double ms)
{
	unsigned long x = 1;
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE char wait_for_data(void)
{
	char c = 'q';
	if (read(fds[0], &c, 1) != 1)
		c = 'q';
	KEEP_FRAME();
	return c;
}

NOINLINE void *reader_main(void *arg)
{
	while (wait_for_data() != 'q')
		sink++;
	KEEP_FRAME();
	return arg;
}

int main(int argc, char **argv)
{
	int cycles = (int)(50 * arg_scale(argc, argv, 1, 1.0)), i;
	pthread_t t;
	if (pipe(fds))
		return 1;
	pthread_create(&t, NULL, reader_main, NULL);
	pthread_setname_np(t, "reader");
	for (i = 0; i < cycles; i++) {
		produce(20);
		if (write(fds[1], "x", 1) != 1)
			return 1;
	}
	if (write(fds[1], "q", 1) != 1)
		return 1;
	pthread_join(t, NULL);
	return 0;
}
