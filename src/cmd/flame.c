/* flame.c - stax flame: the call tree as text, or folded stacks. */
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "view/flame_svg.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FL_FOLDED = OPT_LONG, FL_SVG, FL_TITLE, FL_THRESHOLD, FL_OFF_CPU, FL_WALL, FL_KERNEL_WAITS, FL_INVERTED };

static const struct opt flame_opts[] = {
	{ FL_FOLDED, "folded", NULL, "print 'comm;root;...;leaf COUNT' lines, the format\n"
	  "FlameGraph's flamegraph.pl and speedscope read; kernel\n"
	  "frames end in _[k]", NULL },
	{ FL_SVG, "svg", NULL, "write an interactive flamegraph (SVG with its own script,\n"
	  "no outside files): click a frame to zoom, Search or\n"
	  "Ctrl-F to highlight a regular expression, hover for\n"
	  "samples and percent. Colours: user code warm, kernel\n"
	  "blue-green, inlined functions yellow-green, threads\n"
	  "grey, off-CPU frames blue (the legend lists them).\n"
	  "With --off-cpu or --wall, widths are time\n"
	  "Frames narrower than --threshold (default 0.1 pixel)\n"
	  "are merged and the subtitle says how many", NULL },
	{ 'o', "output", "FILE", "write to FILE instead of standard output (a regular\n"
	  "file, replaced only once the output is complete)", NULL },
	{ FL_TITLE, "title", "TEXT", "the flamegraph's title", NULL },
	{ 'd', "depth", "DEPTH", "show at most DEPTH levels", NULL },
	{ FL_THRESHOLD, "threshold", "PCT", "hide subtrees under PCT percent (default 0.5)", NULL },
	{ FL_OFF_CPU, "off-cpu", NULL, "where threads waited (record --off-cpu): weights are\n"
	  "milliseconds off the CPU, each stack ends in a frame\n"
	  "[off-cpu: REASON] below its innermost user-space frame\n"
	  "(the kernel's frames, the system call and the\n"
	  "scheduler, are folded into it); --folded counts\n"
	  "microseconds", NULL },
	{ FL_WALL, "wall", NULL, "wall time per thread: the root is NAME/TID, on-CPU\n"
	  "samples count their period as time, off-CPU intervals\n"
	  "their duration (ending in [off-cpu: REASON], folded\n"
	  "as with --off-cpu)", NULL },
	{ FL_KERNEL_WAITS, "kernel-waits", NULL, "with --off-cpu or --wall, the off-CPU stacks as\n"
	  "recorded: [off-cpu: REASON] below their kernel frames", NULL },
	{ FL_INVERTED, "inverted", NULL, "the inverted tree: the functions that were running\n"
	  "first, each with its callers under it (and the\n"
	  "thread's name last); --folded lines then read leaf\n"
	  "first", NULL },
	OPT_GROUP(query_opts_python),
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_flame_spec = {
	"flame",
"usage: stax flame [FILE | -i FILE] [--folded | --svg [-o FILE] [--title TEXT]]\n"
"                  [-d DEPTH] [--threshold PCT] [--inverted] [--json]\n"
"                  [--off-cpu | --wall] [--kernel-waits]\n"
"                  [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                  [--no-inline] [--lines] [--python-only]\n"
"\n"
"The call tree, root first: each line is a frame with the share and count\n"
"of samples that passed through it, children indented under their caller,\n"
"hottest first. The first level is the thread's command name. Reads FILE\n"
"(or -i FILE; stax.data when neither is given).\n"
,
	flame_opts, NULL, 0,
};

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
	struct opt_parser op;
	int id;

	query_init(&q);
	opt_begin(&op, &cmd_flame_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (query_opt(&q, &op, id))
			continue;
		switch (id) {
		case FL_FOLDED:
			o.folded = true;
			break;
		case FL_OFF_CPU:
			o.weight = FLAME_OFFCPU;
			break;
		case FL_WALL:
			o.weight = FLAME_WALL;
			break;
		case FL_KERNEL_WAITS:
			o.kernel_waits = so.kernel_waits = true;
			break;
		case FL_INVERTED:
			o.inverted = so.inverted = true;
			break;
		case FL_SVG:
			svg = true;
			break;
		case 'o':
			output = op.arg;
			break;
		case FL_TITLE:
			so.title = op.arg;
			break;
		case 'd':
			o.max_depth = (size_t)opt_u64(&op, SIZE_MAX);
			break;
		case FL_THRESHOLD: {
			char *end;
			o.threshold = strtod(op.arg, &end);
			if (*end || o.threshold < 0 || o.threshold > 100)
				die("flame: --threshold needs a percentage from 0 to 100, not '%s'", op.arg);
			threshold_set = true;
			break;
		}
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
