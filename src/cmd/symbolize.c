/* symbolize.c - stax symbolize: resolve a recording's addresses again. */
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "profile/resymbolize.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char cmd_symbolize_help[] =
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
"\n"
"  -o FILE           write the new recording to FILE, leaving the input as\n"
"                    it is\n";

int cmd_symbolize(int argc, char **argv)
{
	const char *in = "stax.data", *out = NULL;
	bool in_set = false;
	struct cmd_output co;
	struct resym_stats st;
	char err[1024];
	int i, fd;

	for (i = 1; i < argc; i++) {
		const char *file = NULL;
		cmd_maybe_help("symbolize", argv[i]);
		if (!strcmp(argv[i], "-i") || !strcmp(argv[i], "--input"))
			file = cmd_value("symbolize", argc, argv, &i);
		else if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output"))
			out = cmd_value("symbolize", argc, argv, &i);
		else if (query_is_file_arg(argv[i]) && strcmp(argv[i], "-"))
			file = argv[i];
		else
			cmd_bad_option("symbolize", argv[i]);
		if (file) {
			if (in_set)
				die("symbolize: two recordings given ('%s' and '%s'; see 'stax help symbolize')",
				    in, file);
			in = file;
			in_set = true;
		}
	}
	if (out && !strcmp(out, "-"))
		die("symbolize: -o - is not supported (give a file)");
	cmd_output_open(&co, "symbolize", out ? out : in, NULL);
	fd = co.r.fd;
	co.r.fd = -1; /* the store writer closes it */
	if (profile_resymbolize(in, fd, &st, err, sizeof(err))) {
		cmd_output_abort(&co);
		die("symbolize: %s", err);
	}
	cmd_output_close(&co);
	note("symbolized %s: %" PRIu64 " of %" PRIu64 " user-space addresses named (%" PRIu64 " before)%s%s",
	     in, st.known_after, st.addrs, st.known_before, out ? "; wrote " : "", out ? out : "");
	return 0;
}
