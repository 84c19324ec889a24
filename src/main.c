/* main.c - the subcommand table and dispatch. */
#include "cmd/cmd.h"
#include "lib/util.h"
#include "lib/version.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Adding a subcommand: see the checklist in cmd/cmd.h. */
static const struct cmd commands[] = {
	{ "record", cmd_record, "sample a command or running processes into stax.data", NULL, &cmd_record_spec },
	{ "top", cmd_top, "functions by self and total samples", NULL, &cmd_top_spec },
	{ "flame", cmd_flame, "the call tree as text, or folded stacks", NULL, &cmd_flame_spec },
	{ "threads", cmd_threads, "samples and CPU time per thread", NULL, &cmd_threads_spec },
	{ "wakers", cmd_wakers, "who woke the threads that waited off the CPU", NULL, &cmd_wakers_spec },
	{ "info", cmd_info, "what was recorded and how good its stacks are", NULL, &cmd_info_spec },
	{ "script", cmd_script, "every sample with its stack, like perf script", NULL, &cmd_script_spec },
	{ "import", cmd_import, "convert a perf.data file into a stax recording", NULL, &cmd_import_spec },
	{ "doctor", cmd_doctor, "why stacks are incomplete, and what to do", NULL, &cmd_doctor_spec },
	{ "export", cmd_export, "write pprof, speedscope, folded or Chrome trace files", NULL, &cmd_export_spec },
	{ "diff", cmd_diff, "what changed between two recordings", NULL, &cmd_diff_spec },
	{ "serve", cmd_serve, "a local web page with the flamegraph, top and threads", NULL, &cmd_serve_spec },
	{ "wait", cmd_wait, "block until a running recording has N samples, S seconds or a function", NULL, &cmd_wait_spec },
	{ "annotate", cmd_annotate, "a function's instructions with samples and source lines", NULL, &cmd_annotate_spec },
	{ "callers", cmd_callers, "the functions that call a function, with shares", NULL, &cmd_callers_spec },
	{ "callees", cmd_callees, "what a function spends its time in: its callees", NULL, &cmd_callees_spec },
	{ "timeline", cmd_timeline, "samples per time bucket per thread", NULL, &cmd_timeline_spec },
	{ "symbolize", cmd_symbolize, "resolve a recording's addresses again, now", NULL, &cmd_symbolize_spec },
	{ "live", cmd_live, "the top functions of a running program, refreshed", NULL, &cmd_live_spec },
	{ "agent", cmd_agent, "record the whole machine always, into rotating recordings", NULL, &cmd_agent_spec },
	{ "help", cmd_help, "help on a command", cmd_help_help, NULL },
};

const struct cmd *cmd_table(size_t *n)
{
	*n = ARRAY_SIZE(commands);
	return commands;
}

void cmd_print_help(const struct cmd *c, FILE *f)
{
	if (c->spec)
		opt_print_help(c->spec, f);
	else
		fputs(c->help, f);
}

const struct cmd *cmd_find(const char *name)
{
	size_t i;
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

const char cmd_help_help[] =
"usage: stax help [COMMAND]\n"
"\n"
"Without a command, list the commands; with one, print its help (the same\n"
"as 'stax COMMAND --help').\n";

static void usage(FILE *f)
{
	size_t i;
	fputs("usage: stax COMMAND [OPTIONS]\n\n"
	      "stax is a sampling CPU profiler: record a program, then ask where its time went.\n\n"
	      "commands:\n", f);
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fputs("\nstart with: stax record -- ./your-program args; stax top; stax flame\n"
	      "'stax help COMMAND' tells more about one.\n", f);
}

int cmd_help(int argc, char **argv)
{
	const struct cmd *c;
	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(cmd_help_help, stdout);
		return 0;
	}
	c = cmd_find(argv[1]);
	if (!c)
		die("help: unknown command '%s' (see 'stax help')", argv[1]);
	cmd_print_help(c, stdout);
	return 0;
}

/* At exit, whichever way the command ended (a return from main, exit(),
 * die()): what it printed to standard output must have reached it. A
 * write error there (a full disk, /dev/full, a closed descriptor) is
 * "stax: error: cannot write output: ..." and exit status 1, as git's
 * run_builtin does; a reader that went away (EPIPE with SIGPIPE ignored)
 * is no error of ours, and says nothing. The status is 1 even when the
 * command has said why already. */
static void close_stdout(void)
{
	int e = 0;
	if (fflush(stdout) || ferror(stdout))
		e = errno ? errno : EIO;
	if (fclose(stdout) && !e && errno != EBADF)
		e = errno;
	if (!e || e == EPIPE)
		return;
	/* the command said so already (an exporter checks its stream) */
	if (!error_printed())
		fprintf(stderr, "stax: error: cannot write output: %s\n", strerror(e));
	fflush(stderr);
	_exit(1);
}

int main(int argc, char **argv)
{
	const struct cmd *c;
	atexit(close_stdout);
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("stax %s\n", stax_version);
		return 0;
	}
	c = cmd_find(argv[1]);
	if (!c)
		die("unknown command '%s' (see 'stax help')", argv[1]);
	return c->fn(argc - 1, argv + 1);
}
