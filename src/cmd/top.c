/* top.c - stax top: functions by self and total samples. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { TOP_SORT = OPT_LONG, TOP_OFF_CPU };

static const struct opt top_opts[] = {
	{ 'n', NULL, "N", "show the N first rows (default 20, 0 for all)", NULL },
	{ TOP_SORT, "sort", "self|total", "order by self (default) or total samples", NULL },
	{ TOP_OFF_CPU, "off-cpu", NULL, "functions by time off the CPU (record --off-cpu):\n"
	  "self is the innermost frame where threads waited\n"
	  "(often a kernel function), total any frame on the\n"
	  "way; milliseconds and percent of the off-CPU time", NULL },
	OPT_GROUP(query_opts_python),
	OPT_GROUP(query_opts_common),
	OPT_END,
};

const struct cmd_spec cmd_top_spec = {
	"top",
"usage: stax top [FILE | -i FILE] [-n N] [--sort self|total] [--off-cpu] [--json]\n"
"                [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                [--no-inline] [--lines] [--python-only]\n"
"\n"
"Functions with their self samples (the function was running) and total\n"
"samples (the function was on the stack), with percentages of the samples\n"
"kept by the filters. Reads FILE (or -i FILE; stax.data when neither is\n"
"given).\n"
,
	top_opts, NULL, 0,
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
		case TOP_SORT:
			if (!strcmp(op.arg, "total"))
				o.sort_total = true;
			else if (strcmp(op.arg, "self"))
				die("top: --sort takes self or total, not '%s'", op.arg);
			break;
		}
	}
	o.json = q.json;
	query_load(&q, &p);
	view_top(&p, &q.filter, &o, stdout);
	profile_release(&p);
	return 0;
}
