/* forkexec.c - a parent that spins while its child execs another program.
 *
 * The parent forks; the child execs PROG ARGS (default: callgraph-fp 0.5,
 * found in the directory of this executable, via /proc/self/exe). The
 * parent meanwhile burns about 0.7 s of CPU in parent_spin, then waits for
 * the child and exits with 0 if the child exited 0, else 1.
 * Expected: samples in main;parent_spin (comm forkexec-fp or forkexec-nofp)
 * and, in another pid with comm "callgraph-fp", main;a;b;leaf_b and
 * main;a;c;leaf_c.
 *
 * Build: see Makefile (clang frame pointers -> forkexec-fp; gcc without
 * -> forkexec-nofp).
 * usage: forkexec [PROG [ARGS...]]
 */
#define _GNU_SOURCE
#include "common.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define PARENT_ITERS 500000000UL

volatile unsigned long sink;

NOINLINE unsigned long parent_spin(unsigned long n)
{
	unsigned long x = 7;
	BURN_LOOP(x, n);
	return x;
}

int main(int argc, char **argv)
{
	char self[PATH_MAX], prog[PATH_MAX + 32];
	char *default_argv[] = { prog, "0.5", NULL };
	char **child_argv = default_argv;
	ssize_t len;
	pid_t pid;
	int status;
	unsigned long r;

	if (argc > 1) {
		child_argv = argv + 1;
	} else {
		len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (len < 0) {
			perror("forkexec: readlink /proc/self/exe");
			return 1;
		}
		self[len] = 0;
		snprintf(prog, sizeof(prog), "%s/callgraph-fp", dirname(self));
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("forkexec: fork");
		return 1;
	}
	if (pid == 0) {
		execv(child_argv[0], child_argv);
		fprintf(stderr, "forkexec: exec %s: %s\n", child_argv[0], strerror(errno));
		_exit(127);
	}
	r = parent_spin(PARENT_ITERS);
	KEEP_FRAME();
	sink += r;
	if (waitpid(pid, &status, 0) < 0) {
		perror("forkexec: waitpid");
		return 1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
