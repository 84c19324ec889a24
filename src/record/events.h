/* events.h - perf_event_open setup for the recorder.
 *
 * Knows the event names stax accepts, builds the attribute for sampling
 * with call chains, and turns the kernel's refusals into messages that
 * say what to do. Functions that fail return 0 or -errno with the message
 * in a struct err (lib/util.h) for the command to print.
 */
#ifndef STAX_RECORD_EVENTS_H
#define STAX_RECORD_EVENTS_H

#include "ingest/sample.h"

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

struct event_spec {
	uint32_t type;
	uint64_t config;
	bool is_clock;        /* period is nanoseconds of CPU time */
};

/* Its canonical name ("cpu-clock"): perf's, from the one list of names. */
static inline const char *event_name(const struct event_spec *ev)
{
	return perf_event_name(ev->type, ev->config);
}

/* Look up a user-given event name; NULL when unknown. */
const struct event_spec *event_find(const char *name);
/* Comma-separated names of the events that can be opened here. Borrowed. */
const char *event_available(void);
/* True when the event can be opened on this machine. */
bool event_supported(const struct event_spec *ev);

struct record_opts;

/* Fill attr for sampling ev at freq Hz. */
void event_attr(struct perf_event_attr *attr, const struct event_spec *ev,
		uint64_t freq, bool kernel, bool enable_on_exec,
		uint64_t sample_regs_user, uint32_t stack_user);

/* Make the two off-CPU events from the sampling attribute main: attr,
 * context-switches with period 1 (one sample, with kernel and user
 * stacks, per switch-out; stack_user bytes of user stack), and records,
 * a dummy event (no samples) that writes the PERF_RECORD_SWITCH records
 * (context_switch) of switch-outs and switch-ins. Neither carries
 * mmap/comm/task records (main has them). */
void event_attr_switch(struct perf_event_attr *attr, struct perf_event_attr *records,
		       const struct perf_event_attr *main, uint32_t stack_user);

/* The sched:sched_waking tracepoint, from tracefs: its id and where its
 * raw data holds common_flags and the woken thread's pid. */
struct waking_format {
	uint64_t id;
	uint32_t flags_off, pid_off;
};
/* Read it (/sys/kernel/tracing, else /sys/kernel/debug/tracing); 0, or
 * -1 with why (a phrase) in why. */
int event_waking_format(struct waking_format *wf, struct err *err);
/* The wake-up event from the sampling attribute main (same sample_type,
 * so that its samples read like the others): sched_waking with period 1,
 * kernel and user stacks (stack_user bytes). */
void event_attr_waking(struct perf_event_attr *attr, const struct perf_event_attr *main,
		       const struct waking_format *wf, uint32_t stack_user);

/* perf_event_open wrapper. */
int event_open(struct perf_event_attr *attr, int pid, int cpu, int group, unsigned long flags);

/* Explain a failed perf_event_open (errno err) in *e and return -err:
 * pid is the process attached to (-p), 0 for a launched command or -a.
 * The reasons come from perm_why() (lib/perm.h). */
struct err;
int event_open_error(int err, const struct event_spec *ev, uint64_t freq, int pid, struct err *e);

/* Read an integer sysctl from /proc/sys/...; returns def on failure. */
long sysctl_read(const char *path, long def);

/* Whether this process may record kernel frames (root, CAP_PERFMON,
 * CAP_SYS_ADMIN or perf_event_paranoid <= 1): perm_allowed(PERM_KERNEL). */
bool event_kernel_allowed(void);
/* Whether this process may open per-cpu events for every process (root,
 * CAP_PERFMON, CAP_SYS_ADMIN or perf_event_paranoid <= 0):
 * perm_allowed(PERM_SYSTEM). */
bool event_system_allowed(void);

/* KiB of ring buffers this process may lock, by the kernel's rule for
 * perf_event mmaps: kernel.perf_event_mlock_kb per online cpu for all of
 * a user's rings, then up to RLIMIT_MEMLOCK (ulimit -l) more. SIZE_MAX
 * when not limited (CAP_IPC_LOCK, as root, or perf_event_paranoid -1).
 * *mlock_kb and *memlock_kb get the two limits (-1: unlimited). */
size_t event_mlock_budget_kb(long *mlock_kb, long *memlock_kb);

#endif
