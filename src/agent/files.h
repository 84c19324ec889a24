/* files.h - the recordings of stax agent in their directory: the
 * directory itself, each file's name and creation, and retention.
 *
 * The directory is one of the user's own (lib/safefile.h's
 * safe_dir_open: created 0700 when missing, refused when it is a
 * symbolic link, belongs to another user, or others may write it). The
 * agent writes one recording at a time, named after the UTC time of its
 * start, stax-YYYYMMDD-HHMMSS.data, created 0600 with O_EXCL and
 * O_NOFOLLOW (nothing there is ever replaced). Retention removes only
 * files it could have written: a regular file (never a symbolic link)
 * named so, owned by this user, holding a stax recording (or nothing),
 * that no writer holds (the recorder's lock), and never the file being
 * written. Anything else in the directory is left as it is.
 */
#ifndef STAX_AGENT_FILES_H
#define STAX_AGENT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err;

#define AGENT_NAME_LEN 32  /* "stax-YYYYMMDD-HHMMSS.data" and its NUL, with room */

struct agent_dir {
	int fd;                      /* the directory (O_DIRECTORY), -1: closed */
	char *path;                  /* as given */
	char current[AGENT_NAME_LEN];/* the file being written ("" none) */
	uint64_t keep_ns;            /* finished files older than this go (0: kept) */
	uint64_t max_bytes;          /* the oldest go while all of them pass this (0: no limit) */
	uint64_t removed, removed_bytes; /* files removed so far, their bytes */
};

/* Open (or create, 0700) the directory path; 0, or -errno with why in e. */
int agent_dir_open(struct agent_dir *d, const char *path, struct err *e);
void agent_dir_close(struct agent_dir *d);

/* The name of a recording that starts at wall_ns (ns since the epoch). */
void agent_file_name(uint64_t wall_ns, char *name, size_t len);
/* Whether name is such a name (then *secs: its time, seconds since the
 * epoch, UTC). */
bool agent_is_file_name(const char *name, int64_t *secs);

/* Create the file of a recording that starts at wall_ns: its descriptor
 * (open for writing, close-on-exec), its name in d->current. -errno with
 * why in e: -EAGAIN when the name is the current file's (a file was
 * started in this second already: ask again in the next one), -EEXIST
 * when something else has the name (left as it is). */
int agent_file_create(struct agent_dir *d, uint64_t wall_ns, struct err *e);
/* Remove the file just created (nothing was recorded into it), if it is
 * still the one made; d->current is cleared. */
void agent_file_discard(struct agent_dir *d);

/* What retention found and did. */
struct agent_retain {
	size_t files;          /* the agent's files in the directory (kept): named
				* so, regular, this user's, recordings */
	uint64_t bytes;        /* their size, the current file's included */
	size_t removed;        /* removed now: past keep_ns, or past max_bytes */
	uint64_t removed_bytes;
};

/* Remove the finished files past d->keep_ns (by their last write) and,
 * oldest first, while all of the agent's files (as agent_retain.files
 * counts them; nothing else in the directory counts) pass d->max_bytes; now_ns
 * is the wall-clock time. Never fails: a file that cannot be checked or
 * removed stays (and is counted as kept). */
void agent_retain(struct agent_dir *d, uint64_t now_ns, struct agent_retain *st);

#endif
