/* unwind_raise.c - samples inside rt_sigreturn.
 *
 * raiser() raises SIGUSR1 100 times in a row; the handler is nearly empty,
 * so much of the time goes to delivering the signal and returning from
 * it: the kernel's rt_sigreturn, entered from glibc's __restore_rt by
 * `mov $15,%eax; syscall`. A sample taken in that syscall has as user pc
 * the byte after `syscall`, one past the end of __restore_rt's FDE (which
 * starts one byte early, for return-address lookups): the unwinder must
 * still treat it as the signal frame. Expected stacks, root first:
 *   main;raiser;raise;...;__restore_rt;[kernel: rt_sigreturn]
 *   main;raiser;raise;...;__restore_rt;handler
 * Build: see Makefile.
 * usage: unwind_raise [SCALE]   1.5 s of its CPU time at scale 1 (CPU time,
 *                              so a busy machine gives as many samples)
 */
#define _GNU_SOURCE
#include "common.h"

#include <signal.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

NOINLINE void handler(int sig)
{
	sink += (unsigned long)sig;
}

NOINLINE void raiser(void)
{
	for (int i = 0; i < 100; i++)
		raise(SIGUSR1);
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec t0, t;
	signal(SIGUSR1, handler);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		raiser();
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < 1.5 * scale);
	return 0;
}
