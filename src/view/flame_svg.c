/* flame_svg.c - the call tree as an interactive SVG flamegraph.
 *
 * Root ("all") at the bottom, callers below callees, children in name
 * order so two graphs of similar programs line up. Widths are in pixels
 * of a fixed 1200-pixel drawing; the script rescales on zoom. Each frame
 * is <g class="f" c="SAMPLES" n="NAME"><rect/></g>, plus <text> with its
 * label when one fits, where NAME indexes the names table written once
 * at the end (a script setting "data"). The script makes the details line
 * and the tooltip from those when the mouse is over a frame. There are no
 * <title> elements: with one per frame, Chromium took 8-13 s instead of
 * 1 s to open a graph of 16,700 frames.
 */
#include "view/flame_svg.h"
#include "lib/hash.h"
#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 1200
#define PAD 10
#define FRAME_H 16
#define TOP 64          /* title, subtitle, buttons and legend */
#define BOTTOM 34       /* details line */

void xml_str(FILE *out, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	while (*u) {
		unsigned c = *u;
		size_t len = c < 0x80 ? 1 : utf8_len(u);
		if (len > 1) {
			fwrite(u, 1, len, out);
			u += len;
			continue;
		}
		if (len == 0 || (c < 0x20 && c != '\t'))
			fputc('?', out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else
			fputc((int)c, out);
		u++;
	}
}

/* Deterministic colours: the same function gets the same colour in
 * every graph (flamegraph.pl's idea: hash the name). */
static void name_hash(const char *s, double v[3])
{
	uint32_t h = 2166136261u;
	int i;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	for (i = 0; i < 3; i++) {
		v[i] = (h & 0xff) / 255.0;
		h = h * 2654435761u + 0x9e37;
		h ^= h >> 13;
	}
}

/* What a frame is, for its colour and the legend. */
enum kind { K_USER, K_KERNEL, K_INLINE, K_COMM, K_OFFCPU, K_MERGED, K_NKINDS };

struct draw {
	const struct calltree *t;
	const struct svg_opts *o;
	struct calltree_kids *kids;
	uint32_t *size;          /* nodes in each subtree */
	FILE *out;
	double scale;            /* pixels per sample */
	double min_w;            /* pixels */
	double max_delta;        /* diff: largest |share change| in points */
	uint64_t total, base_total;
	size_t merged, frames;
	int height;
	bool icicle;             /* root at the top */
	bool seen[K_NKINDS];     /* kinds drawn, for the legend */
	uint32_t *label_name;    /* per calltree label: 1 + its index in names, 0: none yet */
	struct hmap merged_name; /* frames in a merged block -> index in names */
	char **names;            /* the names table, in order of first use (owned) */
	size_t nnames, names_cap;
};

static uint32_t add_name(struct draw *d, const char *name)
{
	GROW(d->names, d->names_cap, d->nnames + 1);
	d->names[d->nnames] = xstrdup(name);
	return (uint32_t)d->nnames++;
}

/* The index in the names table of node id's name, added at first use. */
static uint32_t label_index(struct draw *d, uint32_t id)
{
	uint32_t li = calltree_node(d->t, id)->addr;
	if (!d->label_name[li])
		d->label_name[li] = add_name(d, calltree_label(d->t, id)->name) + 1;
	return d->label_name[li] - 1;
}

/* The <text> label the script would draw in a frame at x, y, w pixels
 * wide: the name, or its start and "..", or nothing at all when fewer
 * than 3 characters fit (about 6.6 pixels a character at 11 px Verdana).
 * Narrow frames get their <text> from the script if a zoom widens them. */
static void frame_label(FILE *out, const char *name, double x, int y, double w)
{
	double fit = floor((w - 6) / 6.6);
	size_t chars = 0, cut = 0;
	const char *p;

	if (fit < 3 || !*name)
		return;
	for (p = name; *p; p++) {
		if ((*p & 0xc0) == 0x80)
			continue;
		if (chars == (size_t)fit - 2)
			cut = (size_t)(p - name);
		chars++;
	}
	fprintf(out, "<text x=\"%.2f\" y=\"%d\">", x + 3, y + FRAME_H - 5);
	if (chars <= fit) {
		xml_str(out, name);
	} else {
		char *s = xstrndup(name, cut);
		xml_str(out, s);
		fputs("..", out);
		free(s);
	}
	fputs("</text>", out);
}

static double delta_pct(const struct draw *d, uint32_t id)
{
	double now = d->total ? 100.0 * d->t->count[0][id] / d->total : 0;
	double was = d->base_total ? 100.0 * d->t->count[1][id] / d->base_total : 0;
	return now - was;
}

static const char *const kind_name[K_NKINDS] = { "user", "kernel", "inlined", "thread", "off-CPU", "merged" };

static enum kind kind_of(const struct draw *d, uint32_t id, const struct calltree_label *l)
{
	if (!l)
		return K_MERGED;
	if (l->comm)
		return K_COMM;
	if (l->offcpu)
		return K_OFFCPU;
	if (id && (calltree_node(d->t, id)->flags & CALLTREE_F_INLINE))
		return K_INLINE;
	return l->kernel ? K_KERNEL : K_USER;
}

static void kind_colour(enum kind k, const char *name, char *buf)
{
	double v[3];
	name_hash(name, v);
	switch (k) {
	case K_COMM:
		sprintf(buf, "rgb(%d,%d,%d)", (int)(170 + 40 * v[0]), (int)(170 + 40 * v[0]), (int)(205 + 40 * v[1]));
		break;
	case K_KERNEL:
		sprintf(buf, "rgb(%d,%d,%d)", (int)(50 + 60 * v[0]), (int)(165 + 55 * v[0]), (int)(165 + 55 * v[0]));
		break;
	case K_INLINE: /* yellow-green: apart from the warm user range and the teal kernel */
		sprintf(buf, "rgb(%d,%d,%d)", (int)(140 + 60 * v[0]), (int)(200 + 35 * v[1]), (int)(60 + 40 * v[2]));
		break;
	case K_OFFCPU: /* saturated blue, one shade per reason */
		sprintf(buf, "rgb(%d,%d,%d)", (int)(60 + 50 * v[0]), (int)(110 + 50 * v[0]), (int)(230 + 25 * v[1]));
		break;
	case K_MERGED:
		strcpy(buf, "rgb(200,200,200)");
		break;
	default:
		sprintf(buf, "rgb(%d,%d,%d)", (int)(205 + 50 * v[2]), (int)(230 * v[0]), (int)(55 * v[1]));
	}
}

static enum kind colour(const struct draw *d, uint32_t id, const struct calltree_label *l, char *buf)
{
	enum kind k = kind_of(d, id, l);
	if (d->o->diff && id) {
		double x = delta_pct(d, id), i = d->max_delta > 0 ? fabs(x) / d->max_delta : 0;
		int lo = (int)(255 - 210 * i);
		if (x > 0)
			sprintf(buf, "rgb(255,%d,%d)", lo, lo);
		else if (x < 0)
			sprintf(buf, "rgb(%d,%d,255)", lo, lo);
		else
			strcpy(buf, "rgb(250,250,250)");
		return k;
	}
	kind_colour(k, l ? l->name : "", buf);
	return k;
}

/* "1.234 s" or "12.3 ms" for a count in microseconds */
static void fmt_us(char *buf, size_t len, uint64_t us)
{
	if (us >= 10000000)
		snprintf(buf, len, "%.2f s", us / 1e6);
	else
		snprintf(buf, len, "%.2f ms", us / 1e3);
}

static void amount(const struct draw *d, uint64_t n, char *buf, size_t len)
{
	if (d->o->weight != FLAME_SAMPLES)
		fmt_us(buf, len, n);
	else
		snprintf(buf, len, "%" PRIu64 " samples", n);
}

/* Frame id (0: "all" or a merged block, l NULL) named names[ni]. */
static void frame(struct draw *d, uint32_t id, const char *name, uint32_t ni, const struct calltree_label *l,
		  uint64_t count, double x, int depth)
{
	char fill[32];
	double w = count * d->scale;
	int y = d->icicle ? TOP + depth * FRAME_H : d->height - BOTTOM - (depth + 1) * FRAME_H;
	enum kind k;
	static const char kind_attr[K_NKINDS] = { 0, 'k', 'i', 'c', 'o', 'm' };
	d->frames++;
	k = colour(d, id, l, fill);
	d->seen[k] = true;
	/* everything the details and tooltip say is here or in the names
	 * table: counts, the kind (t), k for a kernel frame of another kind,
	 * b for a diff's base count */
	fprintf(d->out, "<g class=\"f\" c=\"%" PRIu64 "\" n=\"%" PRIu32 "\"", count, ni);
	if (kind_attr[k]) /* also for stax serve: which frames name a function */
		fprintf(d->out, " t=\"%c\"", kind_attr[k]);
	if (l && l->kernel && k != K_KERNEL)
		fputs(" k=\"1\"", d->out);
	if (d->o->diff && id)
		fprintf(d->out, " b=\"%" PRIu64 "\"", d->t->count[1][id]);
	fprintf(d->out, "><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		x, y, w, FRAME_H - 1, fill);
	frame_label(d->out, name, x, y, w);
	fputs("</g>\n", d->out);
}

static int max_depth(const struct draw *d, uint32_t id, int depth)
{
	const struct calltree_kids *k = &d->kids[id];
	int best = depth;
	size_t i;
	for (i = 0; i < k->n; i++) {
		uint32_t c = k->ids[i];
		if (d->t->count[0][c] * d->scale >= d->min_w) {
			int m = max_depth(d, c, depth + 1);
			best = MAX(best, m);
		}
	}
	/* a merged block occupies the next level */
	return k->n && best == depth ? depth + 1 : best;
}

static void draw_kids(struct draw *d, uint32_t id, double x, int depth)
{
	const struct calltree_kids *k = &d->kids[id];
	uint64_t merged_count = 0;
	size_t merged_nodes = 0, i;
	for (i = 0; i < k->n; i++) {
		uint32_t c = k->ids[i];
		uint64_t n = d->t->count[0][c];
		if (!n)
			continue;
		if (n * d->scale < d->min_w) {
			merged_count += n;
			merged_nodes += d->size[c];
			continue;
		}
		frame(d, c, calltree_label(d->t, c)->name, label_index(d, c), calltree_label(d->t, c), n, x, depth);
		draw_kids(d, c, x, depth + 1);
		x += n * d->scale;
	}
	if (merged_nodes) {
		char name[64];
		d->merged += merged_nodes;
		if (merged_count * d->scale >= d->min_w) {
			uint32_t ni;
			snprintf(name, sizeof(name), "[%zu frames merged]", merged_nodes);
			if (!hmap_get(&d->merged_name, merged_nodes, &ni)) {
				ni = add_name(d, name);
				hmap_put(&d->merged_name, merged_nodes, ni);
			}
			frame(d, 0, name, ni, NULL, merged_count, x, depth);
		}
	}
}

static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"\"use strict\";\n"
"var W = %d, PAD = %d, fw = W - 2 * PAD, NS = \"http://www.w3.org/2000/svg\";\n"
"var frames = [], details, matched, tip, tipBox, tipText, zoomed = null, query = null;\n"
"function init() {\n"
"  details = document.getElementById(\"details\");\n"
"  matched = document.getElementById(\"matched\");\n"
"  tip = document.getElementById(\"tip\"); tipBox = tip.firstElementChild; tipText = tipBox.nextElementSibling;\n"
"  var box = document.getElementById(\"frames\"), gs = box.children;\n"
"  for (var i = 0; i < gs.length; i++) {\n"
"    var g = gs[i], r = g.firstElementChild;\n"
"    g.r = r; g.t = r.nextElementSibling;\n"
"    g.x0 = +r.getAttribute(\"x\"); g.w0 = +r.getAttribute(\"width\"); g.y0 = +r.getAttribute(\"y\");\n"
"    g.fill0 = r.getAttribute(\"fill\"); g.name = data.names[+g.getAttribute(\"n\")];\n"
"    frames.push(g);\n"
"  }\n"
"  /* one listener each on the frames' group, not three per frame */\n"
"  box.addEventListener(\"click\", function (e) { var g = frameOf(e); if (g) { zoom(g); picked(g); } });\n"
"  box.addEventListener(\"mouseover\", function (e) { var g = frameOf(e); if (g) hover(g, e); });\n"
"  box.addEventListener(\"mousemove\", function (e) { if (tip.style.display !== \"none\") move(e); });\n"
"  box.addEventListener(\"mouseout\", function (e) { details.textContent = \" \"; tip.style.display = \"none\"; });\n"
"  document.getElementById(\"unzoom\").addEventListener(\"click\", unzoom);\n"
"  document.getElementById(\"search\").addEventListener(\"click\", function () { ask(); });\n"
"  window.addEventListener(\"keydown\", function (e) {\n"
"    if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) { e.preventDefault(); ask(); }\n"
"    else if (e.key === \"Escape\") { unzoom(); search(null); }\n"
"  });\n"
"  var m = /[?&]s=([^&]*)/.exec(location.search || \"\"); if (m) search(decodeURIComponent(m[1]));\n"
"}\n"
"function frameOf(e) { return e.target.closest ? e.target.closest(\"g.f\") : null; }\n"
"function amount(n) {\n"
"  return !data.time ? n + \" samples\" : n >= 1e7 ? (n / 1e6).toFixed(2) + \" s\" : (n / 1e3).toFixed(2) + \" ms\";\n"
"}\n"
"function pct(n, total) { return (total ? 100 * n / total : 0).toFixed(2) + \"%%\"; }\n"
"/* \"NAME [kernel] [inlined] (AMOUNT, PCT)\", or for a diff\n"
" * \"NAME (N samples, PCT; base N samples, PCT; change +X points)\" */\n"
"function info(g) {\n"
"  var t = g.getAttribute(\"t\"), c = +g.getAttribute(\"c\"), b = g.getAttribute(\"b\"), s = g.name;\n"
"  if (t === \"k\" || g.hasAttribute(\"k\")) s += \" [kernel]\";\n"
"  if (t === \"i\") s += \" [inlined]\";\n"
"  if (b === null) return s + \" (\" + amount(c) + \", \" + pct(c, data.total) + \")\";\n"
"  b = +b;\n"
"  var d = (data.total ? 100 * c / data.total : 0) - (data.base ? 100 * b / data.base : 0);\n"
"  return s + \" (\" + c + \" samples, \" + pct(c, data.total) + \"; base \" + b + \" samples, \" + pct(b, data.base) +\n"
"    \"; change \" + (d >= 0 ? \"+\" : \"\") + d.toFixed(2) + \" points)\";\n"
"}\n"
"function hover(g, e) {\n"
"  var s = info(g), w, n, i;\n"
"  details.textContent = s;\n"
"  tipText.textContent = s;\n"
"  tip.style.display = \"\";\n"
"  w = tipText.getComputedTextLength(), n = 1;\n"
"  if (w > W - 16) {\n"
"    /* a long C++ name: lines as wide as the drawing */\n"
"    var per = Math.max(10, Math.floor(s.length * (W - 16) / w));\n"
"    tipText.textContent = \"\";\n"
"    for (i = 0, n = 0; i < s.length; i += per, n++) {\n"
"      var t = document.createElementNS(NS, \"tspan\");\n"
"      t.setAttribute(\"x\", 4); t.setAttribute(\"dy\", n ? 13 : 0); t.textContent = s.slice(i, i + per);\n"
"      tipText.appendChild(t);\n"
"    }\n"
"    w = tipText.getBBox().width;\n"
"  }\n"
"  tipBox.setAttribute(\"width\", w + 8); tipBox.setAttribute(\"height\", 5 + 13 * n);\n"
"  move(e);\n"
"}\n"
"/* the tooltip below and right of the pointer, or where it fits */\n"
"function move(e) {\n"
"  var svg = document.documentElement, m = svg.getScreenCTM(), x = e.clientX, y = e.clientY;\n"
"  var w = +tipBox.getAttribute(\"width\"), h = +tipBox.getAttribute(\"height\"), H = +svg.getAttribute(\"height\");\n"
"  if (m) { var p = svg.createSVGPoint(); p.x = x; p.y = y; p = p.matrixTransform(m.inverse()); x = p.x; y = p.y; }\n"
"  x = x + 12 + w <= W ? x + 12 : Math.max(0, x - 12 - w);\n"
"  y = y + 20 + h <= H ? y + 20 : Math.max(0, y - 8 - h);\n"
"  tip.setAttribute(\"transform\", \"translate(\" + x.toFixed(1) + \",\" + y.toFixed(1) + \")\");\n"
"}\n"
"function picked(g) {\n"
"  /* inside stax serve's page: tell it which function was clicked */\n"
"  try { if (window.parent !== window && window.parent.staxFrame) window.parent.staxFrame(g.name, g.getAttribute(\"t\") || \"\"); } catch (err) {}\n"
"}\n"
"/* labels of frames as drawn are in the file; a frame without one gets a\n"
" * <text> when zooming makes it wide enough */\n"
"function label(g) {\n"
"  var w = +g.r.getAttribute(\"width\"), n = Math.floor((w - 6) / 6.6);\n"
"  var s = n < 3 ? \"\" : g.name.length <= n ? g.name : g.name.slice(0, n - 2) + \"..\";\n"
"  if (!g.t) {\n"
"    if (s === \"\") return;\n"
"    g.t = document.createElementNS(NS, \"text\");\n"
"    g.t.setAttribute(\"y\", g.y0 + 11);\n"
"    g.appendChild(g.t);\n"
"  }\n"
"  g.t.setAttribute(\"x\", +g.r.getAttribute(\"x\") + 3);\n"
"  g.t.textContent = s;\n"
"}\n"
"function place(g, x, w) { g.r.setAttribute(\"x\", x); g.r.setAttribute(\"width\", w); label(g); }\n"
"function zoom(z) {\n"
"  var s = fw / z.w0, e = 1e-6;\n"
"  zoomed = z;\n"
"  document.getElementById(\"unzoom\").style.opacity = 1;\n"
"  frames.forEach(function (g) {\n"
"    g.style.display = \"\"; g.style.opacity = 1;\n"
"    if (g.y0 <= z.y0 && g.x0 >= z.x0 - e && g.x0 + g.w0 <= z.x0 + z.w0 + e)\n"
"      place(g, PAD + (g.x0 - z.x0) * s, g.w0 * s);\n"
"    else if (g.y0 > z.y0 && g.x0 <= z.x0 + e && g.x0 + g.w0 >= z.x0 + z.w0 - e) {\n"
"      place(g, PAD, fw); g.style.opacity = 0.6;\n"
"    } else g.style.display = \"none\";\n"
"  });\n"
"  if (query !== null) search(query);\n"
"}\n"
"function unzoom() {\n"
"  zoomed = null;\n"
"  document.getElementById(\"unzoom\").style.opacity = 0;\n"
"  frames.forEach(function (g) { g.style.display = \"\"; g.style.opacity = 1; place(g, g.x0, g.w0); });\n"
"  if (query !== null) search(query);\n"
"}\n"
"function ask() {\n"
"  var q = prompt(\"Search for a function (regular expression)\", query || \"\");\n"
"  if (q !== null) search(q === \"\" ? null : q);\n"
"}\n"
"function search(q) {\n"
"  var re = null, spans = [], sum = 0, end = -1, base = zoomed ? zoomed.w0 : fw;\n"
"  query = q;\n"
"  if (q !== null) { try { re = new RegExp(q); } catch (err) { matched.textContent = \"bad expression\"; return; } }\n"
"  frames.forEach(function (g) {\n"
"    var hit = re !== null && re.test(g.name);\n"
"    g.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : g.fill0);\n"
"    if (hit && g.style.display !== \"none\") spans.push([g.x0, g.x0 + g.w0]);\n"
"  });\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  spans.forEach(function (s) {\n"
"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
"  });\n"
"  document.getElementById(\"search\").style.opacity = re ? 1 : 0.7;\n"
"  matched.textContent = re ? \"Matched: \" + (100 * sum / base).toFixed(1) + \"%%\" : \"\";\n"
"}\n"
"]]></script>\n";

size_t svg_flamegraph(const struct calltree *t, const struct svg_opts *o, FILE *out)
{
	struct draw d;
	size_t id, i;
	int depth;
	char fill[32];

	memset(&d, 0, sizeof(d));
	d.t = t;
	d.o = o;
	d.out = out;
	d.total = t->total[0];
	d.base_total = t->total[1];
	d.icicle = o->icicle;
	d.kids = calltree_kids(t, true);
	d.label_name = xcalloc(t->nlabels + 1, sizeof(*d.label_name));
	hmap_init(&d.merged_name);
	d.size = xmalloc((calltree_size(t) + 1) * sizeof(*d.size));
	for (id = 0; id <= calltree_size(t); id++)
		d.size[id] = 1;
	for (id = calltree_size(t); id >= 1; id--)
		d.size[calltree_node(t, (uint32_t)id)->parent] += d.size[id];
	d.scale = d.total ? (double)(WIDTH - 2 * PAD) / d.total : 0;
	d.min_w = o->min_pct < 0 ? 0.1 : o->min_pct / 100.0 * (WIDTH - 2 * PAD);
	if (o->diff)
		for (id = 1; id <= calltree_size(t); id++)
			if (t->count[0][id] * d.scale >= d.min_w)
				d.max_delta = MAX(d.max_delta, fabs(delta_pct(&d, (uint32_t)id)));
	depth = d.total ? max_depth(&d, 0, 0) : 0;
	d.height = TOP + (depth + 1) * FRAME_H + BOTTOM;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" onload=\"init()\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", WIDTH, d.height, WIDTH, d.height);
	fputs("<!-- written by stax; layout after Brendan Gregg's FlameGraph -->\n", out);
	fputs("<style>text { font-family: Verdana, sans-serif; font-size: 11px; fill: #000; }\n"
	      ".f rect { rx: 2px; } .f text { pointer-events: none; } .f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      ".b { cursor: pointer; } #title { font-size: 17px; } #sub { fill: #555; }\n"
	      "#tip { pointer-events: none; } #tip rect { fill: #ffffe8; stroke: #888; stroke-width: 0.5; rx: 3px; }</style>\n", out);
	fprintf(out, script, WIDTH, PAD);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n", WIDTH, d.height);
	fprintf(out, "<text id=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", WIDTH / 2);
	xml_str(out, o->title ? o->title : "Flame Graph");
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"b\" x=\"%d\" y=\"22\" style=\"opacity:0\">Reset Zoom</text>\n", PAD);
	fprintf(out, "<text id=\"search\" class=\"b\" x=\"%d\" y=\"22\" text-anchor=\"end\" style=\"opacity:0.7\">Search</text>\n",
		WIDTH - PAD);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		WIDTH - PAD, d.height - 12);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", PAD, d.height - 12);

	/* draw first to count merged frames, then the subtitle that says so */
	fputs("<g id=\"frames\">\n", out);
	if (d.total) {
		frame(&d, 0, "all", add_name(&d, "all"), NULL, d.total, PAD, 0);
		draw_kids(&d, 0, PAD, 1);
	}
	fputs("</g>\n", out);
	fprintf(out, "<text id=\"sub\" x=\"%d\" y=\"40\" text-anchor=\"middle\">", WIDTH / 2);
	if (o->subtitle) {
		xml_str(out, o->subtitle);
		fputs("; ", out);
	}
	if (!d.total) {
		fputs(o->weight == FLAME_OFFCPU ? "no off-CPU time" : "no samples", out);
	} else {
		char a[48];
		amount(&d, d.total, a, sizeof(a));
		fprintf(out, "%s%s, %zu frames drawn, %zu merged (narrower than %.3g%%)", a,
			o->weight == FLAME_OFFCPU ? " off the CPU" : o->weight == FLAME_WALL ? " of wall time" : "",
			d.frames, d.merged, d.min_w / (WIDTH - 2 * PAD) * 100);
	}
	fputs("</text>\n", out);
	/* legend: every kind of frame drawn (user and merged always) */
	{
		double x = PAD;
		if (o->diff) {
			for (i = 0; i < 2; i++) {
				fprintf(out, "<rect x=\"%.0f\" y=\"48\" width=\"10\" height=\"10\" fill=\"%s\"/>"
					"<text x=\"%.0f\" y=\"57\">%s</text>\n", x, i ? "rgb(80,80,255)" : "rgb(255,80,80)",
					x + 14, i ? "shrank (share of samples fell)" : "grew (share of samples rose)");
				x += 200;
			}
		} else {
			d.seen[K_USER] = d.seen[K_MERGED] = true;
			for (i = 0; i < K_NKINDS; i++) {
				if (!d.seen[i])
					continue;
				kind_colour((enum kind)i, "legend", fill);
				fprintf(out, "<rect class=\"legend\" x=\"%.0f\" y=\"48\" width=\"10\" height=\"10\" fill=\"%s\"/>"
					"<text x=\"%.0f\" y=\"57\">%s</text>\n", x, fill, x + 14, kind_name[i]);
				x += 80;
			}
		}
	}
	/* the names table, one a line, and what the script needs to turn
	 * counts into the details line */
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n"
		"var data = {\"total\": %" PRIu64 ", \"base\": %" PRIu64 ", \"time\": %s, \"names\": [\n",
		d.total, d.base_total, o->weight != FLAME_SAMPLES ? "true" : "false");
	for (i = 0; i < d.nnames; i++) {
		json_str_markup(out, d.names[i]);
		fputs(i + 1 < d.nnames ? ",\n" : "\n", out);
		free(d.names[i]);
	}
	fputs("]};\n]]></script>\n", out);
	/* last, so it is drawn over everything */
	fputs("<g id=\"tip\" style=\"display:none\"><rect width=\"8\" height=\"18\"/><text x=\"4\" y=\"13\"> </text></g>\n", out);
	fputs("</svg>\n", out);
	calltree_kids_free(t, d.kids);
	free(d.size);
	free(d.label_name);
	hmap_release(&d.merged_name);
	free(d.names);
	return d.merged;
}

size_t view_flame_svg(const struct profile *p, const struct view_filter *f,
		      const struct svg_opts *o, FILE *out)
{
	struct calltree t;
	size_t merged;
	calltree_init(&t);
	if (o->weight == FLAME_SAMPLES)
		calltree_add_profile(&t, p, f, 0, o->inverted ? CALLTREE_INVERTED : 0);
	else
		calltree_add_time(&t, p, f, 0, (o->weight == FLAME_WALL ? CALLTREE_WALL : CALLTREE_OFFCPU) |
				  (o->inverted ? CALLTREE_INVERTED : 0) |
				  (o->kernel_waits ? CALLTREE_KERNEL_WAITS : 0));
	merged = svg_flamegraph(&t, o, out);
	calltree_release(&t);
	return merged;
}
