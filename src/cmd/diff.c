/* diff.c - stax diff: what changed between two recordings. */
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "view/diff.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIFF_SVG = OPT_LONG, DIFF_FAIL_ABOVE };

static const struct opt diff_opts[] = {
	{ 'n', NULL, "N", "show N rows per table (default 20, 0 for all)", NULL },
	{ DIFF_SVG, "svg", NULL, "write a differential flamegraph instead: widths from\n"
	  "NEW, red where a frame's share grew, blue where it\n"
	  "shrank (deeper colour, larger change)", NULL },
	{ 'o', "output", "FILE", "write to FILE instead of standard output (a regular\n"
	  "file, replaced only once the output is complete)", NULL },
	{ DIFF_FAIL_ABOVE, "fail-above", "PCT", "exit 1 when a function's self share grew by more than\n"
	  "PCT points (for CI: a regression check)", NULL },
	{ 'i', "input", "FILE", NULL, NULL }, /* said not to apply */
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_diff_spec = {
	"diff",
"usage: stax diff BASE.data NEW.data [-n N] [--json] [--svg [-o FILE]]\n"
"                 [--fail-above PCT] [--pid PID] [--tid TID] [--comm NAME]\n"
"\n"
"Compare two recordings (stax or perf.data files): the functions whose\n"
"share of the samples changed, largest change first, then the stacks.\n"
"Shares are percentages of each recording's own samples, so recordings of\n"
"different length compare; changes are percentage points (new - base).\n"
"SELF is time in the function itself, TOTAL time with it on the stack.\n"
"Functions and stacks match by name, so two builds of a program compare.\n"
,
	diff_opts, NULL, 0,
};

int cmd_diff(int argc, char **argv)
{
	struct query_opts q;
	struct diff_opts o = { 20, false };
	struct svg_opts so = { .title = "Differential Flame Graph", .min_pct = -1, .diff = true };
	struct profile base, now;
	const char *files[2] = { NULL, NULL }, *output = NULL, *grew_name = NULL;
	double fail_above = -1, grew;
	bool svg = false;
	struct cmd_output co;
	FILE *out = stdout;
	char sub[600];
	struct opt_parser op;
	int id, nfiles = 0, rc;

	query_init(&q);
	opt_begin(&op, &cmd_diff_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		switch (id) {
		case OPT_ARG:
			if (nfiles == 2)
				die("diff: too many files: '%s' (give BASE.data and NEW.data)", op.arg);
			files[nfiles++] = op.arg;
			continue;
		case 'i':
			die("diff: give the two recordings as arguments, not with -i (stax diff BASE.data NEW.data)");
		case 'n':
			o.limit = (size_t)opt_u64(&op, SIZE_MAX);
			continue;
		case DIFF_SVG:
			svg = true;
			continue;
		case 'o':
			output = op.arg;
			continue;
		case DIFF_FAIL_ABOVE: {
			char *end;
			fail_above = strtod(op.arg, &end);
			if (*end || end == op.arg || fail_above < 0 || fail_above > 100)
				die("diff: --fail-above needs percentage points from 0 to 100, not '%s'", op.arg);
			continue;
		}
		}
		query_opt(&q, &op, id);
	}
	if (nfiles != 2)
		die("diff: needs two recordings (stax diff BASE.data NEW.data)");
	if (svg && q.json)
		die("diff: --svg cannot be combined with --json (pick one output)");
	o.json = q.json;
	if (output && !strcmp(output, "-"))
		output = NULL; /* standard output */
	if (output) {
		/* before the work: a FIFO or device at FILE is refused at once */
		cmd_output_open(&co, "diff", output, "w");
		out = co.f;
	}
	q.input = files[0];
	query_load(&q, &base);
	q.input = files[1];
	query_load(&q, &now);
	if (svg) {
		FILE *null = fopen("/dev/null", "w");
		struct diff_opts quiet = { 1, false };
		grew = view_diff(&base, &now, &q.filter, &quiet, null ? null : stdout, &grew_name);
		if (null)
			fclose(null);
		snprintf(sub, sizeof(sub), "%s -> %s", path_base(files[0]), path_base(files[1]));
		so.subtitle = sub;
		view_diff_svg(&base, &now, &q.filter, &so, out);
	} else {
		grew = view_diff(&base, &now, &q.filter, &o, out, &grew_name);
	}
	if (output)
		cmd_output_close(&co);
	rc = 0;
	if (fail_above >= 0 && grew > fail_above) {
		fprintf(stderr, "stax: diff: %s grew by %.2f points of self share (more than --fail-above %g)\n",
			grew_name ? grew_name : "a function", grew, fail_above);
		rc = 1;
	}
	profile_release(&base);
	profile_release(&now);
	return rc;
}
