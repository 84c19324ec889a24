/* flame.c - stax flame: the call tree as text, or folded stacks. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_flame_help[] =
"usage: stax flame [-i FILE] [--folded] [-d DEPTH] [--threshold PCT] [--json]\n"
"                  [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"\n"
"The call tree, root first: each line is a frame with the share and count\n"
"of samples that passed through it, children indented under their caller,\n"
"hottest first. The first level is the thread's command name.\n"
"\n"
"  --folded          print 'comm;root;...;leaf COUNT' lines, the format\n"
"                    FlameGraph's flamegraph.pl and speedscope read; kernel\n"
"                    frames end in _[k]\n"
"  -d DEPTH          show at most DEPTH levels\n"
"  --threshold PCT   hide subtrees under PCT percent (default 0.5)\n"
"  --json            print the tree as JSON\n"
"  --pid, --tid, --comm  keep only samples of that process, thread or name\n";

int cmd_flame(int argc, char **argv)
{
	struct query_opts q;
	struct flame_opts o = { false, false, 0, 0.5 };
	struct profile p;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("flame", argv[i]);
		if (query_option(&q, "flame", argc, argv, &i))
			continue;
		if (!strcmp(argv[i], "--folded")) {
			o.folded = true;
		} else if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "--depth")) {
			uint64_t n;
			const char *v = cmd_value("flame", argc, argv, &i);
			if (parse_u64(v, &n))
				die("flame: -d needs a number, not '%s' (see 'stax help flame')", v);
			o.max_depth = (size_t)n;
		} else if (!strcmp(argv[i], "--threshold")) {
			const char *v = cmd_value("flame", argc, argv, &i);
			char *end;
			o.threshold = strtod(v, &end);
			if (*end || o.threshold < 0 || o.threshold > 100)
				die("flame: --threshold needs a percentage from 0 to 100, not '%s'", v);
		} else {
			cmd_bad_option("flame", argv[i]);
		}
	}
	o.json = q.json;
	query_load(&q, &p);
	view_flame(&p, &q.filter, &o, stdout);
	profile_release(&p);
	return 0;
}
