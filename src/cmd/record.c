/* record.c - stax record: sample a command or running processes. */
#include "cmd/cmd.h"
#include "record/recorder.h"
#include "record/ring.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_record_help[] =
"usage: stax record [-F HZ] [-e EVENT] [-o FILE] [--unwind hybrid|dwarf|fp]\n"
"                   [--stack-size BYTES] [--duration SECONDS] [--off-cpu]\n"
"                   [--no-wakers] [-m PAGES|SIZE]\n"
"                   (-p PID[,PID...] | -a [-- CMD ARGS...] | -- CMD ARGS...)\n"
"\n"
"Sample the call stacks of CMD (and every thread, fork and exec it makes)\n"
"or of running processes, and write a recording that every query command\n"
"reads, even while it is still growing (or, with -a, every process). stax exits with CMD's exit status\n"
"(128+N when a signal N killed it). Ctrl-C on the terminal reaches CMD\n"
"directly; stax keeps recording until CMD exits, then finishes the file.\n"
"A SIGINT or SIGTERM sent to stax alone is forwarded to CMD once; a second\n"
"one stops the recording (CMD goes on) and stax exits with 128+N. When CMD\n"
"cannot be run, stax exits with 127 (not found) or 126 (not executable).\n"
"When stax cannot go on recording (the disk is full, out of memory), it\n"
"says so once, keeps the file readable up to that point, lets CMD run to\n"
"its end and exits with CMD's status, or 1 when that is 0. Processes\n"
"attached with -p are never signalled.\n"
"\n"
"  -F HZ             samples per second per thread (default 999; at most\n"
"                    kernel.perf_event_max_sample_rate)\n"
"  -e EVENT          cpu-clock (default), task-clock, page-faults,\n"
"                    context-switches, cpu-migrations, minor-faults,\n"
"                    major-faults, or a hardware event (cycles,\n"
"                    instructions, cache-misses, branch-misses, ...)\n"
"                    where the machine has a PMU\n"
"  -o FILE           output file (default stax.data); a previous FILE is kept\n"
"                    as FILE.old. Only regular files are moved or replaced:\n"
"                    a directory, device, FIFO, socket or symbolic link at\n"
"                    FILE or FILE.old is an error, and is left as it was\n"
"  -p PID[,PID...]   attach to running processes and their threads;\n"
"                    stop with Ctrl-C, or when they all exit\n"
"  --unwind MODE     how user stacks are walked:\n"
"                    hybrid (default) DWARF CFI on a copy of the top of\n"
"                      the stack, unwound while recording, continued by\n"
"                      the kernel's frame-pointer chain where the copy\n"
"                      ends; full stacks without frame pointers. JIT code\n"
"                      without CFI: jitdump unwinding info, CPython's perf\n"
"                      trampolines (python -X perf), else frame pointers\n"
"                    dwarf  DWARF CFI only: stops where the copy ends\n"
"                    fp     the kernel's frame-pointer chain only (cheapest;\n"
"                      code built without frame pointers loses callers)\n"
"  --stack-size B    bytes of user stack copied per sample for hybrid and\n"
"                    dwarf (default 32768, at most 65528); the copy is\n"
"                    unwound in memory and never written to the file\n"
"  --duration SEC    stop after SEC seconds. With CMD (also with -a), end it\n"
"                    as timeout(1) does: SIGTERM to CMD and its children,\n"
"                    SIGKILL 5 s later if it still runs; stax records\n"
"                    until CMD exits and exits with its status (143 after\n"
"                    SIGTERM). With -p or -a alone, just stop recording\n"
"  --off-cpu         also record where threads wait: every switch-out with\n"
"                    its user and kernel stack (unwound like samples,\n"
"                    --stack-size bytes of user stack), ended by the\n"
"                    switch-in, with a\n"
"                    reason (lock, wait, read, write, sleep, poll, fault,\n"
"                    preempted, other); see stax threads, stax top\n"
"                    --off-cpu, stax flame --off-cpu and --wall. Needs root,\n"
"                    CAP_PERFMON or kernel.perf_event_paranoid <= 1. As\n"
"                    root or with CAP_PERFMON, also who ended each wait\n"
"                    (sched:sched_waking): see stax wakers\n"
"  --no-wakers       with --off-cpu, do not record who ended the waits\n"
"                    (less work per context switch)\n"
"  -a, --all-cpus    record every process on every cpu (root, CAP_PERFMON\n"
"                    or kernel.perf_event_paranoid <= 0); stops with\n"
"                    Ctrl-C, --duration, or when CMD exits if one is given;\n"
"                    filter the views with --pid, --tid or --comm\n"
"  -m, --mmap-pages N\n"
"                    size of each cpu's ring buffer, as perf's -m: N pages\n"
"                    (a power of two), or a size like 512K or 8M (B, K, M,\n"
"                    G; rounded up to a power-of-two number of pages);\n"
"                    also the size of the --off-cpu switch rings. Default:\n"
"                    500 ms of samples at -F on each cpu, HZ x 0.5 s x\n"
"                    (stack-size + 500 bytes; 350 bytes with --unwind fp),\n"
"                    rounded up to a power of two, from 1 MiB to 64 MiB\n"
"                    (16 MiB at 999 Hz with 32 KiB stack copies); with\n"
"                    --off-cpu 4 times that, at least 16 MiB; at most 1/32\n"
"                    of the memory for all cpus; as a user, within what\n"
"                    kernel.perf_event_mlock_kb and ulimit -l allow\n"
"  -q, --quiet       no summary at the end\n"
"\n"
"When a ring fills up before stax reads it, the kernel drops records and\n"
"the summary says how many, and which knob to turn (-m, -F, --stack-size).\n"
"When the dropped records named a process or mapped its files (-a on a\n"
"busy machine), stax reads its name and mappings from /proc while it runs,\n"
"and counts the processes that had exited first (their samples have no\n"
"name and no symbols); stax info shows both.\n"
"\n"
"As a user without privileges (kernel.perf_event_paranoid 2), stax records\n"
"your own processes with user-space frames only, and says why; another\n"
"user's process needs root, CAP_PERFMON or CAP_SYS_PTRACE, whatever\n"
"kernel.perf_event_paranoid is. The recording keeps the facts behind such\n"
"limits, so stax info and stax doctor give the same reasons later.\n";

static void parse_pids(struct record_opts *o, const char *s)
{
	char *copy = xstrdup(s), *tok, *save = NULL;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (parse_u64(tok, &v) || v == 0 || v > 0x7fffffff)
			die("record: -p takes process ids like 1234 or 1234,5678, not '%s'", s);
		o->pids = xrealloc(o->pids, (o->npids + 1) * sizeof(*o->pids));
		o->pids[o->npids++] = (int)v;
	}
	free(copy);
	if (!o->npids)
		die("record: -p needs at least one process id");
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int i, status = 0;

	memset(&o, 0, sizeof(o));
	o.output = "stax.data";
	o.event = "cpu-clock";
	o.freq = 999;
	o.unwind = UNWIND_MODE_HYBRID;
	o.stack_size = 32768;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		cmd_maybe_help("record", a);
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break; /* the command starts here */
		if (!strcmp(a, "-F") || !strcmp(a, "--freq")) {
			const char *v = cmd_value("record", argc, argv, &i);
			if (parse_u64(v, &o.freq) || !o.freq)
				die("record: -F needs a positive number of Hz, not '%s'", v);
		} else if (!strcmp(a, "-e") || !strcmp(a, "--event")) {
			o.event = cmd_value("record", argc, argv, &i);
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			o.output = cmd_value("record", argc, argv, &i);
		} else if (!strcmp(a, "-p") || !strcmp(a, "--pid")) {
			parse_pids(&o, cmd_value("record", argc, argv, &i));
		} else if (!strcmp(a, "--unwind")) {
			const char *v = cmd_value("record", argc, argv, &i);
			if (!strcmp(v, "fp"))
				o.unwind = UNWIND_MODE_FP;
			else if (!strcmp(v, "dwarf"))
				o.unwind = UNWIND_MODE_DWARF;
			else if (!strcmp(v, "hybrid"))
				o.unwind = UNWIND_MODE_HYBRID;
			else
				die("record: --unwind takes hybrid, dwarf or fp, not '%s'", v);
		} else if (!strcmp(a, "--stack-size")) {
			const char *v = cmd_value("record", argc, argv, &i);
			uint64_t n;
			if (parse_u64(v, &n) || n < 64 || n > 65528)
				die("record: --stack-size takes 64 to 65528 bytes (the kernel's limit), not '%s'", v);
			o.stack_size = (uint32_t)(n & ~7ull);
		} else if (!strcmp(a, "--duration")) {
			const char *v = cmd_value("record", argc, argv, &i);
			char *end;
			o.duration = strtod(v, &end);
			if (*end || o.duration <= 0)
				die("record: --duration needs a positive number of seconds, not '%s'", v);
		} else if (!strcmp(a, "-m") || !strcmp(a, "--mmap-pages")) {
			const char *v = cmd_value("record", argc, argv, &i);
			char why[160];
			if (ring_parse_pages(v, (size_t)sysconf(_SC_PAGESIZE), &o.mmap_pages, why, sizeof(why)))
				die("record: -m '%s': %s", v, why);
		} else if (!strcmp(a, "--off-cpu")) {
			o.off_cpu = 1;
		} else if (!strcmp(a, "--no-wakers")) {
			o.no_wakers = 1;
		} else if (!strcmp(a, "-a") || !strcmp(a, "--all-cpus")) {
			o.system_wide = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o.quiet = 1;
		} else {
			cmd_bad_option("record", a);
		}
	}
	if (i < argc)
		o.argv = argv + i;
	if (o.argv && o.npids)
		die("record: give either -p PID or a command, not both");
	if (o.system_wide && o.npids)
		die("record: give either -a or -p PID, not both (-a records every process; filter the views with --pid)");
	if (!o.argv && !o.npids && !o.system_wide)
		die("record: nothing to record (give a command after --, or -p PID; see 'stax help record')");
	if (record_run(&o, &status) && !status)
		status = 1;
	free(o.pids);
	return status;
}
