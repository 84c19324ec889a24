/* flame_svg.h - interactive flamegraphs as one self-contained SVG file.
 *
 * The SVG carries its own JavaScript (click to zoom, Ctrl-F or the Search
 * button to highlight frames matching a regular expression, details line
 * and tooltip with samples or time and percentages on hover), so it works
 * opened from disk, inside a page (stax serve), with no outside assets.
 * Frames are <g class="f" c="COUNT" n="NAME INDEX" [t="KIND"]>; names sit
 * once in a table at the end ("var data = {..., names: [...]}"), and
 * there are no <title> elements (they made large graphs slow to open). Frames narrower than
 * the merge threshold are folded into one "[N frames merged]" frame per
 * caller; the subtitle says how many. Colours tell user, kernel,
 * inlined, thread and off-CPU ("[off-cpu: REASON]") frames apart, and
 * the legend lists the kinds drawn. Inside a page, a click also calls
 * the parent window's staxFrame(name, kind) when it has one. Never fails.
 */
#ifndef STAX_VIEW_FLAME_SVG_H
#define STAX_VIEW_FLAME_SVG_H

#include "view/calltree.h"

#include <stdio.h>

struct svg_opts {
	const char *title;     /* NULL: "Flame Graph" */
	const char *subtitle;  /* NULL: none; the merge note is added anyway */
	double min_pct;        /* merge frames under this percent; <0: 0.1 px */
	bool diff;             /* colour by side 0 share minus side 1 share */
	int weight;            /* FLAME_SAMPLES, or FLAME_OFFCPU / FLAME_WALL
				* (view.h): counts are microseconds, shown as
				* time, built with calltree_add_time() */
	bool inverted;         /* leaf first (CALLTREE_INVERTED) */
	bool icicle;           /* root at the top, callees below (stax serve) */
	bool kernel_waits;     /* off-CPU stacks with their kernel frames */
};

/* Draw tree t (side 0 gives widths); returns the number of frames merged. */
size_t svg_flamegraph(const struct calltree *t, const struct svg_opts *o, FILE *out);
/* Build the call tree of p (samples f keeps) and draw it. */
size_t view_flame_svg(const struct profile *p, const struct view_filter *f,
		      const struct svg_opts *o, FILE *out);
/* s as XML character data (escaped, invalid UTF-8 replaced by '?'). */
void xml_str(FILE *out, const char *s);

#endif
