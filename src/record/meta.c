/* meta.c - what a recording says of itself (recorder-private.h): the
 * META records of its start and end, and the summary printed at its end.
 */
#include "record/recorder-private.h"
#include "lib/util.h"
#include "lib/version.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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

void rec_put_header_meta(struct recorder *r)
{
	const struct record_opts *o = r->o;
	struct buf cmd = BUF_INIT;
	char host[256] = "", perm[256];
	uint64_t wall;
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
		buf_printf(&cmd, o->thread_only ? "-t" : "-p");
		for (i = 0; i < o->npids; i++) {
			buf_printf(&cmd, "%s%d", i ? ", " : " ", o->pids[i]);
			add_proc_cmdline(&cmd, o->pids[i]);
		}
	}
	buf_add_u8(&cmd, 0);
	store_put_meta(&r->w, "command", (char *)cmd.data);
	store_put_meta(&r->w, "stax_version", stax_version);
	store_put_meta(&r->w, "event", event_name(r->ev));
	store_put_meta(&r->w, "event_is_clock", r->ev->is_clock ? "1" : "0");
	store_put_meta_u64(&r->w, "freq", o->period ? 0 : o->freq);
	if (o->period)
		store_put_meta_u64(&r->w, "period", o->period);
	store_put_meta_u64(&r->w, "max_stack", r->ing.max_stack);
	store_put_meta_u64(&r->w, "ring_bytes", (uint64_t)r->pages * (uint64_t)sysconf(_SC_PAGESIZE));
	if (o->unwind != UNWIND_MODE_FP)
		store_put_meta_u64(&r->w, "stack_size", o->stack_size);
	store_put_meta(&r->w, "unwind", o->unwind == UNWIND_MODE_FP ? "fp" :
		       o->unwind == UNWIND_MODE_DWARF ? "dwarf" : "hybrid");
	store_put_meta(&r->w, "kernel_frames", r->kernel ? "1" : "0");
	perm_format(&r->perm, perm, sizeof(perm));
	store_put_meta(&r->w, "perm", perm);
	if (o->off_cpu) {
		store_put_meta(&r->w, "off_cpu", "1");
		store_put_meta(&r->w, "wakers", r->wakers ? "1" : "0");
		if (!r->wakers)
			store_put_meta(&r->w, "wakers_why", r->wakers_why.msg);
	}
	if (o->system_wide)
		store_put_meta(&r->w, "system_wide", "1");
	rec_moment_put_meta(r, false);
	gethostname(host, sizeof(host) - 1);
	store_put_meta(&r->w, "hostname", host);
	store_put_meta_u64(&r->w, "start_ns", r->start_ns);
	/* the wall-clock time of start_ns: a sample's wall time is
	 * wall_start_ns + (its time - start_ns) */
	wall = rec_wall_of(r->start_ns);
	store_put_meta_u64(&r->w, "wall_start", wall / 1000000000ull);
	store_put_meta_u64(&r->w, "wall_start_ns", wall);
	rec_files_meta(r);
	buf_release(&cmd);
}

void rec_summary(struct recorder *r)
{
	const struct recover *rc = &r->ing.recover;
	char size[32];
	double secs = (r->end_ns - r->start_ns) / 1e9;
	format_size(size, sizeof(size), r->w.bytes);
	char rate[48];
	if (r->o->period)
		snprintf(rate, sizeof(rate), "every %" PRIu64 "%s", r->o->period, r->ev->is_clock ? " ns" : "");
	else
		snprintf(rate, sizeof(rate), "at %" PRIu64 " Hz", r->o->freq);
	note("recorded %" PRIu64 " samples in %.2f s (%s %s),"
		" %" PRIu64 " lost, %" PRIu64 " throttled; wrote %s (%s, %.1f bytes/sample)."
		" Next: stax top -i %s, stax flame -i %s, stax info -i %s",
		r->ing.samples, secs, event_name(r->ev), rate,
		r->ing.lost + r->ing.lost_samples + r->dropped_put,
		r->ing.throttles, rec_output(r), size,
		r->ing.samples ? (double)r->w.bytes / r->ing.samples : 0.0,
		rec_output(r), rec_output(r), rec_output(r));
	if (r->o->off_cpu)
		note("recorded %" PRIu64 " off-CPU intervals, %.1f ms off the CPU in all."
		     " Next: stax threads -i %s, stax flame --wall -i %s", r->ing.off.intervals,
			r->ing.off.ns / 1e6, rec_output(r), rec_output(r));
	if (r->ing.chains_capped) {
		/* Offer, never change the system setting ourselves. */
		long cap = (long)r->ing.max_stack;
		note("%" PRIu64 " samples had call chains cut at kernel.perf_event_max_stack (%ld"
		     " frames), so their outermost callers are missing; to record deeper stacks%s"
		     " run: %ssysctl kernel.perf_event_max_stack=%ld", r->ing.chains_capped, cap,
		     geteuid() == 0 ? " (you are root)" : "", geteuid() == 0 ? "" : "sudo ",
		     cap < 512 ? 1024 : 4 * cap);
	}
	if (r->ing.trimmed)
		note("%" PRIu64 " sample%s kept only the top %u bytes of %s stack copy (or none): unwinding"
		     " fell behind and the queue passed its high-water mark (stax info counts them)",
		     r->ing.trimmed, r->ing.trimmed == 1 ? "" : "s", QUEUE_TRIM_KEEP,
		     r->ing.trimmed == 1 ? "its" : "their");
	if (r->dropped_put)
		warn("%" PRIu64 " samples were dropped by stax: its queue (%zu MiB) was full, unwinding"
		     " could not keep up (lower -F, or use --unwind fp)", r->dropped_put, r->q.cap >> 20);
	if (r->ing.lost + r->ing.lost_samples) {
		char ring[32], stack[64] = "";
		format_size_exact(ring, sizeof(ring), (uint64_t)r->pages * (uint64_t)sysconf(_SC_PAGESIZE));
		if (r->o->unwind != UNWIND_MODE_FP)
			snprintf(stack, sizeof(stack), ", or lower --stack-size (now %u bytes a sample)",
				 r->o->stack_size);
		warn("%" PRIu64 " records were lost because the ring buffers filled up before stax"
		     " read them (raise -m, now %s per cpu, or lower -F, now %" PRIu64 " Hz%s)",
		     r->ing.lost + r->ing.lost_samples, ring, r->o->freq, stack);
	}
	if (rc->recovered_procs || rc->recovered_threads)
		note("read the names and mappings of %" PRIu64 " process%s and the names of %" PRIu64
		     " thread%s from /proc: the kernel's records of them were missing",
		     rc->recovered_procs, rc->recovered_procs == 1 ? "" : "es",
		     rc->recovered_threads, rc->recovered_threads == 1 ? "" : "s");
	/* a process can also be unknown without a record lost: one that
	 * started as the recording began, between the scan of /proc and the
	 * events' start */
	if (rc->unrecovered_procs && r->ing.lost + r->ing.lost_samples)
		warn("%" PRIu64 " process%s exited before stax could read what the lost records said"
		     " from /proc: %" PRIu64 " sample%s no process name and no symbols (raise -m,"
		     " or lower -F)", rc->unrecovered_procs, rc->unrecovered_procs == 1 ? "" : "es",
		     rc->unrecovered_samples, rc->unrecovered_samples == 1 ? " has" : "s have");
	else if (rc->unrecovered_procs)
		warn("%" PRIu64 " process%s of which the recording had no record (started as it began)"
		     " exited before stax could read %s from /proc: %" PRIu64 " sample%s no process"
		     " name and no symbols", rc->unrecovered_procs, rc->unrecovered_procs == 1 ? "" : "es",
		     rc->unrecovered_procs == 1 ? "it" : "them", rc->unrecovered_samples,
		     rc->unrecovered_samples == 1 ? " has" : "s have");
}

void rec_put_end_meta(struct recorder *r, int exit_status)
{
	char why[512];
	struct perm_facts now;

	store_repeat_meta(&r->w); /* the first chunk's, should it be damaged */
	store_put_meta_u64(&r->w, "end_ns", r->end_ns);
	/* the kernel lowers kernel.perf_event_max_sample_rate when sampling
	 * costs too much: keep what it was at the end too */
	perm_probe(&now);
	r->perm.max_rate_end = now.max_rate;
	perm_format(&r->perm, why, sizeof(why));
	store_put_meta(&r->w, "perm", why);
	store_put_meta_u64(&r->w, "recovered_processes", r->ing.recover.recovered_procs);
	store_put_meta_u64(&r->w, "recovered_threads", r->ing.recover.recovered_threads);
	store_put_meta_u64(&r->w, "unrecovered_processes", r->ing.recover.unrecovered_procs);
	store_put_meta_u64(&r->w, "unrecovered_samples", r->ing.recover.unrecovered_samples);
	store_put_meta_u64(&r->w, "released_samples", r->ing.recover.released_samples);
	store_put_meta(&r->w, "python_frames", r->ing.py.reader ? "1" : "0");
	if (r->ing.py.reader) {
		store_put_meta_u64(&r->w, "python_expanded", r->ing.py.expanded);
		store_put_meta_u64(&r->w, "python_stale", r->ing.py.stale);
		store_put_meta_u64(&r->w, "python_invalid", r->ing.py.failed);
		store_put_meta_u64(&r->w, "python_unreadable", r->ing.py.noaccess);
	}
	if (r->ing.py.reader && *pyframes_no_access_why(r->ing.py.reader))
		store_put_meta(&r->w, "python_no_access", pyframes_no_access_why(r->ing.py.reader));
	store_put_meta(&r->w, "read_stack", r->ing.no_read_stack ? "0" : "1");
	rec_moment_put_meta(r, true);
	if (r->ing.py.reader) {
		store_put_meta_u64(&r->w, "python_moment", r->ing.py.moment);
		store_put_meta_u64(&r->w, "python_late", r->ing.py.late);
		store_put_meta_u64(&r->w, "python_moment_unfit", r->ing.py.moment_unfit);
		store_put_meta_u64(&r->w, "python_moment_gone", r->ing.py.moment_gone);
	}
	store_put_meta_u64(&r->w, "deep_stacks_words", r->ing.us.deep_words);
	store_put_meta_u64(&r->w, "stacks_late", r->ing.us.late);
	store_put_meta_u64(&r->w, "deep_stacks_read", r->ing.us.deep_reads);
	store_put_meta_u64(&r->w, "deep_stacks_stale", r->ing.us.deep_stale);
	store_put_meta_u64(&r->w, "deep_stacks_gone", r->ing.us.deep_gone);
	store_put_meta_u64(&r->w, "copy_cut_within_max", r->ing.us.cut_within_max);
	store_put_meta_u64(&r->w, "copy_cut_beyond_max", r->ing.us.cut_beyond_max);
	if (r->o->off_cpu) {
		store_put_meta_u64(&r->w, "offcpu_stacks_read", r->ing.us.stack_reads);
		store_put_meta_u64(&r->w, "offcpu_stacks_stale", r->ing.us.stack_reads_stale);
	}
	if (r->cpus_sampled)
		store_put_meta_u64(&r->w, "cpus", (uint64_t)r->cpus_sampled);
	if (r->failed)
		store_put_meta(&r->w, "write_error", "1");
	if (r->term_ns)
		store_put_meta(&r->w, "duration_ended", r->killed ? "SIGKILL" : "SIGTERM");
	if (r->launched && !r->child_done)
		store_put_meta(&r->w, "stopped", "early"); /* a second signal: CMD goes on */
	rec_files_end_meta(r);
	if (r->launched && r->child_done) {
		struct rusage ru;
		store_put_meta_u64(&r->w, "exit_status", (uint64_t)exit_status);
		/* the CPU time of CMD and the children it waited for */
		if (!getrusage(RUSAGE_CHILDREN, &ru))
			store_put_meta_u64(&r->w, "cpu_ns",
				     ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
				     ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull);
	}
	if (r->cpu_first) {
		uint64_t cpu = 0;
		size_t i;
		for (i = 0; i < r->o->npids; i++)
			cpu += r->cpu_last[i] - r->cpu_first[i];
		store_put_meta_u64(&r->w, "cpu_ns", cpu);
	}
}
