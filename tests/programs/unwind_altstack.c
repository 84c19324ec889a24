/* unwind_altstack.c - unwind_signal.c with the handler on an alternate
 * signal stack (sigaltstack, SA_ONSTACK): a sample in the handler has
 * the signal stack in its copy, and the interrupted frames are on the
 * thread's own stack, outside it. Same expected stacks:
 *   _start;...;main;interrupted;__restore_rt;handler   most samples
 * (the kernel's frame-pointer chain, or the live recorder reading the
 * thread's stack, continues after the signal frame).
 *
 * What unwind_signal.c says of itself:
 *
 * ITIMER_PROF sends SIGPROF after every millisecond of CPU time; the
 * handler does most of the work. Expected samples, root first:
 *   _start;...;main;interrupted;__restore_rt;handler   most samples
 *   _start;...;main;interrupted                        the rest
 * The kernel pushes a signal frame (rt_sigframe) and makes the handler
 * return to glibc's __restore_rt. The unwinder must step from handler to
 * __restore_rt (its CIE has the "S" augmentation), take the registers of
 * the interrupted frame from the ucontext, and look interrupted up at its
 * exact pc (not pc-1). The frame-pointer chain skips "interrupted".
 *
 * Built as unwind_signal-fp (clang, frame pointers) and unwind_signal-nofp
 * (gcc -O2 -fomit-frame-pointer) by tests/programs/Makefile.
 * usage: unwind_signal [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define HANDLER_WORK 2500000UL  /* about 3 ms */
#define SIGNALS 250UL

volatile unsigned long sink;
static volatile unsigned long handled;

NOINLINE void handler(int sig)
{
	unsigned long x = (unsigned long)sig;
	BURN_LOOP(x, HANDLER_WORK);
	sink += x;
	handled++;
}

NOINLINE unsigned long interrupted(unsigned long want)
{
	unsigned long x = want;
	while (handled < want)
		BURN_LOOP(x, 1000);
	KEEP_FRAME();
	return x;
}

int main(int argc, char **argv)
{
	unsigned long want = (unsigned long)(SIGNALS * arg_scale(argc, argv, 1, 1.0));
	struct sigaction sa;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	unsigned long r;

	stack_t ss = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };

	if (!ss.ss_sp || sigaltstack(&ss, NULL))
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART | SA_ONSTACK;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	r = interrupted(want ? want : 1);
	KEEP_FRAME();
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_PROF, &it, NULL);
	sink += r;
	return 0;
}
