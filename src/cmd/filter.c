/* filter.c - the options of the filter group every query command takes:
 * --time, --focus, --exclude, --hide, --module (the work is in
 * profile/filter.c). */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <string.h>

const struct opt query_opts_filter[] = {
	{ QOPT_TIME, "time", "START,END", "only samples from START to END seconds after the\n"
	  "recording started (either may be empty), or N%,M% of\n"
	  "its duration; relative, unlike perf report --time,\n"
	  "which takes absolute perf clock timestamps", NULL },
	{ QOPT_FOCUS, "focus", "REGEX", "only stacks through a function matching REGEX, each\n"
	  "re-rooted at its outermost match", NULL },
	{ QOPT_EXCLUDE, "exclude", "REGEX", "drop stacks through a function matching REGEX", NULL },
	{ QOPT_HIDE, "hide", "REGEX", "remove frames matching REGEX, keep their stacks", NULL },
	{ QOPT_MODULE, "module", "NAME", "only samples whose leaf frame is in module NAME (or\n"
	  "NAME.so.*: liblzma for liblzma.so.5.4.1)", NULL },
	OPT_END,
};

bool filter_opt(struct prof_filter *f, const struct opt_parser *op, int id)
{
	const char *cmd = op->spec->name;
	struct err err;

	switch (id) {
	case QOPT_TIME:
		if (profile_filter_parse_time(f, op->arg, &err))
			die("%s: %s (see 'stax help %s')", cmd, err.msg, cmd);
		break;
	case QOPT_FOCUS:
		f->focus = op->arg;
		break;
	case QOPT_EXCLUDE:
		f->exclude = op->arg;
		break;
	case QOPT_HIDE:
		f->hide = op->arg;
		break;
	case QOPT_MODULE:
		f->module = op->arg;
		break;
	default:
		return false;
	}
	if (profile_filter_check(f, &err))
		die("%s: %s (POSIX extended syntax, as grep -E)", cmd, err.msg);
	return true;
}

void filter_apply(const struct prof_filter *f, const char *cmd, struct profile *p)
{
	struct err err;
	if (profile_filter_active(f) && profile_filter(p, f, &err))
		die("%s: %s", cmd, err.msg);
}
