/* diff.h - compare two recordings: which functions and stacks gained or
 * lost share of the samples, as text, JSON or a differential flamegraph.
 *
 * Functions are matched by name (and kernel or not), stacks by their
 * function names root to leaf, without the command name, so two builds of
 * a program compare. Shares are percentages of each recording's samples
 * (after the filter), changes are in percentage points (new - base).
 */
#ifndef STAX_VIEW_DIFF_H
#define STAX_VIEW_DIFF_H

#include "view/flame_svg.h"

struct diff_opts {
	size_t limit;        /* rows per table, 0 = all */
	bool json;
};

/* Print the tables; returns the largest growth of a function's self
 * share, in points (0 when nothing grew), and sets *grew_name to it. */
double view_diff(const struct profile *base, const struct profile *now, const struct view_filter *f,
		 const struct diff_opts *o, FILE *out, const char **grew_name);
/* Differential flamegraph: widths from the new recording, red where a
 * frame's share grew, blue where it shrank. Returns frames merged. */
size_t view_diff_svg(const struct profile *base, const struct profile *now, const struct view_filter *f,
		     const struct svg_opts *o, FILE *out);

#endif
