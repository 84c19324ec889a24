/* doctor.c - stax doctor: why stacks are incomplete and what to do. */
#include "cmd/cmd.h"

#include <stdio.h>

const char cmd_doctor_help[] =
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
"JSON.\n"
"\n"
FILTER_HELP;

int cmd_doctor(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("doctor", argv[i]);
		if (query_is_file_arg(argv[i]))
			query_file_arg(&q, "doctor", argv[i]);
		else if (!query_option(&q, "doctor", argc, argv, &i))
			cmd_bad_option("doctor", argv[i]);
	}
	query_load(&q, &p);
	view_doctor(&p, &q.filter, q.json, stdout);
	profile_release(&p);
	return 0;
}
