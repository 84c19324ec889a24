/* agent.c - stax agent: record the whole machine, always, at a low rate,
 * into a directory of recordings that rotate and expire.
 *
 * A foreground process for a service manager (scripts/stax-agent.service):
 * record_run() with record_files (recorder.h) does the recording, one
 * file after another without stopping its events; agent/files.h names
 * the files, creates them and removes the old ones. SIGTERM and SIGINT
 * end the current file and exit 0; SIGHUP starts the next file now.
 */
#include "cmd/cmd.h"
#include "agent/files.h"
#include "record/recorder.h"
#include "serve/pull.h"
#include "lib/err.h"
#include "lib/perm.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The caps that keep the agent's memory bounded whatever runs (see the
 * man page): live processes carried from one file to the next, and the
 * bytes the ingester may hold for one file before it ends early. */
#define AGENT_MAX_PROCS 8192
#define AGENT_FILE_CAP (32ull << 20)
/* Unwind tables no sample used for this long are let go. */
#define AGENT_TRIM_NS (120ull * 1000000000ull)
/* Retention runs at each new file and this often. */
#define AGENT_RETAIN_NS (10ull * 1000000000ull)

enum {
	AG_DIR = OPT_LONG, AG_ROTATE, AG_KEEP, AG_MAX_SIZE, AG_OFF_CPU, AG_MAX_PROCS, AG_LISTEN,
	AG_ALLOW_REMOTE,
};

static const struct opt agent_opts[] = {
	{ 'F', "freq", "HZ", "samples per second per cpu (default 19)", NULL },
	{ AG_OFF_CPU, "off-cpu", NULL, "also record where threads wait and who woke them, as\n"
	  "stax record --off-cpu does", NULL },
	{ AG_DIR, "dir", "DIR", "where the recordings go (default /var/lib/stax; made\n"
	  "0700 when missing; refused when it is a symbolic link,\n"
	  "another user's, or writable by others)", NULL },
	{ AG_ROTATE, "rotate", "TIME", "a new recording this often (default 10min; TIME is a\n"
	  "number with ms, s, min, h or d; seconds without)", NULL },
	{ AG_KEEP, "keep", "TIME", "remove recordings whose last write is older than TIME\n"
	  "(default 1d; 0 keeps them)", NULL },
	{ AG_MAX_SIZE, "max-size", "SIZE", "remove the oldest recordings while all of them take\n"
	  "more than SIZE (default 1G; K, M, G; 0: no limit)", NULL },
	{ AG_MAX_PROCS, "max-processes", "N", "live processes whose names and mappings are carried\n"
	  "into the next recording (default 8192); beyond it the\n"
	  "least recently sampled are evicted (counted in stax info)\n"
	  "and read again from /proc if they run again", NULL },
	{ AG_LISTEN, "listen", "ADDR:PORT", "also serve the recordings by the pull convention of Go's\n"
	  "net/http/pprof (GET /debug/pprof/profile?seconds=N, with\n"
	  "pid= and comm=; /debug/pprof/), as stax serve --pprof DIR\n"
	  "does: what go tool pprof, Parca and Pyroscope scrape.\n"
	  "ADDR is a loopback address (127.0.0.1, [::1], localhost)\n"
	  "unless --allow-remote; PORT 0 takes a free one", NULL },
	{ AG_ALLOW_REMOTE, "allow-remote", NULL, "with --listen: allow an address beyond loopback\n"
	  "(0.0.0.0: every one), with a warning: anyone who can\n"
	  "reach it reads every process's profile", NULL },
	{ 'q', "quiet", NULL, "say nothing per recording, only errors", NULL },
	OPT_END,
};

const struct cmd_spec cmd_agent_spec = {
	"agent",
"usage: stax agent [-F HZ] [--off-cpu] [--dir DIR] [--rotate TIME] [--keep TIME]\n"
"                  [--max-size SIZE] [--max-processes N]\n"
"                  [--listen ADDR:PORT [--allow-remote]] [-q]\n"
"\n"
"Record every process on every cpu, always, at a low rate (19 Hz), into\n"
"a directory of recordings: a new one every --rotate, each readable alone\n"
"(it carries the names, mappings and symbols of what it holds), named\n"
"stax-YYYYMMDD-HHMMSS.data after the UTC time of its start; the one being\n"
"written reads too. Recordings past --keep or --max-size are removed; only\n"
"files the agent could have written are (named so, regular, this user's,\n"
"stax recordings): anything else in DIR is left as it is. The events stay\n"
"open from one recording to the next: no sample falls between two files.\n"
"Memory stays bounded however long it runs and however many processes\n"
"come and go: a new recording keeps only the processes still alive (at\n"
"most --max-processes), and unwind tables unused for 2 minutes are let\n"
"go; a recording whose state passes 32 MiB ends early.\n"
"\n"
"It runs in the foreground for a service manager (stax-agent.service).\n"
"SIGTERM or SIGINT ends the current recording (readable, with its symbols)\n"
"and exits 0; SIGHUP starts the next recording now. Needs root,\n"
"CAP_PERFMON or kernel.perf_event_paranoid <= 0 (with --off-cpu, root or\n"
"CAP_PERFMON for the wakers). With --listen it also serves the recordings\n"
"to scrapers: GET /debug/pprof/profile?seconds=N answers a gzip'd pprof\n"
"of the N seconds after the request, as stax serve --pprof DIR does.\n",
	agent_opts,
"Read a recording with any query command: stax top -i DIR/stax-...data.\n",
	0,
};

/* TIME: a number of seconds, or a number with ms, s, m/min, h or d. */
static int parse_time(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "", 1e9 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "min", 60e9 },
		{ "h", 3600e9 }, { "d", 86400e9 },
	};
	char *end;
	double v = strtod(s, &end);
	size_t i;
	if (end == s || v < 0 || v != v)
		return -1;
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(end, units[i].unit)) {
			if (v * units[i].ns > 1e19)
				return -1;
			*ns = (uint64_t)(v * units[i].ns);
			return 0;
		}
	return -1;
}

/* SIZE: bytes, or a number with K, M, G or T (powers of 1024), B or iB after. */
static int parse_size(const char *s, uint64_t *bytes)
{
	static const char *units = "KMGT";
	char *end;
	double v = strtod(s, &end), mul = 1;
	const char *u;
	if (end == s || v < 0 || v != v)
		return -1;
	if (*end && (u = strchr(units, *end))) {
		for (mul = 1024; u > units; u--)
			mul *= 1024;
		end++;
		if (*end == 'i')
			end++;
	}
	if (*end == 'B')
		end++;
	if (*end || v * mul > 1.8e19)
		return -1;
	*bytes = (uint64_t)(v * mul);
	return 0;
}

static void format_time(char *out, size_t n, uint64_t ns)
{
	if (!ns)
		snprintf(out, n, "never");
	else if (ns % 86400000000000ull == 0)
		snprintf(out, n, "%" PRIu64 "d", (uint64_t)(ns / 86400000000000ull));
	else if (ns % 3600000000000ull == 0)
		snprintf(out, n, "%" PRIu64 "h", (uint64_t)(ns / 3600000000000ull));
	else if (ns % 60000000000ull == 0)
		snprintf(out, n, "%" PRIu64 "min", (uint64_t)(ns / 60000000000ull));
	else
		snprintf(out, n, "%gs", ns / 1e9);
}

struct agent {
	struct agent_dir dir;
	bool quiet;
	uint64_t last_retain;
	uint64_t files;
};

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void retain(struct agent *a)
{
	struct agent_retain st;
	char size[32];
	a->last_retain = now_ns();
	if (!a->dir.keep_ns && !a->dir.max_bytes)
		return;
	agent_retain(&a->dir, wall_ns(), &st);
	if (st.removed && !a->quiet) {
		format_size(size, sizeof(size), st.removed_bytes);
		note("agent: removed %zu old recording%s (%s)", st.removed, st.removed == 1 ? "" : "s", size);
	}
}

static int open_next(void *arg, uint64_t wall, char *name, size_t len, struct err *e)
{
	struct agent *a = arg;
	int fd = agent_file_create(&a->dir, wall, e);
	if (fd >= 0)
		snprintf(name, len, "%s/%s", a->dir.path, a->dir.current);
	return fd;
}

static void file_done(void *arg, const char *name, const struct record_file_stats *st)
{
	struct agent *a = arg;
	char size[32];
	a->files++;
	if (!a->quiet) {
		format_size(size, sizeof(size), st->bytes);
		note("agent: %s: %" PRIu64 " samples in %.0f s, %s%s%s", name, st->samples,
		     (st->end_ns - st->start_ns) / 1e9, size,
		     strcmp(st->why, "rotate") && strcmp(st->why, "stop") ? ", ended by " : "",
		     strcmp(st->why, "rotate") && strcmp(st->why, "stop") ? st->why : "");
	}
	retain(a);
}

static void tick(void *arg)
{
	struct agent *a = arg;
	if (now_ns() - a->last_retain >= AGENT_RETAIN_NS)
		retain(a);
}

/* The agent needs to record every process: say so before anything is
 * made (the directory). */
static void check_permission(bool off_cpu)
{
	struct perm_facts pf;
	char why[512];
	perm_probe(&pf);
	if (!perm_allowed(PERM_SYSTEM, &pf))
		die("agent: cannot record the whole machine: %s",
		    perm_why(PERM_SYSTEM, &pf, 0, why, sizeof(why)));
	if (off_cpu && !perm_allowed(PERM_OFFCPU, &pf))
		die("agent: cannot record off-CPU time: %s", perm_why(PERM_OFFCPU, &pf, 0, why, sizeof(why)));
}

int cmd_agent(int argc, char **argv)
{
	struct record_opts o;
	struct record_files f;
	struct pull_opts po;
	struct pull_server *ps = NULL;
	pthread_mutex_t symbol_lock = PTHREAD_MUTEX_INITIALIZER;
	struct agent a;
	struct opt_parser op;
	const char *dir = "/var/lib/stax";
	uint64_t rotate = 600ull * 1000000000ull, keep = 86400ull * 1000000000ull, max_size = 1ull << 30;
	uint64_t max_procs = AGENT_MAX_PROCS;
	char rs[32], ks[32], ms[32];
	int id, status = 0;
	struct err e;

	memset(&o, 0, sizeof(o));
	memset(&a, 0, sizeof(a));
	memset(&po, 0, sizeof(po));
	o.event = "cpu-clock";
	o.freq = 19;
	o.unwind = UNWIND_MODE_HYBRID;
	o.stack_size = 32768;
	o.system_wide = 1;
	o.quiet = 1;
	opt_begin(&op, &cmd_agent_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		const char *v = op.arg;
		switch (id) {
		case 'F':
			if (parse_u64(v, &o.freq) || !o.freq)
				die("agent: -F needs a positive number of Hz, not '%s'", v);
			break;
		case AG_OFF_CPU:
			o.off_cpu = 1;
			break;
		case AG_DIR:
			if (!*v)
				die("agent: --dir needs a directory");
			dir = v;
			break;
		case AG_ROTATE:
			if (parse_time(v, &rotate) || rotate < 1000000000ull)
				die("agent: --rotate takes a time of 1 s or more (20s, 10min, 1h), not '%s'", v);
			break;
		case AG_KEEP:
			if (parse_time(v, &keep))
				die("agent: --keep takes a time (60s, 7d; 0 keeps everything), not '%s'", v);
			break;
		case AG_MAX_SIZE:
			if (parse_size(v, &max_size))
				die("agent: --max-size takes a size (500M, 2G; 0: no limit), not '%s'", v);
			break;
		case AG_MAX_PROCS:
			if (parse_u64(v, &max_procs) || !max_procs || max_procs > (1u << 22))
				die("agent: --max-processes takes 1 to %u, not '%s'", 1u << 22, v);
			break;
		case AG_LISTEN:
			po.listen = v;
			break;
		case AG_ALLOW_REMOTE:
			po.allow_remote = true;
			break;
		case 'q':
			a.quiet = true;
			break;
		case OPT_ARG:
			die("agent: takes no arguments, not '%s' (see 'stax help agent')", v);
		}
	}
	if (po.allow_remote && !po.listen)
		die("agent: --allow-remote is for --listen ADDR:PORT");
	check_permission(o.off_cpu);
	if (agent_dir_open(&a.dir, dir, &e))
		die("agent: cannot use %s: %s (choose a directory of yours with --dir)", dir, e.msg);
	a.dir.keep_ns = keep;
	a.dir.max_bytes = max_size;
	memset(&f, 0, sizeof(f));
	f.rotate_ns = rotate;
	f.max_procs = (size_t)max_procs;
	f.file_cap = AGENT_FILE_CAP;
	f.trim_ns = AGENT_TRIM_NS;
	f.open_next = open_next;
	f.file_done = file_done;
	f.tick = tick;
	f.arg = &a;
	f.symbol_lock = &symbol_lock;
	o.files = &f;
	retain(&a);
	if (po.listen) {
		/* its threads symbolize the profiles they serve: with the
		 * recorder's symbols of each file, one at a time (pull.h) */
		po.dir = dir;
		po.symbol_lock = &symbol_lock;
		if (!(ps = pull_start(&po, &e))) {
			agent_dir_close(&a.dir);
			die("agent: --listen %s: %s", po.listen, e.msg);
		}
		if (!a.quiet)
			note("agent: serving the CPU profiles of %s at http://%s/debug/pprof/ (go tool pprof"
			     " http://%s/debug/pprof/profile?seconds=30)", dir, pull_address(ps), pull_address(ps));
	}
	if (!a.quiet) {
		format_time(rs, sizeof(rs), rotate);
		format_time(ks, sizeof(ks), keep);
		if (max_size)
			format_size(ms, sizeof(ms), max_size);
		else
			snprintf(ms, sizeof(ms), "no limit");
		note("agent: recording every process at %" PRIu64 " Hz%s into %s: a new recording every"
		     " %s, kept for %s, %s in all", o.freq, o.off_cpu ? " (and off-CPU)" : "", dir, rs, ks, ms);
	}
	if (record_run(&o, &status, &e)) {
		if (e.msg[0])
			error("agent: %s", e.msg);
		if (!a.files)
			agent_file_discard(&a.dir);
		status = 1;
	} else if (!a.quiet) {
		note("agent: stopped after %" PRIu64 " recording%s", a.files, a.files == 1 ? "" : "s");
	}
	pull_stop(ps);
	agent_dir_close(&a.dir);
	return status;
}
