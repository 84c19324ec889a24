/* wakers.c - stax wakers: who ended the off-CPU waits. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <string.h>

const char cmd_wakers_help[] =
"usage: stax wakers [FILE | -i FILE] [-n N] [--folded] [--json]\n"
"                   [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                   [--no-inline] [--lines]\n"
"\n"
"Who woke the threads that waited off the CPU (record --off-cpu as root\n"
"or with CAP_PERFMON: the sched:sched_waking tracepoint). For the waits\n"
"the filters keep (by the thread that waited) that ended by a wake-up\n"
"(preempted and still open waits are left out): the waking threads\n"
"(NAME/TID; [irq] and [softirq] for wake-ups from interrupt context,\n"
"never charged to the thread they interrupted; [not recorded] when no\n"
"wake-up was recorded: a waker outside the recorded processes, or a\n"
"recording without wakers), then the functions on the wakers' stacks,\n"
"each weighted by the off-CPU time the wake-ups it took part in ended.\n"
"Reads FILE (or -i FILE; stax.data when neither is given).\n"
"\n"
"  -n N              show the N first rows of each table (default 20, 0 for all)\n"
"  --folded          one line per waiter and waker stack:\n"
"                    'waiter stack;--;waker stack MICROSECONDS', the\n"
"                    waiter's thread name and stack root first, then the\n"
"                    waker's stack leaf first and its NAME/TID (as BCC's\n"
"                    offwaketime prints them; flamegraph.pl draws them)\n"
"  --json            print JSON\n"
"  --pid, --tid, --comm  keep only waits of that process, thread or name\n";

int cmd_wakers(int argc, char **argv)
{
	struct query_opts q;
	struct wakers_opts o = { .limit = 20 };
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("wakers", argv[i]);
		if (query_option(&q, "wakers", argc, argv, &i))
			continue;
		if (query_is_file_arg(argv[i])) {
			query_file_arg(&q, "wakers", argv[i]);
		} else if (!strcmp(argv[i], "-n")) {
			uint64_t n;
			const char *v = cmd_value("wakers", argc, argv, &i);
			if (parse_u64(v, &n))
				die("wakers: -n needs a number, not '%s' (see 'stax help wakers')", v);
			o.limit = (size_t)n;
		} else if (!strcmp(argv[i], "--folded")) {
			o.folded = true;
		} else {
			cmd_bad_option("wakers", argv[i]);
		}
	}
	if (o.folded && q.json)
		die("wakers: --folded and --json cannot be combined (choose one)");
	o.json = q.json;
	query_load(&q, &p);
	view_wakers(&p, &q.filter, &o, stdout);
	profile_release(&p);
	return 0;
}
