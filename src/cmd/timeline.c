/* timeline.c - stax timeline: samples per time bucket per thread. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TL_INTERVAL = OPT_LONG, TL_HOTTEST };

static const struct opt timeline_opts[] = {
	{ 'b', "buckets", "N", "N buckets over the recording (default 60)", NULL },
	{ TL_INTERVAL, "interval", "S", "buckets of S seconds instead", NULL },
	{ TL_HOTTEST, "hottest", NULL, "under each thread, the function with the most self\n"
	  "samples in each bucket that has samples", NULL },
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_timeline_spec = {
	"timeline",
"usage: stax timeline [FILE | -i FILE] [-b BUCKETS | --interval S] [--hottest] [--json]\n"
"                     [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"Samples per time bucket per thread: one row per thread (NAME/TID, busiest\n"
"first) with its samples and a mark per bucket (' .:-=+*#%@', darker for\n"
"more samples; the scale is the fullest bucket of any thread). Buckets\n"
"start at the start of the recording, the times --time takes. Reads FILE\n"
"(or -i FILE; stax.data when neither is given). With --json: per thread\n"
"its counts per bucket (and with --hottest, the hottest function or\n"
"null).\n"
,
	timeline_opts,
	NULL,
	0,
};

int cmd_timeline(int argc, char **argv)
{
	struct query_opts q;
	struct timeline_opts o = { 0 };
	struct profile p;
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_timeline_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (query_opt(&q, &op, id))
			continue;
		switch (id) {
		case 'b': {
			uint64_t n;
			if (parse_u64(op.arg, &n) || !n || n > 100000)
				die("timeline: %s needs a number from 1 to 100000, not '%s'", op.name, op.arg);
			o.buckets = (size_t)n;
			break;
		}
		case TL_INTERVAL: {
			char *end;
			double s = strtod(op.arg, &end);
			if (*end || end == op.arg || !(s >= 0.001) || s > 1e6)
				die("timeline: --interval needs seconds from 0.001, not '%s'", op.arg);
			o.interval_ns = (uint64_t)(s * 1e9);
			break;
		}
		case TL_HOTTEST:
			o.hottest = true;
			break;
		}
	}
	o.json = q.json;
	query_load(&q, &p);
	if (o.interval_ns && p.last_time > profile_start_ns(&p) &&
	    (p.last_time - profile_start_ns(&p)) / o.interval_ns > 100000)
		die("timeline: --interval %.3f makes more than 100000 buckets (give a longer one)",
		    o.interval_ns / 1e9);
	view_timeline(&p, &q.filter, &o, stdout);
	profile_release(&p);
	return 0;
}
