/* cmd.h - subcommands. Each lives in its own file, parses its arguments
 * and orchestrates; the work is in the modules. Each returns the process
 * exit status. To add one: write cmd/NAME.c with cmd_NAME() and
 * cmd_NAME_spec (its option table, see opt.h), declare both here, add a
 * row to the table in main.c,
 * and document it in README.md and docs/stax.1 (tests/e2e/help.sh checks). */
#ifndef STAX_CMD_CMD_H
#define STAX_CMD_CMD_H

#include "cmd/opt.h"
#include "view/view.h"
#include "profile/filter.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *help;            /* help text written out, when no spec */
	const struct cmd_spec *spec; /* the option table stax help prints */
};

int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_threads(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_wait(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_callers(int argc, char **argv);
int cmd_callees(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_live(int argc, char **argv);
int cmd_wakers(int argc, char **argv);
int cmd_agent(int argc, char **argv);

extern const char cmd_help_help[];

extern const struct cmd_spec cmd_record_spec, cmd_top_spec, cmd_flame_spec, cmd_threads_spec,
	cmd_info_spec, cmd_script_spec, cmd_doctor_spec, cmd_import_spec, cmd_annotate_spec,
	cmd_wait_spec, cmd_export_spec, cmd_diff_spec, cmd_serve_spec, cmd_wakers_spec,
	cmd_callers_spec, cmd_callees_spec, cmd_timeline_spec, cmd_symbolize_spec, cmd_live_spec,
	cmd_agent_spec;

const struct cmd *cmd_find(const char *name);
/* Print c's help (from its option table when it has one). */
void cmd_print_help(const struct cmd *c, FILE *f);
const struct cmd *cmd_table(size_t *n);

/* Options every query command takes: -i FILE, --json, --pid, --tid,
 * --comm, --no-demangle, --no-inline, --lines, --no-late-frames, -h/--help. */
struct query_opts {
	const char *input;
	bool input_set;        /* given, by -i or as FILE */
	bool json;
	bool no_demangle;
	bool no_inline;        /* --no-inline: fold inlined functions into their caller */
	bool lines;            /* --lines: one row/frame per source line */
	bool python_only;      /* --python-only (top, flame, script): Python frames only */
	bool no_late;          /* --no-late-frames: leave out frames read after their sample */
	struct view_filter filter;
	struct prof_filter pf; /* --time, --focus, --exclude, --hide, --module */
	const char *cmd;       /* for messages of query_load */
};

void query_init(struct query_opts *q);

/* The options the query commands share, in groups so that a command
 * lists only what it takes: query_opts_input (-i FILE), query_opts_json
 * (--json), query_opts_common (--pid, --tid, --comm, --no-demangle,
 * --no-inline, --lines, --no-late-frames); OPT_GROUP(...) in its table,
 * and query_opt() first in its loop. query_opts_python is --python-only
 * (top, flame, script). Ids OPT_LONG + 100 and up belong to these shared
 * groups; a command's own long options use OPT_LONG + 0..99. */
extern const struct opt query_opts_input[], query_opts_json[], query_opts_common[], query_opts_python[];
enum {
	QOPT_JSON = OPT_LONG + 100, QOPT_NO_DEMANGLE, QOPT_NO_INLINE, QOPT_LINES, QOPT_NO_LATE,
	QOPT_PID, QOPT_TID, QOPT_COMM, QOPT_PYTHON_ONLY,
	QOPT_TIME, QOPT_FOCUS, QOPT_EXCLUDE, QOPT_HIDE, QOPT_MODULE, QOPT_SINCE, QOPT_UNTIL,
};
/* The filter group (cmd/filter.c): --time, --since, --until, --focus,
 * --exclude, --hide, --module; OPT_GROUP(query_opts_filter) in a query
 * command's table,
 * handled by query_opt() (or filter_opt() for a command without
 * query_opts, as serve). */
extern const struct opt query_opts_filter[];
bool filter_opt(struct prof_filter *f, const struct opt_parser *op, int id);
/* Handle option id of a shared group (its value in op->arg), or an
 * argument (OPT_ARG: the recording, as -i); false for anything else.
 * Dies on a bad value. */
bool query_opt(struct query_opts *q, const struct opt_parser *op, int id);
/* A number option's value from 0 to max; dies naming the option. */
uint64_t opt_u64(const struct opt_parser *op, uint64_t max);

/* Load and symbolize q->input; dies with the reader's message. Prints
 * the recording's warnings (query_warn). */
void query_load(const struct query_opts *q, struct profile *p);
/* Print "stax: warning: ..." for each of profile_warnings(p) whose kind
 * is not in skip (a mask of enum prof_warning_kind): the one place the
 * commands warn about a recording. */
void query_warn(const struct profile *p, unsigned skip);
/* profile_filter(p, f) when any is set; dies with the message. */
void filter_apply(const struct prof_filter *f, const char *cmd, struct profile *p);

#endif
