/* err.h - the one shape of an error a library layer returns.
 *
 * A function that can fail in a way worth explaining takes a struct err *
 * (which may be NULL: the caller wants only the code), returns 0 or a
 * negative code, and on failure fills the struct with the code and a
 * message "what failed: why (what to do)". Only src/cmd/ (and main.c)
 * print it; library layers hand it up or turn it into a warning.
 */
#ifndef STAX_LIB_ERR_H
#define STAX_LIB_ERR_H

/* A failure a library layer returns: the -errno code and a message the
 * caller prints ("what failed: why (what to do)"). */
struct err {
	int code;          /* -errno, or -1 */
	char msg[1024];
};
/* Fill e (when not NULL) and return code, for `return err_set(e, ...)`. */
int err_set(struct err *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Add to e's message (when e is not NULL; cut at its size), code kept. */
void err_append(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
