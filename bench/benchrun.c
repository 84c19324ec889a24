/* benchrun.c - run a command and say how long it took (bench helper).
 *
 * usage: benchrun -o FILE -- CMD ARGS...
 *
 * Runs CMD (found on PATH), waits for it, and writes one line to FILE:
 *   WALL_S USER_S SYS_S MAXRSS_KB STATUS
 * WALL_S is monotonic wall time from fork to exit; USER_S and SYS_S are
 * the CPU time of CMD and every descendant it waited for (wait4 rusage,
 * what /usr/bin/time reports); MAXRSS_KB is the largest peak resident set
 * among them (/usr/bin/time's %M); STATUS is the exit status, or 128+N
 * when signal N killed CMD. Exits with STATUS. stdin, stdout and stderr
 * are CMD's. Nanosecond wall time is why this is not /usr/bin/time: the
 * start-up row measures a few milliseconds.
 *
 * Built by bench/run.sh: cc -O2 -o bench/work/benchrun bench/benchrun.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	int i = 1, status, code;
	struct rusage ru;
	double t0, t1;
	pid_t pid;
	FILE *f;

	if (argc > 2 && !strcmp(argv[1], "-o")) {
		out = argv[2];
		i = 3;
	}
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (!out || i >= argc) {
		fprintf(stderr, "usage: benchrun -o FILE -- CMD ARGS...\n");
		return 2;
	}
	t0 = now_s();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "benchrun: error: fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[i], argv + i);
		fprintf(stderr, "benchrun: error: cannot run %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "benchrun: error: wait4: %s\n", strerror(errno));
			return 2;
		}
	}
	t1 = now_s();
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "benchrun: error: cannot write %s: %s\n", out, strerror(errno));
		return 2;
	}
	fprintf(f, "%.6f %.6f %.6f %ld %d\n", t1 - t0,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss, code);
	fclose(f);
	return code;
}
