/* serve.c - stax serve: the local web view of a recording. */
#include "cmd/cmd.h"
#include "serve/serve.h"
#include "lib/util.h"

#include <string.h>

enum { SERVE_PORT = OPT_LONG, SERVE_NO_DEMANGLE };

static const struct opt serve_opts[] = {
	{ 'i', "input", "FILE", "the recording (default stax.data); also FILE as an argument", NULL },
	{ SERVE_PORT, "port", "N", "TCP port (default 8470; 0 picks a free one, printed\n"
	  "on standard error)", NULL },
	{ 'p', NULL, "N", "the same as --port", NULL },
	{ SERVE_NO_DEMANGLE, "no-demangle", NULL, "show C++ and Rust names as the binary has them", NULL },
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_serve_spec = {
	"serve",
"usage: stax serve [FILE | -i FILE] [--port N] [--no-demangle] [FILTERS]\n"
"\n"
"Serve a web page about the recording at http://127.0.0.1:PORT/ (loopback\n"
"only; the page loads nothing from elsewhere): the interactive flamegraph,\n"
"the top functions, the threads (click one to show only it; off-CPU time\n"
"by reason for a recording made with --off-cpu, whose flamegraph can then\n"
"show CPU, off-CPU or wall time), and for a function clicked in the table\n"
"or the flamegraph its annotated disassembly (stax annotate; the sampled\n"
"addresses when the binary is gone).\n"
"Above the graph a timeline shows each thread's samples over time; drag\n"
"across it to select a time range, and the graph and the tables show only\n"
"that range. Beside the graph, the callers and callees of the function\n"
"clicked (as stax callers / callees). The graph is drawn as a flame graph\n"
"(root at the bottom) or an icicle (root at the top), and fits the window:\n"
"deep stacks scroll inside its panel, which opens with the root in view.\n"
"The recording is read again whenever it changes, so the page follows a\n"
"recording that is still running; its warnings (still being recorded,\n"
"truncated, damaged, lossy) show on the page and here. Only requests for\n"
"127.0.0.1, localhost or [::1] with the port are answered (another Host\n"
"header gets 403, so a page elsewhere cannot read the profile); at most\n"
"64 connections at once, an idle one closed after 30 s. Ctrl-C stops\n"
"the server.\n"
,
	serve_opts, NULL, 0,
};

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { .path = "stax.data", .port = 8470, .demangle = true };
	bool input_set = false;
	struct opt_parser op;
	struct err e;
	int id;

	opt_begin(&op, &cmd_serve_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		switch (id) {
		case OPT_ARG:
		case 'i':
			if (input_set)
				die("serve: two recordings given ('%s' and '%s'; see 'stax help serve')", o.path, op.arg);
			o.path = op.arg;
			input_set = true;
			break;
		case 'p':
		case SERVE_PORT: {
			uint64_t n;
			if (parse_u64(op.arg, &n) || n > 65535)
				die("serve: --port needs a port number from 0 to 65535, not '%s'", op.arg);
			o.port = (unsigned)n;
			break;
		}
		case SERVE_NO_DEMANGLE:
			o.demangle = false;
			break;
		default:
			filter_opt(&o.filter, &op, id);
			break;
		}
	}
	if (serve_run(&o, &e)) {
		error("%s", e.msg);
		return 1;
	}
	return 0;
}
