/* threads.c - stax threads. */
#include "cmd/cmd.h"

#include <stdio.h>

const char cmd_threads_help[] =
"usage: stax threads [-i FILE] [--json] [--pid PID] [--tid TID] [--comm NAME]\n"
"\n"
"Per thread: tid, pid, name, samples, share and CPU milliseconds (for\n"
"clock events: the sum of sample periods), busiest first.\n"
"Reads stax.data unless -i is given; --json prints JSON.\n";

int cmd_threads(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("threads", argv[i]);
		if (!query_option(&q, "threads", argc, argv, &i))
			cmd_bad_option("threads", argv[i]);
	}
	query_load(&q, &p);
	view_threads(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
