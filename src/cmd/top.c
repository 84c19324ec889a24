/* top.c - stax top: functions by self and total samples. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <string.h>

const char cmd_top_help[] =
"usage: stax top [FILE | -i FILE] [-n N] [--sort self|total] [--off-cpu] [--json]\n"
"                [--by function|module|thread|process]\n"
"                [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                [--no-inline] [--lines] [--python-only]\n"
"\n"
"Functions with their self samples (the function was running) and total\n"
"samples (the function was on the stack), with percentages of the samples\n"
"kept by the filters. Reads FILE (or -i FILE; stax.data when neither is\n"
"given).\n"
"\n"
"  -n N              show the N first rows (default 20, 0 for all)\n"
"  --sort self|total order by self (default) or total samples\n"
"  --off-cpu         functions by time off the CPU (record --off-cpu):\n"
"                    self is the innermost frame where threads waited\n"
"                    (often a kernel function), total any frame on the\n"
"                    way; milliseconds and percent of the off-CPU time\n"
"  --by WHAT         rows by function (default); by module (self: the\n"
"                    leaf's module, total: a frame's, once per sample); by\n"
"                    thread (NAME/TID) or process (NAME/PID), whose self\n"
"                    and total are the samples they took. Not with\n"
"                    --off-cpu\n"
"  --json            print JSON\n"
"  --no-inline       fold inlined functions into the function holding their\n"
"                    code (by default each is a frame of its own)\n"
"  --lines           one row per source line: 'name (file.c:LINE)'\n"
"  --python-only     only Python frames (python -X perf or -X perf_jit), the\n"
"                    way py-spy shows them: the C frames between them are\n"
"                    folded away (by default both are shown)\n"
"  --pid, --tid, --comm  keep only samples of that process, thread or name\n"
FILTER_HELP
"\n"
"Code no symbol names is MODULE+0xSTART: in a stripped ELF binary, START is\n"
"the ELF virtual address of the function holding it, from the range of its\n"
"unwind table entry (.eh_frame FDE, or .debug_frame), so each function is\n"
"one row (objdump -d --start-address=0xSTART shows it; a function's split\n"
"'.cold' part has an FDE of its own, so it is a row of its own); code no\n"
"FDE covers is named by its own ELF address. In the kernel, JIT code or\n"
"anonymous memory the offset is the one in the mapping's file.\n";

int cmd_top(int argc, char **argv)
{
	struct query_opts q;
	struct top_opts o = { .limit = 20 };
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("top", argv[i]);
		if (query_option(&q, "top", argc, argv, &i))
			continue;
		if (query_is_file_arg(argv[i])) {
			query_file_arg(&q, "top", argv[i]);
			continue;
		}
		if (!strcmp(argv[i], "-n")) {
			uint64_t n;
			const char *v = cmd_value("top", argc, argv, &i);
			if (parse_u64(v, &n))
				die("top: -n needs a number, not '%s' (see 'stax help top')", v);
			o.limit = (size_t)n;
		} else if (!strcmp(argv[i], "--python-only")) {
			q.python_only = true;
		} else if (!strcmp(argv[i], "--off-cpu")) {
			o.off_cpu = true;
		} else if (!strcmp(argv[i], "--by")) {
			const char *v = cmd_value("top", argc, argv, &i);
			if (!strcmp(v, "function"))
				o.by = TOP_BY_FUNCTION;
			else if (!strcmp(v, "module"))
				o.by = TOP_BY_MODULE;
			else if (!strcmp(v, "thread"))
				o.by = TOP_BY_THREAD;
			else if (!strcmp(v, "process"))
				o.by = TOP_BY_PROCESS;
			else
				die("top: --by takes function, module, thread or process, not '%s'", v);
		} else if (!strcmp(argv[i], "--sort")) {
			const char *v = cmd_value("top", argc, argv, &i);
			if (!strcmp(v, "total"))
				o.sort_total = true;
			else if (strcmp(v, "self"))
				die("top: --sort takes self or total, not '%s'", v);
		} else {
			cmd_bad_option("top", argv[i]);
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
