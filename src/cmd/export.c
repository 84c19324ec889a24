/* export.c - stax export: write a recording in another tool's format. */
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "export/export.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const struct opt export_opts[] = {
	{ 'f', "format", "FORMAT", "pprof: profile.proto, gzip-compressed: go tool pprof,\n"
	  "Pyroscope. Functions (with source files), locations\n"
	  "(one per address; the functions inlined there are\n"
	  "its lines, innermost first, with source lines) and\n"
	  "mappings; values samples and cpu time;\n"
	  "thread name, pid and tid as sample labels\n"
	  "speedscope: speedscope's JSON file format, one profile\n"
	  "per thread (busiest first), samples in time order;\n"
	  "frames carry their source file (and line, with\n"
	  "--lines)\n"
	  "folded: 'comm;root;...;leaf COUNT' lines, the same as\n"
	  "'stax flame --folded' (FlameGraph, inferno)\n"
	  "chrome: Chrome trace event JSON (Perfetto,\n"
	  "chrome://tracing): per thread, consecutive samples\n"
	  "with the same frames are merged into one slice per frame", NULL },
	{ 'o', "output", "FILE", "write to FILE (a regular file, replaced only once the\n"
	  "output is complete; - for standard output)", NULL },
	OPT_GROUP(query_opts_input),
	{ QOPT_JSON, "json", NULL, NULL, NULL }, /* said not to apply */
	OPT_GROUP(query_opts_common),
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_export_spec = {
	"export",
"usage: stax export --format pprof|speedscope|folded|chrome [-o FILE] [FILE | -i FILE]\n"
"                   [--pid PID] [--tid TID] [--comm NAME] [--no-demangle]\n"
"                   [--no-inline] [--lines]\n"
"\n"
"Write the recording (the samples the filters keep) in a format other\n"
"tools read. Reads FILE (or -i FILE; stax.data when neither is given);\n"
"writes to standard output\n"
"unless -o is given (pprof, being gzip, needs -o or a pipe).\n"
,
	export_opts, NULL, 0,
};

int cmd_export(int argc, char **argv)
{
	struct query_opts q;
	struct profile p;
	const char *format = NULL, *output = NULL;
	struct cmd_output co;
	FILE *out = stdout;
	struct opt_parser op;
	struct err e = { 0, "" };
	int id, ret;

	query_init(&q);
	opt_begin(&op, &cmd_export_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (query_opt(&q, &op, id))
			continue;
		if (id == 'f')
			format = op.arg;
		else if (id == 'o')
			output = op.arg;
	}
	if (!format)
		die("export: which format? (use --format pprof, speedscope, folded or chrome)");
	if (strcmp(format, "pprof") && strcmp(format, "speedscope") && strcmp(format, "folded") &&
	    strcmp(format, "chrome"))
		die("export: unknown format '%s' (use pprof, speedscope, folded or chrome)", format);
	if (q.json)
		die("export: --json does not apply (the format is chosen with --format)");
	if (output && !strcmp(output, "-"))
		output = NULL; /* standard output */
	if (!strcmp(format, "pprof") && !output && isatty(1))
		die("export: pprof output is binary (use -o FILE or a pipe)");
	if (output) {
		/* before the work: a FIFO or device at FILE is refused at once */
		cmd_output_open(&co, "export", output, "wb");
		out = co.f;
	}
	query_load(&q, &p);
	if (!strcmp(format, "pprof")) {
		ret = export_pprof(&p, &q.filter, out, &e);
	} else if (!strcmp(format, "speedscope")) {
		ret = export_speedscope(&p, &q.filter, out, &e);
	} else if (!strcmp(format, "chrome")) {
		ret = export_chrome(&p, &q.filter, out, &e);
	} else {
		struct flame_opts fo = { .folded = true };
		view_flame(&p, &q.filter, &fo, out);
		ret = 0;
	}
	if (ret)
		error("%s", e.msg);
	/* standard output is checked at exit (main.c) */
	if (output && ret)
		cmd_output_abort(&co);
	else if (output)
		cmd_output_close(&co);
	profile_release(&p);
	return ret ? 1 : 0;
}
