/* handoff.c - a producer thread hands items to consumers through a pipe.
 *
 * The thread "producer" runs CYCLES times produce_item (5 ms of its own
 * CPU time) then hand_over, which write()s one byte into a pipe. Two
 * threads "consumer" loop in consumer_main: take_item read()s one byte
 * (blocking until the producer writes one), then consume_item (1 ms of
 * CPU). So the consumers spend nearly all their wall time off the CPU in
 * consumer_main;take_item;read (reason read), and the wake-up that ends
 * each of those waits comes from the producer, in
 * producer_main;hand_over;write;...;pipe_write (kernel). main only
 * starts and joins the threads; at the end the producer writes one 'q'
 * per consumer.
 *
 * Build: see Makefile; -pthread.
 * usage: handoff [SCALE]   200 items (about 1 s) at scale 1.
 */
#define _GNU_SOURCE
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define CONSUMERS 2

volatile unsigned long sink;
static int fds[2], cycles;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void burn_ms(double ms, unsigned long x)
{
	double end = cpu_ms() + ms;
	while (cpu_ms() < end)
		BURN_LOOP(x, 20000);
	sink = x;
}

NOINLINE void produce_item(void)
{
	burn_ms(5, 1);
	KEEP_FRAME();
}

NOINLINE void hand_over(char c)
{
	if (write(fds[1], &c, 1) != 1)
		sink++;
	KEEP_FRAME();
}

NOINLINE void *producer_main(void *arg)
{
	int i;
	for (i = 0; i < cycles; i++) {
		produce_item();
		hand_over('x');
	}
	for (i = 0; i < CONSUMERS; i++)
		hand_over('q');
	KEEP_FRAME();
	return arg;
}

NOINLINE char take_item(void)
{
	char c = 'q';
	if (read(fds[0], &c, 1) != 1)
		c = 'q';
	KEEP_FRAME();
	return c;
}

NOINLINE void consume_item(void)
{
	burn_ms(1, 2);
	KEEP_FRAME();
}

NOINLINE void *consumer_main(void *arg)
{
	while (take_item() != 'q')
		consume_item();
	KEEP_FRAME();
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t p, c[CONSUMERS];
	int i;
	cycles = (int)(200 * arg_scale(argc, argv, 1, 1.0));
	if (pipe(fds))
		return 1;
	for (i = 0; i < CONSUMERS; i++) {
		pthread_create(&c[i], NULL, consumer_main, NULL);
		pthread_setname_np(c[i], "consumer");
	}
	pthread_create(&p, NULL, producer_main, NULL);
	pthread_setname_np(p, "producer");
	pthread_join(p, NULL);
	for (i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	return 0;
}
