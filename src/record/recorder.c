#include "record/recorder.h"
#include "record/events.h"
#include "record/ingest.h"
#include "record/ring.h"
#include "record/target.h"
#include "store/writer.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>


struct recorder {
	const struct record_opts *o;
	const struct event_spec *ev;
	bool kernel;
	int ncpus;
	int *fds;
	size_t nfds, fdcap;
	struct ring *rings;      /* one per cpu */
	/* --off-cpu: the switch records (PERF_RECORD_SWITCH) in rings of
	 * their own, one per cpu, so that a flood of switch samples with
	 * stack copies cannot crowd out the records that time the intervals */
	struct ring *srings;
	struct buf batch;
	struct perf_format fmt;
	struct ingest ing;
	struct store_writer w;
	uint64_t start_ns, end_ns;
	struct target child;
	bool launched, child_done;
	int child_status;
	/* CPU time of attached processes (-p): at the start and as last
	 * seen, from /proc/PID/stat, for the effective rate in stax info */
	uint64_t *cpu_first, *cpu_last;
};

/* ---- signals: a self-pipe wakes the poll loop ---- */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_count, sig_last, sig_user;
static bool sig_stop;
static sig_atomic_t sig_seen, sig_forwarded;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	(void)uc;
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		sig_last = sig;
		/* si_code <= 0: sent by a process (kill), not by the terminal */
		sig_user = si && si->si_code <= 0;
		sig_count++;
	}
	if (write(sig_pipe[1], "s", 1) < 0) {
		/* pipe full: the loop is awake anyway */
	}
	errno = e;
}

static void install_signals(void)
{
	struct sigaction sa;
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		die("cannot create a pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void restore_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
}

/* ---- opening events ---- */

/* Pages of the switch-record rings: two 48-byte records a switch, 2 MiB
 * hold ~20,000 switches between two drains. */
#define SWITCH_RING_PAGES 512

static size_t ring_pages(const struct recorder *r)
{
	size_t pages = r->o->unwind != UNWIND_MODE_FP ? 1024 : 256;
	if (r->o->off_cpu)
		pages *= 4; /* a switch-heavy program writes in bursts */
	if (geteuid() != 0) {
		/* A user may lock kernel.perf_event_mlock_kb per online cpu
		 * for all their rings, and beyond that up to ulimit -l more
		 * (the kernel's perf_mmap rule). Keep half of the latter for
		 * other tools; stack copies need the room (~33 KiB a sample). */
		long kb = sysctl_read("/proc/sys/kernel/perf_event_mlock_kb", 516);
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		struct rlimit rl;
		size_t budget = (size_t)kb * (size_t)(online > 0 ? online : 1), fit;
		if (!getrlimit(RLIMIT_MEMLOCK, &rl))
			budget += rl.rlim_cur == RLIM_INFINITY ? 65536 : (size_t)(rl.rlim_cur / 1024 / 2);
		fit = budget / 4 / (size_t)r->ncpus;
		if (r->o->off_cpu && fit > SWITCH_RING_PAGES + 1)
			fit -= SWITCH_RING_PAGES + 1;
		while (pages > 1 && pages + 1 > fit)
			pages /= 2;
	}
	return pages;
}

static void add_fd(struct recorder *r, int fd)
{
	GROW(r->fds, r->fdcap, r->nfds + 1);
	r->fds[r->nfds++] = fd;
}

/* Open the event for task pid on every cpu into rings (of pages pages);
 * the first fd per cpu owns the ring, later ones write into it. */
static int open_into(struct recorder *r, struct perf_event_attr *attr, int pid,
		     struct ring *rings, size_t pages)
{
	int cpu, opened = 0;
	/* Wake the recorder when a quarter of the ring is full, not on every
	 * sample: each wakeup preempts the profiled threads (seen as off-CPU
	 * "preempted" time) and a sample with a stack copy is larger than a
	 * small watermark. The loop polls every 100 ms anyway. */
	attr->wakeup_watermark = (uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	for (cpu = 0; cpu < r->ncpus; cpu++) {
		int fd = event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV || (errno == EINVAL && cpu > 0))
				continue; /* offline cpu */
			return event_open_error(errno, r->ev, r->o->freq, pid);
		}
		add_fd(r, fd);
		if (!rings[cpu].base) {
			int e = ring_map(&rings[cpu], fd, pages);
			if (e == -EPERM || e == -ENOMEM)
				return error("cannot map the sample ring buffer: locked memory limit reached"
					     " (kernel.perf_event_mlock_kb is %ld KiB; run: sudo sysctl"
					     " kernel.perf_event_mlock_kb=2048, or raise ulimit -l)",
					     sysctl_read("/proc/sys/kernel/perf_event_mlock_kb", 516));
			if (e)
				return error("cannot map the sample ring buffer: %s", strerror(-e));
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rings[cpu].fd)) {
			return error("cannot redirect perf event output: %s", strerror(errno));
		}
		opened++;
	}
	if (!opened)
		return error("cannot open perf events: no usable cpu");
	return 0;
}

static int open_task(struct recorder *r, struct perf_event_attr *attr, int pid)
{
	return open_into(r, attr, pid, r->rings, ring_pages(r));
}

/* Open the off-CPU events for pid (or -1 with -a) next to the sampling
 * one: the switch-out samples into the same rings (the ingester learns
 * their ids), the switch records into rings of their own. */
static int open_switch(struct recorder *r, struct perf_event_attr *attr,
		       struct perf_event_attr *records, int pid)
{
	size_t first = r->nfds, i;
	if (open_task(r, attr, pid))
		return -1;
	for (i = first; i < r->nfds; i++) {
		uint64_t id;
		if (ioctl(r->fds[i], PERF_EVENT_IOC_ID, &id))
			return error("cannot read the id of a perf event: %s", strerror(errno));
		ingest_add_switch_id(&r->ing, id);
	}
	return open_into(r, records, pid, r->srings, SWITCH_RING_PAGES);
}

/* Stack bytes copied per switch-out: the blocking frames are near the
 * top, and a switch-heavy program must not flood the rings. */
#define SWITCH_STACK_BYTES 4096

/* perf_event_x86_regs numbering: AX BX CX DX SI DI BP SP IP FLAGS CS SS
 * DS ES FS GS R8..R15. We ask for AX..IP and R8..R15 (bits 0-8, 16-23). */
#define REGS_MASK 0xff01ffull
/* ---- records ---- */

struct rec_ref {
	uint64_t time;
	size_t off;
};

static int cmp_ref(const void *a, const void *b)
{
	const struct rec_ref *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* Read every ring, then handle the records in time order: a mapping seen
 * on one cpu must be known before a sample on another cpu uses it. */
static void drain(struct recorder *r)
{
	static struct rec_ref *refs;
	static size_t cap;
	size_t n = 0, off;
	int cpu;

	buf_reset(&r->batch);
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_read(&r->rings[cpu], &r->batch);
	if (r->srings)
		for (cpu = 0; cpu < r->ncpus; cpu++)
			ring_read(&r->srings[cpu], &r->batch);
	for (off = 0; off < r->batch.len;) {
		const struct perf_event_header *h = (const void *)(r->batch.data + off);
		GROW(refs, cap, n + 1);
		refs[n].time = perf_record_time(&r->fmt, h);
		refs[n].off = off;
		n++;
		off += h->size;
	}
	if (n)
		qsort(refs, n, sizeof(*refs), cmp_ref);
	for (off = 0; off < n; off++)
		ingest_record(&r->ing, &r->fmt, (const void *)(r->batch.data + refs[off].off));
}

/* ---- attaching: names and mappings from /proc ---- */

static void seed_process(struct recorder *r, int pid, const pid_t *tids, int ntids)
{
	uint64_t t = now_ns();
	int i;
	for (i = 0; i < ntids; i++) {
		char path[64], name[64] = "";
		FILE *f;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, (int)tids[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = 0;
		fclose(f);
		ingest_seed_comm(&r->ing, (uint32_t)pid, (uint32_t)tids[i], t, name);
	}
	ingest_seed_proc(&r->ing, pid, t);
}

/* -a: names and mappings of every process that exists now; those that
 * start later come with COMM, FORK and MMAP records. */
static void seed_all(struct recorder *r)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	ingest_seed_comm(&r->ing, 0, 0, now_ns(), "swapper");
	if (!d)
		return;
	while ((e = readdir(d))) {
		uint64_t pid;
		pid_t *tids = NULL;
		int nt;
		if (parse_u64(e->d_name, &pid) || !pid || pid > 0x7fffffff)
			continue;
		nt = target_threads((pid_t)pid, &tids);
		if (nt > 0)
			seed_process(r, (int)pid, tids, nt);
		free(tids);
	}
	closedir(d);
}

/* ---- the session ---- */

static void put_meta_u64(struct store_writer *w, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	store_put_meta(w, key, buf);
}

/* arg as a shell would need it: as is when it is made of safe
 * characters, else in single quotes ('\'' for a quote). */
static void add_shell_word(struct buf *b, const char *arg)
{
	const char *c;
	if (*arg && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			   "_-+=.,/:@%") == strlen(arg)) {
		buf_printf(b, "%s", arg);
		return;
	}
	buf_add_u8(b, '\'');
	for (c = arg; *c; c++) {
		if (*c == '\'')
			buf_printf(b, "'\\''");
		else
			buf_add_u8(b, (uint8_t)*c);
	}
	buf_add_u8(b, '\'');
}

/* " (cmdline)" of process pid, NUL-separated arguments shown as words. */
static void add_proc_cmdline(struct buf *b, int pid)
{
	char path[64], args[4096];
	ssize_t n;
	size_t i;
	int fd;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, args, sizeof(args) - 1);
	close(fd);
	if (n <= 0)
		return;
	args[n] = '\0';
	buf_printf(b, " (");
	for (i = 0; i < (size_t)n; i += strlen(args + i) + 1) {
		if (i)
			buf_add_u8(b, ' ');
		add_shell_word(b, args + i);
	}
	buf_add_u8(b, ')');
}

static void put_header_meta(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct buf cmd = BUF_INIT;
	char host[256] = "";
	size_t i;

	if (o->system_wide)
		buf_printf(&cmd, "-a%s", o->argv ? " " : "");
	if (o->argv) {
		for (i = 0; o->argv[i]; i++) {
			if (i)
				buf_add_u8(&cmd, ' ');
			add_shell_word(&cmd, o->argv[i]);
		}
	} else if (!o->system_wide) {
		/* -p 123 (python3 app.py), 456 (...) */
		buf_printf(&cmd, "-p");
		for (i = 0; i < o->npids; i++) {
			buf_printf(&cmd, "%s%d", i ? ", " : " ", o->pids[i]);
			add_proc_cmdline(&cmd, o->pids[i]);
		}
	}
	buf_add_u8(&cmd, 0);
	store_put_meta(&r->w, "command", (char *)cmd.data);
	store_put_meta(&r->w, "event", r->ev->name);
	store_put_meta(&r->w, "event_is_clock", r->ev->is_clock ? "1" : "0");
	put_meta_u64(&r->w, "freq", o->freq);
	put_meta_u64(&r->w, "max_stack", r->ing.max_stack);
	if (o->unwind != UNWIND_MODE_FP)
		put_meta_u64(&r->w, "stack_size", o->stack_size);
	store_put_meta(&r->w, "unwind", o->unwind == UNWIND_MODE_FP ? "fp" :
		       o->unwind == UNWIND_MODE_DWARF ? "dwarf" : "hybrid");
	store_put_meta(&r->w, "kernel_frames", r->kernel ? "1" : "0");
	if (o->off_cpu)
		store_put_meta(&r->w, "off_cpu", "1");
	if (o->system_wide)
		store_put_meta(&r->w, "system_wide", "1");
	gethostname(host, sizeof(host) - 1);
	store_put_meta(&r->w, "hostname", host);
	put_meta_u64(&r->w, "start_ns", r->start_ns);
	put_meta_u64(&r->w, "wall_start", (uint64_t)time(NULL));
	buf_release(&cmd);
}

static void summary(struct recorder *r)
{
	char size[32];
	double secs = (r->end_ns - r->start_ns) / 1e9;
	format_size(size, sizeof(size), r->w.bytes);
	fprintf(stderr, "stax: recorded %" PRIu64 " samples in %.2f s (%s at %" PRIu64 " Hz),"
		" %" PRIu64 " lost, %" PRIu64 " throttled; wrote %s (%s, %.1f bytes/sample)."
		" Next: stax top -i %s, stax flame -i %s, stax info -i %s\n",
		r->ing.samples, secs, r->ev->name, r->o->freq, r->ing.lost + r->ing.lost_samples,
		r->ing.throttles, r->o->output, size,
		r->ing.samples ? (double)r->w.bytes / r->ing.samples : 0.0,
		r->o->output, r->o->output, r->o->output);
	if (r->o->off_cpu)
		fprintf(stderr, "stax: recorded %" PRIu64 " off-CPU intervals, %.1f ms off the CPU in all."
			" Next: stax threads -i %s, stax flame --wall -i %s\n", r->ing.offcpu_intervals,
			r->ing.offcpu_ns / 1e6, r->o->output, r->o->output);
	if (r->ing.chains_capped) {
		/* Offer, never change the system setting ourselves. */
		long cap = (long)r->ing.max_stack;
		note("%" PRIu64 " samples had call chains cut at kernel.perf_event_max_stack (%ld"
		     " frames), so their outermost callers are missing; to record deeper stacks%s"
		     " run: %ssysctl kernel.perf_event_max_stack=%ld", r->ing.chains_capped, cap,
		     geteuid() == 0 ? " (you are root)" : "", geteuid() == 0 ? "" : "sudo ",
		     cap < 512 ? 1024 : 4 * cap);
	}
	if (r->ing.lost + r->ing.lost_samples)
		fprintf(stderr, "stax: warning: %" PRIu64 " records were lost because the ring buffer"
			" filled up (lower -F, or record fewer processes)\n",
			r->ing.lost + r->ing.lost_samples);
}

/* user+system CPU time of process pid in ns (all its threads), or 0. */
static uint64_t proc_cpu_ns(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	long tck = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* fields 14 and 15, counted after the ")" that ends the name */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2 ||
	    tck <= 0)
		return 0;
	return (ut + st) * (1000000000ull / (uint64_t)tck);
}

/* Note the CPU time of the attached processes (first call: the start). */
static void track_cpu(struct recorder *r)
{
	size_t i;
	if (!r->o->npids)
		return;
	if (!r->cpu_first) {
		r->cpu_first = xcalloc(r->o->npids, sizeof(*r->cpu_first));
		r->cpu_last = xcalloc(r->o->npids, sizeof(*r->cpu_last));
		for (i = 0; i < r->o->npids; i++)
			r->cpu_first[i] = r->cpu_last[i] = proc_cpu_ns(r->o->pids[i]);
		return;
	}
	for (i = 0; i < r->o->npids; i++) {
		uint64_t v = proc_cpu_ns(r->o->pids[i]);
		if (v > r->cpu_last[i])
			r->cpu_last[i] = v;
	}
}

static bool targets_alive(struct recorder *r)
{
	size_t i;
	for (i = 0; i < r->o->npids; i++)
		if (target_alive(r->o->pids[i]))
			return true;
	return r->o->system_wide;
}

/* A terminal's Ctrl-C already reached the target (same process group):
 * do not send a second one, keep recording until it exits. A signal sent
 * to stax alone is forwarded once; a second one stops the recording. When
 * attached with -p, any of them stops the recording. */
static void handle_signals(struct recorder *r)
{
	while (sig_seen != sig_count) {
		sig_seen++;
		if (!r->launched || r->child_done) {
			sig_stop = true;
		} else if (sig_user && !sig_forwarded) {
			sig_forwarded = 1;
			kill(r->child.pid, sig_last);
		} else if (sig_seen > 1) {
			sig_stop = true;
		}
	}
}

/* record_run's body; r is freed by the caller, so the early returns
 * (bad options, no permission, no output file) leak nothing */
static int run(struct recorder *r, const struct record_opts *o, int *exit_status)
{
	struct perf_event_attr attr, swattr, recattr;
	long maxrate;
	size_t i;
	int ret = -1, cpu;
	struct pollfd *pfds = NULL;
	uint64_t deadline = 0;
	char *old_path = NULL;
	bool kept_old = false;

	*exit_status = 0;
	r->o = o;
	r->ev = event_find(o->event);
	if (!r->ev)
		return error("unknown event '%s' (available: %s)", o->event, event_available());
	maxrate = sysctl_read("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
	if (o->freq == 0)
		return error("invalid sample rate 0 (use -F with a positive number of Hz)");
	if ((long)o->freq > maxrate)
		return error("sample rate %" PRIu64 " Hz is above kernel.perf_event_max_sample_rate (%ld)"
			     " (lower -F, or run: sudo sysctl kernel.perf_event_max_sample_rate=%" PRIu64 ")",
			     o->freq, maxrate, o->freq);
	if (r->ev->type == PERF_TYPE_HARDWARE && !event_supported(r->ev))
		return event_open_error(ENOENT, r->ev, o->freq, 0);

	r->kernel = event_kernel_allowed();
	if (o->off_cpu && !r->kernel)
		return error("cannot record off-CPU time: it needs kernel sampling, and kernel.perf_event_paranoid"
			     " is %ld (run as root or with CAP_PERFMON, or: sudo sysctl kernel.perf_event_paranoid=1)",
			     sysctl_read("/proc/sys/kernel/perf_event_paranoid", 2));
	if (o->system_wide && !event_system_allowed())
		return error("cannot record the whole machine (-a): it needs per-cpu events, and"
			     " kernel.perf_event_paranoid is %ld (run as root or with CAP_PERFMON, or:"
			     " sudo sysctl kernel.perf_event_paranoid=0)",
			     sysctl_read("/proc/sys/kernel/perf_event_paranoid", 2));
	r->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpus < 1)
		r->ncpus = 1;
	r->rings = xcalloc((size_t)r->ncpus, sizeof(*r->rings));
	if (o->off_cpu)
		r->srings = xcalloc((size_t)r->ncpus, sizeof(*r->srings));

	/* like perf: keep the previous recording as FILE.old */
	old_path = xasprintf("%s.old", o->output);
	kept_old = rename(o->output, old_path) == 0;
	{
		int e = store_writer_open(&r->w, o->output);
		if (e) {
			if (kept_old)
				rename(old_path, o->output);
			free(old_path);
			return error("cannot create %s: %s (choose another path with -o)", o->output, strerror(-e));
		}
	}
	ingest_init(&r->ing, &r->w, o->unwind);
	r->ing.live = true; /* JIT code bytes can be read from the targets */
	install_signals();

	event_attr(&attr, r->ev, o->freq, r->kernel, o->argv != NULL && !o->system_wide,
		   o->unwind != UNWIND_MODE_FP ? REGS_MASK : 0, o->stack_size);
	if (o->system_wide)
		attr.inherit = 0;
	r->ing.max_stack = attr.sample_max_stack;
	if (o->off_cpu) {
		/* samples of both events share the rings: tell them apart by id */
		attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
		event_attr_switch(&swattr, &recattr, &attr, MIN(SWITCH_STACK_BYTES, o->stack_size));
		ingest_enable_offcpu(&r->ing);
	}
	r->fmt.sample_type = attr.sample_type;
	r->fmt.read_format = attr.read_format;
	r->fmt.regs_user_mask = attr.sample_regs_user;
	r->fmt.sample_id_all = attr.sample_id_all;
	if (o->system_wide) {
		if (o->argv && target_spawn(&r->child, o->argv))
			goto out;
		if (open_task(r, &attr, -1) || (o->off_cpu && open_switch(r, &swattr, &recattr, -1))) {
			if (o->argv)
				target_abort(&r->child);
			goto out;
		}
		seed_all(r);
		r->start_ns = now_ns();
		put_header_meta(r);
		for (i = 0; i < r->nfds; i++)
			ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0);
		if (o->argv) {
			if (target_release(&r->child, o->argv[0]))
				goto exec_failed;
			r->launched = true;
		}
	} else if (o->argv) {
		if (target_spawn(&r->child, o->argv))
			goto out;
		if (open_task(r, &attr, r->child.pid) || (o->off_cpu && open_switch(r, &swattr, &recattr, r->child.pid))) {
			target_abort(&r->child);
			goto out;
		}
		r->start_ns = now_ns();
		put_header_meta(r);
		if (target_release(&r->child, o->argv[0]))
			goto exec_failed;
		r->launched = true;
	} else {
		for (i = 0; i < o->npids; i++) {
			pid_t *tids = NULL;
			int nt = target_threads(o->pids[i], &tids), j;
			if (nt < 0) {
				error("cannot attach to process %d: no such process (check the pid)", o->pids[i]);
				goto out;
			}
			for (j = 0; j < nt; j++) {
				if (open_task(r, &attr, tids[j]) ||
				    (o->off_cpu && open_switch(r, &swattr, &recattr, tids[j]))) {
					free(tids);
					goto out;
				}
			}
			seed_process(r, o->pids[i], tids, nt);
			free(tids);
		}
		r->start_ns = now_ns();
		put_header_meta(r);
		track_cpu(r);
		for (i = 0; i < r->nfds; i++)
			ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	}
	if (!r->kernel)
		note("recording user-space frames only: kernel.perf_event_paranoid is %ld and stax is not"
		     " root (for kernel frames: sudo sysctl kernel.perf_event_paranoid=1)",
		     sysctl_read("/proc/sys/kernel/perf_event_paranoid", 2));
	if (o->duration > 0)
		deadline = r->start_ns + (uint64_t)(o->duration * 1e9);

	pfds = xcalloc(2 * (size_t)r->ncpus + 1, sizeof(*pfds));
	for (;;) {
		int np = 0, status;
		pfds[np].fd = sig_pipe[0];
		pfds[np++].events = POLLIN;
		for (cpu = 0; cpu < r->ncpus; cpu++) {
			if (!r->rings[cpu].base)
				continue;
			pfds[np].fd = r->rings[cpu].fd;
			pfds[np++].events = POLLIN;
			if (r->srings && r->srings[cpu].base) {
				pfds[np].fd = r->srings[cpu].fd;
				pfds[np++].events = POLLIN;
			}
		}
		poll(pfds, (nfds_t)np, store_ms_to_flush(&r->w, 100));
		if (pfds[0].revents & POLLIN) {
			char tmp[64];
			while (read(sig_pipe[0], tmp, sizeof(tmp)) > 0)
				;
		}
		handle_signals(r);
		drain(r);
		track_cpu(r);
		ingest_checkpoint(&r->ing, now_ns());
		if (store_maybe_flush(&r->w)) {
			error("cannot write %s: %s (free some disk space)", o->output, strerror(-r->w.err));
			if (r->launched)
				kill(r->child.pid, SIGTERM);
			break;
		}
		if (r->launched && waitpid(r->child.pid, &status, WNOHANG) == r->child.pid) {
			r->child_done = true;
			r->child_status = status;
			break;
		}
		if (!r->launched && !targets_alive(r))
			break;
		if (sig_stop)
			break;
		if (deadline && now_ns() >= deadline)
			break;
	}
	for (i = 0; i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	drain(r);
	r->end_ns = now_ns();
	if (o->off_cpu)
		ingest_finish(&r->ing, r->end_ns);
	put_meta_u64(&r->w, "end_ns", r->end_ns);
	if (r->launched && !r->child_done) {
		/* stopped early (second signal, --duration, write error): let it run */
		store_put_meta(&r->w, "stopped", "early");
		if (sig_stop) {
			/* a second signal: exit as if it had ended stax */
			*exit_status = 128 + sig_last;
			note("stopped recording at the second signal; %s (pid %d) goes on running",
			     o->argv[0], (int)r->child.pid);
		}
	}
	if (r->launched && r->child_done) {
		int st = r->child_status;
		struct rusage ru;
		*exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
		put_meta_u64(&r->w, "exit_status", (uint64_t)*exit_status);
		/* the CPU time of CMD and the children it waited for */
		if (!getrusage(RUSAGE_CHILDREN, &ru))
			put_meta_u64(&r->w, "cpu_ns",
				     ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
				     ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull);
	}
	if (r->cpu_first) {
		uint64_t cpu = 0;
		track_cpu(r);
		for (i = 0; i < o->npids; i++)
			cpu += r->cpu_last[i] - r->cpu_first[i];
		put_meta_u64(&r->w, "cpu_ns", cpu);
	}
	store_flush(&r->w, CHUNK_DATA);
	ingest_put_symbols(&r->ing);
	if (store_flush(&r->w, CHUNK_SYMBOLS) || store_writer_close(&r->w)) {
		error("cannot write %s: %s (free some disk space)", o->output, strerror(-r->w.err ? -r->w.err : EIO));
		goto out;
	}
	if (!o->quiet)
		summary(r);
	ret = 0;
	goto out;
exec_failed:
	/* as a shell says it: 127 not found, 126 found but not runnable */
	if (r->child.exec_errno)
		*exit_status = r->child.exec_errno == ENOENT ? 127 : 126;
out:
	restore_signals();
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_unmap(&r->rings[cpu]);
	for (cpu = 0; r->srings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->srings[cpu]);
	if (ret && r->w.fd >= 0) {
		/* nothing was recorded: leave things as they were */
		store_writer_close(&r->w);
		if (!r->ing.samples) {
			unlink(o->output);
			if (kept_old)
				rename(old_path, o->output);
		}
	}
	free(old_path);
	free(r->cpu_first);
	free(r->cpu_last);
	free(pfds);
	free(r->fds);
	buf_release(&r->batch);
	ingest_release(&r->ing);
	return ret;
}

int record_run(const struct record_opts *o, int *exit_status)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	int ret = run(r, o, exit_status);
	free(r->rings);
	free(r->srings);
	free(r);
	return ret;
}
