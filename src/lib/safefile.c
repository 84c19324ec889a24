#include "lib/safefile.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

const char *safe_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	default: return "not a regular file";
	}
}

/* rename that never replaces: renameat2(RENAME_NOREPLACE), or where the
 * file system lacks it, a check just before a plain rename. */
static int rename_noreplace(int dfd, const char *from, const char *to)
{
	struct stat st;
	if (!renameat2(dfd, from, dfd, to, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (!fstatat(dfd, to, &st, AT_SYMLINK_NOFOLLOW)) {
		errno = EEXIST;
		return -1;
	}
	return renameat(dfd, from, dfd, to);
}

/* ---- a file written in place ---- */

int safe_create(struct safe_created *c, const char *path, mode_t mode, struct err *err)
{
	struct stat st;
	char *old = NULL;
	int fd, e;

	memset(c, 0, sizeof(*c));
	if (!lstat(path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			err_set(err, -1, "it is %s, not a regular file", safe_file_kind(st.st_mode));
			return -EEXIST;
		}
		old = xasprintf("%s.old", path);
		if (!lstat(old, &st) && !S_ISREG(st.st_mode)) {
			err_set(err, -1, "the previous file would be kept as %s, which is %s, not a regular file",
			    old, safe_file_kind(st.st_mode));
			c->bad_old = true;
			free(old);
			return -EEXIST;
		}
		if (rename(path, old)) {
			e = errno;
			err_set(err, -1, "cannot keep the previous file as %s: %s", old, strerror(e));
			free(old);
			return -e;
		}
	} else if (errno != ENOENT) {
		e = errno;
		err_set(err, -1, "%s", strerror(e));
		return -e;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 || fstat(fd, &st)) {
		e = errno;
		if (e == EEXIST)
			err_set(err, -1, "something else appeared there meanwhile");
		else
			err_set(err, -1, "%s", strerror(e));
		if (fd >= 0)
			close(fd);
		if (old)
			rename_noreplace(AT_FDCWD, old, path);
		free(old);
		return -e;
	}
	c->path = xstrdup(path);
	c->old = old;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	return fd;
}

void safe_created_release(struct safe_created *c)
{
	free(c->path);
	free(c->old);
	memset(c, 0, sizeof(*c));
}

void safe_create_undo(struct safe_created *c)
{
	struct stat st;
	if (c->path && !lstat(c->path, &st) && st.st_dev == c->dev && st.st_ino == c->ino)
		unlink(c->path);
	if (c->path && c->old)
		rename_noreplace(AT_FDCWD, c->old, c->path);
	safe_created_release(c);
}

/* ---- temporary files to remove if the process ends first ----
 *
 * A few slots, claimed and freed with atomics, so that the signal
 * handler (and exit) can walk them without a lock: 0 free, 1 being
 * filled, 2 in use. */

#define PENDING_SLOTS 8

static struct pending {
	int state;
	int dirfd;
	dev_t dev;
	ino_t ino;
	char name[PATH_MAX];
} pending[PENDING_SLOTS];

static void remove_pending(void)
{
	size_t i;
	for (i = 0; i < PENDING_SLOTS; i++) {
		struct pending *p = &pending[i];
		struct stat st;
		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != 2)
			continue;
		if (!fstatat(p->dirfd, p->name, &st, AT_SYMLINK_NOFOLLOW) && st.st_dev == p->dev &&
		    st.st_ino == p->ino)
			unlinkat(p->dirfd, p->name, 0);
		__atomic_store_n(&p->state, 0, __ATOMIC_RELEASE);
	}
}

static void on_fatal_signal(int sig)
{
	int e = errno;
	remove_pending();
	signal(sig, SIG_DFL);
	raise(sig);
	errno = e;
}

/* Remove pending files at exit, and on the signals that end a process by
 * default (where nothing else handles them). */
static void pending_setup(void)
{
	static int done;
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXFSZ };
	size_t i;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	atexit(remove_pending);
	for (i = 0; i < ARRAY_SIZE(sigs); i++) {
		struct sigaction old, sa;
		if (sigaction(sigs[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_fatal_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static int pending_add(int dirfd, const char *name, dev_t dev, ino_t ino)
{
	size_t i;
	if (strlen(name) >= PATH_MAX)
		return -1;
	pending_setup();
	for (i = 0; i < PENDING_SLOTS; i++) {
		int want = 0;
		if (!__atomic_compare_exchange_n(&pending[i].state, &want, 1, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		pending[i].dirfd = dirfd;
		pending[i].dev = dev;
		pending[i].ino = ino;
		strcpy(pending[i].name, name);
		__atomic_store_n(&pending[i].state, 2, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -1; /* all in use: the file stays if the process dies */
}

static void pending_drop(const struct safe_replace *r)
{
	size_t i;
	for (i = 0; i < PENDING_SLOTS; i++) {
		struct pending *p = &pending[i];
		int want = 2;
		if (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) == 2 && p->dirfd == r->dirfd &&
		    p->dev == r->dev && p->ino == r->ino && !strcmp(p->name, r->tmp))
			__atomic_compare_exchange_n(&p->state, &want, 0, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
	}
}

/* ---- a finished file ---- */

/* Eight letters and digits for a temporary name. */
static void random_word(char out[9])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint8_t b[8];
	size_t i;
	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		uint64_t x = now_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out;
		for (i = 0; i < sizeof(b); i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
			b[i] = (uint8_t)(x >> 56);
	}
	for (i = 0; i < 8; i++)
		out[i] = set[b[i] % (sizeof(set) - 1)];
	out[8] = '\0';
}

static void replace_release(struct safe_replace *r)
{
	free(r->name);
	free(r->tmp);
	if (r->lockfd >= 0)
		close(r->lockfd);
	r->name = r->tmp = NULL;
	r->fd = r->lockfd = -1;
}

/* Whether name is what safe_replace_begin() names a temporary file:
 * something, then ".stax-", eight letters or digits, ".tmp". */
static bool temp_name(const char *name)
{
	size_t n = strlen(name), i;
	const char *p;
	if (n < 1 + 6 + 8 + 4)
		return false;
	p = name + n - (6 + 8 + 4);
	if (strncmp(p, ".stax-", 6) || strcmp(p + 14, ".tmp"))
		return false;
	for (i = 6; i < 14; i++)
		if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
		      (p[i] >= 'A' && p[i] <= 'Z')))
			return false;
	return true;
}

/* Remove the temporary files that writers killed before they could
 * (SIGKILL, a crash, a power cut) left in the directory name goes in.
 *
 * A writer holds an flock() on its temporary file from just after making
 * it until it has renamed it, and the kernel drops that lock when the
 * writer dies however it dies (in whatever pid namespace it ran). So an
 * entry is removed only when it is named as a temporary file is, is a
 * regular file with one link owned by the user (euid), opened without
 * following a symbolic link, and this process can take its lock without
 * waiting; and then only if the name still is that file. Anything else
 * (a symlink, a directory, another user's file, a live writer's file, a
 * file system without locks) is left as it was. Best effort: never fails. */
static void remove_stale(int dirfd, const char *name)
{
	const char *slash = strrchr(name, '/');
	uid_t uid = geteuid();
	struct dirent *de;
	DIR *d;
	int dfd;

	if (slash) {
		char *dir = slash == name ? xstrdup("/") : xstrndup(name, (size_t)(slash - name));
		dfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(dir);
	} else {
		dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st, now;
		int fd;
		if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN)
			continue;
		if (!temp_name(de->d_name))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != uid || st.st_nlink != 1)
			continue;
		fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &now) && now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
		    !flock(fd, LOCK_EX | LOCK_NB) &&
		    !fstatat(dfd, de->d_name, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == st.st_dev &&
		    now.st_ino == st.st_ino)
			unlinkat(dfd, de->d_name, 0);
		close(fd); /* drops the lock */
	}
	closedir(d);
}

/* Whether what st describes may be replaced under flags. */
static bool replaceable(const struct stat *st, int flags)
{
	return S_ISREG(st->st_mode) || ((flags & SAFE_REPLACE_OWN_DIR) && !S_ISDIR(st->st_mode));
}

int safe_replace_begin(struct safe_replace *r, int dirfd, const char *name, mode_t mode,
		       int flags, struct err *err)
{
	struct stat st;
	mode_t keep = 0;
	int tries, e;

	memset(r, 0, sizeof(*r));
	r->fd = r->lockfd = -1;
	r->dirfd = dirfd;
	r->flags = flags;
	if (dirfd == AT_FDCWD && !strcmp(name, "-")) {
		r->fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
		if (r->fd < 0) {
			e = errno;
			err_set(err, -1, "standard output: %s", strerror(e));
			return -e;
		}
		r->name = xstrdup(name);
		return 0;
	}
	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!replaceable(&st, flags)) {
			err_set(err, -1, "it is %s, not a regular file", safe_file_kind(st.st_mode));
			return -EEXIST;
		}
		if (S_ISREG(st.st_mode))
			keep = st.st_mode & 0777;
	} else if (errno != ENOENT) {
		e = errno;
		err_set(err, -1, "%s", strerror(e));
		return -e;
	}
	remove_stale(dirfd, name);
	for (tries = 0; tries < 100; tries++) {
		char word[9];
		random_word(word);
		r->tmp = xasprintf("%s.stax-%s.tmp", name, word);
		r->fd = openat(dirfd, r->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       mode ? mode : 0666);
		if (r->fd < 0 && errno != EEXIST)
			break;
		if (r->fd >= 0) {
			/* held until the rename (see remove_stale()); a file
			 * system without locks goes on without */
			if (!flock(r->fd, LOCK_EX | LOCK_NB) || (errno != EWOULDBLOCK && errno != EINTR)) {
				if (!fstat(r->fd, &st) && st.st_nlink > 0)
					break;
			}
			/* another stax took it for a dead writer's between
			 * the open and the lock, and removes it: another name */
			close(r->fd);
			r->fd = -1;
		}
		free(r->tmp);
		r->tmp = NULL;
	}
	if (r->fd >= 0)
		r->lockfd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
	if (r->fd < 0 || r->lockfd < 0 || fstat(r->fd, &st)) {
		e = errno;
		err_set(err, -1, "cannot create a temporary file beside it: %s", strerror(e));
		if (r->fd >= 0) {
			close(r->fd);
			unlinkat(dirfd, r->tmp, 0);
		}
		replace_release(r);
		return -e;
	}
	r->dev = st.st_dev;
	r->ino = st.st_ino;
	if (mode)
		fchmod(r->fd, mode);
	else if (keep)
		fchmod(r->fd, keep);
	r->name = xstrdup(name);
	pending_add(dirfd, r->tmp, r->dev, r->ino);
	return 0;
}

/* Remove r's temporary file if it is still the one made. */
static void remove_tmp(struct safe_replace *r)
{
	struct stat st;
	pending_drop(r);
	if (!fstatat(r->dirfd, r->tmp, &st, AT_SYMLINK_NOFOLLOW) && st.st_dev == r->dev &&
	    st.st_ino == r->ino)
		unlinkat(r->dirfd, r->tmp, 0);
}

int safe_replace_commit(struct safe_replace *r)
{
	struct stat st;
	int e = 0;

	if (r->fd >= 0 && close(r->fd))
		e = errno;
	r->fd = -1;
	if (!r->tmp) { /* standard output */
		replace_release(r);
		return -e;
	}
	/* what is at the name now must still be a regular file, or nothing */
	if (!e && !fstatat(r->dirfd, r->name, &st, AT_SYMLINK_NOFOLLOW) && !replaceable(&st, r->flags))
		e = EEXIST;
	if (!e && renameat(r->dirfd, r->tmp, r->dirfd, r->name))
		e = errno;
	if (e)
		remove_tmp(r);
	else
		pending_drop(r);
	replace_release(r);
	return -e;
}

int safe_replace_write(int dirfd, const char *name, const struct safe_piece *pieces, size_t n)
{
	struct safe_replace r;
	size_t i;
	int ret;

	if ((ret = safe_replace_begin(&r, dirfd, name, 0600, SAFE_REPLACE_OWN_DIR, NULL)))
		return ret;
	for (i = 0; i < n; i++)
		if (write_all(r.fd, pieces[i].data, pieces[i].len)) {
			safe_replace_abort(&r);
			return -EIO;
		}
	return safe_replace_commit(&r) ? -EIO : 0;
}

void safe_replace_abort(struct safe_replace *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->tmp)
		remove_tmp(r);
	replace_release(r);
}

/* ---- directories of one's own ---- */

/* The directory that name (relative to dirfd) would be made in. */
static int parent_stat(int dirfd, const char *name, struct stat *st)
{
	const char *slash = strrchr(name, '/');
	char *dir;
	int ret;
	if (dirfd != AT_FDCWD && !slash)
		return fstat(dirfd, st);
	if (!slash)
		return stat(".", st);
	dir = slash == name ? xstrdup("/") : xstrndup(name, (size_t)(slash - name));
	ret = fstatat(dirfd, dir, st, 0);
	free(dir);
	return ret;
}

int safe_dir_open(int dirfd, const char *name, int flags, struct err *err)
{
	struct stat st;
	uid_t uid = geteuid();
	int fd, oflags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW, e;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		struct stat pst;
		e = errno;
		if (e != ENOENT || !(flags & SAFE_DIR_CREATE)) {
			err_set(err, -1, "%s", e == ENOENT ? "it does not exist" : strerror(e));
			return -e;
		}
		if (parent_stat(dirfd, name, &pst)) {
			e = errno;
			err_set(err, -1, "%s", strerror(e));
			return -e;
		}
		if (pst.st_uid != uid) {
			err_set(err, -1, "it does not exist, and the directory it would go in belongs to"
			    " another user (uid %u)", (unsigned)pst.st_uid);
			return -EPERM;
		}
		if (mkdirat(dirfd, name, 0700) && errno != EEXIST) {
			e = errno;
			err_set(err, -1, "cannot create it: %s", strerror(e));
			return -e;
		}
	} else if (S_ISLNK(st.st_mode)) {
		if (!(flags & SAFE_DIR_LINK_OK)) {
			err_set(err, -1, "it is a symbolic link, not a directory");
			return -ENOTDIR;
		}
		if (st.st_uid != uid) {
			err_set(err, -1, "it is a symbolic link that belongs to another user (uid %u)",
			    (unsigned)st.st_uid);
			return -EPERM;
		}
		oflags &= ~O_NOFOLLOW;
	}
	fd = openat(dirfd, name, oflags);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP || e == ENOTDIR) {
			err_set(err, -1, "%s", e == ELOOP ? "it is a symbolic link, not a directory"
							  : "it is not a directory");
			e = ENOTDIR;
		} else {
			err_set(err, -1, "%s", strerror(e));
		}
		return -e;
	}
	if (fstat(fd, &st)) {
		e = errno;
		close(fd);
		err_set(err, -1, "%s", strerror(e));
		return -e;
	}
	if (st.st_uid != uid || ((flags & SAFE_DIR_PRIVATE) && (st.st_mode & 022))) {
		if (st.st_uid != uid)
			err_set(err, -1, "it belongs to another user (uid %u)", (unsigned)st.st_uid);
		else
			err_set(err, -1, "others may write in it (mode %03o)", (unsigned)(st.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	return fd;
}
