/* filter.h - the part of a recording a query looks at: a time range, the
 * stacks through (or not through) some functions, frames hidden, one
 * module.
 *
 * profile_filter() rewrites a symbolized profile in place, so every view
 * and export that reads it sees only what the filter keeps: samples and
 * off-CPU intervals outside the range or the stacks are dropped, and the
 * stacks that --focus re-roots or --hide shortens get new nodes (ids
 * above the loaded ones, like inline frames). It runs after
 * profile_symbolize() (regular expressions match function names) and
 * after profile_python_only().
 */
#ifndef STAX_PROFILE_FILTER_H
#define STAX_PROFILE_FILTER_H

#include "profile/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct prof_filter {
	/* --time START,END: seconds from the start of the recording, or
	 * percent of its duration when pct */
	bool has_time, time_pct;
	double t_start, t_end;
	const char *focus;     /* regex: keep stacks through a match, re-rooted at the outermost */
	const char *exclude;   /* regex: drop stacks through a match */
	const char *hide;      /* regex: remove matching frames, keep the stacks */
	const char *module;    /* keep samples whose leaf frame is in this module: its base
				* name, or a shared object's without ".so" and its
				* version (liblzma for liblzma.so.5.4.1) */
	/* --since, --until: a wall-clock window [since, until) in Unix ns
	 * (0: open), applied when the recordings are read
	 * (profile_load_files()), not by profile_filter(); the words given,
	 * for messages */
	uint64_t since_ns, until_ns;
	const char *since_arg, *until_arg;
};

/* Is any part of f set? */
bool profile_filter_active(const struct prof_filter *f);
/* Parse "START,END" (seconds, each may be empty: from the start / to the
 * end) or "N%,M%" into f. Returns -1 with a message in err. */
int profile_filter_parse_time(struct prof_filter *f, const char *arg, struct err *err);
/* Check the regular expressions compile. Returns -1 with a message in err. */
int profile_filter_check(const struct prof_filter *f, struct err *err);
/* Apply f to p (see above). Returns -1 with a message in err when a
 * regular expression does not compile; p is unchanged then. */
int profile_filter(struct profile *p, const struct prof_filter *f, struct err *err);
/* Nanoseconds the recording's time axis starts at: the recorder's start
 * (META start_ns) or the first sample, whichever is earlier. */
uint64_t profile_start_ns(const struct profile *p);
/* Seconds from profile_start_ns() to the recording's end (META end_ns,
 * or its last sample). */
double profile_duration_s(const struct profile *p);

#endif
