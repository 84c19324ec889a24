/* forkstorm.c - many short-lived child processes, fast.
 *
 * Forks N children in all (default 2000), at most PAR (default 32) alive
 * at a time; each child burns about 1 ms of CPU in child_work and exits.
 * The parent waits for each. Expected stacks of the children's samples:
 *   main;storm;child_work        (most samples of the children)
 * and of the parent: fork and wait in the kernel under main;storm.
 * Every child is a new process whose FORK and EXIT records, and samples,
 * reach the recorder in bursts. Exits 0 when every child exited 0.
 *
 * Build: see Makefile (forkstorm-fp, forkstorm-nofp).
 * usage: forkstorm [N] [PAR]
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burn about 1 ms of this process's CPU time. */
NOINLINE unsigned long child_work(void)
{
	double end = cpu_now() + 0.001;
	unsigned long x = 5;
	do {
		BURN_LOOP(x, 20000UL);
	} while (cpu_now() < end);
	return x;
}

NOINLINE int storm(long n, long par)
{
	long started = 0, alive = 0, bad = 0;
	int status;
	while (started < n || alive > 0) {
		if (started < n && alive < par) {
			pid_t pid = fork();
			if (pid < 0) {
				perror("forkstorm: fork");
				bad++;
				n = started; /* stop starting, reap the rest */
				continue;
			}
			if (pid == 0) {
				sink += child_work();
				_exit(0);
			}
			started++;
			alive++;
			continue;
		}
		if (wait(&status) < 0)
			break;
		alive--;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	KEEP_FRAME();
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	long par = argc > 2 ? atol(argv[2]) : 32;
	if (n < 1 || par < 1) {
		fprintf(stderr, "usage: forkstorm [N] [PAR]\n");
		return 2;
	}
	int r = storm(n, par);
	KEEP_FRAME();
	return r;
}
