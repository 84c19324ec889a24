/* unwind_nocfi.c - a hot leaf with no CFI at all.
 *
 * nocfi_leaf (unwind_nocfi_asm.S) is hand-written assembly without .cfi
 * directives that sets up a frame pointer (push rbp; mov rsp,rbp). The
 * unwinder finds no CFI row for it and must fall back to the frame
 * pointer for that one frame, then continue with CFI in nocfi_caller.
 * Expected samples, root first:
 *   _start;...;main;nocfi_caller;nocfi_leaf   ~100%
 * Built as build/unwind_nocfi-nofp (gcc -O2 -fomit-frame-pointer for the
 * C part) by tests/programs/Makefile.
 * usage: unwind_nocfi [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#define UNIT 2000000UL
#define ROUNDS 500UL

volatile unsigned long sink;

unsigned long nocfi_leaf(unsigned long n);   /* unwind_nocfi_asm.S */

NOINLINE unsigned long nocfi_caller(unsigned long n)
{
	unsigned long r = nocfi_leaf(n);
	KEEP_FRAME();
	sink += r;
	return r;
}

int main(int argc, char **argv)
{
	unsigned long rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	unsigned long i, r = 0;
	for (i = 0; i < rounds || i == 0; i++)
		r += nocfi_caller(UNIT);
	KEEP_FRAME();
	sink += r;
	return 0;
}
