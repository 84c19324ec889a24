/* unwind_context.c - a coroutine on a makecontext() stack. main calls
 * driver, which swapcontext()s into the coroutine 400 times; the
 * coroutine runs hot and swaps back. Expected samples, root first:
 *   __start_context;coroutine;hot      ~100% (the coroutine's own stack)
 * glibc's makecontext makes the coroutine return into the first byte of
 * __start_context, its trampoline: the return address is that byte, not
 * the end of a call, and above it lies the context's link, not a caller.
 * usage: unwind_context [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#include <ucontext.h>

#define UNIT 2500000UL
#define ROUNDS 400

static ucontext_t main_ctx, co_ctx;
static unsigned long rounds;
volatile unsigned long sink;

NOINLINE unsigned long hot(unsigned long n)
{
	unsigned long x = n;
	BURN_LOOP(x, n);
	return x;
}

NOINLINE void coroutine(void)
{
	for (unsigned long i = 0; i < rounds; i++) {
		sink += hot(UNIT);
		swapcontext(&co_ctx, &main_ctx);
	}
}

NOINLINE void driver(void)
{
	for (unsigned long i = 0; i < rounds; i++)
		swapcontext(&main_ctx, &co_ctx);
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	static char stack[256 * 1024];

	rounds = (unsigned long)(ROUNDS * arg_scale(argc, argv, 1, 1.0));
	if (!rounds)
		rounds = 1;
	getcontext(&co_ctx);
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	driver();
	return 0;
}
