/* unwind_asmcfa.c - OpenSSL's CFI shapes (unwind_asmcfa_asm.S). main
 * calls rax_phase then below_phase, about half the time each. Expected
 * samples, root first:
 *   _start;...;main;rax_phase;rax_frame;rax_leaf   ~50%: the CFA of
 *       rax_frame is rax + 8, and rax_leaf leaves rax as sampled
 *   below_frame                                    ~50%: its CFA is read
 *       from below the stack pointer, which no copy holds: the stack ends
 *       there, "a read below the stack pointer", and nothing is invented
 * usage: unwind_asmcfa [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

void rax_frame(unsigned long n);
void below_frame(unsigned long n);

#define UNIT 600000000UL

NOINLINE void rax_phase(unsigned long n)
{
	rax_frame(n);
	KEEP_FRAME();
}

NOINLINE void below_phase(unsigned long n)
{
	below_frame(n);
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	unsigned long n = (unsigned long)(UNIT * arg_scale(argc, argv, 1, 1.0));
	rax_phase(n);
	below_phase(n);
	return 0;
}
