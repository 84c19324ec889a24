/* churn.c - new short-lived processes at a steady rate, for a long time.
 *
 * usage: churn RATE SECONDS [WORK_MS]
 * Starts RATE new processes a second (default 50) for SECONDS (default
 * 10), each a fork and an exec of this program ("churn --child
 * WORK_MS"): a new process image with its own mappings (ld.so, libc,
 * this binary), which burns about WORK_MS ms of CPU (default 2) in
 * child_work and exits. The parent paces the starts by the clock (a
 * start every 1/RATE s; starts that fall behind are not made up twice)
 * and reaps each child; it prints how many it started and exits 0 when
 * every child exited 0. It is the load of a machine where short
 * commands run all the time (cron, shell scripts, health checks), for
 * the agent's bounded memory (tests/e2e/agent.sh, bench/run.sh 14).
 * Expected stacks of the children: main;child_work.
 */
#define _GNU_SOURCE
#include "common.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burn about ms milliseconds of this process's CPU time. */
NOINLINE unsigned long child_work(double ms)
{
	double end = cpu_now() + ms / 1000;
	unsigned long x = 5;
	do {
		BURN_LOOP(x, 20000UL);
	} while (cpu_now() < end);
	return x;
}

/* Reap the children that exited (flags 0: all of them, waiting). */
static void reap(int flags, long *bad)
{
	int status;
	while (waitpid(-1, &status, flags) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			(*bad)++;
}

int main(int argc, char **argv)
{
	double rate, secs, t0, next, now;
	long started = 0, bad = 0;
	char self[4096], work[32];
	ssize_t n;

	if (argc >= 3 && !strcmp(argv[1], "--child")) {
		sink += child_work(arg_scale(argc, argv, 2, 2));
		return 0;
	}
	/* exec this very file, by its full path */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		perror("churn: /proc/self/exe");
		return 1;
	}
	self[n] = 0;
	rate = arg_scale(argc, argv, 1, 50);
	secs = arg_scale(argc, argv, 2, 10);
	snprintf(work, sizeof(work), "%g", arg_scale(argc, argv, 3, 2));
	signal(SIGPIPE, SIG_IGN);
	t0 = next = mono_now();
	while ((now = mono_now()) < t0 + secs) {
		if (now < next) {
			struct timespec ts = { 0, (long)((next - now) * 1e9) };
			nanosleep(&ts, NULL);
			reap(WNOHANG, &bad);
			continue;
		}
		pid_t pid = fork();
		if (pid < 0) {
			perror("churn: fork");
			bad++;
			break;
		}
		if (pid == 0) {
			execl(self, self, "--child", work, (char *)NULL);
			_exit(127);
		}
		started++;
		next += 1 / rate;
		if (next < now - 1)
			next = now; /* fell behind by a second: do not make it up */
		reap(WNOHANG, &bad);
	}
	reap(0, &bad);
	printf("%ld started, %ld failed\n", started, bad);
	return bad ? 1 : 0;
}
