/* callers.c - stax callers and stax callees: who calls a function, and
 * what it spends its time in (the work is in view/peek.c). */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <string.h>

const char cmd_callers_help[] =
"usage: stax callers FUNCTION [FILE | -i FILE] [-n N] [--json]\n"
"                    [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"The functions that call FUNCTION, each with the samples and the share of\n"
"FUNCTION's samples in which it was FUNCTION's caller ([root]: FUNCTION\n"
"was the outermost frame).\n"
"\n"
"FUNCTION is found as stax annotate finds it: a name as stax top prints it\n"
"(every function of that name in one module, merged), or 0xADDRESS of one\n"
"of its frames as stax script prints it. When functions of that name are\n"
"in several modules, they are listed with an address each and the command\n"
"exits 1. A sample counts once for FUNCTION and once for each of its\n"
"callers on that sample's stack, wherever FUNCTION appears on it; FUNCTION\n"
"calling itself (recursion) is not listed. Reads FILE (or -i FILE;\n"
"stax.data when neither is given).\n"
"\n"
"  -n N              show the N first rows (default 20, 0 for all)\n"
"  --json            print JSON\n"
"  --no-inline       fold inlined functions into the function holding their\n"
"                    code (by default each is a frame of its own)\n"
"  --pid, --tid, --comm  keep only samples of that process, thread or name\n"
FILTER_HELP;

const char cmd_callees_help[] =
"usage: stax callees FUNCTION [FILE | -i FILE] [-n N] [--json]\n"
"                    [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"What FUNCTION spends its time in: [self] (FUNCTION was running) and the\n"
"functions it calls, each with the samples and the share of FUNCTION's\n"
"samples in which it was running under FUNCTION.\n"
"\n"
"FUNCTION is found as stax annotate finds it: a name as stax top prints it\n"
"(every function of that name in one module, merged), or 0xADDRESS of one\n"
"of its frames as stax script prints it. When functions of that name are\n"
"in several modules, they are listed with an address each and the command\n"
"exits 1. A sample counts once for FUNCTION and once for each of its\n"
"callees on that sample's stack, wherever FUNCTION appears on it; FUNCTION\n"
"calling itself (recursion) is not listed. Reads FILE (or -i FILE;\n"
"stax.data when neither is given).\n"
"\n"
"  -n N              show the N first rows (default 20, 0 for all)\n"
"  --json            print JSON\n"
"  --no-inline       fold inlined functions into the function holding their\n"
"                    code (by default each is a frame of its own)\n"
"  --pid, --tid, --comm  keep only samples of that process, thread or name\n"
FILTER_HELP;

static int peek_main(const char *cmd, bool callees, int argc, char **argv)
{
	struct query_opts q;
	struct peek_opts o = { .callees = callees, .limit = 20 };
	struct profile p;
	const char *what = NULL;
	char err[2048];
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help(cmd, argv[i]);
		if (query_option(&q, cmd, argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "-n")) {
			uint64_t n;
			const char *v = cmd_value(cmd, argc, argv, &i);
			if (parse_u64(v, &n))
				die("%s: -n needs a number, not '%s' (see 'stax help %s')", cmd, v, cmd);
			o.limit = (size_t)n;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cmd_bad_option(cmd, argv[i]);
		} else if (!what) {
			what = argv[i];
		} else if (!q.input_set) {
			query_file_arg(&q, cmd, argv[i]);
		} else {
			die("%s: too many arguments: '%s' (stax %s FUNCTION [FILE], one function at a time)",
			    cmd, argv[i], cmd);
		}
	}
	if (!what)
		die("%s: which function? (stax %s NAME; stax top lists them)", cmd, cmd);
	o.json = q.json;
	query_load(&q, &p);
	if (view_peek(&p, &q.filter, what, &o, stdout, err, sizeof(err)))
		die("%s: %s", cmd, err);
	profile_release(&p);
	return 0;
}

int cmd_callers(int argc, char **argv)
{
	return peek_main("callers", false, argc, argv);
}

int cmd_callees(int argc, char **argv)
{
	return peek_main("callees", true, argc, argv);
}
