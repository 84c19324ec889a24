/* opt.c - option tables parsed with getopt_long (see opt.h). */
#include "cmd/opt.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

void opt_each(const struct opt *table, void (*fn)(const struct opt *o, void *arg), void *arg)
{
	const struct opt *o;
	for (o = table; o->id || o->group; o++) {
		if (o->group)
			opt_each(o->group, fn, arg);
		else
			fn(o, arg);
	}
}

static void add_opt(const struct opt *o, void *arg)
{
	struct opt_parser *op = arg;
	size_t n = strlen(op->so);
	if (op->nlo >= OPT_MAX || n + 3 >= sizeof(op->so))
		BUG("too many options in a command's table (raise OPT_MAX)");
	if (OPT_SHORT(o)) {
		op->so[n++] = (char)o->id;
		if (o->arg)
			op->so[n++] = ':';
		op->so[n] = 0;
	}
	if (o->lng)
		op->lo[op->nlo++] = (struct option){ o->lng, o->arg ? required_argument : no_argument,
						     NULL, o->id };
}

static const struct opt opt_help[] = {
	{ 'h', "help", NULL, "print this help", NULL },
	OPT_END,
};

void opt_begin(struct opt_parser *op, const struct cmd_spec *spec, int argc, char **argv)
{
	memset(op, 0, sizeof(*op));
	op->spec = spec;
	op->argc = argc;
	op->argv = argv;
	/* "+": stop at the first argument; "-": return arguments in order
	 * (no permutation, so argv[optind] is always the word getopt reads
	 * next); ":" reports a missing value apart from an unknown option */
	strcpy(op->so, spec->flags & OPT_STOP_AT_ARG ? "+:" : "-:");
	opt_each(opt_help, add_opt, op);
	opt_each(spec->opts, add_opt, op);
	op->lo[op->nlo] = (struct option){ 0 };
	optind = 0; /* glibc: start again, and read the "+" or "-" anew */
	opterr = 0; /* our messages, not getopt's */
}

static void bad(struct opt_parser *op, const char *fmt, const char *what) __attribute__((noreturn));
static void bad(struct opt_parser *op, const char *fmt, const char *what)
{
	char msg[256];
	snprintf(msg, sizeof(msg), fmt, what);
	die("%s: %s (see 'stax help %s')", op->spec->name, msg, op->spec->name);
}

/* The long option word (after "--", up to any "="), as a length. */
static size_t long_len(const char *word)
{
	const char *eq = strchr(word + 2, '=');
	return eq ? (size_t)(eq - word - 2) : strlen(word + 2);
}

int opt_next(struct opt_parser *op)
{
	int before, c, li;
	const char *word;
	char shortname[3] = "-?";

	op->arg = NULL;
	op->name = NULL;
	if (op->rest) {
		if (optind >= op->argc)
			return OPT_DONE;
		op->arg = op->argv[optind++];
		return OPT_ARG;
	}
	before = optind ? optind : 1;
	li = -1;
	c = getopt_long(op->argc, op->argv, op->so, op->lo, &li);
	word = before < op->argc ? op->argv[before] : "";
	if (c == -1) {
		/* "-" mode stops only at the end or after "--": what follows
		 * "--" are arguments */
		if (!(op->spec->flags & OPT_STOP_AT_ARG) && optind < op->argc) {
			op->rest = true;
			return opt_next(op);
		}
		return OPT_DONE;
	}
	if (c == OPT_ARG) {
		op->arg = optarg;
		return OPT_ARG;
	}
	if (c == '?' || c == ':') {
		bool islong = !strncmp(word, "--", 2);
		if (!islong) {
			shortname[1] = (char)optopt;
			word = shortname;
		}
		if (c == ':')
			bad(op, "option %s needs a value", islong ? op->argv[optind - 1] : word);
		if (islong && strchr(word, '=')) {
			/* "--flag=value": a flag named exactly, given a value? */
			size_t n = long_len(word);
			int i;
			for (i = 0; i < op->nlo; i++)
				if (strlen(op->lo[i].name) == n && !strncmp(op->lo[i].name, word + 2, n) &&
				    op->lo[i].has_arg == no_argument)
					bad(op, "option --%s takes no value", op->lo[i].name);
		}
		bad(op, "unknown option '%s'", word);
	}
	if (li >= 0) {
		/* getopt_long takes a unique prefix for the whole name: we do not */
		size_t n = long_len(word);
		if (strncmp(word, "--", 2) || n != strlen(op->lo[li].name) ||
		    strncmp(word + 2, op->lo[li].name, n))
			bad(op, "unknown option '%s'", word);
		snprintf(op->namebuf, sizeof(op->namebuf), "--%s", op->lo[li].name);
		op->name = op->namebuf;
	} else {
		snprintf(op->namebuf, sizeof(op->namebuf), "-%c", c);
		op->name = op->namebuf;
	}
	op->arg = optarg;
	if (c == 'h') {
		opt_print_help(op->spec, stdout);
		exit(0);
	}
	return c;
}

int opt_rest(const struct opt_parser *op)
{
	return optind;
}

/* "-F, --freq HZ" */
static void spec_text(const struct opt *o, char *buf, size_t size)
{
	size_t n = 0;
	buf[0] = 0;
	if (OPT_SHORT(o))
		n += snprintf(buf + n, size - n, "-%c%s", OPT_SHORT(o), o->lng ? ", " : "");
	if (o->lng && n < size)
		n += snprintf(buf + n, size - n, "--%s", o->lng);
	if (o->arg && n < size)
		snprintf(buf + n, size - n, " %s", o->arg);
}

static void print_opt(const struct opt *o, void *arg)
{
	FILE *f = arg;
	char spec[80];
	const char *h = o->help, *nl;
	if (!h)
		return; /* taken only to say why it does not apply: not listed */
	spec_text(o, spec, sizeof(spec));
	if (strlen(spec) > 16)
		fprintf(f, "  %s\n%20s", spec, "");
	else
		fprintf(f, "  %-18s", spec);
	for (;;) {
		nl = strchr(h, '\n');
		if (!nl) {
			fprintf(f, "%s\n", h);
			break;
		}
		fprintf(f, "%.*s\n%20s", (int)(nl - h), h, "");
		h = nl + 1;
	}
}

void opt_print_help(const struct cmd_spec *spec, FILE *f)
{
	fputs(spec->usage, f);
	if (spec->opts && (spec->opts->id || spec->opts->group)) {
		fputc('\n', f);
		opt_each(spec->opts, print_opt, f);
	}
	if (spec->after) {
		fputc('\n', f);
		fputs(spec->after, f);
	}
}
