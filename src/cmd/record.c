/* record.c - stax record: sample a command or running processes. */
#include "cmd/cmd.h"
#include "record/events.h"
#include "record/recorder.h"
#include "record/ring.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* perf record's flags that stax has no counterpart for: each says what
 * to use instead (the text is the error, and the help line). */
/* perf record's flags that stax has no counterpart for: taken (not
 * listed in the options, a paragraph after them names them) only to say
 * what to use instead. */
static const struct {
	int id;
	const char *why;
} perf_only_why[] = {
	{ 'b', "perf's branch stacks (LBR): stax does not record them; use perf record -b" },
	{ 'j', "perf's branch stacks (LBR): stax does not record them; use perf record -j" },
	{ 'C', "perf's cpu list: not in stax; use -a (every cpu) and filter the views by --pid,"
	  " --tid or --comm" },
	{ 'u', "perf's user filter: not in stax; use -p with the user's processes, or -a and"
	  " filter the views by --pid or --comm" },
	{ 'G', "perf's cgroup filter: not in stax; use -p with the pids in the cgroup's"
	  " cgroup.procs, or -a" },
	{ 'd', "perf's data addresses: stax samples code addresses only; use perf record -d" },
};
static const struct opt record_perf_only[] = {
	{ 'b', "branch-any", NULL, NULL, NULL },
	{ 'j', "branch-filter", "MASK", NULL, NULL },
	{ 'C', "cpu", "CPUS", NULL, NULL },
	{ 'u', "uid", "USER", NULL, NULL },
	{ 'G', "cgroup", "NAME", NULL, NULL },
	{ 'd', "data", NULL, NULL, NULL },
	OPT_END,
};

enum {
	REC_UNWIND = OPT_LONG, REC_STACK_SIZE, REC_DURATION, REC_OFF_CPU, REC_CALL_GRAPH, REC_NO_WAKERS,
	REC_NO_PYTHON_FRAMES,
	REC_NO_READ_STACK,
	REC_NO_BPF,
};

static const struct opt record_opts[] = {
	{ 'F', "freq", "HZ", "samples per second per thread (default 999, or\n"
	  "kernel.perf_event_max_sample_rate when that is lower; at\n"
	  "most kernel.perf_event_max_sample_rate)", NULL },
	{ 'c', "count", "COUNT", "a sample every COUNT events instead of -F, as perf's\n"
	  "-c: for cpu-clock and task-clock COUNT is nanoseconds of\n"
	  "CPU time (-c 1000000 is one sample per ms), for other\n"
	  "events a count of them (-e page-faults -c 100)", NULL },
	{ 'e', "event", "EVENT", "cpu-clock (default), task-clock, page-faults,\n"
	  "context-switches, cpu-migrations, minor-faults,\n"
	  "major-faults, or a hardware event (cycles,\n"
	  "instructions, cache-misses, branch-misses, ...)\n"
	  "where the machine has a PMU", NULL },
	{ 'o', "output", "FILE", "output file (default stax.data); a previous FILE is kept\n"
	  "as FILE.old. Only regular files are moved or replaced:\n"
	  "a directory, device, FIFO, socket or symbolic link at\n"
	  "FILE or FILE.old is an error, and is left as it was", NULL },
	{ 'p', "pid", "PID[,PID...]", "attach to running processes and their threads;\n"
	  "stop with Ctrl-C, or when they all exit", NULL },
	{ 't', "tid", "TID[,TID...]", "attach to these threads only, as perf's -t: not the\n"
	  "other threads of their process, nor threads or\n"
	  "processes they start; stop with Ctrl-C, or when they\n"
	  "all exit", NULL },
	{ REC_UNWIND, "unwind", "MODE", "how user stacks are walked:\n"
	  "hybrid (default) DWARF CFI on a copy of the top of\n"
	  "  the stack, unwound while recording, continued by\n"
	  "  the kernel's frame-pointer chain where the copy\n"
	  "  ends; full stacks without frame pointers. JIT code\n"
	  "  without CFI: jitdump unwinding info, CPython's perf\n"
	  "  trampolines (python -X perf), else frame pointers\n"
	  "dwarf  DWARF CFI only: stops where the copy ends\n"
	  "fp     the kernel's frame-pointer chain only (cheapest;\n"
	  "  code built without frame pointers loses callers)", NULL },
	{ 'g', NULL, NULL, "record call stacks, as perf's -g asks: stax always\n"
	  "does, with the default --unwind hybrid (not perf's\n"
	  "frame pointers alone; --call-graph fp is that); -g\n"
	  "leaves a mode chosen by --unwind or --call-graph as is", NULL },
	{ REC_CALL_GRAPH, "call-graph", "MODE[,SIZE]", "perf's spelling of --unwind and --stack-size:\n"
	  "fp, dwarf[,SIZE] or hybrid[,SIZE] (SIZE: bytes of\n"
	  "stack copied, as --stack-size); lbr is not supported", NULL },
	{ REC_STACK_SIZE, "stack-size", "B", "bytes of user stack copied per sample for hybrid and\n"
	  "dwarf (default 32768, at most 65528); the copy is\n"
	  "unwound in memory and never written to the file", NULL },
	{ REC_DURATION, "duration", "SEC", "stop after SEC seconds. With CMD (also with -a), end it\n"
	  "as timeout(1) does: SIGTERM to CMD and its children,\n"
	  "SIGKILL 5 s later if it still runs; stax records\n"
	  "until CMD exits and exits with its status (143 after\n"
	  "SIGTERM). With -p, -t or -a alone, just stop recording", NULL },
	{ REC_OFF_CPU, "off-cpu", NULL, "also record where threads wait: every switch-out with\n"
	  "its user and kernel stack (unwound like samples,\n"
	  "--stack-size bytes of user stack), ended by the\n"
	  "switch-in, with a\n"
	  "reason (lock, wait, read, write, sleep, poll, fault,\n"
	  "preempted, other); see stax threads, stax top\n"
	  "--off-cpu, stax flame --off-cpu and --wall. Needs root,\n"
	  "CAP_PERFMON or kernel.perf_event_paranoid <= 1. As\n"
	  "root or with CAP_PERFMON, also who ended each wait\n"
	  "(sched:sched_waking): see stax wakers", NULL },
	{ REC_NO_WAKERS, "no-wakers", NULL, "with --off-cpu, do not record who ended the waits\n"
	  "(less work per context switch)", NULL },
	{ REC_NO_PYTHON_FRAMES, "no-python-frames", NULL, "do not read Python frames from CPython 3.11-3.13\n"
	  "processes: by default each _PyEval_EvalFrameDefault\n"
	  "frame of a sample is followed by the Python functions\n"
	  "it runs (py::QUALNAME:FILE, as python -X perf names\n"
	  "them), read from the interpreter's memory while\n"
	  "recording (needs ptrace access to the process)", NULL },
	{ REC_NO_READ_STACK, "no-read-stack", NULL, "never read a stack beyond its copy from the process.\n"
	  "By default, where a stack goes on past the copy (deeper\n"
	  "than --stack-size, or switched to another stack: Go,\n"
	  "Rust's psm, sigaltstack; --off-cpu waits), the rest is\n"
	  "read from the live process when the copy's outermost\n"
	  "return address is still in place (needs ptrace access;\n"
	  "stax info: read). With this, such stacks stay truncated", NULL },
	{ REC_NO_BPF, "no-bpf", NULL, "do not load the in-kernel reader. By default a small\n"
	  "BPF program runs at each sample (root, or CAP_BPF and\n"
	  "CAP_PERFMON; a kernel with BTF) and reads, at that\n"
	  "moment, the Python frames of the thread and, where its\n"
	  "stack goes past the copy, the 16 KiB after it, the\n"
	  "stack words its last deep stacks needed and a new\n"
	  "thread's stack top, so those frames are exact. Without\n"
	  "it (this option, or when it cannot load) they are read\n"
	  "after the sample, when the program may have moved on:\n"
	  "such stacks get the verdict late, never complete\n"
	  "(stax info counts them, stax doctor explains,\n"
	  "--no-late-frames leaves those frames out of the views)", NULL },
	{ 'a', "all-cpus", NULL, "record every process on every cpu (root, CAP_PERFMON\n"
	  "or kernel.perf_event_paranoid <= 0); stops with\n"
	  "Ctrl-C, --duration, or when CMD exits if one is given;\n"
	  "filter the views with --pid, --tid or --comm", NULL },
	{ 'm', "mmap-pages", "N", "size of each cpu's ring buffer, as perf's -m: N pages\n"
	  "(a power of two), or a size like 512K or 8M (B, K, M,\n"
	  "G; rounded up to a power-of-two number of pages);\n"
	  "also the size of the --off-cpu switch rings. Default:\n"
	  "500 ms of samples at -F on each cpu, HZ x 0.5 s x\n"
	  "(stack-size + 500 bytes; 350 bytes with --unwind fp),\n"
	  "rounded up to a power of two, from 1 MiB to 64 MiB\n"
	  "(16 MiB at 999 Hz with 32 KiB stack copies); with\n"
	  "--off-cpu 4 times that, at least 16 MiB; at most 1/32\n"
	  "of the memory for all cpus; as a user, within what\n"
	  "kernel.perf_event_mlock_kb and ulimit -l allow", NULL },
	{ 'q', "quiet", NULL, "no summary at the end", NULL },
	OPT_GROUP(record_perf_only),
	OPT_END,
};

const struct cmd_spec cmd_record_spec = {
	"record",
"usage: stax record [-F HZ | -c COUNT] [-e EVENT] [-o FILE] [--unwind hybrid|dwarf|fp]\n"
"                   [--stack-size BYTES] [--duration SECONDS] [--off-cpu]\n"
"                   [--no-wakers] [--no-python-frames] [--no-read-stack] [--no-bpf]\n"
"                   [-m PAGES|SIZE] [-g]\n"
"                   [--call-graph fp|dwarf|hybrid[,SIZE]]\n"
"                   (-p PID[,PID...] | -t TID[,TID...] | -a [-- CMD ARGS...] |\n"
"                    -- CMD ARGS...)\n"
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
,
	record_opts,
"perf record's spellings work too: -g, --call-graph, -c, -t, --pid, -m\n"
"and -F; the perf flags stax has no counterpart for (-b, -j, -C, -u, -G,\n"
"-d, --call-graph lbr) say what to use instead.\n"
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
"limits, so stax info and stax doctor give the same reasons later.\n",
	OPT_STOP_AT_ARG,
};

static void parse_pids(struct record_opts *o, const char *opt, const char *s)
{
	char *copy = xstrdup(s), *tok, *save = NULL;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (parse_u64(tok, &v) || v == 0 || v > 0x7fffffff)
			die("record: %s takes %s ids like 1234 or 1234,5678, not '%s'", opt,
			    o->thread_only ? "thread" : "process", s);
		o->pids = xrealloc(o->pids, (o->npids + 1) * sizeof(*o->pids));
		o->pids[o->npids++] = (int)v;
	}
	free(copy);
	if (!o->npids)
		die("record: %s needs at least one %s id", opt, o->thread_only ? "thread" : "process");
}

static void set_unwind(struct record_opts *o, const char *opt, const char *v)
{
	if (!strcmp(v, "fp"))
		o->unwind = UNWIND_MODE_FP;
	else if (!strcmp(v, "dwarf"))
		o->unwind = UNWIND_MODE_DWARF;
	else if (!strcmp(v, "hybrid"))
		o->unwind = UNWIND_MODE_HYBRID;
	else if (!strcmp(v, "lbr"))
		die("record: %s lbr: stax does not unwind with branch records (use the default"
		    " --call-graph hybrid, or perf record --call-graph lbr)", opt);
	else
		die("record: %s takes hybrid, dwarf or fp, not '%s'", opt, v);
}

static void set_stack_size(struct record_opts *o, const char *opt, const char *v)
{
	uint64_t n;
	if (parse_u64(v, &n) || n < 64 || n > 65528)
		die("record: %s takes 64 to 65528 bytes (the kernel's limit), not '%s'", opt, v);
	o->stack_size = (uint32_t)(n & ~7ull);
}

/* --call-graph MODE[,SIZE], as perf spells it */
static void set_call_graph(struct record_opts *o, const char *v)
{
	char mode[16];
	const char *comma = strchr(v, ',');
	size_t n = comma ? (size_t)(comma - v) : strlen(v);
	if (n >= sizeof(mode))
		die("record: --call-graph takes fp, dwarf[,SIZE] or hybrid[,SIZE], not '%s'", v);
	memcpy(mode, v, n);
	mode[n] = 0;
	set_unwind(o, "--call-graph", mode);
	if (comma) {
		if (o->unwind == UNWIND_MODE_FP)
			die("record: --call-graph fp takes no size (the size is of the stack copy of"
			    " dwarf and hybrid), not '%s'", v);
		set_stack_size(o, "--call-graph", comma + 1);
	}
}

/* A perf flag stax has no counterpart for: say what to use instead. */
static void perf_only(const struct opt_parser *op, int id) __attribute__((noreturn));
static void perf_only(const struct opt_parser *op, int id)
{
	size_t i;
	for (i = 0; i < ARRAY_SIZE(perf_only_why) && perf_only_why[i].id != id; i++)
		;
	die("record: %s: %s", op->name, i < ARRAY_SIZE(perf_only_why) ? perf_only_why[i].why : "not supported");
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct opt_parser op;
	int id, i, status = 0;
	bool freq_set = false, tids = false;
	struct err e;

	memset(&o, 0, sizeof(o));
	o.output = "stax.data";
	o.event = "cpu-clock";
	o.freq = 999;
	o.unwind = UNWIND_MODE_HYBRID;
	o.stack_size = 32768;
	opt_begin(&op, &cmd_record_spec, argc, argv);
	while ((id = opt_next(&op)) != OPT_DONE) {
		const char *v = op.arg;
		switch (id) {
		case 'F':
			if (parse_u64(v, &o.freq) || !o.freq)
				die("record: -F needs a positive number of Hz, not '%s'", v);
			freq_set = true;
			break;
		case 'c':
			if (parse_u64(v, &o.period) || !o.period)
				die("record: -c needs a positive number of events, not '%s'", v);
			break;
		case 'e':
			o.event = v;
			break;
		case 'o':
			o.output = v;
			break;
		case 'p':
		case 't':
			if (o.npids && tids != (id == 't'))
				die("record: give either -p PID or -t TID, not both");
			tids = id == 't';
			o.thread_only = tids;
			parse_pids(&o, op.name, v);
			break;
		case REC_UNWIND:
			set_unwind(&o, "--unwind", v);
			break;
		case REC_CALL_GRAPH:
			set_call_graph(&o, v);
			break;
		case 'g':
			break; /* stax always records call stacks */
		case REC_STACK_SIZE:
			set_stack_size(&o, "--stack-size", v);
			break;
		case REC_DURATION: {
			char *end;
			o.duration = strtod(v, &end);
			if (*end || o.duration <= 0)
				die("record: --duration needs a positive number of seconds, not '%s'", v);
			break;
		}
		case 'm': {
			struct err why;
			if (ring_parse_pages(v, (size_t)sysconf(_SC_PAGESIZE), &o.mmap_pages, &why))
				die("record: -m '%s': %s", v, why.msg);
			break;
		}
		case REC_OFF_CPU:
			o.off_cpu = 1;
			break;
		case REC_NO_PYTHON_FRAMES:
			o.no_python_frames = 1;
			break;
		case REC_NO_READ_STACK:
			o.no_read_stack = 1;
			break;
		case REC_NO_BPF:
			o.no_bpf = 1;
			break;
		case REC_NO_WAKERS:
			o.no_wakers = 1;
			break;
		case 'a':
			o.system_wide = 1;
			break;
		case 'q':
			o.quiet = 1;
			break;
		default:
			perf_only(&op, id);
		}
	}
	i = opt_rest(&op);
	if (i < argc)
		o.argv = argv + i;
	if (freq_set && o.period)
		die("record: give either -F HZ or -c COUNT, not both");
	if (o.argv && o.npids)
		die("record: give either %s or a command, not both", tids ? "-t TID" : "-p PID");
	if (o.system_wide && o.npids)
		die("record: give either -a or %s, not both (-a records every process; filter the views with --pid)",
		    tids ? "-t TID" : "-p PID");
	if (!o.argv && !o.npids && !o.system_wide)
		die("record: nothing to record (give a command after --, or -p PID; see 'stax help record')");
	/* The default rate above what the kernel allows now: it lowers
	 * kernel.perf_event_max_sample_rate when sampling interrupts take
	 * long (an emulated machine: qemu's TCG; a busy one) and stays
	 * there until the next boot. Sample at its limit, as perf does; a
	 * rate given with -F stays an error. */
	if (!freq_set && !o.period) {
		long max = sysctl_read("/proc/sys/kernel/perf_event_max_sample_rate", -1);
		if (max > 0 && o.freq > (uint64_t)max) {
			warn("sampling at %ld Hz, not %" PRIu64 ": kernel.perf_event_max_sample_rate"
			     " is %ld here (the kernel lowers it when sampling costs too much)",
			     max, o.freq, max);
			o.freq = (uint64_t)max;
		}
	}
	if (record_run(&o, &status, &e)) {
		if (e.msg[0])
			error("%s", e.msg);
		if (!status)
			status = 1;
	}
	free(o.pids);
	return status;
}
