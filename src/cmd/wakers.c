/* wakers.c - stax wakers: who ended the off-CPU waits. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { WAKERS_FOLDED = OPT_LONG, WAKERS_KERNEL_WAITS };

static const struct opt wakers_opts[] = {
	{ 'n', NULL, "N", "show the N first rows of each table (default 20, 0 for all)", NULL },
	{ WAKERS_FOLDED, "folded", NULL, "one line per waiter and waker stack:\n"
	  "'waiter stack;--;waker stack MICROSECONDS', the\n"
	  "waiter's thread name and stack root first, then the\n"
	  "waker's stack leaf first and its NAME/TID (as BCC's\n"
	  "offwaketime prints them; flamegraph.pl draws them).\n"
	  "The waiter's kernel frames (the system call and the\n"
	  "scheduler) are folded into the wait unless\n"
	  "--kernel-waits", NULL },
	{ WAKERS_KERNEL_WAITS, "kernel-waits", NULL, "with --folded, the waiter's stack as recorded, kernel\n"
	  "frames included", NULL },
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_wakers_spec = {
	"wakers",
"usage: stax wakers [FILE | -i FILE] [-n N] [--folded [--kernel-waits]] [--json]\n"
"                   [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                   [--no-inline] [--lines]\n"
"\n"
"Who woke the threads that waited off the CPU (record --off-cpu as root\n"
"or with CAP_PERFMON: the sched:sched_waking tracepoint). For the waits\n"
"the filters keep (by the thread that waited; --pid, --tid and --comm\n"
"keep the waits of that process, thread or name) that ended by a wake-up\n"
"(preempted and still open waits are left out): the waking threads\n"
"(NAME/TID; [irq] and [softirq] for wake-ups from interrupt context,\n"
"never charged to the thread they interrupted; [not recorded] COMM/PID\n"
"for a waker outside the recorded processes; [no wake-up seen] when the\n"
"kernel sent no sample for the wake-up, as some virtual machines do for\n"
"the interrupts of an idle cpu, counted under the table; [not recorded]\n"
"in a recording without wakers), then the waking functions, weighted by\n"
"the off-CPU time their wake-ups ended: for each wake-up, the innermost\n"
"function of the program's own code on the waker's stack (past the\n"
"kernel, libc, libpthread, ld.so, libstdc++, the Python interpreter's C\n"
"code, Go's runtime.*, and never a stack's root such as start_thread or\n"
"clone3; the innermost named frame when the stack has nothing else).\n"
"Reads FILE (or -i FILE; stax.data when neither is given).\n"
,
	wakers_opts,
	NULL,
	0,
};

int cmd_wakers(int argc, char **argv)
{
	struct query_opts q;
	struct wakers_opts o = { .limit = 20 };
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_wakers_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (query_opt(&q, &op, id))
			continue;
		switch (id) {
		case 'n':
			o.limit = (size_t)opt_u64(&op, SIZE_MAX);
			break;
		case WAKERS_FOLDED:
			o.folded = true;
			break;
		case WAKERS_KERNEL_WAITS:
			o.kernel_waits = true;
			break;
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
