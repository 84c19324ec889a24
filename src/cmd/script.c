/* script.c - stax script. */
#include "cmd/cmd.h"

#include <stdio.h>

const char cmd_script_help[] =
"usage: stax script [-i FILE] [--json] [--pid PID] [--tid TID] [--comm NAME]\n"
"                   [--no-demangle] [--no-inline]\n"
"\n"
"Every sample as a block: command, pid/tid, cpu, time in seconds, period\n"
"and event, then one line per frame, leaf first: address, function\n"
"(or module+0xoffset), module, file:line when DWARF has it, and\n"
"'(inlined)' for a function inlined into the frame below it (--json:\n"
"\"inlined\", \"file\", \"line\"). Like perf script. --no-inline folds\n"
"inlined functions into the function holding their code.\n"
"Reads stax.data unless -i is given; --json prints JSON.\n";

int cmd_script(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("script", argv[i]);
		if (!query_option(&q, "script", argc, argv, &i))
			cmd_bad_option("script", argv[i]);
	}
	query_load(&q, &p);
	view_script(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
