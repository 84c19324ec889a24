#include "record/events.h"
#include "lib/perm.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

/* The events stax records; their names are perf's (perf_event_name(),
 * ingest/sample.c, the one list of names). */
static const struct event_spec events[] = {
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false },
	{ PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, false },
	{ PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, false },
};

static const struct { const char *alias, *name; } aliases[] = {
	{ "cpu-cycles", "cycles" }, { "faults", "page-faults" },
	{ "cs", "context-switches" }, { "migrations", "cpu-migrations" },
	{ "branch-instructions", "branches" },
};

const struct event_spec *event_find(const char *name)
{
	size_t i;
	for (i = 0; i < ARRAY_SIZE(aliases); i++)
		if (!strcmp(name, aliases[i].alias))
			name = aliases[i].name;
	for (i = 0; i < ARRAY_SIZE(events); i++)
		if (!strcmp(name, event_name(&events[i])))
			return &events[i];
	return NULL;
}

int event_open(struct perf_event_attr *attr, int pid, int cpu, int group, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

bool event_supported(const struct event_spec *ev)
{
	struct perf_event_attr a;
	int fd;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev->type;
	a.config = ev->config;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

const char *event_available(void)
{
	static char list[512];
	size_t i;
	if (list[0])
		return list;
	for (i = 0; i < ARRAY_SIZE(events); i++) {
		if (!event_supported(&events[i]))
			continue;
		if (list[0])
			strncat(list, ", ", sizeof(list) - strlen(list) - 1);
		strncat(list, event_name(&events[i]), sizeof(list) - strlen(list) - 1);
	}
	if (!list[0])
		strcpy(list, "none");
	return list;
}

long sysctl_read(const char *path, long def)
{
	FILE *f = fopen(path, "r");
	long v;
	if (!f)
		return def;
	if (fscanf(f, "%ld", &v) != 1)
		v = def;
	fclose(f);
	return v;
}

bool event_kernel_allowed(void)
{
	struct perm_facts f;
	perm_probe(&f);
	return perm_allowed(PERM_KERNEL, &f);
}

bool event_system_allowed(void)
{
	struct perm_facts f;
	perm_probe(&f);
	return perm_allowed(PERM_SYSTEM, &f);
}

void event_attr_switch(struct perf_event_attr *a, struct perf_event_attr *records,
		       const struct perf_event_attr *main, uint32_t stack_user)
{
	*a = *main;
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->freq = 0;
	a->sample_period = 1;
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		a->sample_stack_user = stack_user;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 0;
	/* the switch happens in the kernel: excluding it would see none */
	a->exclude_kernel = 0;
	a->exclude_callchain_kernel = 0;
	/* The switch records come from an event of their own, which takes
	 * no samples; its sample_type is the same, so that the sample_id
	 * of its records reads like everyone else's. */
	*records = *a;
	records->config = PERF_COUNT_SW_DUMMY;
	records->sample_period = 0;
	records->context_switch = 1;
}

/* "field:pid_t pid;\toffset:24;..." -> 24 for name "pid" */
static bool format_offset(const char *line, const char *name, uint32_t *off)
{
	const char *f = strstr(line, "field:"), *semi, *o;
	size_t n = strlen(name);
	unsigned v;
	if (!f || !(semi = strchr(f, ';')) || semi - f < (long)n + 1 ||
	    strncmp(semi - n, name, n) || (semi[-(long)n - 1] != ' ' && semi[-(long)n - 1] != '*'))
		return false;
	o = strstr(semi, "offset:");
	if (!o || sscanf(o, "offset:%u;", &v) != 1)
		return false;
	*off = v;
	return true;
}

/* tracefs is mounted on /sys/kernel/tracing at boot on most systems, but
 * not everywhere (a minimal VM or container): there perf mounts it when
 * it needs a tracepoint, and so does stax, as root, on that standard
 * mount point only (an empty directory of sysfs), and leaves it mounted
 * as perf does. True when it mounted it. */
#define TRACEFS_DIR "/sys/kernel/tracing"
#define TRACEFS_MAGIC 0x74726163
#define SYSFS_MAGIC 0x62656572

static bool mount_tracefs(void)
{
	struct statfs sf;

	if (geteuid() != 0 || statfs(TRACEFS_DIR, &sf) || sf.f_type != SYSFS_MAGIC)
		return false;
	if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL))
		return false;
	note("mounted tracefs on " TRACEFS_DIR " (as perf does) to read the sched:sched_waking"
	     " tracepoint");
	return true;
}

int event_waking_format(struct waking_format *wf, struct err *err)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[128], line[256];
	bool have_flags = false, have_pid = false;
	long id = -1;
	size_t i;
	FILE *f = NULL;

	for (int tries = 0; tries < 2 && id < 0; tries++) {
		for (i = 0; i < ARRAY_SIZE(dirs) && id < 0; i++) {
			snprintf(path, sizeof(path), "%s/events/sched/sched_waking/id", dirs[i]);
			id = sysctl_read(path, -1);
		}
		if (id < 0 && (tries || !mount_tracefs()))
			break;
	}
	if (id < 0) {
		err_set(err, -1, "cannot read the sched:sched_waking tracepoint from tracefs"
			 " (mount tracefs on /sys/kernel/tracing, or run as root)");
		return -1;
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_waking/format", dirs[i - 1]);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		have_flags |= format_offset(line, "common_flags", &wf->flags_off);
		have_pid |= format_offset(line, "pid", &wf->pid_off);
	}
	if (f)
		fclose(f);
	if (!have_flags || !have_pid) {
		err_set(err, -1, "%s has no common_flags and pid fields", path);
		return -1;
	}
	wf->id = (uint64_t)id;
	return 0;
}

void event_attr_waking(struct perf_event_attr *a, const struct perf_event_attr *main,
		       const struct waking_format *wf, uint32_t stack_user)
{
	*a = *main;
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = wf->id;
	a->freq = 0;
	a->sample_period = 1;
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		a->sample_stack_user = stack_user;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = a->task = 0;
	a->exclude_kernel = 0; /* the tracepoint is in the kernel */
	a->exclude_callchain_kernel = 0;
}

void event_attr(struct perf_event_attr *a, const struct event_spec *ev,
		uint64_t freq, bool kernel, bool enable_on_exec,
		uint64_t sample_regs_user, uint32_t stack_user)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = ev->type;
	a->config = ev->config;
	a->sample_freq = freq;
	a->freq = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (sample_regs_user) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = sample_regs_user;
		a->sample_stack_user = stack_user;
	}
	a->disabled = 1;
	a->inherit = 1;
	a->enable_on_exec = enable_on_exec;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = 1; /* CLOCK_MONOTONIC */
	a->exclude_kernel = !kernel;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = !kernel;
	a->sample_max_stack = (uint16_t)sysctl_read("/proc/sys/kernel/perf_event_max_stack", 127);
	a->watermark = 1;
	a->wakeup_watermark = 16384;
}

int event_open_error(int err, const struct event_spec *ev, uint64_t freq, int pid, struct err *e)
{
	struct perm_facts f;
	char why[512];
	perm_probe(&f);
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return err_set(e, -err, "cannot open event '%s': not supported on this machine%s (available: %s; the default is cpu-clock)",
			     event_name(ev), ev->type == PERF_TYPE_HARDWARE ? " (no hardware PMU counters, as in most VMs)" : "",
			     event_available());
	case EACCES:
	case EPERM:
		if (pid > 0)
			return err_set(e, -err, "cannot attach to process %d: permission denied: %s", pid,
				     perm_why(PERM_ATTACH, &f, pid, why, sizeof(why)));
		return err_set(e, -err, "cannot open perf events: permission denied: %s",
			     perm_why(PERM_OPEN, &f, 0, why, sizeof(why)));
	case ESRCH:
		return err_set(e, -err, "cannot attach to process %d: no such process (check the pid)", pid);
	case EMFILE:
	case ENFILE:
		return err_set(e, -err, "cannot open perf events: too many open files (raise the limit: ulimit -n 65536)");
	case EINVAL:
		if (f.max_rate != PERM_UNKNOWN && freq > (uint64_t)f.max_rate)
			return err_set(e, -err, "cannot sample at %llu Hz: %s", (unsigned long long)freq,
				     perm_why(PERM_RATE, &f, (long)freq, why, sizeof(why)));
		return err_set(e, -err, "cannot open event '%s': invalid argument (this kernel may be too old for stax's options)",
			     event_name(ev));
	default:
		return err_set(e, -err, "cannot open event '%s': %s", event_name(ev), strerror(err));
	}
}

size_t event_mlock_budget_kb(long *mlock_kb, long *memlock_kb)
{
	long kb = sysctl_read("/proc/sys/kernel/perf_event_mlock_kb", 516);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	struct rlimit rl;
	size_t budget;

	*mlock_kb = kb;
	*memlock_kb = -1;
	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		*memlock_kb = (long)(rl.rlim_cur / 1024);
#ifndef CAP_IPC_LOCK
#define CAP_IPC_LOCK 14
#endif
	if (geteuid() == 0 || perm_has_cap(CAP_IPC_LOCK) ||
	    sysctl_read("/proc/sys/kernel/perf_event_paranoid", 2) < 0 || *memlock_kb < 0)
		return SIZE_MAX;
	budget = (size_t)(kb > 0 ? kb : 0) * (size_t)(online > 0 ? online : 1);
	return budget + (size_t)*memlock_kb;
}
