/* query.c - options and loading shared by the query commands. */
#include "cmd/cmd.h"
#include "lib/buf.h"
#include "lib/util.h"
#include "lib/walltime.h"
#include "source/perfdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void query_init(struct query_opts *q)
{
	memset(q, 0, sizeof(*q));
	q->input = "stax.data";
	q->filter.pid = -1;
	q->filter.tid = -1;
}

/* The recording, from -i FILE or a positional FILE: once. */
static void set_input(struct query_opts *q, const char *cmd, const char *file)
{
	if (q->input_set)
		die("%s: two recordings given ('%s' and '%s'; see 'stax help %s')", cmd, q->input, file, cmd);
	q->input = file;
	q->input_set = true;
}

const struct opt query_opts_input[] = {
	{ 'i', "input", "FILE", "the recording (default stax.data); also FILE as an\n"
	  "argument. A directory: its recordings (*.data) read as\n"
	  "one profile (with --since/--until, those of the window)", NULL },
	OPT_END,
};

const struct opt query_opts_json[] = {
	{ QOPT_JSON, "json", NULL, "print JSON", NULL },
	OPT_END,
};

const struct opt query_opts_common[] = {
	{ QOPT_PID, "pid", "PID", "keep only samples of this process", NULL },
	{ QOPT_TID, "tid", "TID", "keep only samples of this thread", NULL },
	{ QOPT_COMM, "comm", "NAME", "keep only samples of threads with this name", NULL },
	{ QOPT_NO_DEMANGLE, "no-demangle", NULL, "show C++ and Rust names as the binary has them", NULL },
	{ QOPT_NO_INLINE, "no-inline", NULL, "fold inlined functions into the function holding their\n"
	  "code (by default each is a frame of its own)", NULL },
	{ QOPT_LINES, "lines", NULL, "one row or frame per source line: 'name (file.c:LINE)';\n"
	  "Python frames too: 'py::parse (app.py:5)'", NULL },
	{ QOPT_NO_LATE, "no-late-frames", NULL, "leave out the frames read after their sample (stax info:\n"
	  "late): Python frames and outer frames past the stack copy\n"
	  "read from the process when the in-kernel reader was off\n"
	  "(stax record --no-bpf, or not permitted); the frames\n"
	  "read at the sample stay", NULL },
	OPT_END,
};

const struct opt query_opts_python[] = {
	{ QOPT_PYTHON_ONLY, "python-only", NULL, "only Python frames (python -X perf or -X perf_jit), the\n"
	  "way py-spy shows them: the C frames between them are\n"
	  "folded away (by default both are shown)", NULL },
	OPT_END,
};

uint64_t opt_u64(const struct opt_parser *op, uint64_t max)
{
	uint64_t n;
	if (parse_u64(op->arg, &n) || n > max)
		die("%s: option %s needs a number, not '%s' (see 'stax help %s')", op->spec->name,
		    op->name, op->arg, op->spec->name);
	return n;
}

bool query_opt(struct query_opts *q, const struct opt_parser *op, int id)
{
	const char *cmd = op->spec->name;
	q->cmd = cmd;
	switch (id) {
	case OPT_ARG:
	case 'i':
		set_input(q, cmd, op->arg);
		break;
	case QOPT_JSON:
		q->json = true;
		break;
	case QOPT_NO_DEMANGLE:
		q->no_demangle = true;
		break;
	case QOPT_NO_INLINE:
		q->no_inline = true;
		break;
	case QOPT_LINES:
		q->lines = true;
		break;
	case QOPT_NO_LATE:
		q->no_late = true;
		break;
	case QOPT_PID:
		q->filter.pid = (int64_t)opt_u64(op, 0x7fffffff);
		break;
	case QOPT_TID:
		q->filter.tid = (int64_t)opt_u64(op, 0x7fffffff);
		break;
	case QOPT_COMM:
		q->filter.comm = op->arg;
		break;
	case QOPT_PYTHON_ONLY:
		q->python_only = true;
		break;
	default:
		if (!filter_opt(&q->pf, op, id))
			return false;
		break;
	}
	return true;
}

void query_warn(const struct profile *p, unsigned skip)
{
	struct prof_warning w[PROF_WARNINGS_MAX];
	size_t n = profile_warnings(p, w), i;
	for (i = 0; i < n; i++)
		if (!(w[i].kind & skip))
			warn("%s", w[i].text);
}

/* The filters q was given, as options ("--module liblzma, --time 5,10"),
 * into b; with what the recording has that they could have matched. */
static void filters_said(const struct query_opts *q, const struct profile *p, double secs, struct buf *b)
{
	const struct prof_filter *f = &q->pf;
	const char *sep = "";
#define SAY(...) (buf_printf(b, "%s", sep), buf_printf(b, __VA_ARGS__), sep = ", ")
	if (f->since_arg)
		SAY("--since '%s'", f->since_arg);
	if (f->until_arg)
		SAY("--until '%s'", f->until_arg);
	if (f->has_time)
		SAY("--time %g%s,%g%s", f->t_start, f->time_pct ? "%" : "", f->t_end, f->time_pct ? "%" : "");
	if (f->module)
		SAY("--module %s", f->module);
	if (f->focus)
		SAY("--focus '%s'", f->focus);
	if (f->exclude)
		SAY("--exclude '%s'", f->exclude);
	if (f->hide)
		SAY("--hide '%s'", f->hide);
	if (q->filter.pid >= 0)
		SAY("--pid %lld", (long long)q->filter.pid);
	if (q->filter.tid >= 0)
		SAY("--tid %lld", (long long)q->filter.tid);
	if (q->filter.comm)
		SAY("--comm %s", q->filter.comm);
#undef SAY
	if (f->has_time && !f->time_pct)
		buf_printf(b, " (the recording is %.2f s long)", secs);
	if (f->module) {
		/* the modules there are, as --module takes them */
		size_t i, k, n = 0;
		buf_printf(b, " (modules with samples:");
		for (i = 0; i < p->nfuncs && n < 8; i++) {
			const char *m = p->funcs[i].module;
			for (k = 0; k < i && strcmp(p->funcs[k].module, m); k++)
				;
			if (k == i)
				buf_printf(b, "%s %s", n++ ? "," : "", m);
		}
		buf_printf(b, "%s)", n == 8 ? ", ..." : "");
	}
}

/* A filter that keeps nothing of a recording that has samples (or
 * off-CPU time) is an error that names it, not an empty answer: exit 1.
 * samples, offcpu: what the recording held before the filters; secs: its
 * length. */
static void check_kept(const struct query_opts *q, const struct profile *p, size_t samples, size_t offcpu,
		       double secs)
{
	struct buf b = BUF_INIT;
	size_t i;

	if ((!samples && !offcpu) || (!profile_filter_active(&q->pf) && q->filter.pid < 0 &&
				       q->filter.tid < 0 && !q->filter.comm))
		return;
	for (i = 0; i < p->nsamples; i++)
		if (view_keep(p, &q->filter, &p->samples[i]))
			return;
	for (i = 0; i < p->noffcpu; i++)
		if (view_keep_offcpu(p, &q->filter, &p->offcpu[i]))
			return;
	filters_said(q, p, secs, &b);
	buf_add_u8(&b, 0);
	die("%s: no samples match %s", q->cmd, (const char *)b.data);
}

/* " (the recordings span A to B)": the wall-clock span of what p's
 * sources cover, for a window that kept nothing (a file skipped by its
 * last write alone says only that). */
static void sources_span(const struct profile *p, struct buf *b)
{
	uint64_t lo = 0, hi = 0;
	size_t i, n = 0;
	char a[64], z[64];
	for (i = 0; i < p->nsources; i++) {
		const struct prof_source *s = &p->sources[i];
		if (s->state == PROF_SRC_FAILED)
			continue;
		if (s->wall_start_ns)
			lo = lo ? MIN(lo, s->wall_start_ns) : s->wall_start_ns;
		hi = MAX(hi, MAX(s->wall_end_ns, s->wall_start_ns));
		n++;
	}
	if (!hi) {
		buf_printf(b, " (no recording there says when it was made)");
		return;
	}
	walltime_format(hi, false, z, sizeof(z));
	if (!lo) {
		buf_printf(b, " (%s last written at %s)", n == 1 ? "its recording was" : "its recordings were", z);
		return;
	}
	walltime_format(lo, false, a, sizeof(a));
	buf_printf(b, " (%s recording%s span%s %s to %s)", n == 1 ? "its" : "the", n == 1 ? "" : "s",
		   n == 1 ? "s" : "", a, z);
}

/* What a read of several recordings has to say of single files: those
 * skipped (not recordings, unreadable, without a wall clock for the
 * window) and those cut short. */
static void sources_warn(const struct profile *p, bool windowed)
{
	size_t i;
	for (i = 0; i < p->nsources; i++) {
		const struct prof_source *s = &p->sources[i];
		if (s->state == PROF_SRC_FAILED)
			warn("%s (skipped; the other recordings were read)", s->why);
		else if (s->state == PROF_SRC_NO_TIME && windowed)
			warn("%s: not read: it does not say when it was recorded (an import, or a recording"
			     " older than --since and --until), so it cannot be placed in the window", s->path);
		else if (s->state == PROF_SRC_READ && s->why)
			warn("%s", s->why);
	}
}

/* perf.data (file or pipe format, or "-") is imported into an in-memory
 * recording first, then loaded like any other. A directory, or a
 * window (--since, --until), reads through profile_load_path(). */
void query_load(const struct query_opts *q, struct profile *p)
{
	struct err e;
	size_t samples, offcpu;
	double secs;
	struct prof_window w = { q->pf.since_ns, q->pf.until_ns, 0 };
	bool windowed = w.since_ns || w.until_ns;
	const char *cmd = q->cmd ? q->cmd : "stax";
	if (perfdata_path_is_perfdata(q->input)) {
		if (windowed)
			die("%s: --since and --until need a stax recording, which says when it was made;"
			    " %s is perf.data (use --time, seconds from its start)", cmd, q->input);
		struct perfdata_opts po = { .progress = show_progress() };
		char path[64];
		int fd = perfdata_to_memfd(q->input, &po, &e);
		if (fd < 0)
			die("%s", e.msg);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (profile_load_err(p, path, &e))
			die("%s", e.msg);
		close(fd);
		p->path = q->input;
	} else if (profile_load_path(p, q->input, windowed ? &w : NULL, &e)) {
		die("%s", e.msg);
	}
	sources_warn(p, windowed);
	if (windowed && !p->nsamples && !p->noffcpu) {
		struct buf b = BUF_INIT;
		buf_printf(&b, "%s: no samples in %s", cmd, q->input);
		if (q->pf.since_arg)
			buf_printf(&b, " since '%s'", q->pf.since_arg);
		if (q->pf.until_arg)
			buf_printf(&b, " until '%s'", q->pf.until_arg);
		sources_span(p, &b);
		buf_add_u8(&b, 0);
		die("%s", (const char *)b.data);
	}
	query_warn(p, 0);
	{
		struct prof_sym_opts so = { !q->no_demangle, q->no_inline, q->lines };
		profile_symbolize_opts(p, &so);
	}
	if (q->no_late)
		profile_drop_late(p);
	if (q->python_only)
		profile_python_only(p);
	samples = p->nsamples;
	offcpu = p->noffcpu;
	secs = profile_duration_s(p);
	filter_apply(&q->pf, q->cmd ? q->cmd : "stax", p);
	check_kept(q, p, samples, offcpu, secs);
}
