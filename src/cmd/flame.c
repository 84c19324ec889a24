/* flame.c - stax flame: the call tree as text, or folded stacks. */
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "view/flame_svg.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_flame_help[] =
"usage: stax flame [FILE | -i FILE] [--folded | --svg [-o FILE] [--title TEXT]]\n"
"                  [-d DEPTH] [--threshold PCT] [--inverted] [--json]\n"
"                  [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                  [--no-inline] [--lines] [--python-only]\n"
"\n"
"The call tree, root first: each line is a frame with the share and count\n"
"of samples that passed through it, children indented under their caller,\n"
"hottest first. The first level is the thread's command name. Reads FILE\n"
"(or -i FILE; stax.data when neither is given).\n"
"\n"
"  --folded          print 'comm;root;...;leaf COUNT' lines, the format\n"
"                    FlameGraph's flamegraph.pl and speedscope read; kernel\n"
"                    frames end in _[k]\n"
"  --svg             write an interactive flamegraph (SVG with its own script,\n"
"                    no outside files): click a frame to zoom, Search or\n"
"                    Ctrl-F to highlight a regular expression, hover for\n"
"                    samples and percent. Colours: user code warm, kernel\n"
"                    blue-green, inlined functions yellow-green, threads\n"
"                    grey, off-CPU frames blue (the legend lists them).\n"
"                    With --off-cpu or --wall, widths are time\n"
"                    Frames narrower than --threshold (default 0.1 pixel)\n"
"                    are merged and the subtitle says how many\n"
"  -o FILE           write to FILE instead of standard output (a regular\n"
"                    file, replaced only once the output is complete)\n"
"  --title TEXT      the flamegraph's title\n"
"  -d DEPTH          show at most DEPTH levels\n"
"  --threshold PCT   hide subtrees under PCT percent (default 0.5)\n"
"  --off-cpu         where threads waited (record --off-cpu): weights are\n"
"                    milliseconds off the CPU, each stack ends in a frame\n"
"                    [off-cpu: REASON]; --folded counts microseconds\n"
"  --wall            wall time per thread: the root is NAME/TID, on-CPU\n"
"                    samples count their period as time, off-CPU intervals\n"
"                    their duration (ending in [off-cpu: REASON])\n"
"  --inverted        the inverted tree: the functions that were running\n"
"                    first, each with its callers under it (and the\n"
"                    thread's name last); --folded lines then read leaf\n"
"                    first\n"
"  --json            print the tree as JSON\n"
"  --no-inline       fold inlined functions into the function holding their\n"
"                    code (by default each is a frame of its own)\n"
"  --lines           one frame per source line: 'name (file.c:LINE)'\n"
"  --python-only     only Python frames (python -X perf or -X perf_jit), the\n"
"                    way py-spy shows them: the C frames between them are\n"
"                    folded away (by default both are shown)\n"
"  --pid, --tid, --comm  keep only samples of that process, thread or name\n"
FILTER_HELP;

int cmd_flame(int argc, char **argv)
{
	struct query_opts q;
	struct flame_opts o = { .threshold = 0.5 };
	struct svg_opts so = { .min_pct = -1 };
	struct profile p;
	const char *output = NULL;
	bool svg = false, threshold_set = false;
	struct cmd_output co;
	FILE *out = stdout;
	int i;

	query_init(&q);
	for (i = 1; i < argc; i++) {
		cmd_maybe_help("flame", argv[i]);
		if (query_option(&q, "flame", argc, argv, &i))
			continue;
		if (query_is_file_arg(argv[i])) {
			query_file_arg(&q, "flame", argv[i]);
			continue;
		}
		if (!strcmp(argv[i], "--folded")) {
			o.folded = true;
		} else if (!strcmp(argv[i], "--python-only")) {
			q.python_only = true;
		} else if (!strcmp(argv[i], "--off-cpu")) {
			o.weight = FLAME_OFFCPU;
		} else if (!strcmp(argv[i], "--wall")) {
			o.weight = FLAME_WALL;
		} else if (!strcmp(argv[i], "--inverted")) {
			o.inverted = so.inverted = true;
		} else if (!strcmp(argv[i], "--svg")) {
			svg = true;
		} else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
			output = cmd_value("flame", argc, argv, &i);
		} else if (!strcmp(argv[i], "--title")) {
			so.title = cmd_value("flame", argc, argv, &i);
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
			threshold_set = true;
		} else {
			cmd_bad_option("flame", argv[i]);
		}
	}
	o.json = q.json;
	if (svg && (o.folded || o.json))
		die("flame: --svg cannot be combined with --folded or --json (pick one output)");
	if (threshold_set)
		so.min_pct = o.threshold;
	if (output && !strcmp(output, "-"))
		output = NULL; /* standard output */
	if (output) {
		/* before the work: a FIFO or device at FILE is refused at once */
		cmd_output_open(&co, "flame", output, "w");
		out = co.f;
	}
	query_load(&q, &p);
	if (svg) {
		size_t merged;
		so.weight = o.weight;
		merged = view_flame_svg(&p, &q.filter, &so, out);
		if (output) {
			cmd_output_close(&co);
			note("wrote %s (%zu frames merged as too narrow to see)", output, merged);
		}
	} else {
		view_flame(&p, &q.filter, &o, out);
		if (output)
			cmd_output_close(&co);
	}
	profile_release(&p);
	return 0;
}
