/* moment_deep.c - two call paths about 100 KiB deep whose frames look
 * alike (issue 30: a stack read after its sample can be another path's).
 *
 * main alternates path_a() and path_b(), a round of about 300 us each;
 * both call down(DEPTH), a recursion of frames of about 1 KiB, whose
 * innermost call spins in leaf() until the round ends. The two paths'
 * stacks are the same shape and hold the same words but one: the return
 * address in down()'s outermost frame, into path_a or into path_b, about
 * 100 KiB above leaf(): beyond any stack copy (the kernel's is at most
 * 64 KiB). Expected stacks: leaf <- down x (DEPTH + 1) <- path_a or
 * path_b <- main.
 *
 * usage: moment_deep SECONDS LOGFILE [DEPTH]
 * LOGFILE gets one line per round, "START_NS PATH" (CLOCK_MONOTONIC,
 * PATH a or b), written at exit: which path ran when. DEPTH (96 when not
 * given, at most 4000): the recursion's depth, about as many KiB.
 * Built without frame pointers (gcc -fomit-frame-pointer) as -nofp.
 */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 96
#define DEPTH_MAX 4000
#define ROUND_NS 300000ull
#define MAX_ROUNDS (1u << 17)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t round_end;
static int depth = DEPTH;
static volatile unsigned long sink;

NOINLINE void leaf(void)
{
	unsigned long x = sink;
	while (now_ns() < round_end)
		BURN_LOOP(x, 200);
	sink = x;
}

NOINLINE int down(int n)
{
	volatile char pad[1000];
	int r;
	pad[0] = (char)n;
	pad[999] = 1;
	if (n == 0) {
		leaf();
		return pad[0];
	}
	r = down(n - 1);
	KEEP_FRAME();
	return r + pad[999];
}

NOINLINE int path_a(void)
{
	int r = down(depth);
	KEEP_FRAME();
	return r + 1;
}

NOINLINE int path_b(void)
{
	int r = down(depth);
	KEEP_FRAME();
	return r + 2;
}

static uint64_t starts[MAX_ROUNDS];
static char paths[MAX_ROUNDS];

int main(int argc, char **argv)
{
	double secs = arg_scale(argc, argv, 1, 2.0);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	unsigned n = 0, i;
	FILE *f;

	if (argc > 3)
		depth = atoi(argv[3]);
	if (depth < 0 || depth > DEPTH_MAX) {
		fprintf(stderr, "moment_deep: DEPTH from 0 to %d\n", DEPTH_MAX);
		return 2;
	}
	while (n < MAX_ROUNDS && now_ns() < end) {
		starts[n] = now_ns();
		round_end = starts[n] + ROUND_NS;
		paths[n] = n & 1 ? 'b' : 'a';
		if (n & 1)
			path_b();
		else
			path_a();
		n++;
	}
	if (argc > 2 && (f = fopen(argv[2], "w"))) {
		for (i = 0; i < n; i++)
			fprintf(f, "%llu %c\n", (unsigned long long)starts[i], paths[i]);
		fclose(f);
	}
	return 0;
}
