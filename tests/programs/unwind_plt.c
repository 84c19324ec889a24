/* unwind_plt.c - calls through the PLT into a shared library.
 *
 * plt_loop calls plt_tiny (build/libunwind_plt.so, unwind_plt_lib.c) in a
 * hot loop; plt_tiny is tiny, so a good part of the time is in the PLT
 * stub and the call overhead. Expected samples, root first:
 *   _start;...;main;plt_loop;plt_tiny              (in the library)
 *   _start;...;main;plt_loop;plt_tiny@plt or stub  (in the PLT stub)
 *   _start;...;main;plt_loop                       (the loop itself)
 * The PLT's CFI is an expression (rsp + 8 + ((rip & 15) >= 11 ? 8 : 0)).
 * Built as build/unwind_plt-nofp (gcc -O2 -fomit-frame-pointer, library
 * too), linked with -rpath $ORIGIN.
 * usage: unwind_plt [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#define CALLS 250000000UL

volatile unsigned long sink;

unsigned long plt_tiny(unsigned long x);   /* unwind_plt_lib.c */

NOINLINE unsigned long plt_loop(unsigned long n)
{
	unsigned long i, x = n;
	for (i = 0; i < n; i++)
		x = plt_tiny(x);
	KEEP_FRAME();
	return x;
}

int main(int argc, char **argv)
{
	unsigned long n = (unsigned long)(CALLS * arg_scale(argc, argv, 1, 1.0));
	unsigned long r = plt_loop(n ? n : 1);
	KEEP_FRAME();
	sink += r;
	return 0;
}
