/* recorder.c - a recording session (recorder.h): prepare (checks, the
 * events' attributes, the output file), start (system-wide, a command, or
 * attached to processes), the loop that drains the rings in time order
 * into the ingester, and the finish that ends the file. The events are
 * opened by open.c, the META records and summary written by meta.c.
 */
#include "record/recorder-private.h"
#include "lib/util.h"
#include "lib/version.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
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



/* ---- signals: a self-pipe wakes the poll loop ---- */

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t sig_count, sig_last, sig_user, sig_hup;
static bool sig_stop;
/* record_files: SIGHUP starts the next file instead of stopping */
static volatile sig_atomic_t hup_rotates;
static sig_atomic_t sig_seen, sig_forwarded;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	(void)uc;
	if (sig == SIGHUP && hup_rotates) {
		sig_hup++;
	} else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
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

static int install_signals(struct err *e)
{
	struct sigaction sa;
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* past a file size limit (ulimit -f) a write fails with EFBIG, which
	 * is handled like a full disk, instead of killing stax */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

static void restore_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGXFSZ, SIG_DFL);
}

/* Stack bytes copied per wake-up: the waking function is near the top
 * of its stack, and wake-ups come at the rate of switches. (Switch-outs
 * copy as much as CPU samples, --stack-size: the stack of a thread
 * blocked deep in a call chain is as deep as when it runs.) */
#define WAKER_STACK_BYTES 4096u
/* With -a, switch-outs copy at most this much: the switches of the whole
 * machine, whose rings a 32 KiB copy each overflows (the sleeps of a
 * program recorded with -a on a loaded 2-cpu VM lost half their time to
 * lost switch records). */
#define SYSTEM_SWITCH_STACK_BYTES 8192u

/* ---- records ---- */

static int cmp_ref(const void *a, const void *b)
{
	const struct rec_ref *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Records this much older than the start of a drain are all in their
 * rings when it reads them (the kernel writes a record within
 * microseconds of its timestamp). */
#define DRAIN_MARGIN_NS 10000000ull
/* The same while samples read the processes (read_pace()). */
#define DRAIN_MARGIN_FAST_NS 1000000ull
#define READ_POLL_MS PYFRAMES_POLL_MS
/* Bytes of records one drain() handles at most: a few hundred samples
 * with stack copies, some ms of unwinding. */
#define DRAIN_SLICE (4u << 20)

/* Refs to the records of b, in order, from ord on. */
static void add_refs(struct recorder *r, const struct buf *b, size_t ord)
{
	size_t off;
	for (off = 0; off + sizeof(struct perf_event_header) <= b->len;) {
		const struct perf_event_header *h = (const void *)(b->data + off);
		if (h->size < sizeof(*h) || h->size > b->len - off)
			break; /* the queue holds whole records: never */
		GROW(r->refs, r->refcap, r->nrefs + 1);
		r->refs[r->nrefs].time = perf_record_time(&r->fmt, h);
		r->refs[r->nrefs].h = h;
		r->refs[r->nrefs].ord = ord + off;
		r->nrefs++;
		off += h->size;
	}
}

/* Read every ring, then handle the records in time order: a mapping seen
 * on one cpu must be known before a sample on another cpu uses it, and a
 * FORK before the child's first sample (else the child looks unknown and
 * its name is read from /proc for nothing). Rings are read one after the
 * other, so a record written to the first ring after it was read can be
 * older than one read from the last: only the records older than the
 * start of this drain less DRAIN_MARGIN_NS are handled; the newer ones
 * wait in r->carry for the next drain (all: handle them all, when the
 * events are disabled). Returns the time up to which records were
 * handled. */
static uint64_t drain(struct recorder *r, bool all)
{
	uint64_t now = now_ns(), pass, dropped, done, margin;
	size_t off, kept, handled = 0, n;

	if (r->pos == r->nrefs) {
		/* nothing sorted is waiting: take what the drain thread read
		 * (it read every ring after pass began) */
		buf_reset(&r->batch);
		/* read the rings from this thread too: whenever it wakes
		 * (every few ms while reading the processes, read_pace();
		 * when a chunk is due) it so takes every record written up
		 * to now, not only what the drain thread's last pass read */
		rqueue_pass(&r->q);
		pass = rqueue_take(&r->q, &r->batch);
		/* the in-kernel reader's records of those samples: written
		 * before them, so in its ring now */
		rec_moment_poll(r);
		margin = r->read_fast ? DRAIN_MARGIN_FAST_NS : DRAIN_MARGIN_NS;
		r->safe = all ? UINT64_MAX : pass > margin ? pass - margin : 0;
		r->nrefs = r->pos = 0;
		add_refs(r, &r->carry, 0);
		add_refs(r, &r->batch, r->carry.len);
		if (r->nrefs)
			qsort(r->refs, r->nrefs, sizeof(*r->refs), cmp_ref);
	}
	if (all)
		r->safe = UINT64_MAX;
	/* at most DRAIN_SLICE bytes at a time (all: everything), so that the
	 * loop sees signals, --duration and CMD's end on time when the queue
	 * holds a backlog */
	n = r->nrefs;
	for (off = r->pos; off < n && r->refs[off].time <= r->safe && (all || handled < DRAIN_SLICE); off++) {
		const struct perf_event_header *h = r->refs[off].h;
		handled += h->size;
		ingest_record(&r->ing, &r->fmt, h);
	}
	r->pos = off;
	rqueue_done(&r->q, handled);
	done = off ? r->refs[off - 1].time : 0;
	rec_moment_expire(r, done);
	/* samples the queue dropped at its bound: lost by stax, not the kernel */
	dropped = __atomic_load_n(&r->q.dropped, __ATOMIC_RELAXED);
	if (dropped > r->dropped_put) {
		struct rec_lost l;
		memset(&l, 0, sizeof(l));
		l.time = done ? done : r->safe == UINT64_MAX ? now : r->safe;
		l.count = dropped - r->dropped_put;
		l.kind = LOST_QUEUE;
		store_put_lost(&r->w, &l);
		r->dropped_put = dropped;
	}
	if (off < n && r->refs[off].time <= r->safe)
		return done; /* more to handle: the next call goes on from pos */
	/* the rest (the last DRAIN_MARGIN_NS: small), in time order, starts
	 * the next batch */
	buf_reset(&r->carry2);
	for (kept = off; kept < n; kept++) {
		const struct perf_event_header *h = r->refs[kept].h;
		memcpy(buf_extend(&r->carry2, h->size), h, h->size);
	}
	{
		struct buf t = r->carry;
		r->carry = r->carry2;
		r->carry2 = t;
	}
	r->nrefs = r->pos = 0;
	return all ? now : MIN(r->safe, now);
}

/* ---- attaching: names and mappings from /proc ---- */

/* Seed pid's thread names and mappings as of time t. */
static void seed_process(struct recorder *r, int pid, const pid_t *tids, int ntids, uint64_t t)
{
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

/* -a: names and mappings of every process that exists now, as of time
 * t, before the first sample; those that start later come with COMM,
 * FORK and MMAP records. Called before the events are enabled, and again
 * after (only_new: for the processes not seeded yet), so that neither a
 * process that exits just after the start nor one that starts just
 * before it goes unnamed. */
static void seed_all(struct recorder *r, uint64_t t, bool only_new)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	if (!only_new)
		ingest_seed_comm(&r->ing, 0, 0, t, "swapper");
	if (!d)
		return;
	while ((e = readdir(d))) {
		uint64_t pid;
		pid_t *tids = NULL;
		int nt;
		if (parse_u64(e->d_name, &pid) || !pid || pid > 0x7fffffff ||
		    (only_new && recover_has_name(&r->ing.recover, (uint32_t)pid)))
			continue;
		nt = target_threads((pid_t)pid, &tids);
		if (nt > 0)
			seed_process(r, (int)pid, tids, nt, t);
		free(tids);
	}
	closedir(d);
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

/* Samples whose unwinding reads the process (Python frames from the
 * interpreter, stacks deeper than their copy) are read when they are
 * ingested: the sooner after the sample, the likelier the thread is
 * still where the sample saw it (pyframes.h; a deep stack is read only
 * while the copy's outermost return address is in place). So from the
 * first such sample the main thread wakes every READ_POLL_MS, reads the
 * rings itself (rqueue_pass(): one wakeup, where the drain thread's pass
 * and then the main thread woken by it were two) and records wait only
 * DRAIN_MARGIN_FAST_NS to be sorted: a rustc recording read 26 ms after
 * the sample on average, 2.5 ms so, and rooted 89-92% of its stacks,
 * 94-95% so. The drain thread keeps its own pace meanwhile, so a main
 * thread busy unwinding still loses nothing. Each pass is a wakeup:
 * while fewer than 1 in 20 of the last second's samples read the
 * process (a system-wide recording of a machine where a Python daemon
 * idles), it passes at the default pace again; 500 wakeups a second
 * cost -a -F 99 3.4% of a CPU. */
static uint64_t reads_of(const struct ingest *g)
{
	return g->py.expanded + g->py.failed + g->py.stale + g->py.noaccess + g->us.deep_reads +
	       g->us.deep_stale + g->us.deep_gone;
}

/* The pace while samples read the process: one pass per
 * sample expected (the last second's samples of all kinds), at least
 * READ_POLL_MS and at most READ_POLL_MAX_MS apart. A pass more often than
 * samples arrive mostly finds the rings empty: a system-wide recording
 * at 99 Hz on two busy cpus (about 200 samples a second) passed 500
 * times a second at a fixed 2 ms and cost 1.5% of a CPU; one pass per
 * sample still reads each within a sample's interval of it. */
#define READ_POLL_MAX_MS 10u
#define READ_EARLY_NS 1000000000ull

static uint32_t read_poll_ms(uint64_t samples, uint64_t ns)
{
	uint64_t per_s = ns ? samples * 1000000000ull / ns : 0;
	if (per_s >= 1000 / READ_POLL_MS)
		return READ_POLL_MS;
	if (per_s <= 1000 / READ_POLL_MAX_MS)
		return READ_POLL_MAX_MS;
	return (uint32_t)(1000 / per_s);
}

/* With the in-kernel reader, recording a program (not -a): never slower
 * than READ_POLL_MAX_MS. A thread's first deep stack of a shape tells the
 * reader which stack words to read at its next samples, and the samples
 * taken until the recorder has ingested that one are read later (late,
 * or truncated): at the default pace (up to 100 ms) a rustc thread
 * entering a deep phase lost up to 150 samples so, at 10 ms about 10. */
static bool moment_pace(const struct recorder *r)
{
	return r->moment && !r->o->system_wide;
}

static void read_pace(struct recorder *r)
{
	const struct ingest *g = &r->ing;
	uint64_t reads = reads_of(g), now;
	bool fast;

	now = now_ns();
	if (!r->read_seen && !pyframes_found(g->py.reader) && !reads) {
		/* With the in-kernel reader, the first second at the fast
		 * pace too: a process is told to it when its interpreter's
		 * mapping is ingested, and its samples before that have no
		 * Python frames read at the sample. */
		bool early = r->moment && now - r->start_ns < READ_EARLY_NS;
		r->read_fast = early || moment_pace(r);
		r->read_ms = early ? READ_POLL_MS : r->read_fast ? READ_POLL_MAX_MS : 0;
		return;
	}
	if (!r->read_seen) {
		r->read_seen = r->read_fast = true;
		r->read_ms = READ_POLL_MS;
	} else if (now - r->read_window_ns < 1000000000ull) {
		return;
	} else {
		/* (with the in-kernel reader, a thread's deep stack of a new
		 * shape makes it read slots at the next samples: the sooner
		 * after, the fewer samples of that shape without them) */
		fast = ((reads - r->read_samples) * 20 >= g->samples - r->read_all &&
			reads > r->read_samples) ||
		       g->us.slot_lists + g->us.slot_guesses > r->read_slots;
		r->read_ms = fast ? read_poll_ms(g->samples - r->read_all, now - r->read_window_ns) :
			     moment_pace(r) ? READ_POLL_MAX_MS : 0;
		r->read_fast = r->read_ms != 0;
	}
	r->read_window_ns = now;
	r->read_samples = reads;
	r->read_all = g->samples;
	r->read_slots = g->us.slot_lists + g->us.slot_guesses;
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
	static sig_atomic_t hup_seen;
	if (hup_seen != sig_hup) {
		hup_seen = sig_hup;
		r->rotate_asked = true;
	}
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

/* How long CMD has after SIGTERM before SIGKILL, as timeout -k 5. */
#define TERM_GRACE_NS (5ull * 1000 * 1000 * 1000)

/* --duration is up and CMD runs on: end it as timeout(1) does, SIGTERM
 * to it and its descendants, SIGKILL 5 s later; recording goes on until
 * it exits, and stax exits with its status. */
static void end_command(struct recorder *r)
{
	uint64_t now = now_ns();
	if (!r->term_ns) {
		r->term_ns = now;
		if (!r->o->quiet)
			note("--duration %g s is up: ending %s (pid %d) with SIGTERM", r->o->duration,
			     r->o->argv[0], (int)r->child.pid);
		target_signal_tree(r->child.pid, SIGTERM);
	} else if (!r->killed && now - r->term_ns >= TERM_GRACE_NS) {
		r->killed = true;
		warn("%s (pid %d) did not end within 5 s of SIGTERM: sending SIGKILL", r->o->argv[0],
		     (int)r->child.pid);
		target_signal_tree(r->child.pid, SIGKILL);
	}
}

/* Stop the events and free their rings: nothing more is recorded. */
static void stop_events(struct recorder *r)
{
	size_t i;
	int cpu;
	for (i = 0; i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	rqueue_stop(&r->q); /* it reads the rings: before they go */
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	r->nfds = 0;
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_unmap(&r->rings[cpu]);
	for (cpu = 0; r->srings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->srings[cpu]);
	for (cpu = 0; r->wrings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->wrings[cpu]);
}

/* The file could not be written (the disk is full): stop recording, cut
 * the file back to its last whole chunk, and say so, once. CMD is left
 * to run on; the caller waits for it. */
void rec_write_failed(struct recorder *r)
{
	int e = r->w.err ? -r->w.err : EIO;
	const char *hint = e == EFBIG ? "raise the file size limit, ulimit -f" :
			   e == ENOSPC || e == EDQUOT ? "free some disk space" :
			   e == ENOMEM ? "compressing a chunk ran out of memory: free some" :
			   "check the file system";
	char what[160] = "";
	if (r->failed)
		return;
	r->failed = true;
	r->fail_ns = now_ns();
	stop_events(r);
	store_writer_rewind(&r->w);
	if (r->launched && !r->child_done)
		snprintf(what, sizeof(what), "; %s (pid %d) runs on, and stax waits for it to end",
			 r->o->argv[0], (int)r->child.pid);
	if (r->end_ns) /* while ending the file: the recording had stopped */
		error("cannot write %s: %s (the file keeps what was written before, and may lack the"
		      " symbols; %s)", rec_output(r), strerror(e), hint);
	else
		error("cannot write %s: %s (stopped recording after %.1f s; the file keeps what was"
		      " written until then%s; %s)", rec_output(r), strerror(e),
		      (r->fail_ns - r->start_ns) / 1e9, what, hint);
}

/* Out of memory (an allocation failed anywhere, any thread): stop the
 * events, say so once, wait for CMD, and exit with its status (1 when it
 * is 0) without touching the heap. The file reads up to its last whole
 * chunk, as after SIGKILL. */
static struct recorder *oom_rec;

static void record_oom(void)
{
	static int once;
	struct recorder *r = oom_rec;
	char msg[600];
	int st = 0, code = 1, len;
	size_t i;

	if (__atomic_exchange_n(&once, 1, __ATOMIC_ACQ_REL))
		for (;;)
			pause(); /* another thread is ending the process */
	for (i = 0; r && i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (r && r->launched && !r->child_done) {
		len = snprintf(msg, sizeof(msg), "stax: error: out of memory (stopped recording; %s keeps"
			       " what was written until now; %s (pid %d) runs on, and stax waits for it"
			       " to end)\n", r->o->output, r->o->argv[0], (int)r->child.pid);
		if (write(2, msg, (size_t)MIN(len, (int)sizeof(msg) - 1)) < 0) {
			/* nothing to do */
		}
		while (waitpid(r->child.pid, &st, 0) < 0) {
			if (errno != EINTR) {
				/* the main thread reaped it: it sets child_done
				 * right after storing the status */
				for (i = 0; i < 5000 && !__atomic_load_n(&r->child_done, __ATOMIC_ACQUIRE); i++)
					usleep(1000);
				st = r->child_status;
				break;
			}
		}
	} else {
		len = snprintf(msg, sizeof(msg), "stax: error: out of memory (%s keeps what was written"
			       " until now, and may lack the symbols)\n", r ? rec_output(r) : "the file");
		if (write(2, msg, (size_t)MIN(len, (int)sizeof(msg) - 1)) < 0) {
			/* nothing to do */
		}
		if (r && r->launched) /* CMD had ended: its status */
			st = r->child_status;
	}
	if (r && r->launched)
		code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	_exit(code ? code : 1);
}

/* ---- the session: prepare, start, loop, finish ---- */

/* Like perf: keep the previous recording as FILE.old; but only ever move
 * or replace regular files, before anything starts. */
static int create_output(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct err why;
	int fd = o->output_fd > 0 ? o->output_fd : safe_create(&r->out, o->output, 0644, &why), e;

	if (fd == -EEXIST && r->out.bad_old)
		return err_set(r->err, -1, "cannot record into %s: %s (stax leaves both as they are; move %s.old"
			     " away, or choose another file with -o)", o->output, why.msg, o->output);
	if (fd == -EEXIST)
		return err_set(r->err, -1, "cannot record into %s: %s (stax writes only regular files, and leaves"
			     " this as it is; choose a file with -o)", o->output, why.msg);
	if (fd < 0)
		return err_set(r->err, -1, "cannot create %s: %s (choose another path with -o)", o->output, why.msg);
	e = store_writer_open_fd(&r->w, fd);
	if (e) {
		safe_create_undo(&r->out);
		return err_set(r->err, -1, "cannot create %s: %s (choose another path with -o)", o->output, strerror(-e));
	}
	return 0;
}

/* Check the options against what this process may record, choose the
 * events' attributes and the rings' sizes, create the output file and
 * set up the ingester: nothing is recorded yet when this fails. */
static int prepare(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct perf_event_attr *attr = &r->attr;
	char why[512];

	r->ev = event_find(o->event);
	if (!r->ev)
		return err_set(r->err, -1, "unknown event '%s' (available: %s)", o->event, event_available());
	perm_probe(&r->perm);
	if (o->freq == 0)
		return err_set(r->err, -1, "invalid sample rate 0 (use -F with a positive number of Hz)");
	if (r->perm.max_rate != PERM_UNKNOWN && o->freq > (uint64_t)r->perm.max_rate)
		return err_set(r->err, -1, "cannot sample at %" PRIu64 " Hz: %s", o->freq,
			     perm_why(PERM_RATE, &r->perm, (long)MIN(o->freq, (uint64_t)LONG_MAX), why, sizeof(why)));
	if (r->ev->type == PERF_TYPE_HARDWARE && !event_supported(r->ev))
		return event_open_error(ENOENT, r->ev, o->freq, 0, r->err);

	r->kernel = perm_allowed(PERM_KERNEL, &r->perm);
	if (o->off_cpu && !perm_allowed(PERM_OFFCPU, &r->perm))
		return err_set(r->err, -1, "cannot record off-CPU time: it needs kernel sampling, and %s",
			     perm_why(PERM_OFFCPU, &r->perm, 0, why, sizeof(why)));
	if (o->system_wide && !perm_allowed(PERM_SYSTEM, &r->perm))
		return err_set(r->err, -1, "cannot record the whole machine (-a): %s",
			     perm_why(PERM_SYSTEM, &r->perm, 0, why, sizeof(why)));
	r->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	if (r->ncpus < 1)
		r->ncpus = 1;
	/* one array, for the drain thread: the switch rings after the
	 * others, then the rings of the wakers outside the recording */
	r->rings = xcalloc((size_t)r->ncpus * (o->off_cpu ? 3 : 1), sizeof(*r->rings));
	if (o->off_cpu)
		r->srings = r->rings + r->ncpus;

	event_attr(attr, r->ev, o->freq, r->kernel, o->argv != NULL && !o->system_wide,
		   o->unwind != UNWIND_MODE_FP ? unwind_perf_regs_mask(unwind_arch_host()) : 0,
		   o->stack_size);
	if (o->system_wide || o->thread_only)
		attr->inherit = 0;
	if (o->period) {
		attr->freq = 0;
		attr->sample_period = o->period;
	}
	if (o->off_cpu) {
		/* samples of both events share the rings: tell them apart by id */
		attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
		/* who ends the waits: the sched_waking tracepoint, with its
		 * raw fields (in every event's samples, so they read alike) */
		struct waking_format wf;
		if (o->no_wakers)
			err_set(&r->wakers_why, -1, "--no-wakers");
		else if (r->perm.privileged != 1)
			err_set(&r->wakers_why, -EPERM,
				"it needs root or CAP_PERFMON (the sched:sched_waking tracepoint)");
		else if (!event_waking_format(&wf, &r->wakers_why))
			r->wakers = true;
		if (r->wakers)
			attr->sample_type |= PERF_SAMPLE_RAW;
		event_attr_switch(&r->swattr, &r->recattr, attr,
				  o->system_wide ? MIN(SYSTEM_SWITCH_STACK_BYTES, o->stack_size) : o->stack_size);
		if (r->wakers) {
			event_attr_waking(&r->wkattr, attr, &wf, MIN(WAKER_STACK_BYTES, o->stack_size));
			r->wf = wf;
		}
	}
	/* before anything is created: a -m that cannot work stops here */
	if (rec_size_rings(r, attr))
		return -1;
	if (o->files ? rec_files_first(r) : create_output(r))
		return -1;
	hup_rotates = o->files != NULL;
	ingest_init(&r->ing, &r->w, o->unwind);
	r->prepared = true;
	r->ing.live = true; /* JIT code bytes can be read from the targets */
	r->ing.recover.on = true; /* and what lost records named, from /proc */
	r->ing.no_read_stack = o->no_read_stack != 0;
	r->ing.max_stack = attr->sample_max_stack;
	if (!o->no_python_frames)
		ingest_enable_python(&r->ing);
	if (o->off_cpu)
		ingest_enable_offcpu(&r->ing);
	if (o->files) {
		ingest_keep_symbols(&r->ing);
		r->ing.symbol_lock = o->files->symbol_lock;
	}
	if (r->wakers)
		ingest_enable_wakers(&r->ing, r->wf.flags_off, r->wf.pid_off);
	rec_moment_open(r);
	r->fmt.sample_type = attr->sample_type;
	r->fmt.read_format = attr->read_format;
	r->fmt.regs_user_mask = attr->sample_regs_user;
	r->fmt.sample_id_all = attr->sample_id_all;
	return install_signals(r->err);
}

/* What the start_*() functions return when CMD could not be run. */
#define START_EXEC_FAILED -2

/* The events of every task on every cpu (-a), the processes that exist
 * named from /proc before and after the events start; CMD, when given,
 * runs meanwhile. */
static int start_system(struct recorder *r)
{
	const struct record_opts *o = r->o;
	uint64_t t0;
	size_t i;

	if (o->argv && target_spawn(&r->child, o->argv, r->err))
		return -1;
	if (rec_open_task(r, &r->attr, -1) || (o->off_cpu && rec_open_switch(r, &r->swattr, &r->recattr, -1))) {
		if (o->argv)
			target_abort(&r->child);
		return -1;
	}
	t0 = now_ns();
	seed_all(r, t0, false);
	r->start_ns = now_ns();
	rec_put_header_meta(r);
	for (i = 0; i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	seed_all(r, t0, true);
	if (o->argv) {
		if (target_release(&r->child, o->argv[0], r->err))
			return START_EXEC_FAILED;
		r->launched = true;
	}
	return 0;
}

/* The events of CMD (and the children it makes), enabled when it execs. */
static int start_command(struct recorder *r)
{
	const struct record_opts *o = r->o;

	if (target_spawn(&r->child, o->argv, r->err))
		return -1;
	if (rec_open_task(r, &r->attr, r->child.pid) ||
	    (o->off_cpu && rec_open_switch(r, &r->swattr, &r->recattr, r->child.pid))) {
		target_abort(&r->child);
		return -1;
	}
	if (r->wakers)
		rec_open_foreign_wakers(r);
	r->start_ns = now_ns();
	rec_put_header_meta(r);
	if (target_release(&r->child, o->argv[0], r->err))
		return START_EXEC_FAILED;
	r->launched = true;
	return 0;
}

/* The events of every thread of the processes -p names (or the threads
 * -t names), their names and mappings from /proc. */
static int start_attach(struct recorder *r)
{
	const struct record_opts *o = r->o;
	size_t i;

	for (i = 0; i < o->npids; i++) {
		pid_t *tids = NULL;
		int nt, j, pid = o->pids[i];
		if (o->thread_only) {
			/* -t: that thread alone, named as a thread of its process */
			pid = target_tgid(o->pids[i]);
			if (pid < 0)
				return err_set(r->err, -1, "cannot attach to thread %d: no such thread (check the tid)",
					       o->pids[i]);
			tids = xmalloc(sizeof(*tids));
			tids[0] = o->pids[i];
			nt = 1;
		} else if ((nt = target_threads(pid, &tids)) < 0) {
			return err_set(r->err, -1, "cannot attach to process %d: no such process (check the pid)",
				       o->pids[i]);
		}
		for (j = 0; j < nt; j++) {
			if (rec_open_task(r, &r->attr, tids[j]) ||
			    (o->off_cpu && rec_open_switch(r, &r->swattr, &r->recattr, tids[j]))) {
				free(tids);
				return -1;
			}
		}
		seed_process(r, pid, tids, nt, now_ns());
		free(tids);
	}
	if (r->wakers)
		rec_open_foreign_wakers(r);
	r->start_ns = now_ns();
	rec_put_header_meta(r);
	track_cpu(r);
	for (i = 0; i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_ENABLE, 0);
	return 0;
}

/* The rings are read by a thread of their own from now on. */
static void start_queue(struct recorder *r)
{
	size_t nrings = (size_t)r->ncpus * (r->o->off_cpu ? 3 : 1), bytes = 0, cap, i;
	long phys = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	int e;

	for (i = 0; i < nrings; i++)
		bytes += r->rings[i].base ? r->rings[i].data_size : 0;
	cap = (size_t)MIN(MAX(2ull * bytes, QUEUE_MIN_BYTES), QUEUE_MAX_BYTES);
	if (phys > 0 && page > 0 && cap > (uint64_t)phys * (uint64_t)page / 16)
		cap = (size_t)MAX((uint64_t)phys * (uint64_t)page / 16, 16ull << 20);
	e = rqueue_start(&r->q, r->rings, nrings, &r->fmt, cap);
	if (e)
		warn("cannot start the drain thread: %s (the rings are read between unwinding,"
		     " and may overflow)", strerror(-e));
}

/* Read, unwind and write until CMD ends, the targets exit, a signal stops
 * the recording, --duration is up (-p, -a), or a write fails. */
static void loop(struct recorder *r)
{
	const struct record_opts *o = r->o;
	uint64_t deadline = o->duration > 0 ? r->start_ns + (uint64_t)(o->duration * 1e9) : 0;
	struct pollfd pfds[2];

	for (;;) {
		int status;
		uint64_t done;
		pfds[0].fd = sig_pipe[0];
		pfds[0].events = POLLIN;
		pfds[1].fd = rqueue_fd(&r->q);
		pfds[1].events = POLLIN;
		poll(pfds, 2, r->pos < r->nrefs ? 0 :
		     r->read_fast ? (int)MIN((uint32_t)store_ms_to_flush(&r->w, 100), r->read_ms) :
		     store_ms_to_flush(&r->w, 100));
		if (pfds[0].revents & POLLIN) {
			char tmp[64];
			while (read(sig_pipe[0], tmp, sizeof(tmp)) > 0)
				;
		}
		handle_signals(r);
		if (!r->failed) {
			done = drain(r, false);
			read_pace(r);
			track_cpu(r);
			ingest_checkpoint(&r->ing, done);
			/* a write error stops the recording, never CMD */
			if (store_maybe_flush(&r->w))
				rec_write_failed(r);
			rec_files_step(r);
		}
		if (r->launched && waitpid(r->child.pid, &status, WNOHANG) == r->child.pid) {
			r->child_status = status;
			__atomic_store_n(&r->child_done, true, __ATOMIC_RELEASE); /* see record_oom() */
			break;
		}
		if (!r->launched && (r->failed || !targets_alive(r)))
			break;
		if (sig_stop || r->files_stop)
			break;
		if (deadline && now_ns() >= deadline) {
			if (!r->launched)
				break; /* -p, -a: never signalled */
			end_command(r);
		}
	}
}

/* Stop the events, handle what the rings still held, and end the file:
 * what is pending, the symbols, the closing META records and END; a
 * write error on the way cuts the file back to its last whole chunk and
 * still ends it when it can. -1 when the file could not be written. */
static int finish(struct recorder *r, int *exit_status)
{
	const struct record_opts *o = r->o;
	size_t i;

	if (!r->failed) {
		for (i = 0; i < r->nfds; i++)
			ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
		rqueue_stop(&r->q); /* after a last pass over the rings */
		drain(r, true); /* what was sorted already, */
		drain(r, true); /* then the rest of the queue */
		track_cpu(r);
		r->end_ns = now_ns();
		if (o->off_cpu)
			ingest_finish(&r->ing, r->end_ns);
	} else {
		r->end_ns = r->fail_ns;
	}
	if (r->no_file)
		return -1; /* said when it happened; the last file is whole */
	if (r->launched && !r->child_done && sig_stop) {
		/* a second signal: exit as if it had ended stax */
		*exit_status = 128 + sig_last;
		note("stopped recording at the second signal; %s (pid %d) goes on running",
		     o->argv[0], (int)r->child.pid);
	}
	if (r->launched && r->child_done) {
		int st = r->child_status;
		*exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	}
	if (!r->failed) {
		int e = store_flush(&r->w, CHUNK_DATA);
		if (!e) {
			ingest_put_symbols(&r->ing);
			e = store_flush(&r->w, CHUNK_SYMBOLS);
		}
		if (!e)
			e = store_sync(&r->w);
		if (e)
			rec_write_failed(r);
	}
	rec_put_end_meta(r, *exit_status);
	if (store_writer_close(&r->w) && !r->failed)
		rec_write_failed(r);
	if (r->failed)
		return -1;
	rec_files_done(r);
	if (!o->quiet)
		rec_summary(r);
	return r->files_stop ? -1 : 0; /* said when it stopped */
}

/* Free what the session holds; a session that failed before recording
 * leaves the output file as it found it. */
static void release(struct recorder *r, bool failed)
{
	size_t i;
	int cpu;

	if (!r->prepared)
		return; /* it failed before the file was made: nothing to undo */
	rec_moment_close(r);
	set_oom_handler(NULL);
	oom_rec = NULL;
	restore_signals();
	hup_rotates = 0;
	rqueue_release(&r->q);
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	for (cpu = 0; cpu < r->ncpus; cpu++)
		ring_unmap(&r->rings[cpu]);
	for (cpu = 0; r->srings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->srings[cpu]);
	for (cpu = 0; r->wrings && cpu < r->ncpus; cpu++)
		ring_unmap(&r->wrings[cpu]);
	if (failed && r->w.fd >= 0) {
		/* it failed before recording: leave things as they were */
		store_writer_close(&r->w);
		if (!r->ing.samples)
			safe_create_undo(&r->out);
	}
	safe_created_release(&r->out);
	free(r->cpu_first);
	free(r->cpu_last);
	free(r->fds);
	buf_release(&r->batch);
	buf_release(&r->carry);
	buf_release(&r->carry2);
	free(r->refs);
	ingest_release(&r->ing);
}

/* record_run's body; r is freed by the caller, so the early returns
 * (bad options, no permission, no output file) leak nothing */
static int run(struct recorder *r, const struct record_opts *o, int *exit_status)
{
	char why[512];
	int ret = -1;

	*exit_status = 0;
	r->o = o;
	if (prepare(r))
		goto out;
	ret = o->system_wide ? start_system(r) : o->argv ? start_command(r) : start_attach(r);
	if (ret == START_EXEC_FAILED) {
		/* as a shell says it: 127 not found, 126 found but not runnable */
		if (r->child.exec_errno)
			*exit_status = r->child.exec_errno == ENOENT ? 127 : 126;
		ret = -1;
	}
	if (ret)
		goto out;
	if (!r->kernel)
		note("recording user-space frames only: %s", perm_why(PERM_KERNEL, &r->perm, 0, why, sizeof(why)));
	if (o->off_cpu && !r->wakers && !o->no_wakers)
		note("recording the waits without who ended them (stax wakers shows them as not recorded): %s",
		     r->wakers_why.msg);
	if (!r->moment && !o->no_bpf && r->moment_why.msg[0])
		note("%s; what lies outside a sample (Python frames, stacks deeper than the copy) is read"
		     " after it, and marked late (stax info counts them)", r->moment_why.msg);
	if (o->started_fd > 0) {
		if (write(o->started_fd, "", 1) != 1) {
			/* the reader went away: it learns from our exit */
		}
		close(o->started_fd);
	}
	oom_rec = r;
	set_oom_handler(record_oom);
	start_queue(r);
	if (r->moment) { /* see read_pace() */
		r->read_fast = true;
		r->read_ms = READ_POLL_MS;
	}
	loop(r);
	ret = finish(r, exit_status);
out:
	release(r, ret != 0);
	return ret;
}

int record_run(const struct record_opts *o, int *exit_status, struct err *e)
{
	struct recorder *r = xcalloc(1, sizeof(*r));
	int ret;
	err_set(e, 0, "%s", "");
	r->err = e;
	ret = run(r, o, exit_status) ? -1 : 0;
	free(r->rings); /* srings and wrings point into it */
	free(r);
	return ret;
}
