/* moment_window.c - new threads whose stacks go a little past the copy
 * (issue 30: the first samples of a thread, before the recorder has
 * unwound one and could tell the in-kernel reader which stack words to
 * read for it).
 *
 * main starts a thread every 15 ms, one at a time; each recurses through
 * down() to a depth of 36 to 44 frames of about 1 KiB (a new depth for
 * each thread: a new shape) and spins in leaf() until its 15 ms are up.
 * Its stack is then 37 to 46 KiB deep: past a 32 KiB stack copy by less
 * than the reader's window (16 KiB past the copy, read at the sample).
 * Expected stacks, root first:
 *   clone3;start_thread;run;down x (DEPTH + 1);leaf        ~all
 * Built without frame pointers (gcc -fomit-frame-pointer) as -nofp.
 * usage: moment_window [SECONDS]   (default 2)
 */
#include "common.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define LIFE_NS 15000000ull

static volatile unsigned long sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

NOINLINE void leaf(uint64_t end)
{
	unsigned long x = sink;
	while (now_ns() < end)
		BURN_LOOP(x, 200);
	sink = x;
}

NOINLINE int down(int n, uint64_t end)
{
	volatile char pad[1000];
	int r;
	pad[0] = (char)n;
	pad[999] = 1;
	if (n == 0) {
		leaf(end);
		return pad[0];
	}
	r = down(n - 1, end);
	KEEP_FRAME();
	return r + pad[999];
}

NOINLINE void *run(void *arg)
{
	int depth = (int)(uintptr_t)arg;
	int r = down(depth, now_ns() + LIFE_NS);
	KEEP_FRAME();
	sink += (unsigned long)r;
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = arg_scale(argc, argv, 1, 2.0);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	unsigned n = 0;

	while (now_ns() < end) {
		pthread_t t;
		if (pthread_create(&t, NULL, run, (void *)(uintptr_t)(36 + n++ % 9)))
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}
