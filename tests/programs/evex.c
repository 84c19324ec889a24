/* evex.c - a hot function whose code holds a block of EVEX (AVX-512) and
 * VEX mask instructions it jumps over and never runs, for annotate: a
 * disassembler that cannot decode them (capstone 4.0.2 fails on
 * vpcmpub, vptestnmb, vpternlogd, kmovd, kortestd) must still show every
 * sample of the loop after them.
 *
 * Expected samples (cpu-clock), root first:
 *   main;evex_hot   ~100% (the loop after the block)
 * The block is assembled by the assembler (gas knows AVX-512 whatever
 * the CPU), jumped over, so the program runs on a CPU without AVX-512.
 * Built by tests/programs/Makefile: gcc -O2 -g -> evex-nofp.
 *
 * usage: evex [SCALE]   SCALE multiplies the run time (default 1, about
 * 0.5 s of CPU).
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>

#define WORK 300000000UL

volatile unsigned long sink;

NOINLINE unsigned long evex_hot(unsigned long n)
{
	unsigned long x = n;
	__asm__ volatile(
		"jmp 1f\n\t"
		"vpcmpub $0, %%zmm1, %%zmm0, %%k1\n\t"
		"vptestnmb %%zmm0, %%zmm0, %%k2\n\t"
		"vpternlogd $0x96, %%zmm2, %%zmm1, %%zmm0\n\t"
		"kmovd %%k1, %%eax\n\t"
		"kortestd %%k1, %%k2\n\t"
		"1:\n\t"
		::: "memory", "eax");
	BURN_LOOP(x, n);
	return x;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	unsigned long r = evex_hot((unsigned long)(WORK * scale));
	KEEP_FRAME();
	sink += r;
	printf("%lu\n", r & 1);
	return 0;
}
