/* resymbolize.h - resolve a finished recording's addresses again (stax
 * symbolize).
 *
 * A recording keeps the symbols found when it stopped. When debug files
 * are installed later, or the recording is read on another machine that
 * has the binaries (found by build-id), resolving again gives names the
 * recorder could not. profile_resymbolize() copies every chunk of the
 * recording except its symbols and end chunks to out_fd (a new file),
 * then writes a new symbols chunk (user-space addresses resolved now;
 * kernel symbols, perf map copies and other records kept as they were)
 * and an end chunk.
 */
#ifndef STAX_PROFILE_RESYMBOLIZE_H
#define STAX_PROFILE_RESYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

struct resym_stats {
	uint64_t addrs;        /* user-space addresses resolved */
	uint64_t known_before; /* of them, named in the old symbols */
	uint64_t known_after;  /* named now */
};

/* Refuses (-1, message in err) a recording still being written, one
 * without an end chunk (its symbols are read from the binaries at every
 * query anyway) and one with damaged chunks (copying would drop them).
 * out_fd is taken over (closed). */
int profile_resymbolize(const char *path, int out_fd, struct resym_stats *st, struct err *err);

#endif
