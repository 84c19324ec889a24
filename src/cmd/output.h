/* output.h - the file a command writes with -o FILE.
 *
 * The file is written under a temporary name beside it and renamed into
 * place once complete (lib/safefile.h), so a command that fails leaves the
 * previous FILE whole, and only a regular file is ever replaced: a
 * directory, device, FIFO, socket or symbolic link at FILE gets a clear
 * error before any work. "-" is standard output.
 */
#ifndef STAX_CMD_OUTPUT_H
#define STAX_CMD_OUTPUT_H

#include "lib/safefile.h"

#include <stdio.h>

struct cmd_output {
	const char *cmd;   /* for messages: "export" */
	const char *path;
	struct safe_replace r;
	FILE *f;
};

/* Open path for cmd's output, as a stream (mode for fdopen) or, when mode
 * is NULL, as o->r.fd only. Dies with a clear message. */
void cmd_output_open(struct cmd_output *o, const char *cmd, const char *path, const char *mode);
/* Flush and close the stream (or o->r.fd, when the caller has not taken
 * it), and rename the file into place; dies when anything fails, leaving
 * what was at path as it was. */
void cmd_output_close(struct cmd_output *o);
/* Close without replacing anything: the temporary file is removed. */
void cmd_output_abort(struct cmd_output *o);

#endif
