/* exitcode.c - exit with a chosen status, or die by a chosen signal.
 *
 * usage: exitcode N          burn ~0.3 s in burn_before_exit, exit(N)
 *        exitcode sig N      burn ~0.3 s, then kill itself with signal N
 * The short burn makes sure a recording of it has samples.
 * Build: see Makefile (exitcode-fp, exitcode-nofp).
 */
#define _GNU_SOURCE
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ITERS 200000000UL

volatile unsigned long sink;

NOINLINE unsigned long burn_before_exit(unsigned long n)
{
	unsigned long x = 5;
	BURN_LOOP(x, n);
	return x;
}

int main(int argc, char **argv)
{
	unsigned long r;
	int sig = 0, code = 0;

	if (argc > 2 && !strcmp(argv[1], "sig"))
		sig = atoi(argv[2]);
	else if (argc > 1)
		code = atoi(argv[1]);
	else {
		fprintf(stderr, "usage: exitcode N | exitcode sig N\n");
		return 2;
	}
	r = burn_before_exit(ITERS);
	KEEP_FRAME();
	sink += r;
	if (sig) {
		fflush(NULL);
		signal(sig, SIG_DFL);
		kill(getpid(), sig);
		/* a caught or ignored signal: not what the caller asked for */
		fprintf(stderr, "exitcode: still alive after signal %d\n", sig);
		return 126;
	}
	return code;
}
