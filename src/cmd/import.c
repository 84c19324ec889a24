/* import.c - stax import: convert perf.data into a stax recording. */
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "source/perfdata.h"
#include "store/reader.h"
#include "store/writer.h"
#include "lib/util.h"
#include "lib/version.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct opt import_opts[] = {
	{ 'o', "output", "FILE", "write FILE (default stax.data): a regular file, written\n"
	  "beside it and renamed into place once complete, so a\n"
	  "failed import leaves the previous FILE whole; - writes\n"
	  "the recording to standard output", NULL },
	{ 'i', "input", "PERF.DATA", "the perf.data file to read (default perf.data); also\n"
	  "PERF.DATA as an argument", NULL },
	{ 'e', "event", "NAME", "import the samples of this event (default: the first\n"
	  "sampling event in the file)", NULL },
	{ 'q', "quiet", NULL, "no summary", NULL },
	OPT_END,
};

const struct cmd_spec cmd_import_spec = {
	"import",
"usage: stax import [PERF.DATA] [-o FILE] [--event NAME] [-q]\n"
"\n"
"Convert what perf record wrote into a stax recording, with the symbols of\n"
"every sampled address appended (resolved now, from the binaries on this\n"
"machine, using the build-ids perf saved). Reads perf.data unless a file is\n"
"given; '-' reads perf's pipe format from standard input:\n"
"  perf record -e cpu-clock -g -o - -- ./prog | stax import - -o prog.data\n"
"Samples recorded with --call-graph dwarf are unwound by stax (DWARF, spliced\n"
"with the frame-pointer chain); -g chains are kept as the kernel wrote them.\n"
"The query commands also read perf.data directly: stax top -i perf.data.\n"
,
	import_opts, NULL, 0,
};

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_import(int argc, char **argv)
{
	struct perfdata_opts o = { 0 };
	struct perfdata_stats st;
	struct store_writer w;
	struct cmd_output co;
	const char *input = NULL, *output = "stax.data";
	char size[32];
	struct err err;
	bool quiet = false;
	struct opt_parser op;
	int id, e;

	opt_begin(&op, &cmd_import_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		switch (id) {
		case 'o':
			output = op.arg;
			break;
		case 'e':
			o.event = op.arg;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_ARG:
		case 'i':
			if (input)
				die("import: give one input file, not '%s' too (see 'stax help import')", op.arg);
			input = op.arg;
			break;
		}
	}
	if (!input)
		input = "perf.data";
	if (strcmp(input, "-") && access(input, R_OK))
		die("import: cannot read %s: %s (record one with perf record -g, or name the file)",
		    input, strerror(errno));
	if (strcmp(input, "-") && !perfdata_path_is_perfdata(input)) {
		char head[8] = { 0 };
		FILE *f = fopen(input, "rb");
		bool rec = f && fread(head, 1, sizeof(head), f) == sizeof(head) && store_is_recording(head, sizeof(head));
		if (f)
			fclose(f);
		if (rec)
			die("import: %s is a stax recording already (query it: stax top %s)", input, input);
		die("%s is not a stax recording or perf.data (it does not start with PERFILE2; import reads"
		    " what perf record wrote)", input);
	}
	if (same_file(input, output))
		die("import: the output %s is the input (choose another with -o)", output);
	if (!strcmp(output, "-") && isatty(1))
		die("import: a recording is binary (use -o FILE, or -o - into a pipe or file)");
	o.progress = show_progress();
	o.quiet = quiet;

	cmd_output_open(&co, "import", output, NULL);
	e = store_writer_open_fd(&w, co.r.fd);
	co.r.fd = -1; /* the writer has it, and closes it */
	if (e) {
		cmd_output_abort(&co);
		die("cannot create %s: %s (choose another path with -o)", output, strerror(-e));
	}
	store_put_meta(&w, "stax_version", stax_version);
	if (perfdata_import(input, &w, &o, &st, &err)) {
		store_writer_close(&w);
		cmd_output_abort(&co);
		die("%s", err.msg);
	}
	if (store_writer_close(&w)) {
		cmd_output_abort(&co);
		die("cannot write %s: %s (free some disk space)", output, strerror(w.err ? -w.err : EIO));
	}
	cmd_output_close(&co);
	if (quiet)
		return 0;
	format_size(size, sizeof(size), w.bytes);
	fprintf(stderr, "stax: imported %" PRIu64 " samples of %s (%s stacks) from %s%s into %s (%s)",
		st.samples, st.event ? st.event : "?", st.unwind ? st.unwind : "fp", input,
		st.pipe ? " (pipe format)" : "", strcmp(output, "-") ? output : "standard output", size);
	if (st.other_samples)
		fprintf(stderr, "; %" PRIu64 " samples of other events left out (choose with --event)",
			st.other_samples);
	if (strcmp(output, "-"))
		fprintf(stderr, ". Next: stax top -i %s, stax flame -i %s, stax info -i %s\n",
			output, output, output);
	else
		fprintf(stderr, "\n");
	if (st.lost)
		warn("%" PRIu64 " samples were lost while perf recorded (its ring buffer filled"
		     " up; perf record -m with more pages, or a lower -F, helps)", st.lost);
	if (st.bad)
		warn("%" PRIu64 " malformed records were skipped", st.bad);
	return 0;
}
