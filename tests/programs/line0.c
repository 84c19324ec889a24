/* line0.c - hot code that DWARF gives line 0 ("no line").
 *
 * Compilers emit line 0 for code merged from several lines; clang keeps
 * a "#line 0" region as line 0 in the line table (gcc drops it), so the
 * hot loop of zero_line_loop sits on line 0 and addr2line -i -f prints
 * "line0.c:?" for it. Expected stacks (nearly all samples):
 *   main;zero_line_loop                     the loop, on line 0
 * usage: line0 [SCALE]   SCALE multiplies the run time (default 1 = ~0.5 s)
 * Build: clang -O2 -g -no-pie -o line0 line0.c (tests/e2e/symbols.sh)
 */
#include "common.h"

#include <stdio.h>

volatile unsigned long sink;

NOINLINE unsigned long zero_line_loop(unsigned long n)
{
	unsigned long x = 1;
#line 0
	BURN_LOOP(x, n);
#line 23
	KEEP_FRAME();
	return x;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	sink = zero_line_loop((unsigned long)(250000000 * scale));
	printf("%lu\n", sink & 1);
	return 0;
}
