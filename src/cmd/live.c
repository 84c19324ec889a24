/* live.c - stax live: the top functions of a running program, refreshed.
 *
 * A child process records (record_run) into a memfd, or into -o FILE;
 * this process reads the growing recording the way every view does, every
 * interval, and prints the top functions of the last interval and of the
 * whole run: on a terminal as a screen refreshed in place with keys, else
 * as --count snapshots one after the other (like top -b). The screen is
 * the controlling terminal (/dev/tty) when standard output is not one, so
 * that 'stax live -- CMD >/dev/null' silences CMD, not the screen.
 */
#include "cmd/cmd.h"
#include "record/recorder.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

enum { LIVE_INTERVAL = OPT_LONG, LIVE_COUNT, LIVE_NO_BPF };

static const struct opt live_opts[] = {
	{ LIVE_INTERVAL, "interval", "S", "seconds between refreshes (default 1)", NULL },
	{ LIVE_COUNT, "count", "N", "stop after N snapshots (batch mode)", NULL },
	{ 'n', NULL, "N", "rows per table (default 15)", NULL },
	{ 'F', "freq", "HZ", "samples per second per thread (default 999), as for\n"
	  "stax record", NULL },
	{ 'e', "event", "EVENT", "the event to sample (default cpu-clock), as for\n"
	  "stax record", NULL },
	{ 'o', "output", "FILE", "record into FILE, which is kept (default: a memory\n"
	  "file)", NULL },
	{ 'p', "pid", "PID[,PID...]", "attach to running processes, as for stax record", NULL },
	{ 'a', "all-cpus", NULL, "record every process on every cpu, as for stax record", NULL },
	{ LIVE_NO_BPF, "no-bpf", NULL, "do not load the in-kernel reader, as for stax record", NULL },
	OPT_END,
};

const struct cmd_spec cmd_live_spec = {
	"live",
"usage: stax live [-F HZ] [-e EVENT] [-o FILE] [--interval S] [--count N] [-n N] [--no-bpf]\n"
"                 (-p PID[,PID...] | -a | -- CMD ARGS...)\n"
"\n"
"Record CMD (or running processes, or every process with -a) and show the\n"
"top functions of the last interval and of the whole run, refreshed every\n"
"interval. On a terminal the screen is redrawn in place: s switches the\n"
"order between self and total samples, p pauses (the recording goes on),\n"
"q quits (Ctrl-C too). The screen is the controlling terminal (/dev/tty)\n"
"even when standard output is redirected (stax live -- CMD >/dev/null\n"
"keeps CMD's output off the screen). Without a terminal, or with --count,\n"
"it prints snapshots to standard output one after another (batch mode,\n"
"like top -b) and stops after N (10 without --count).\n"
"The recording is made as by stax record, in a memory file that nothing\n"
"is left of afterwards (even when stax is killed), or in FILE with -o,\n"
"which is kept. It ends when CMD exits, when the processes exit, or when\n"
"stax live quits (CMD is then sent SIGINT, as by stax record, and runs on\n"
"to its end; attached processes are never signalled). The intervals count\n"
"from the start of the recording. The exit status is CMD's when CMD ended\n"
"the recording (as for stax record), 0 when stax live ended it, and the\n"
"recorder's (1, or 126/127 for a command that cannot run) when it could\n"
"not start.\n"
,
	live_opts,
	NULL,
	OPT_STOP_AT_ARG,
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One snapshot, from one read of the recording: the top of the samples
 * after since_ns (the previous snapshot's last sample; 0 for the first
 * snapshot: all of them) and of the whole run. Returns the recording's
 * last sample time. */
static uint64_t snapshot(const char *path, uint64_t since_ns, size_t rows,
			 bool by_total, bool tty, unsigned n, FILE *out)
{
	struct top_opts o = { .limit = rows, .sort_total = by_total };
	struct view_filter f = { -1, -1, NULL, 0, 0 };
	struct prof_sym_opts so = { true, false, false };
	struct prof_filter pf;
	struct profile p;
	uint64_t last, start;
	char *whole = NULL;
	size_t len = 0;
	FILE *mem;
	struct err e;

	if (profile_load_err(&p, path, &e)) {
		error("%s", e.msg);
		return since_ns;
	}
	profile_symbolize_opts(&p, &so);
	last = p.last_time;
	start = profile_start_ns(&p);
	if (tty)
		fputs("\033[H\033[2J", out);
	fprintf(out, "stax live: snapshot %u, %.1f s recorded, %zu samples%s%s\n", n,
		last > start ? (last - start) / 1e9 : 0.0, p.nsamples, by_total ? ", by total" : ", by self",
		tty ? "  (s: self/total, p: pause, q: quit)" : "");
	mem = open_memstream(&whole, &len);
	if (mem) {
		view_top(&p, &f, &o, mem);
		fclose(mem);
	}
	/* then the same profile cut to the samples after the previous snapshot */
	memset(&pf, 0, sizeof(pf));
	if (since_ns && since_ns >= start) {
		pf.has_time = true;
		pf.t_start = (since_ns - start) / 1e9 + 1e-9;
		pf.t_end = INFINITY;
		profile_filter(&p, &pf, &e);
	}
	if (pf.has_time)
		fprintf(out, "\nsince the previous snapshot (%.1f s):\n", last > since_ns ? (last - since_ns) / 1e9 : 0.0);
	else
		fprintf(out, "\nso far (%.1f s):\n", last > start ? (last - start) / 1e9 : 0.0);
	view_top(&p, &f, &o, out);
	fprintf(out, "\nwhole run:\n%s", whole ? whole : "");
	fflush(out);
	free(whole);
	profile_release(&p);
	return last;
}

/* Wait until the recorder says the recording has started (a byte on
 * started), or has ended without starting (the pipe closes: it failed and
 * said why). False when it did not start, or a signal came first. */
static bool wait_started(int started, pid_t child, int *status, bool *ended)
{
	for (;;) {
		struct pollfd pfd = { started, POLLIN, 0 };
		int st;
		char c;
		if (stop_requested)
			return false;
		if (poll(&pfd, 1, 100) > 0 && read(started, &c, 1) == 1)
			return true;
		/* closed without a byte: the recorder failed, and ends */
		if (waitpid(child, &st, pfd.revents ? 0 : WNOHANG) == child) {
			*ended = true;
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			return false;
		}
	}
}

/* Wait until until (CLOCK_MONOTONIC ns), answering the keys on kfd when
 * tty: s flips *by_total, p *paused (either sets *redraw and returns at
 * once), q or Ctrl-C stops. True when the recorder (child) ended, with
 * its exit status in *status. */
static bool wait_interval(pid_t child, int kfd, bool tty, uint64_t until, bool *by_total, bool *paused,
			  bool *redraw, int *status)
{
	int st;
	while (!stop_requested) {
		uint64_t t = mono_ns();
		struct pollfd pfd = { kfd, POLLIN, 0 };
		int ms = t >= until ? 0 : (int)((until - t) / 1000000) + 1;
		if (waitpid(child, &st, WNOHANG) == child) {
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			return true;
		}
		if (t >= until)
			break;
		if (ms > 100)
			ms = 100;
		if (tty && poll(&pfd, 1, ms) > 0) {
			char c = 0;
			if (read(kfd, &c, 1) == 1) {
				if (c == 'q' || c == 3)
					stop_requested = 1;
				else if (c == 's')
					*by_total = !*by_total, *redraw = true;
				else if (c == 'p')
					*paused = !*paused, *redraw = true;
			}
			if (*redraw)
				break;
		} else if (!tty) {
			usleep((useconds_t)ms * 1000);
		}
	}
	return false;
}

/* The screen and the keys: standard output and input when both are a
 * terminal, else the controlling terminal (/dev/tty) when stax is in its
 * foreground; false when there is none (batch mode). *kfd is where keys
 * are read; *screen is stdout or a stream on *kfd. */
static bool open_screen(int *kfd, FILE **screen)
{
	int fd;
	FILE *f;
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		*kfd = STDIN_FILENO;
		*screen = stdout;
		return true;
	}
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* in the background, reading or setting the terminal would stop us */
	if (tcgetpgrp(fd) != getpgrp() || !(f = fdopen(fd, "w"))) {
		close(fd);
		return false;
	}
	*kfd = fd;
	*screen = f;
	return true;
}

int cmd_live(int argc, char **argv)
{
	struct record_opts ro;
	double interval = 1;
	uint64_t count = 0, rows = 15;
	const char *output = NULL;
	char path[64];
	struct termios saved;
	bool tty = false, by_total = false, paused = false;
	FILE *screen = stdout;
	int kfd = STDIN_FILENO;
	uint64_t paused_at = 0;
	struct opt_parser op;
	int i, id, fd, status = 0, started[2];
	bool ended = false;
	uint64_t since = 0;
	unsigned n = 0;
	pid_t child;

	memset(&ro, 0, sizeof(ro));
	ro.event = "cpu-clock";
	ro.freq = 999;
	ro.unwind = UNWIND_MODE_HYBRID;
	ro.stack_size = 32768;
	ro.quiet = 1;
	opt_begin(&op, &cmd_live_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		const char *v = op.arg;
		switch (id) {
		case 'F':
			if (parse_u64(v, &ro.freq) || !ro.freq)
				die("live: -F needs a positive number of Hz, not '%s'", v);
			break;
		case 'e':
			ro.event = v;
			break;
		case 'o':
			output = v;
			break;
		case 'p': {
			char *copy = xstrdup(v), *tok, *save = NULL;
			for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
				uint64_t pid;
				if (parse_u64(tok, &pid) || !pid || pid > 0x7fffffff)
					die("live: -p takes process ids like 1234 or 1234,5678, not '%s'", v);
				ro.pids = xrealloc(ro.pids, (ro.npids + 1) * sizeof(*ro.pids));
				ro.pids[ro.npids++] = (int)pid;
			}
			free(copy);
			break;
		}
		case 'a':
			ro.system_wide = 1;
			break;
		case LIVE_NO_BPF:
			ro.no_bpf = 1;
			break;
		case LIVE_INTERVAL: {
			char *end;
			interval = strtod(v, &end);
			if (*end || end == v || !(interval >= 0.1) || interval > 3600)
				die("live: --interval needs seconds from 0.1 to 3600, not '%s'", v);
			break;
		}
		case LIVE_COUNT:
			if (parse_u64(v, &count) || !count)
				die("live: --count needs a positive number, not '%s'", v);
			break;
		case 'n':
			if (parse_u64(v, &rows))
				die("live: -n needs a number, not '%s'", v);
			break;
		}
	}
	i = opt_rest(&op);
	if (i < argc)
		ro.argv = argv + i;
	if (ro.argv && ro.npids)
		die("live: give either -p PID or a command, not both");
	if (!ro.argv && !ro.npids && !ro.system_wide)
		die("live: nothing to record (give a command after --, -p PID or -a; see 'stax help live')");
	if (output) {
		ro.output = output;
		snprintf(path, sizeof(path), "%s", output);
		if (strlen(output) >= sizeof(path))
			die("live: -o path too long");
	} else {
		/* a memory file: nothing is left when every process holding it ends */
		fd = memfd_create("stax-live", MFD_CLOEXEC);
		if (fd < 0)
			die("live: cannot make a memory file: %s", strerror(errno));
		ro.output = "stax-live";
		ro.output_fd = fd;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	tty = !count && open_screen(&kfd, &screen);
	if (!tty && !count)
		count = 10; /* batch mode without --count: ten snapshots */
	if (pipe2(started, O_CLOEXEC))
		die("live: cannot make a pipe: %s", strerror(errno));
	fflush(NULL);
	child = fork();
	if (child < 0)
		die("live: cannot fork: %s", strerror(errno));
	if (child == 0) {
		int st = 0;
		struct err e;
		/* the recorder: its own process, so that it keeps recording at
		 * its own pace while this one reads */
		close(started[0]);
		ro.started_fd = started[1];
		if (record_run(&ro, &st, &e)) {
			if (e.msg[0])
				error("%s", e.msg);
			if (!st)
				st = 1;
		}
		_exit(st);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	close(started[1]);
	/* the intervals count from the recording's start, not ours: a
	 * recorder that takes long to start (a slow machine, a sanitizer
	 * build) must not have its snapshots, or its end, come before CMD
	 * even runs */
	if (!wait_started(started[0], child, &status, &ended)) {
		close(started[0]);
		if (!ended) {
			kill(child, SIGINT);
			waitpid(child, &status, 0);
			status = 0;
		}
		free(ro.pids);
		return ended && !status ? 1 : status;
	}
	close(started[0]);
	if (tty && !tcgetattr(kfd, &saved)) {
		struct termios raw = saved;
		raw.c_lflag &= ~(ICANON | ECHO | ISIG);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(kfd, TCSANOW, &raw);
	} else {
		if (screen != stdout)
			fclose(screen);
		screen = stdout;
		tty = false;
	}
	for (;;) {
		uint64_t until = mono_ns() + (uint64_t)(interval * 1e9);
		bool redraw = false;
		if (wait_interval(child, kfd, tty, until, &by_total, &paused, &redraw, &status))
			ended = true;
		if (stop_requested)
			break;
		if (!paused || redraw) {
			n++;
			uint64_t last = snapshot(path, since, (size_t)rows, by_total, tty, n, screen);
			if (!redraw)
				since = last;
			if (paused && !paused_at)
				paused_at = mono_ns();
			if (!paused)
				paused_at = 0;
		}
		/* paused: one status line below the frozen screen, rewritten
		 * in place */
		if (paused && tty) {
			fprintf(screen, "\r\033[K(paused %.0f s: p to go on; the recording goes on)",
				(mono_ns() - paused_at) / 1e9);
			fflush(screen);
		}
		if (ended || (count && n >= count))
			break;
	}
	if (tty) {
		if (paused)
			fputc('\n', screen);
		fflush(screen);
		tcsetattr(kfd, TCSANOW, &saved);
		if (screen != stdout)
			fclose(screen);
	}
	/* stop the recorder: the first SIGINT it forwards to CMD (as stax
	 * record does), a second one stops the recording; attached
	 * processes are never signalled */
	if (!ended && waitpid(child, &status, WNOHANG) == 0) {
		int st, k;
		kill(child, SIGINT);
		for (k = 0; k < 30 && waitpid(child, &st, WNOHANG) == 0; k++)
			usleep(100000);
		if (k == 30) {
			kill(child, SIGINT);
			waitpid(child, &st, 0);
		}
		status = 0; /* stax live ended it: CMD's status is not ours */
	} else if (!ended) {
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	free(ro.pids);
	return status;
}
