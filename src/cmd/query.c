/* query.c - options and loading shared by the query commands. */
#include "cmd/cmd.h"
#include "lib/util.h"
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
	{ 'i', "input", "FILE", "the recording (default stax.data); also FILE as an argument", NULL },
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
	{ QOPT_LINES, "lines", NULL, "one row or frame per source line: 'name (file.c:LINE)'", NULL },
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
		q->cmd = cmd;
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

/* perf.data (file or pipe format, or "-") is imported into an in-memory
 * recording first, then loaded like any other. */
void query_load(const struct query_opts *q, struct profile *p)
{
	struct err e;
	if (perfdata_path_is_perfdata(q->input)) {
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
	} else if (profile_load_err(p, q->input, &e)) {
		die("%s", e.msg);
	}
	query_warn(p, 0);
	{
		struct prof_sym_opts so = { !q->no_demangle, q->no_inline, q->lines };
		profile_symbolize_opts(p, &so);
	}
	if (q->python_only)
		profile_python_only(p);
	filter_apply(&q->pf, q->cmd ? q->cmd : "stax", p);
}
