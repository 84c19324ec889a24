/* doctor.c - stax doctor: why stacks are incomplete and what to do. */
#include "cmd/cmd.h"

#include <stdio.h>

static const struct opt doctor_opts[] = {
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_doctor_spec = {
	"doctor",
"usage: stax doctor [FILE | -i FILE] [--json] [--pid PID] [--tid TID] [--comm NAME]\n"
"\n"
"Reads a recording and says, most important first, why its stacks may be\n"
"incomplete or its answers weak, and what to do: lost samples, stacks\n"
"that do not reach main and the modules where they stop (checking whether\n"
"those binaries keep frame pointers and have unwind tables), truncated\n"
"stack copies (a larger --stack-size), code without symbols (debug\n"
"packages), JIT code without a perf map, a Python process recorded\n"
"without -X perf (and which mode its version has), kernel frames hidden\n"
"by kernel.perf_event_paranoid, too few samples, throttling (and whether\n"
"the kernel lowered kernel.perf_event_max_sample_rate meanwhile), damaged\n"
"chunks and the stacks they cut.\n"
"Reads FILE (or -i FILE; stax.data when neither is given); --json prints\n"
"JSON.\n",
	doctor_opts, NULL, 0,
};

int cmd_doctor(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_doctor_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE)
		query_opt(&q, &op, id);
	query_load(&q, &p);
	view_doctor(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
