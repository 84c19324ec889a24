/* opt.h - one option table per command: getopt_long parses it, `stax
 * help CMD` prints it, tests/e2e/help.sh checks that docs/stax.1 names
 * every option in it.
 *
 * A command describes itself with a struct cmd_spec (usage and text
 * around the options, and a table of struct opt), then loops:
 *
 *	struct opt_parser op;
 *	int id;
 *	opt_begin(&op, &cmd_top_spec, argc, argv);
 *	while ((id = opt_next(&op)) != OPT_DONE) {
 *		if (query_opt(&q, &op, id))   // the shared group
 *			continue;
 *		switch (id) { case 'n': ... op.arg ... }
 *	}
 *
 * Groups: a table may include another table with OPT_GROUP(table), so
 * options shared by several commands (query_opts_common in query.c) are
 * written once, listed in each command's help and handled in one place.
 * To give every query command a new shared group, define the table (and
 * its handler) beside query_opts_common and add one OPT_GROUP line to each
 * command's table.
 *
 * Rules: long names must be spelled out (getopt_long's unique prefixes
 * are refused, so adding an option never changes what an old command
 * line means); -h and --help print the help and exit 0 in every command;
 * errors are `stax: error: CMD: ...` and exit 1.
 */
#ifndef STAX_CMD_OPT_H
#define STAX_CMD_OPT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* What opt_next() returns besides an option's id. */
enum {
	OPT_DONE = -1,     /* no more options */
	OPT_ARG = 1,       /* a positional argument, in op->arg (not with OPT_STOP_AT_ARG) */
	OPT_LONG = 256,    /* first id free for options without a short letter */
};

struct opt {
	int id;                   /* what opt_next() returns: the short letter,
				   * or OPT_LONG + n */
	const char *lng;          /* long name without "--", or NULL */
	const char *arg;          /* the value's name in help ("HZ"); NULL:
				   * the option takes no value */
	const char *help;         /* for stax help: lines after the first are
				   * indented under it (an alias says "the same
				   * as ..."); NULL: not listed, taken only so
				   * that the command can say why it does not
				   * apply ('export --json') */
	const struct opt *group;  /* set: include this table here */
};
#define OPT_GROUP(table) { .group = (table) }
#define OPT_END { 0, NULL, NULL, NULL, NULL }
/* An option's short letter, from its id (0 when it has none). */
#define OPT_SHORT(o) ((o)->id > OPT_ARG && (o)->id < OPT_LONG ? (o)->id : 0)

#define OPT_STOP_AT_ARG 1u  /* the first positional argument ends the options
			     * (record: CMD's own options are CMD's) */

struct cmd_spec {
	const char *name;         /* "record" */
	const char *usage;        /* "usage: ..." and the text before the options */
	const struct opt *opts;   /* ends with OPT_END */
	const char *after;        /* text after the options, or NULL */
	unsigned flags;           /* OPT_STOP_AT_ARG */
};

#define OPT_MAX 64

struct opt_parser {
	const struct cmd_spec *spec;
	int argc;
	char **argv;
	const char *arg;          /* the value of the last option, or the argument */
	const char *name;         /* the last option as given: "-F" or "--freq" */
	bool rest;                /* past "--": the rest are arguments */
	/* getopt_long's tables, built from spec->opts */
	struct option lo[OPT_MAX + 2];
	char so[3 * OPT_MAX + 8];
	int nlo;
	char namebuf[64];
};

/* Start parsing argv[1..argc) (argv[0] is the command's name) against
 * spec's table; resets getopt's state, so commands can parse in turn. */
void opt_begin(struct opt_parser *op, const struct cmd_spec *spec, int argc, char **argv);
/* The next option's id (its value in op->arg), OPT_ARG for a positional
 * argument, or OPT_DONE. -h/--help prints the help and exits 0; an unknown
 * option, an abbreviated long one, a missing value or a value given to a
 * flag is an error (exit 1). */
int opt_next(struct opt_parser *op);
/* After OPT_DONE with OPT_STOP_AT_ARG: the index of the first argument
 * not parsed (argc when none). */
int opt_rest(const struct opt_parser *op);

/* Print spec's help: usage, then one entry per option of the table, then
 * the text after. */
void opt_print_help(const struct cmd_spec *spec, FILE *f);

/* Visit every option of spec's table, groups included (for tests and
 * the help listing). */
void opt_each(const struct opt *table, void (*fn)(const struct opt *o, void *arg), void *arg);

#endif
