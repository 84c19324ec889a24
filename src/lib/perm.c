/* perm.c - why recording is not permitted, or limited (see perm.h). */
#include "lib/perm.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static long sysctl(const char *name)
{
	char path[128];
	FILE *f;
	long v;
	snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name);
	if (!(f = fopen(path, "r")))
		return PERM_UNKNOWN;
	if (fscanf(f, "%ld", &v) != 1)
		v = PERM_UNKNOWN;
	fclose(f);
	return v;
}

bool perm_has_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d))
		return false;
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

void perm_unknown(struct perm_facts *f)
{
	f->paranoid = PERM_UNKNOWN;
	f->privileged = -1;
	f->cap_ptrace = false;
	f->uid = PERM_UNKNOWN;
	f->mlock_kb = PERM_UNKNOWN;
	f->memlock_kb = PERM_UNKNOWN;
	f->max_rate = PERM_UNKNOWN;
	f->max_rate_end = PERM_UNKNOWN;
}

void perm_probe(struct perm_facts *f)
{
	struct rlimit rl;
	perm_unknown(f);
	f->paranoid = sysctl("perf_event_paranoid");
	f->privileged = geteuid() == 0 || perm_has_cap(CAP_PERFMON) || perm_has_cap(CAP_SYS_ADMIN);
	f->cap_ptrace = geteuid() == 0 || perm_has_cap(CAP_SYS_PTRACE);
	f->uid = (long)getuid();
	f->mlock_kb = sysctl("perf_event_mlock_kb");
	if (!getrlimit(RLIMIT_MEMLOCK, &rl))
		f->memlock_kb = rl.rlim_cur == RLIM_INFINITY ? -1 : (long)(rl.rlim_cur / 1024);
	f->max_rate = f->max_rate_end = sysctl("perf_event_max_sample_rate");
}

void perm_format(const struct perm_facts *f, char *buf, size_t n)
{
	snprintf(buf, n, "paranoid=%ld privileged=%d uid=%ld mlock_kb=%ld memlock_kb=%ld max_rate=%ld"
		 " max_rate_end=%ld", f->paranoid, f->privileged, f->uid, f->mlock_kb, f->memlock_kb,
		 f->max_rate, f->max_rate_end);
}

void perm_parse(struct perm_facts *f, const char *value)
{
	static const char *const keys[] = { "paranoid", "privileged", "uid", "mlock_kb", "memlock_kb",
					    "max_rate", "max_rate_end" };
	const char *p = value;
	perm_unknown(f);
	while (p && *p) {
		const char *eq = strchr(p, '='), *sp;
		size_t i;
		if (!eq)
			break;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			char *end;
			long v;
			if (strlen(keys[i]) != (size_t)(eq - p) || strncmp(p, keys[i], (size_t)(eq - p)))
				continue;
			v = strtol(eq + 1, &end, 10);
			if (end == eq + 1 || (*end && *end != ' '))
				break;
			switch (i) {
			case 0: f->paranoid = v; break;
			case 1: f->privileged = v == 1 ? 1 : v == 0 ? 0 : -1; break;
			case 2: f->uid = v; break;
			case 3: f->mlock_kb = v; break;
			case 4: f->memlock_kb = v; break;
			case 5: f->max_rate = v; break;
			case 6: f->max_rate_end = v; break;
			}
		}
		sp = strchr(eq, ' ');
		p = sp ? sp + 1 : NULL;
	}
}

bool perm_allowed(enum perm_what what, const struct perm_facts *f)
{
	if (f->privileged == 1)
		return true;
	if (f->paranoid == PERM_UNKNOWN)
		return true;
	switch (what) {
	case PERM_KERNEL:
	case PERM_OFFCPU:
		return f->paranoid <= 1;
	case PERM_SYSTEM:
		return f->paranoid <= 0;
	default:
		return true;
	}
}

/* "kernel.perf_event_paranoid is 2" or, not known, "kernel.perf_event_paranoid is above N". */
static void paranoid_is(const struct perm_facts *f, long above, char *buf, size_t n)
{
	if (f->paranoid != PERM_UNKNOWN)
		snprintf(buf, n, "kernel.perf_event_paranoid is %ld", f->paranoid);
	else
		snprintf(buf, n, "kernel.perf_event_paranoid was above %ld", above);
}

/* The user that owns process pid, or false. */
static bool process_owner(long pid, uid_t *uid, char *name, size_t n)
{
	char path[64];
	struct stat st;
	struct passwd *pw;
	snprintf(path, sizeof(path), "/proc/%ld", pid);
	if (stat(path, &st))
		return false;
	*uid = st.st_uid;
	pw = getpwuid(st.st_uid);
	snprintf(name, n, "%s", pw ? pw->pw_name : "another user");
	return true;
}

const char *perm_why(enum perm_what what, const struct perm_facts *f, long arg, char *buf, size_t n)
{
	char para[96];
	uid_t owner;
	char user[64];

	switch (what) {
	case PERM_KERNEL:
	case PERM_OFFCPU:
		if (f->privileged == -1 && f->paranoid == PERM_UNKNOWN) {
			snprintf(buf, n, "the recording does not say why (it was made without root or"
				 " CAP_PERFMON and with kernel.perf_event_paranoid above 1, or by a tool told"
				 " to leave the kernel out)");
			break;
		}
		paranoid_is(f, 1, para, sizeof(para));
		snprintf(buf, n, "%s and stax %s without root or CAP_PERFMON (record as root or with"
			 " CAP_PERFMON, or run: sudo sysctl kernel.perf_event_paranoid=1)", para,
			 what == PERM_OFFCPU ? "runs" : "ran");
		break;
	case PERM_SYSTEM:
		paranoid_is(f, 0, para, sizeof(para));
		snprintf(buf, n, "it needs per-cpu events, and %s and stax runs without root or CAP_PERFMON"
			 " (run as root or with CAP_PERFMON, or: sudo sysctl kernel.perf_event_paranoid=0)", para);
		break;
	case PERM_ATTACH:
		if (f->privileged != 1 && !f->cap_ptrace && f->uid != PERM_UNKNOWN &&
		    process_owner(arg, &owner, user, sizeof(user)) && (long)owner != f->uid) {
			snprintf(buf, n, "process %ld belongs to %s: a user may profile only their own"
				 " processes, whatever kernel.perf_event_paranoid is (run as root, or with"
				 " CAP_PERFMON or CAP_SYS_PTRACE)", arg, user);
			break;
		}
		if (f->privileged != 1 && (f->paranoid == PERM_UNKNOWN || f->paranoid <= 2)) {
			snprintf(buf, n, "process %ld is yours, but the kernel does not let you trace it (it"
				 " runs a set-user-id program, or made itself non-dumpable; or a seccomp filter"
				 " or security module blocks perf events: run as root or with CAP_PERFMON)", arg);
			break;
		}
		/* fall through - as for a launched command */
	case PERM_OPEN:
		if (f->privileged != 1 && f->paranoid > 2) {
			snprintf(buf, n, "kernel.perf_event_paranoid is %ld: only root or CAP_PERFMON may use"
				 " perf events (run as root, or: sudo sysctl kernel.perf_event_paranoid=2 to"
				 " profile your own processes)", f->paranoid);
		} else if (f->privileged == 1) {
			snprintf(buf, n, "the kernel refused perf events though stax runs as root or with"
				 " CAP_PERFMON (a seccomp filter or security module, as in a container, may"
				 " block perf_event_open)");
		} else {
			paranoid_is(f, 2, para, sizeof(para));
			snprintf(buf, n, "the kernel refused perf events though %s lets a user profile their"
				 " own processes (a seccomp filter or security module, as in a container, may"
				 " block perf_event_open; or run as root)", para);
		}
		break;
	case PERM_RATE:
		if (f->max_rate != PERM_UNKNOWN)
			snprintf(buf, n, "kernel.perf_event_max_sample_rate is %ld here (use -F %ld or lower)",
				 f->max_rate, f->max_rate);
		else
			snprintf(buf, n, "kernel.perf_event_max_sample_rate is lower (lower -F)");
		break;
	case PERM_MLOCK:
		if (f->privileged == 1 || f->memlock_kb == -1)
			snprintf(buf, n, "the kernel could not lock memory for the ring buffers (free some"
				 " memory)");
		else if (f->mlock_kb != PERM_UNKNOWN && f->memlock_kb != PERM_UNKNOWN)
			snprintf(buf, n, "the locked-memory limit is reached: kernel.perf_event_mlock_kb is"
				 " %ld KiB per cpu and ulimit -l is %ld KiB (run: sudo sysctl"
				 " kernel.perf_event_mlock_kb=%ld, or raise ulimit -l, or run as root)",
				 f->mlock_kb, f->memlock_kb, f->mlock_kb < 1024 ? 2048 : f->mlock_kb * 2);
		else
			snprintf(buf, n, "the locked-memory limit is reached (raise"
				 " kernel.perf_event_mlock_kb or ulimit -l, or run as root)");
		break;
	case PERM_THROTTLE:
		if (f->max_rate != PERM_UNKNOWN && f->max_rate_end != PERM_UNKNOWN && f->max_rate_end < f->max_rate)
			snprintf(buf, n, "sampling took more CPU than kernel.perf_cpu_time_max_percent allows, so"
				 " the kernel lowered kernel.perf_event_max_sample_rate from %ld to %ld while"
				 " recording (record with -F %ld or lower)", f->max_rate, f->max_rate_end,
				 f->max_rate_end);
		else if (f->max_rate != PERM_UNKNOWN && arg > 0)
			snprintf(buf, n, "interrupts came faster than kernel.perf_event_max_sample_rate (%ld)"
				 " allows per tick at %ld Hz (record with a lower -F)", f->max_rate, arg);
		else
			snprintf(buf, n, "interrupts came faster than kernel.perf_event_max_sample_rate allows"
				 " (record with a lower -F)");
		break;
	}
	return buf;
}
