/* script.c - stax script. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <string.h>

static const struct opt script_opts[] = {
	OPT_GROUP(query_opts_python),
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_script_spec = {
	"script",
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
"of python -X perf have \"python\": true), \"time\" in seconds (with\n"
"microseconds, as the text) and \"time_ns\", the nanoseconds exactly as a\n"
"string (as a number they pass 2^53 after 104 days of uptime, and JSON\n"
"parsers round them).\n"
,
	script_opts, NULL, 0,
};

int cmd_script(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_script_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE)
		query_opt(&q, &op, id);
	query_load(&q, &p);
	view_script(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
