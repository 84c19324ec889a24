/* annotate.c - stax annotate: one function's instructions with samples. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { AN_COLOR = OPT_LONG, AN_NO_COLOR };

static const struct opt annotate_opts[] = {
	{ AN_COLOR, "color", NULL, "highlight the hottest lines (the default on a terminal)", NULL },
	{ AN_NO_COLOR, "no-color", NULL, "no highlighting", NULL },
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_annotate_spec = {
	"annotate",
"usage: stax annotate FUNCTION|0xADDRESS [FILE | -i FILE] [--json] [--color|--no-color]\n"
"                     [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"The disassembly of one sampled function (capstone) with the samples and\n"
"percentage of each instruction (samples whose leaf frame is exactly that\n"
"instruction), and the source lines from DWARF interleaved where they\n"
"change: file:line, the text of the line when the source file is readable,\n"
"and the line's share. The three hottest lines are listed first and, on a\n"
"terminal, highlighted. FUNCTION is a name as stax top prints it (the\n"
"function that holds the code, not an inlined helper); 0xADDRESS is an\n"
"address of one of its frames, as stax script prints it. When functions\n"
"of that name are in several modules (fstatat in libc and in ld.so), they\n"
"are listed with an address each and the command exits 1: give one. The\n"
"binary must still be where the recording found it.\n"
"Every sample of the function is shown, so the total equals its self samples\n"
"in stax top --no-inline: bytes capstone cannot decode (AVX-512 code in\n"
"capstone 4, data in code) are one row with their samples, and decoding\n"
"resumes only at known instruction starts (sampled addresses, line-table\n"
"rows, symbol and FDE starts, targets of branches decoded before), never\n"
"byte by byte; an instruction that would run over such a start is shown\n"
"as undecoded bytes too. Samples of the function's name at addresses\n"
"outside its bytes (a static function of the same name elsewhere in the\n"
"module) are counted and said.\n"
"Reads FILE (or -i FILE; stax.data when neither is given); --json prints\n"
"JSON.\n",
	annotate_opts, NULL, 0,
};

int cmd_annotate(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	const char *what = NULL;
	struct opt_parser op;
	int id, color = -1;
	struct err err;

	query_init(&q);
	opt_begin(&op, &cmd_annotate_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (id == AN_COLOR)
			color = 1;
		else if (id == AN_NO_COLOR)
			color = 0;
		else if (id == OPT_ARG && !what)
			what = op.arg;
		else if (id == OPT_ARG && q.input_set)
			die("annotate: too many arguments: '%s' (stax annotate FUNCTION [FILE], one function"
			    " at a time)", op.arg);
		else
			query_opt(&q, &op, id);
	}
	if (!what)
		die("annotate: which function? (stax annotate NAME; stax top lists them)");
	/* the function holding the code is the one to disassemble */
	q.no_inline = true;
	query_load(&q, &p);
	if (color < 0)
		color = isatty(STDOUT_FILENO) && !q.json;
	if (view_annotate(&p, &q.filter, what, q.json, color, stdout, &err))
		die("annotate: %s", err.msg);
	profile_release(&p);
	return 0;
}
