/* filter.c - the options of the filter group every query command takes:
 * --time, --since, --until, --focus, --exclude, --hide, --module (the
 * work is in profile/filter.c, and for --since and --until in
 * profile/merge.c, which reads the recordings of the window). */
#include "cmd/cmd.h"
#include "lib/util.h"
#include "lib/walltime.h"

#include <string.h>

const struct opt query_opts_filter[] = {
	{ QOPT_TIME, "time", "START,END", "only samples from START to END seconds after the\n"
	  "recording started (either may be empty), or N%,M% of\n"
	  "its duration; relative, unlike perf report --time,\n"
	  "which takes absolute perf clock timestamps; with\n"
	  "--since, or a directory, from the start of what was\n"
	  "read (--since, else the first recording's start)", NULL },
	{ QOPT_SINCE, "since", "TIME", "only samples from TIME on, by the wall clock: 14:00,\n"
	  "14:00:30, 2026-12-05 14:00, 2026-12-05T14:00:00Z (local\n"
	  "time unless a zone such as Z or +01:00 follows),\n"
	  "@UNIX_SECONDS, today, yesterday, now, or a time ago:\n"
	  "-10m, -1h30m, '2h ago'; of a directory, only the\n"
	  "recordings that overlap the window are read", NULL },
	{ QOPT_UNTIL, "until", "TIME", "only samples before TIME (the forms of --since)", NULL },
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
	case QOPT_SINCE:
	case QOPT_UNTIL: {
		uint64_t t;
		if (walltime_parse(op->arg, walltime_now(), &t, &err))
			die("%s: %s: %s", cmd, op->name, err.msg);
		if (id == QOPT_SINCE) {
			f->since_ns = t;
			f->since_arg = op->arg;
		} else {
			f->until_ns = t;
			f->until_arg = op->arg;
		}
		if (f->since_ns && f->until_ns && f->since_ns >= f->until_ns) {
			char a[64], b[64];
			walltime_format(f->since_ns, false, a, sizeof(a));
			walltime_format(f->until_ns, false, b, sizeof(b));
			die("%s: --since '%s' (%s) is not before --until '%s' (%s)", cmd, f->since_arg, a,
			    f->until_arg, b);
		}
		break;
	}
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
