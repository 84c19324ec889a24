/* target.h - start the program to record, or find the processes to attach.
 *
 * target_spawn() forks a child that waits on a pipe; the caller opens its
 * events on the child's pid (enable_on_exec), then target_release() lets
 * it exec, so nothing of the program's start is missed. If exec fails the
 * child reports errno through a close-on-exec pipe and target_release()
 * says so.
 */
#ifndef STAX_RECORD_TARGET_H
#define STAX_RECORD_TARGET_H

#include <stdint.h>
#include <sys/types.h>

struct target {
	pid_t pid;
	int go_fd;      /* write end: one byte lets the child exec */
	int err_fd;     /* read end: errno from a failed exec, or EOF */
	int exec_errno; /* set by target_release() when exec failed */
};

struct err;
/* Fork the child for argv; returns 0 or -errno (the message in *e). */
int target_spawn(struct target *t, char *const argv[], struct err *e);
/* Let the child exec; returns 0, or -errno when exec failed (the message
 * in *e, child reaped). */
int target_release(struct target *t, const char *cmd, struct err *e);
/* Kill and reap a child that never got released. */
void target_abort(struct target *t);

/* Threads of a process from /proc/PID/task; returns the count, -1 when the
 * process does not exist. *tids is malloc'd. */
int target_threads(pid_t pid, pid_t **tids);
/* The process (thread group) thread tid belongs to, or -1 when there is
 * no such thread. */
int target_tgid(pid_t tid);
/* True while pid exists and is not a zombie. */
int target_alive(pid_t pid);
/* Send sig to root and to every process descended from it (found through
 * the parents in /proc at the time of the call), the way timeout(1)
 * signals the command's process group, so that the children of a shell
 * script end with it. Returns how many were signalled. */
int target_signal_tree(pid_t root, int sig);

#endif
