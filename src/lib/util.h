/* util.h - allocation that never fails, messages, small helpers.
 *
 * xmalloc() and friends abort on out-of-memory, so no caller checks for
 * NULL. die() prints "stax: error: ..." and exits 1; use it only in cmd/
 * and for unrecoverable failures. Library code returns 0 or -errno.
 */
#ifndef STAX_LIB_UTIL_H
#define STAX_LIB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "lib/err.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define UNUSED __attribute__((unused))
#define PRINTF(f, a) __attribute__((format(printf, f, a)))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) PRINTF(1, 2);
/* Run fn instead of aborting when an allocation fails (NULL: abort): the
 * recorder's way to end a recording without taking the workload with it.
 * fn must not return, allocate, or use stdio. */
void set_oom_handler(void (*fn)(void));

/* Grow *p (an array of elem-sized items with capacity *cap) to hold at
 * least need items. */
void grow_array(void **p, size_t *cap, size_t need, size_t elem);
#define GROW(arr, cap, need) grow_array((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Messages. These functions (with bug_at) are the one place stax writes
 * to standard error outside src/cmd/ and main.c: library layers return
 * errors (0 or -errno, with a message in a struct err, lib/err.h) and
 * leave printing to the command; what they find worth a warning on the way
 * goes through warn(), to the command's sink; the recorder's progress and
 * summary lines come through note() and note_progress(). */

/* "stax: error: <msg>" on stderr, exit(1). */
void die(const char *fmt, ...) PRINTF(1, 2) __attribute__((noreturn));
/* "stax: error: <msg>" on stderr; returns -1 for convenient `return error(..)`. */
int error(const char *fmt, ...) PRINTF(1, 2);
/* True once die() or error() printed an error in this process. */
bool error_printed(void);
/* "stax: warning: <msg>" on stderr, or to the sink the command set. */
void warn(const char *fmt, ...) PRINTF(1, 2);
/* Where warn() goes: by default stderr. A command that owns the screen or
 * answers over HTTP (live, serve) sets fn to take the warnings the library
 * layers make (msg without "stax: warning: "), so it can show them where
 * its user looks; NULL puts them back on stderr. Calls of fn are made one
 * at a time (under a lock), from whichever thread warned: fn must not
 * call warn() itself. */
typedef void (*warn_sink_fn)(void *arg, const char *msg);
void warn_set_sink(warn_sink_fn fn, void *arg);
/* "stax: warning: <msg>" on stderr, whatever the sink (for a sink that
 * also prints). */
void warn_print(const char *msg);
/* "stax: <msg>" on stderr (informational). */
void note(const char *fmt, ...) PRINTF(1, 2);
/* "\rstax: <msg>" on stderr without a newline: a progress line that the
 * next one overwrites; note_progress_clear() erases it. Only when
 * show_progress(). */
void note_progress(const char *fmt, ...) PRINTF(1, 2);
void note_progress_clear(void);

#define BUG(msg) bug_at(__FILE__, __LINE__, (msg))
void bug_at(const char *file, int line, const char *msg) __attribute__((noreturn));

/* Write n bytes of p to fd, on after short writes and EINTR: 0, or
 * -errno of the write that failed (what was written before stays). */
int write_all(int fd, const void *p, size_t n);

/* Monotonic clock in nanoseconds. */
uint64_t now_ns(void);

/* True when stderr is a terminal and CI is not set: show progress. */
bool show_progress(void);

/* Parse an unsigned decimal/hex number; returns -EINVAL on junk. */
int parse_u64(const char *s, uint64_t *out);

/* Last path component (borrowed pointer into path). */
const char *path_base(const char *path);

/* "812 bytes", "15.8 KiB", "263.1 MiB" into out[0..n). */
void format_size(char *out, size_t n, uint64_t bytes);
/* "4 KiB", "512 KiB", "16 MiB", "1 GiB" for a whole number of a unit
 * (ring sizes), else as format_size(). */
void format_size_exact(char *out, size_t n, uint64_t bytes);

/* Open the shared library soname and look up names[0..n) into fns[0..n):
 * for libraries only some commands use, so that the others do not pay
 * for loading and relocating them at every start. 0 when all were found;
 * else -ENOENT with the reason in e, and fns[0..n) all NULL. */
int load_library(const char *soname, size_t n, const char *const names[], void *fns[],
		 struct err *e);

#endif
