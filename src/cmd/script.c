/* script.c - stax script. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

const char cmd_script_help[] =
"usage: stax script [FILE | -i FILE] [--json] [--pid PID] [--tid TID] [--comm NAME]\n"
"                   [--no-demangle] [--no-inline] [--python-only]\n"
"\n"
"Every sample as a block: command, pid/tid, cpu, time in seconds, period\n"
"and event, then one line per frame, leaf first: address, function\n"
"(or MODULE+0xADDRESS, see stax help top), module, file:line when DWARF has it, and\n"
"'(inlined)' for a function inlined into the frame below it (--json:\n"
"\"inlined\", \"file\", \"line\"). Code DWARF gives line 0 (no line) shows\n"
"its file alone, as addr2line does (no \"line\" in JSON). Like perf\n"
"script. --no-inline folds inlined functions into the function holding\n"
"their code.\n"
"Reads FILE (or -i FILE; stax.data when neither is given); --json prints\n"
"JSON, with addresses as \"0x...\" strings (Python frames\n"
"of python -X perf have \"python\": true).\n"
"\n"
"  --python-only     only Python frames (python -X perf or -X perf_jit), the\n"
"                    way py-spy shows them: the C frames between them are\n"
"                    folded away (by default both are shown)\n"
FILTER_HELP;

int cmd_script(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("script", argv[i]);
		if (!strcmp(argv[i], "--python-only"))
			q.python_only = true;
		else if (query_is_file_arg(argv[i]))
			query_file_arg(&q, "script", argv[i]);
		else if (!query_option(&q, "script", argc, argv, &i))
			cmd_bad_option("script", argv[i]);
	}
	query_load(&q, &p);
	view_script(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
