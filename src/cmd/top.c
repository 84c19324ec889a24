/* top.c - stax top: functions by self and total samples. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { TOP_SORT = OPT_LONG, TOP_OFF_CPU, TOP_KERNEL_WAITS, TOP_BY };

static const struct opt top_opts[] = {
	{ 'n', NULL, "N", "show the N first rows (default 20, 0 for all)", NULL },
	{ TOP_SORT, "sort", "self|total", "order by self (default) or total samples", NULL },
	{ TOP_OFF_CPU, "off-cpu", NULL, "functions by time off the CPU (record --off-cpu):\n"
	  "self is the blocking caller, the innermost function\n"
	  "of the program's own code on the waiting stack (past\n"
	  "the kernel's frames, which are folded into the wait,\n"
	  "libc, libpthread, ld.so, libstdc++, the Python\n"
	  "interpreter's C code and Go's runtime.*), total any\n"
	  "frame on the way; milliseconds and percent of the\n"
	  "off-CPU time", NULL },
	{ TOP_KERNEL_WAITS, "kernel-waits", NULL, "with --off-cpu, the waiting stacks as recorded: self\n"
	  "is their innermost frame (mostly the kernel's\n"
	  "schedule), and kernel frames count in total", NULL },
	{ TOP_BY, "by", "WHAT", "rows by function (default); by module (self: the\n"
	  "leaf's module, total: a frame's, once per sample); by\n"
	  "thread (NAME/TID) or process (NAME/PID), whose self\n"
	  "and total are the samples they took. Not with\n"
	  "--off-cpu", NULL },
	OPT_GROUP(query_opts_python),
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_top_spec = {
	"top",
"usage: stax top [FILE | -i FILE] [-n N] [--sort self|total]\n"
"                [--off-cpu [--kernel-waits]] [--json]\n"
"                [--by function|module|thread|process]\n"
"                [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                [--no-inline] [--lines] [--python-only]\n"
"\n"
"Functions with their self samples (the function was running) and total\n"
"samples (the function was on the stack), with percentages of the samples\n"
"kept by the filters. Reads FILE (or -i FILE; stax.data when neither is\n"
"given).\n"
,
	top_opts,
"Code no symbol names is MODULE+0xSTART: in a stripped ELF binary, START is\n"
"the ELF virtual address of the function holding it, from the range of its\n"
"unwind table entry (.eh_frame FDE, or .debug_frame), so each function is\n"
"one row (objdump -d --start-address=0xSTART shows it; a function's split\n"
"'.cold' part has an FDE of its own, so it is a row of its own); code no\n"
"FDE covers is named by its own ELF address. In the kernel, JIT code or\n"
"anonymous memory the offset is the one in the mapping's file.\n",
	0,
};

int cmd_top(int argc, char **argv)
{
	struct query_opts q;
	struct top_opts o = { .limit = 20 };
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_top_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (query_opt(&q, &op, id))
			continue;
		switch (id) {
		case 'n':
			o.limit = (size_t)opt_u64(&op, SIZE_MAX);
			break;
		case TOP_OFF_CPU:
			o.off_cpu = true;
			break;
		case TOP_KERNEL_WAITS:
			o.kernel_waits = true;
			break;
		case TOP_BY:
			if (!strcmp(op.arg, "function"))
				o.by = TOP_BY_FUNCTION;
			else if (!strcmp(op.arg, "module"))
				o.by = TOP_BY_MODULE;
			else if (!strcmp(op.arg, "thread"))
				o.by = TOP_BY_THREAD;
			else if (!strcmp(op.arg, "process"))
				o.by = TOP_BY_PROCESS;
			else
				die("top: --by takes function, module, thread or process, not '%s'", op.arg);
			break;
		case TOP_SORT:
			if (!strcmp(op.arg, "total"))
				o.sort_total = true;
			else if (strcmp(op.arg, "self"))
				die("top: --sort takes self or total, not '%s'", op.arg);
			break;
		}
	}
	o.json = q.json;
	if (o.by != TOP_BY_FUNCTION && o.off_cpu)
		die("top: --by %s cannot be combined with --off-cpu (off-CPU time is by function)",
		    o.by == TOP_BY_MODULE ? "module" : o.by == TOP_BY_THREAD ? "thread" : "process");
	query_load(&q, &p);
	view_top(&p, &q.filter, &o, stdout);
	profile_release(&p);
	return 0;
}
