/* threads.c - stax threads. */
#include "cmd/cmd.h"

#include <stdio.h>

const char cmd_threads_help[] =
"usage: stax threads [FILE | -i FILE] [--json] [--pid PID] [--tid TID] [--comm NAME]\n"
"\n"
"Per thread: tid, pid, name, samples, share and CPU milliseconds (for\n"
"clock events: the sum of sample periods), busiest first.\n"
"\n"
"For a recording made with --off-cpu the columns are where each thread's\n"
"wall time went: SAMPLES, CPU_MS (samples times their period), OFF_MS\n"
"(time off the CPU), WALL_MS (the two together), ONCPU% (CPU_MS over\n"
"WALL_MS), then OFF_MS by reason: LOCK (contended mutexes and rwlocks,\n"
"kernel mutexes), READ, WRITE, SLEEP (nanosleep), POLL (poll, select,\n"
"epoll, wait4, waitid), FAULT (page faults), PREEMPTED (still runnable,\n"
"waiting for a cpu), WAIT (condition variables, semaphores, joins) and\n"
"OTHER (see docs/OFFCPU.md).\n"
"Reads FILE (or -i FILE; stax.data when neither is given); --json prints\n"
"JSON.\n"
"\n"
FILTER_HELP;

int cmd_threads(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("threads", argv[i]);
		if (query_is_file_arg(argv[i]))
			query_file_arg(&q, "threads", argv[i]);
		else if (!query_option(&q, "threads", argc, argv, &i))
			cmd_bad_option("threads", argv[i]);
	}
	query_load(&q, &p);
	view_threads(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
