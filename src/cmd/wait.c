/* wait.c - stax wait: block until a running recording meets a condition.
 *
 * The recording file is the only thing shared with the recorder: every
 * poll reads it as it stands (complete chunks only), like any query. */
#include "cmd/cmd.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { W_SAMPLES = OPT_LONG, W_SECONDS, W_SYMBOL, W_TIMEOUT };

static const struct opt wait_opts[] = {
	{ W_SAMPLES, "for-samples", "N", "N samples are in the file", NULL },
	{ W_SECONDS, "for-seconds", "S", "the recording has run for S seconds", NULL },
	{ W_SYMBOL, "until-symbol", "NAME", "a sample's stack (or an off-CPU stack) has the\n"
	  "function NAME (exact name, C++ arguments ignored)", NULL },
	{ W_TIMEOUT, "timeout", "S", "give up after S seconds (default: wait forever)", NULL },
	OPT_GROUP(query_opts_input),
	OPT_GROUP(query_opts_json),
	OPT_GROUP(query_opts_common),
	OPT_END,
};

const struct cmd_spec cmd_wait_spec = {
	"wait",
"usage: stax wait [FILE | -i FILE] (--for-samples N | --for-seconds S |\n"
"                 --until-symbol NAME) [--timeout S]\n"
"\n"
"Block until the recording being written to FILE (or -i FILE; stax.data\n"
"when neither is given) meets the condition, then exit 0; exit 1 when\n"
"--timeout seconds pass first, or when the recording finished without\n"
"meeting it, or stopped growing unfinished (its recorder was killed). A\n"
"FILE that does not exist yet is waited for. Then query the recording as\n"
"it stands with stax top, flame or threads while it keeps growing.\n"
"When it ends, wait prints the warnings the other commands print (a\n"
"damaged or truncated recording, lost samples), but not that the\n"
"recording is still being written.\n"
,
	wait_opts,
"The file is re-read every 100 ms (250 ms with --until-symbol, which\n"
"symbolizes from the binaries), so the answer lags by that much plus the\n"
"recorder's 250 ms between chunks.\n",
	0,
};

enum wait_kind { WAIT_NONE, WAIT_SAMPLES, WAIT_SECONDS, WAIT_SYMBOL };

static double positive(const char *opt, const char *v)
{
	char *end;
	double d = strtod(v, &end);
	if (*end || !(d > 0))
		die("wait: %s needs a positive number, not '%s' (see 'stax help wait')", opt, v);
	return d;
}

/* Seconds the recording covers: until now while it runs, else its end
 * (its last sample when its recorder died). */
static double recorded_seconds(const struct profile *p)
{
	const char *s = profile_meta(p, "start_ns"), *e = profile_meta(p, "end_ns");
	uint64_t start = s ? strtoull(s, NULL, 10) : p->first_time, end;
	if (e && !p->partial)
		end = strtoull(e, NULL, 10);
	else if (p->partial && !p->live)
		end = p->last_time;
	else
		end = now_ns();
	/* another boot's clock: fall back to the newest sample */
	if (!start || end < start || end - start > 366ull * 86400 * 1000000000)
		end = p->last_time;
	return end > start ? (end - start) / 1e9 : 0;
}

static bool name_matches(const char *fn, const char *want)
{
	size_t n = strlen(want);
	return !strncmp(fn, want, n) && (fn[n] == 0 || fn[n] == '(');
}

static bool has_symbol(struct profile *p, const char *name, bool demangle)
{
	size_t i;
	profile_symbolize(p, demangle);
	for (i = 1; i <= p->nfuncs; i++)
		if (name_matches(profile_func(p, (uint32_t)i)->name, name))
			return true;
	return false;
}

/* The warnings of the last look at the recording, printed once when
 * wait ends; not that it is still being written: that is what wait is
 * for. */
static void print_warnings(const struct prof_warning *w, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (w[i].kind != PROF_W_LIVE)
			warn("%s", w[i].text);
}

int cmd_wait(int argc, char **argv)
{
	struct query_opts q;
	enum wait_kind kind = WAIT_NONE;
	const char *symbol = NULL;
	uint64_t want_samples = 0, start = now_ns();
	double want_seconds = 0, timeout = 0;
	struct timespec started;
	unsigned dead = 0; /* polls that found the recording unfinished and its recorder gone */
	struct prof_warning warnings[PROF_WARNINGS_MAX];
	size_t nwarn = 0;
	struct opt_parser op;
	int id;

	clock_gettime(CLOCK_REALTIME, &started);
	query_init(&q);
	opt_begin(&op, &cmd_wait_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		if (query_opt(&q, &op, id))
			continue;
		if (kind != WAIT_NONE && id != W_TIMEOUT)
			die("wait: give one of --for-samples, --for-seconds and --until-symbol");
		switch (id) {
		case W_SAMPLES:
			if (parse_u64(op.arg, &want_samples))
				die("wait: --for-samples needs a number, not '%s' (see 'stax help wait')", op.arg);
			kind = WAIT_SAMPLES;
			break;
		case W_SECONDS:
			want_seconds = positive(op.name, op.arg);
			kind = WAIT_SECONDS;
			break;
		case W_SYMBOL:
			symbol = op.arg;
			if (!*symbol)
				die("wait: --until-symbol needs a function name");
			kind = WAIT_SYMBOL;
			break;
		case W_TIMEOUT:
			timeout = positive(op.name, op.arg);
			break;
		}
	}
	if (kind == WAIT_NONE)
		die("wait: nothing to wait for (give --for-samples N, --for-seconds S or --until-symbol NAME)");
	if (profile_filter_active(&q.pf))
		die("wait: --time, --focus, --exclude, --hide and --module do not apply to wait (it counts the whole recording)");

	for (;;) {
		struct stat st;
		bool met = false, finished = false, truncated = false;
		uint64_t nsamples = 0;
		double secs = 0;

		/* a file shorter than its header is still being created */
		if (!stat(q.input, &st) && st.st_size >= 16) {
			struct profile p;
			struct err e;
			if (profile_load_err(&p, q.input, &e)) {
				error("%s", e.msg);
				return 1;
			}
			nsamples = p.nsamples;
			secs = recorded_seconds(&p);
			if (kind == WAIT_SAMPLES)
				met = p.nsamples >= want_samples;
			else if (kind == WAIT_SECONDS)
				met = secs >= want_seconds;
			else if (symbol) /* WAIT_SYMBOL sets it */
				met = has_symbol(&p, symbol, !q.no_demangle);
			/* A finished recording will not change: give up at once if it
			 * finished while we waited; one that finished before we started
			 * gets a second's grace, in case a new "stax record" is about
			 * to replace it (launched just before us, it renames the file
			 * to FILE.old within milliseconds). One that is unfinished and
			 * that no recorder holds (killed) will not change either:
			 * seen so twice (a recorder locks the file just after
			 * creating it), it counts as finished. */
			if (!p.partial || !p.live) {
				bool before = st.st_mtim.tv_sec < started.tv_sec ||
					      (st.st_mtim.tv_sec == started.tv_sec &&
					       st.st_mtim.tv_nsec < started.tv_nsec);
				truncated = p.partial;
				finished = (!before || now_ns() - start >= 1000000000ull) &&
					   (!truncated || ++dead > 1);
			} else {
				dead = 0;
			}
			nwarn = profile_warnings(&p, warnings);
			profile_release(&p);
			if (met) {
				print_warnings(warnings, nwarn);
				return 0;
			}
		}
		if (finished || (timeout > 0 && (now_ns() - start) / 1e9 >= timeout))
			print_warnings(warnings, nwarn);
		if (finished) {
			fprintf(stderr, "stax: wait: %s %s without meeting the condition"
				" (%" PRIu64 " samples, %.2f s recorded)\n", q.input,
				truncated ? "stopped growing (its recorder is gone)" : "finished", nsamples, secs);
			return 1;
		}
		if (timeout > 0 && (now_ns() - start) / 1e9 >= timeout) {
			fprintf(stderr, "stax: wait: timed out after %.1f s (%s: %" PRIu64 " samples, %.2f s recorded)\n",
				timeout, q.input, nsamples, secs);
			return 1;
		}
		usleep(kind == WAIT_SYMBOL ? 250000 : 100000);
	}
}
