/* symbolize.c - stax symbolize: resolve a recording's addresses again. */
#include "cmd/cmd.h"
#include "source/perfdata.h"
#include "cmd/output.h"
#include "profile/resymbolize.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const struct opt symbolize_opts[] = {
	{ 'i', "input", "FILE", "the recording (default stax.data); also FILE as an argument", NULL },
	{ 'o', "output", "FILE", "write the new recording to FILE, leaving the input as\n"
	  "it is", NULL },
	OPT_END,
};

const struct cmd_spec cmd_symbolize_spec = {
	"symbolize",
"usage: stax symbolize [FILE | -i FILE] [-o OUT]\n"
"\n"
"Resolve the recording's user-space addresses again, from the binaries,\n"
"debug files (by build-id, .gnu_debuglink) and debuginfod servers\n"
"(DEBUGINFOD_URLS) available now, and replace its symbols: for a\n"
"recording made before debug symbols were installed, or read on another\n"
"machine that has the binaries. Kernel symbols are kept as recorded. The\n"
"new recording is written under a temporary name beside FILE and renamed\n"
"over it once complete (or written to OUT), so a failure or a crash leaves\n"
"FILE as it was. A recording still being written, one without an end\n"
"chunk (killed: its addresses are resolved at every query anyway) and one\n"
"with damaged chunks are refused. Reads FILE (or -i FILE; stax.data when\n"
"neither is given).\n"
,
	symbolize_opts,
	NULL,
	0,
};

int cmd_symbolize(int argc, char **argv)
{
	const char *in = "stax.data", *out = NULL;
	bool in_set = false;
	struct cmd_output co;
	struct resym_stats st;
	struct err err;
	struct opt_parser op;
	int id, fd;

	opt_begin(&op, &cmd_symbolize_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		switch (id) {
		case 'o':
			out = op.arg;
			break;
		case OPT_ARG:
			/* standard input cannot be rewritten in place */
			if (!strcmp(op.arg, "-"))
				die("symbolize: '-' (standard input) cannot be symbolized in place (give a file)");
			/* fall through */
		case 'i':
			if (in_set)
				die("symbolize: two recordings given ('%s' and '%s'; see 'stax help symbolize')",
				    in, op.arg);
			in = op.arg;
			in_set = true;
			break;
		}
	}
	if (out && !strcmp(out, "-"))
		die("symbolize: -o - is not supported (give a file)");
	if (perfdata_path_is_perfdata(in))
		die("symbolize: %s is a perf.data file: stax names its addresses whenever it reads it"
		    " (stax top -i %s), and stax import %s -o FILE.data keeps those names in a stax"
		    " recording; symbolize rewrites stax recordings", in, in, in);
	cmd_output_open(&co, "symbolize", out ? out : in, NULL);
	fd = co.r.fd;
	co.r.fd = -1; /* the store writer closes it */
	if (profile_resymbolize(in, fd, &st, &err)) {
		cmd_output_abort(&co);
		die("symbolize: %s", err.msg);
	}
	cmd_output_close(&co);
	note("symbolized %s: %" PRIu64 " of %" PRIu64 " user-space addresses named (%" PRIu64 " before)%s%s",
	     in, st.known_after, st.addrs, st.known_before, out ? "; wrote " : "", out ? out : "");
	return 0;
}
