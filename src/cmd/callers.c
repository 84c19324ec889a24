/* callers.c - stax callers and stax callees: who calls a function, and
 * what it spends its time in (the work is in view/peek.c). */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const struct opt peek_opts[] = {
	{ 'n', NULL, "N", "show the N first rows (default 20, 0 for all)", NULL },
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

#define PEEK_FUNCTION_TEXT \
"FUNCTION is found as stax annotate finds it: a name as stax top prints it\n" \
"(every function of that name in one module, merged), or 0xADDRESS of one\n" \
"of its frames as stax script prints it. When functions of that name are\n" \
"in several modules, they are listed with an address each and the command\n" \
"exits 1. A sample counts once for FUNCTION and once for each of its\n"

const struct cmd_spec cmd_callers_spec = {
	"callers",
"usage: stax callers FUNCTION [FILE | -i FILE] [-n N] [--json]\n"
"                    [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"The functions that call FUNCTION, each with the samples and the share of\n"
"FUNCTION's samples in which it was FUNCTION's caller ([root]: FUNCTION\n"
"was the outermost frame).\n"
"\n"
PEEK_FUNCTION_TEXT
"callers on that sample's stack, wherever FUNCTION appears on it; FUNCTION\n"
"calling itself (recursion) is not listed. Reads FILE (or -i FILE;\n"
"stax.data when neither is given).\n"
,
	peek_opts,
	NULL,
	0,
};

const struct cmd_spec cmd_callees_spec = {
	"callees",
"usage: stax callees FUNCTION [FILE | -i FILE] [-n N] [--json]\n"
"                    [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"What FUNCTION spends its time in: [self] (FUNCTION was running) and the\n"
"functions it calls, each with the samples and the share of FUNCTION's\n"
"samples in which it was running under FUNCTION.\n"
"\n"
PEEK_FUNCTION_TEXT
"callees on that sample's stack, wherever FUNCTION appears on it; FUNCTION\n"
"calling itself (recursion) is not listed. Reads FILE (or -i FILE;\n"
"stax.data when neither is given).\n"
,
	peek_opts,
	NULL,
	0,
};

static int peek_main(const struct cmd_spec *spec, bool callees, int argc, char **argv)
{
	const char *cmd = spec->name;
	struct query_opts q;
	struct peek_opts o = { .callees = callees, .limit = 20 };
	struct profile p;
	const char *what = NULL;
	struct err err;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (id == OPT_ARG && !what)
			what = op.arg;
		else if (id == OPT_ARG && q.input_set)
			die("%s: too many arguments: '%s' (stax %s FUNCTION [FILE], one function at a time)",
			    cmd, op.arg, cmd);
		else if (id == 'n')
			o.limit = (size_t)opt_u64(&op, SIZE_MAX);
		else
			query_opt(&q, &op, id);
	}
	if (!what)
		die("%s: which function? (stax %s NAME; stax top lists them)", cmd, cmd);
	o.json = q.json;
	query_load(&q, &p);
	if (view_peek(&p, &q.filter, what, &o, stdout, &err))
		die("%s: %s", cmd, err.msg);
	profile_release(&p);
	return 0;
}

int cmd_callers(int argc, char **argv)
{
	return peek_main(&cmd_callers_spec, false, argc, argv);
}

int cmd_callees(int argc, char **argv)
{
	return peek_main(&cmd_callees_spec, true, argc, argv);
}
