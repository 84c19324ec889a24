/* files.c - stax agent's recordings in their directory (files.h). */
#include "agent/files.h"
#include "lib/err.h"
#include "lib/safefile.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PREFIX "stax-"
#define SUFFIX ".data"
#define MAGIC "STAXREC"   /* the recording's first 8 bytes, with the NUL */

int agent_dir_open(struct agent_dir *d, const char *path, struct err *e)
{
	struct err why;
	int fd;

	memset(d, 0, sizeof(*d));
	d->fd = -1;
	fd = safe_dir_open(AT_FDCWD, path, SAFE_DIR_CREATE | SAFE_DIR_PRIVATE, &why);
	if (fd < 0)
		return err_set(e, fd, "%s", why.msg);
	d->fd = fd;
	d->path = xstrdup(path);
	return 0;
}

void agent_dir_close(struct agent_dir *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->path);
	d->fd = -1;
	d->path = NULL;
}

void agent_file_name(uint64_t wall_ns, char *name, size_t len)
{
	time_t t = (time_t)(wall_ns / 1000000000ull);
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(name, len, PREFIX "%04d%02d%02d-%02d%02d%02d" SUFFIX, tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

bool agent_is_file_name(const char *name, int64_t *secs)
{
	/* stax-YYYYMMDD-HHMMSS.data: exactly */
	static const char shape[] = PREFIX "########-######" SUFFIX;
	struct tm tm;
	size_t i;

	if (strlen(name) != sizeof(shape) - 1)
		return false;
	for (i = 0; shape[i]; i++) {
		if (shape[i] == '#' ? name[i] < '0' || name[i] > '9' : name[i] != shape[i])
			return false;
	}
	memset(&tm, 0, sizeof(tm));
	if (sscanf(name, PREFIX "%4d%2d%2d-%2d%2d%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec) != 6)
		return false;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if (secs)
		*secs = (int64_t)timegm(&tm);
	return true;
}

int agent_file_create(struct agent_dir *d, uint64_t wall_ns, struct err *e)
{
	char name[AGENT_NAME_LEN];
	int fd;

	agent_file_name(wall_ns, name, sizeof(name));
	if (!strcmp(name, d->current))
		return err_set(e, -EAGAIN, "%s/%s was started in this second already", d->path, name);
	fd = openat(d->fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int en = errno;
		if (en == EEXIST)
			return err_set(e, -EEXIST, "cannot create %s/%s: something is there already (stax leaves"
				       " it as it is, and tries the next second's name)", d->path, name);
		return err_set(e, -en, "cannot create %s/%s: %s", d->path, name, strerror(en));
	}
	snprintf(d->current, sizeof(d->current), "%s", name);
	return fd;
}

/* Whether fd holds a stax recording, or nothing (a file made and not yet
 * written), and no writer holds it (a recorder keeps its lock until the
 * recording ends: another agent's file, if two share a directory). */
static bool ours_by_content(int fd, const struct stat *st)
{
	char magic[8];
	if (st->st_size == 0)
		return flock(fd, LOCK_SH | LOCK_NB) == 0;
	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) || memcmp(magic, MAGIC, 8))
		return false;
	return flock(fd, LOCK_SH | LOCK_NB) == 0;
}

/* Remove name if it is a file the agent could have written, at the
 * stat st (fstatat, not following links); 0 or -errno. */
static int remove_own(struct agent_dir *d, const char *name, const struct stat *st)
{
	struct stat now;
	int fd, ret = -EPERM;

	if (!S_ISREG(st->st_mode) || st->st_uid != geteuid() || !strcmp(name, d->current))
		return -EPERM;
	fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the same file as listed, a recording, not being written */
	if (!fstat(fd, &now) && now.st_dev == st->st_dev && now.st_ino == st->st_ino && ours_by_content(fd, &now))
		ret = unlinkat(d->fd, name, 0) ? -errno : 0;
	close(fd);
	return ret;
}

void agent_file_discard(struct agent_dir *d)
{
	struct stat st;
	char name[AGENT_NAME_LEN];
	if (!d->current[0])
		return;
	snprintf(name, sizeof(name), "%s", d->current);
	d->current[0] = 0;
	if (!fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW))
		remove_own(d, name, &st);
}

struct entry {
	char name[AGENT_NAME_LEN];
	struct stat st;
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* Whether the regular file name (of this user) holds a stax recording or
 * nothing: one the agent could have written. */
static bool is_recording(struct agent_dir *d, const char *name)
{
	char magic[8];
	struct stat st;
	bool yes = false;
	int fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		yes = st.st_size == 0 ||
		      (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) && !memcmp(magic, MAGIC, 8));
	close(fd);
	return yes;
}

/* The agent's files in the directory (by name: by time), the current
 * one included: named so, regular, this user's, recordings (or empty);
 * the caller frees. */
static struct entry *list(struct agent_dir *d, size_t *n)
{
	struct entry *v = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *dir;
	int fd = dup(d->fd);

	*n = 0;
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	rewinddir(dir);
	while ((de = readdir(dir))) {
		struct stat st;
		if (!agent_is_file_name(de->d_name, NULL) ||
		    fstatat(d->fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || !is_recording(d, de->d_name))
			continue;
		GROW(v, cap, *n + 1);
		/* a name of the agent's is shorter than the buffer */
		memcpy(v[*n].name, de->d_name, strlen(de->d_name) + 1);
		v[*n].st = st;
		(*n)++;
	}
	closedir(dir);
	if (v && *n > 1)
		qsort(v, *n, sizeof(*v), cmp_name);
	return v;
}

void agent_retain(struct agent_dir *d, uint64_t now_ns, struct agent_retain *st)
{
	size_t n, i;
	struct entry *v = list(d, &n);
	bool *gone = xcalloc(n + 1, sizeof(*gone));
	uint64_t total = 0;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < n; i++)
		total += (uint64_t)v[i].st.st_size;
	for (i = 0; i < n; i++) {
		const struct stat *s = &v[i].st;
		uint64_t mtime = (uint64_t)s->st_mtim.tv_sec * 1000000000ull + (uint64_t)s->st_mtim.tv_nsec;
		bool old = d->keep_ns && now_ns > mtime && now_ns - mtime > d->keep_ns;
		/* oldest first: while all of them pass the limit */
		bool big = d->max_bytes && total > d->max_bytes;
		if (!strcmp(v[i].name, d->current) || (!old && !big))
			continue;
		if (remove_own(d, v[i].name, s))
			continue;
		gone[i] = true;
		total -= (uint64_t)s->st_size;
		st->removed++;
		st->removed_bytes += (uint64_t)s->st_size;
	}
	for (i = 0; i < n; i++)
		if (!gone[i]) {
			st->files++;
			st->bytes += (uint64_t)v[i].st.st_size;
		}
	d->removed += st->removed;
	d->removed_bytes += st->removed_bytes;
	free(gone);
	free(v);
}
