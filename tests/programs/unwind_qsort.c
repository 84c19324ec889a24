/* unwind_qsort.c - frames inside libc: qsort calling back a hot comparator.
 *
 * Expected samples (cpu-clock), root first, with libc's sort internals
 * between sort_caller and cmp (qsort tail-calls __qsort_r, so "qsort"
 * itself has no frame; msort_with_tmp recurses):
 *   _start;...;main;sort_caller;[__qsort_r;msort_with_tmp...];cmp   ~95%
 * cmp burns CMP_WORK iterations per call, so nearly all time is in cmp.
 * Debian's libc is built without frame pointers: the kernel's chain loses
 * sort_caller (and more) in every build; CFI unwinding does not.
 *
 * Built by tests/programs/Makefile as unwind_qsort-fp (clang, frame
 * pointers) and unwind_qsort-nofp (gcc -O2 -fomit-frame-pointer).
 * usage: unwind_qsort [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdlib.h>

#define N 1000UL
#define CMP_WORK 300UL
#define ROUNDS 300UL

volatile unsigned long sink;
static unsigned long data[N];

NOINLINE int cmp(const void *pa, const void *pb)
{
	unsigned long a = *(const unsigned long *)pa, b = *(const unsigned long *)pb;
	unsigned long x = a ^ b;
	BURN_LOOP(x, CMP_WORK);
	sink += x;
	return a < b ? -1 : a > b;
}

NOINLINE unsigned long sort_caller(unsigned long seed)
{
	unsigned long i, x = seed;
	for (i = 0; i < N; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		data[i] = x >> 17;
	}
	qsort(data, N, sizeof(data[0]), cmp);
	KEEP_FRAME();
	sink += data[0];
	return data[N / 2];
}

int main(int argc, char **argv)
{
	unsigned long rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	unsigned long i, r = 0;
	for (i = 0; i < rounds || i == 0; i++)
		r += sort_caller(i + 1);
	KEEP_FRAME();
	sink += r;
	return 0;
}
