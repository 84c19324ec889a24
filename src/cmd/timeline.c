/* timeline.c - stax timeline: samples per time bucket per thread. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_timeline_help[] =
"usage: stax timeline [FILE | -i FILE] [-b BUCKETS | --interval S] [--hottest] [--json]\n"
"                     [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"Samples per time bucket per thread: one row per thread (NAME/TID, busiest\n"
"first) with its samples and a mark per bucket (' .:-=+*#%@', darker for\n"
"more samples; the scale is the fullest bucket of any thread). Buckets\n"
"start at the start of the recording, the times --time takes. Reads FILE\n"
"(or -i FILE; stax.data when neither is given).\n"
"\n"
"  -b, --buckets N   N buckets over the recording (default 60)\n"
"  --interval S      buckets of S seconds instead\n"
"  --hottest         under each thread, the function with the most self\n"
"                    samples in each bucket that has samples\n"
"  --json            print JSON: per thread its counts per bucket (and\n"
"                    with --hottest, the hottest function or null)\n"
"  --no-inline       fold inlined functions into the function holding their\n"
"                    code (by default each is a frame of its own)\n"
"  --pid, --tid, --comm  keep only samples of that process, thread or name\n"
FILTER_HELP;

int cmd_timeline(int argc, char **argv)
{
	struct query_opts q;
	struct timeline_opts o = { 0 };
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("timeline", argv[i]);
		if (query_option(&q, "timeline", argc, argv, &i))
			continue;
		if (query_is_file_arg(argv[i])) {
			query_file_arg(&q, "timeline", argv[i]);
			continue;
		}
		if (!strcmp(argv[i], "-b") || !strcmp(argv[i], "--buckets")) {
			uint64_t n;
			const char *v = cmd_value("timeline", argc, argv, &i);
			if (parse_u64(v, &n) || !n || n > 100000)
				die("timeline: %s needs a number from 1 to 100000, not '%s'", argv[i - 1], v);
			o.buckets = (size_t)n;
		} else if (!strcmp(argv[i], "--interval")) {
			const char *v = cmd_value("timeline", argc, argv, &i);
			char *end;
			double s = strtod(v, &end);
			if (*end || end == v || !(s >= 0.001) || s > 1e6)
				die("timeline: --interval needs seconds from 0.001, not '%s'", v);
			o.interval_ns = (uint64_t)(s * 1e9);
		} else if (!strcmp(argv[i], "--hottest")) {
			o.hottest = true;
		} else {
			cmd_bad_option("timeline", argv[i]);
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
