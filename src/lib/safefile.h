/* safefile.h - create files without harming what is already there.
 *
 * stax often runs as root, pointed at paths that other people chose. The
 * rules, in one place for every command that writes a file:
 *   - only a regular file is ever replaced; whatever else is at a path (a
 *     directory, a device, a FIFO, a socket, a symbolic link) is left
 *     exactly as it was, and the caller reports it;
 *   - files are created with O_CREAT|O_EXCL|O_NOFOLLOW, so a link planted
 *     at the name is never followed and nothing is truncated;
 *   - a finished file is written under a temporary name beside it and
 *     renamed into place at the end, so a command that fails leaves the
 *     previous file whole (and one killed leaves a temporary file that
 *     the next write into that directory removes);
 *   - a directory stax keeps things in (its caches) is used only when it
 *     is a real directory owned by the user (euid) that others cannot
 *     write, opened without following a symbolic link.
 *
 * Functions return 0 or a file descriptor, or -errno and, where a struct
 * err is given, the reason in words: "it is a directory, not a regular
 * file". No message is printed here.
 */
#ifndef STAX_LIB_SAFEFILE_H
#define STAX_LIB_SAFEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct err; /* lib/err.h */

/* "a directory", "a character device", "a FIFO", "a symbolic link", ...
 * for a st_mode that is not a regular file's. */
const char *safe_file_kind(mode_t mode);

/* ---- a file written in place (stax record) ---- */

struct safe_created {
	char *path;
	char *old;      /* path.old, when the previous file was moved there */
	dev_t dev;      /* the file this made */
	ino_t ino;
	bool bad_old;   /* set when path.old is what safe_create() refused */
};

/* Create path as a new regular file for writing (mode before umask) and
 * return its descriptor (close-on-exec). A regular file already at path is
 * first renamed to path.old (as perf does), replacing a regular file
 * there. -errno with the reason in err when path or path.old is anything
 * but a regular file or absent (-EEXIST, c->bad_old telling which; both
 * are left as they were), or when the file cannot be created. */
int safe_create(struct safe_created *c, const char *path, mode_t mode, struct err *err);
/* Undo a safe_create() whose file is not wanted after all (nothing was
 * written to it): remove the file if it is still the one made, and move
 * path.old back. Then release c. */
void safe_create_undo(struct safe_created *c);
void safe_created_release(struct safe_created *c);

/* ---- a finished file: a temporary file beside it, renamed into place ---- */

struct safe_replace {
	int dirfd;      /* AT_FDCWD, or a directory (borrowed) */
	char *name;     /* the final name, relative to dirfd */
	char *tmp;      /* the temporary name beside it; NULL for "-" */
	int fd;         /* open for writing; see safe_replace_begin() */
	dev_t dev;      /* the temporary file */
	ino_t ino;
	int flags;
	int lockfd;     /* holds the temporary file's flock() until the rename */
};

enum {
	/* replace anything at name but a directory: for the entries of a
	 * directory of one's own (safe_dir_open() with SAFE_DIR_PRIVATE),
	 * where nobody else can have put it */
	SAFE_REPLACE_OWN_DIR = 1,
};

/* Open a temporary file beside name (in dirfd) for writing, to be renamed
 * to name by safe_replace_commit(). "-" (with AT_FDCWD) means standard
 * output: r->fd is a duplicate of 1 and nothing is renamed. mode 0 gives
 * the permissions of the regular file being replaced, else 0666 before
 * umask; any other mode is set exactly. -errno with the reason in err
 * when something other than a regular file is at name (-EEXIST; see
 * flags), or the temporary file cannot be made.
 *
 * A temporary file is named NAME.stax-XXXXXXXX.tmp and locked with
 * flock() by its writer until it is renamed or removed. A writer killed
 * before it could remove it (SIGKILL, a crash) leaves it behind; the next
 * safe_replace_begin() into the same directory removes such files: named
 * so, regular, the user's, never through a symbolic link, and only when
 * nobody holds their lock (so never a live writer's).
 *
 * r->fd belongs to r until commit or abort; a caller that hands it to
 * something that closes it (fdopen, a store writer) sets r->fd to -1 and
 * closes that itself, checking for errors, before committing. A temporary
 * file not yet committed or aborted is removed if the process exits
 * (die(), exit()). */
int safe_replace_begin(struct safe_replace *r, int dirfd, const char *name, mode_t mode,
		       int flags, struct err *err);
/* Close r->fd (when still open) and rename the temporary file to name.
 * 0, or -errno (-EEXIST when something other than a regular file was put
 * at name meanwhile), the temporary file removed and anything at name
 * left as it was. Releases r either way. */
int safe_replace_commit(struct safe_replace *r);
/* Close r->fd (when still open), remove the temporary file; releases r. */
void safe_replace_abort(struct safe_replace *r);
/* A cache entry: name in dirfd (a directory of one's own) replaced by a
 * file of mode 0600 holding the n pieces one after another, whole or not
 * at all. 0, or -errno (-EIO when a write failed). */
struct safe_piece {
	const void *data;
	size_t len;
};
int safe_replace_write(int dirfd, const char *name, const struct safe_piece *pieces, size_t n);

/* ---- directories of one's own ---- */

enum {
	SAFE_DIR_CREATE = 1,   /* make it (mode 0700) when it does not exist,
				* if the directory it goes in is the user's */
	SAFE_DIR_LINK_OK = 2,  /* follow a symbolic link there when the link
				* itself is the user's (~/.cache -> /data/..) */
	SAFE_DIR_PRIVATE = 4,  /* refuse it when group or others may write */
};

/* Open the directory name in dirfd (AT_FDCWD or a directory; with
 * AT_FDCWD name may be a path, and only its last component is checked)
 * without following a symbolic link there (unless flags say so), and only
 * when it is owned by the user (euid). Returns its descriptor (O_RDONLY,
 * O_DIRECTORY, close-on-exec), or -errno with the reason in err: not
 * there (-ENOENT), a symbolic link or not a directory (-ENOTDIR), owned by
 * another user or writable by others (-EPERM), or what mkdir or open said. */
int safe_dir_open(int dirfd, const char *name, int flags, struct err *err);

#endif
