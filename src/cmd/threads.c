/* threads.c - stax threads. */
#include "cmd/cmd.h"

#include <stdio.h>

static const struct opt threads_opts[] = {
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_threads_spec = {
	"threads",
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
"JSON.\n",
	threads_opts, NULL, 0,
};

int cmd_threads(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_threads_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE)
		query_opt(&q, &op, id);
	query_load(&q, &p);
	view_threads(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
