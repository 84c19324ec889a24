/* perm.h - why recording is not permitted, or limited, and what to do.
 *
 * One place turns the facts (kernel.perf_event_paranoid, root and
 * capabilities, the locked-memory limits, kernel.perf_event_max_sample_rate,
 * who owns a process) into a reason. The recorder uses it for its errors
 * and notes, and writes the facts into the recording (META "perm"), so
 * that stax info and stax doctor, reading the recording later or on
 * another machine, give the same reason for the same recording.
 */
#ifndef STAX_LIB_PERM_H
#define STAX_LIB_PERM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PERM_UNKNOWN (-1000L)  /* a fact the recording does not hold */

struct perm_facts {
	long paranoid;        /* kernel.perf_event_paranoid */
	int privileged;       /* root, CAP_PERFMON or CAP_SYS_ADMIN: 1, 0, or -1 unknown */
	bool cap_ptrace;      /* CAP_SYS_PTRACE (attaching to others' processes) */
	long uid;             /* real uid, or PERM_UNKNOWN */
	long mlock_kb;        /* kernel.perf_event_mlock_kb */
	long memlock_kb;      /* ulimit -l in KiB, -1 unlimited */
	long max_rate;        /* kernel.perf_event_max_sample_rate */
	long max_rate_end;    /* the same when recording stopped (the kernel lowers it) */
};

/* The facts of this process on this machine, now. */
void perm_probe(struct perm_facts *f);
/* Whether this process has capability cap in its effective set. */
bool perm_has_cap(int cap);
/* Facts all unknown (a recording that does not hold them). */
void perm_unknown(struct perm_facts *f);
/* The facts as a META value ("paranoid=2 privileged=0 ...") into buf
 * and back; perm_parse leaves what value lacks unknown. */
void perm_format(const struct perm_facts *f, char *buf, size_t n);
void perm_parse(struct perm_facts *f, const char *value);

enum perm_what {
	PERM_KERNEL,     /* kernel frames and samples */
	PERM_SYSTEM,     /* -a: per-cpu events for every process */
	PERM_OFFCPU,     /* --off-cpu: context-switch samples need the kernel */
	PERM_OPEN,       /* perf_event_open refused (EACCES, EPERM) for a launched command */
	PERM_ATTACH,     /* the same for -p PID (arg: the pid) */
	PERM_RATE,       /* -F above the kernel's limit (arg: the rate asked for) */
	PERM_MLOCK,      /* the ring buffers cannot be mapped (locked memory) */
	PERM_THROTTLE,   /* the kernel throttled sampling (arg: the rate asked for) */
};

/* Is what allowed with these facts? (PERM_KERNEL, PERM_SYSTEM and
 * PERM_OFFCPU; the others are known only by trying.) Unknown facts
 * allow. */
bool perm_allowed(enum perm_what what, const struct perm_facts *f);
/* Why what is refused or limited, and what to do, as "reason (what to
 * do)", into buf; returns buf. Never fails. */
const char *perm_why(enum perm_what what, const struct perm_facts *f, long arg, char *buf, size_t n);

#endif
