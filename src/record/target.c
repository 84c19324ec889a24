#include "record/target.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int target_spawn(struct target *t, char *const argv[], struct err *e)
{
	int go[2], err[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
		return err_set(e, -errno, "cannot start the command: pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		return err_set(e, -errno, "cannot start the command: fork: %s", strerror(errno));
	if (pid == 0) {
		char c;
		int e;
		close(go[1]);
		close(err[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGCHLD, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		/* wait until every event is enabled; EOF means the recorder gave up */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	t->pid = pid;
	t->go_fd = go[1];
	t->err_fd = err[0];
	return 0;
}

int target_release(struct target *t, const char *cmd, struct err *err)
{
	int e = 0;
	ssize_t n;
	if (write(t->go_fd, "x", 1) != 1) {
		close(t->go_fd);
		close(t->err_fd);
		return err_set(err, -ECHILD, "cannot start '%s': the child exited early", cmd);
	}
	close(t->go_fd);
	do
		n = read(t->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(t->err_fd);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(t->pid, NULL, 0);
		t->exec_errno = e;
		return err_set(err, -e, "cannot run '%s': %s (%s)", cmd, strerror(e),
			     e == ENOENT ? "check the command name and PATH" :
			     e == EACCES ? "check that the file is executable" :
			     "check the command");
	}
	return 0;
}

void target_abort(struct target *t)
{
	close(t->go_fd);
	close(t->err_fd);
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
}

int target_threads(pid_t pid, pid_t **tids)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	size_t n = 0, cap = 0;
	pid_t *out = NULL;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		uint64_t v;
		if (de->d_name[0] == '.' || parse_u64(de->d_name, &v))
			continue;
		GROW(out, cap, n + 1);
		out[n++] = (pid_t)v;
	}
	closedir(d);
	*tids = out;
	return (int)n;
}

int target_tgid(pid_t tid)
{
	char path[64], line[128];
	FILE *f;
	int tgid = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid > 0 ? tgid : -1;
}

int target_alive(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 1;
	return p[2] != 'Z' && p[2] != 'X';
}

/* The parent of pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": the name may hold anything, ")" too */
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

int target_signal_tree(pid_t root, int sig)
{
	struct proc { pid_t pid, ppid; } *all = NULL;
	size_t n = 0, cap = 0, ntree = 0, treecap = 0, i, j;
	pid_t *tree = NULL;
	struct dirent *de;
	DIR *d;
	int sent = 0;

	/* the descendants first, from one look at /proc ... */
	if ((d = opendir("/proc")) != NULL) {
		while ((de = readdir(d))) {
			uint64_t v;
			pid_t pp;
			if (parse_u64(de->d_name, &v) || !v || v > 0x7fffffff || (pid_t)v == root)
				continue;
			if ((pp = parent_of((pid_t)v)) <= 0)
				continue;
			GROW(all, cap, n + 1);
			all[n].pid = (pid_t)v;
			all[n++].ppid = pp;
		}
		closedir(d);
	}
	GROW(tree, treecap, 1);
	tree[ntree++] = root;
	for (i = 0; i < ntree; i++)
		for (j = 0; j < n; j++)
			if (all[j].ppid == tree[i] && all[j].pid) {
				GROW(tree, treecap, ntree + 1);
				tree[ntree++] = all[j].pid;
				all[j].pid = 0; /* taken */
			}
	/* ... then the signal to each, CMD first */
	for (i = 0; i < ntree; i++)
		if (!kill(tree[i], sig))
			sent++;
	free(all);
	free(tree);
	return sent;
}
