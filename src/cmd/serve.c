/* serve.c - stax serve: the local web view of a recording. */
#include "cmd/cmd.h"
#include "serve/pull.h"
#include "serve/serve.h"
#include "lib/util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

enum { SERVE_PORT = OPT_LONG, SERVE_NO_DEMANGLE, SERVE_PPROF, SERVE_LISTEN, SERVE_ALLOW_REMOTE };

static const struct opt serve_opts[] = {
	{ 'i', "input", "FILE", "the recording (default stax.data); also FILE as an argument", NULL },
	{ SERVE_PORT, "port", "N", "TCP port (default 8470; 0 picks a free one, printed\n"
	  "on standard error)", NULL },
	{ 'p', NULL, "N", "the same as --port", NULL },
	{ SERVE_NO_DEMANGLE, "no-demangle", NULL, "show C++ and Rust names as the binary has them", NULL },
	{ SERVE_PPROF, "pprof", "DIR", "serve the pull endpoint of Go's net/http/pprof over\n"
	  "the recordings in DIR instead of the page:\n"
	  "/debug/pprof/profile?seconds=N (see below)", NULL },
	{ SERVE_LISTEN, "listen", "ADDR:PORT", "with --pprof: the address (default 127.0.0.1 and\n"
	  "--port's port): 127.0.0.1, localhost, [::1], or with\n"
	  "--allow-remote any address of this machine (0.0.0.0:\n"
	  "all of them)", NULL },
	{ SERVE_ALLOW_REMOTE, "allow-remote", NULL, "with --pprof: allow a --listen address beyond\n"
	  "loopback (anyone who reaches it reads the profiles:\n"
	  "there is no authentication)", NULL },
	OPT_GROUP(query_opts_filter),
	OPT_END,
};

const struct cmd_spec cmd_serve_spec = {
	"serve",
"usage: stax serve [FILE | -i FILE] [--port N] [--no-demangle] [FILTERS]\n"
"       stax serve --pprof DIR [--listen ADDR:PORT [--allow-remote] | --port N]\n"
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
	serve_opts,
"With --pprof DIR it serves instead what Parca's and Pyroscope's scrapers\n"
"and go tool pprof read from a Go program (and what stax agent --listen\n"
"serves): GET /debug/pprof/profile?seconds=N waits N seconds (default 30,\n"
"1 to 3600; anything else is 400) and answers the samples the recordings\n"
"in DIR (*.data, the file being written included) took in those seconds,\n"
"by the wall clock, as a gzip'd profile.proto (application/octet-stream);\n"
"&pid=PID keeps one process, &comm=NAME the threads of that name.\n"
"GET /debug/pprof/ lists the endpoint and the recordings. The Host header\n"
"must name this server as above (with --allow-remote also an address of\n"
"this machine, or its host name), else 403; at most 16 connections at\n"
"once; one profile is built at a time, and a request not answered within\n"
"60 s of its window's end gets 503. For example:\n"
"  stax serve --pprof /var/lib/stax --listen 127.0.0.1:6060 &\n"
"  go tool pprof -top http://127.0.0.1:6060/debug/pprof/profile?seconds=10\n",
	0,
};

/* stax serve --pprof DIR: until SIGINT or SIGTERM. */
static int serve_pprof(struct pull_opts *po, unsigned port, bool port_set)
{
	struct pull_server *s;
	char listen_buf[32];
	sigset_t set;
	struct err e;
	int sig;

	if (!po->listen) {
		snprintf(listen_buf, sizeof(listen_buf), "127.0.0.1:%u", port);
		po->listen = listen_buf;
	} else if (port_set) {
		die("serve: --port and --listen both give the port (give one)");
	}
	/* only sigwait() below sees the stop signals */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (!(s = pull_start(po, &e))) {
		error("serve: %s", e.msg);
		return 1;
	}
	note("serving the CPU profiles of %s at http://%s/debug/pprof/ (go tool pprof"
	     " http://%s/debug/pprof/profile?seconds=30; Ctrl-C to stop)", po->dir, pull_address(s),
	     pull_address(s));
	sigwait(&set, &sig);
	pull_stop(s);
	return 0;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_opts o = { .path = "stax.data", .port = 8470, .demangle = true };
	struct pull_opts po = { 0 };
	bool input_set = false, port_set = false;
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
			port_set = true;
			break;
		}
		case SERVE_NO_DEMANGLE:
			o.demangle = false;
			po.no_demangle = true;
			break;
		case SERVE_PPROF:
			po.dir = op.arg;
			break;
		case SERVE_LISTEN:
			po.listen = op.arg;
			break;
		case SERVE_ALLOW_REMOTE:
			po.allow_remote = true;
			break;
		default:
			filter_opt(&o.filter, &op, id);
			break;
		}
	}
	if (po.dir) {
		if (input_set)
			die("serve: --pprof DIR serves a directory of recordings, not '%s' (give one of them)", o.path);
		if (profile_filter_active(&o.filter) || o.filter.since_ns || o.filter.until_ns)
			die("serve: --pprof takes no filters (a request says its seconds, pid= and comm=)");
		return serve_pprof(&po, o.port, port_set);
	}
	if (po.listen || po.allow_remote)
		die("serve: --listen and --allow-remote are for --pprof (the page is served on 127.0.0.1"
		    " only: give --port)");
	if (serve_run(&o, &e)) {
		error("%s", e.msg);
		return 1;
	}
	return 0;
}
