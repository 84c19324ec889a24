/* output.c - the file a command writes with -o FILE (see output.h). */
#include "cmd/output.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

void cmd_output_open(struct cmd_output *o, const char *cmd, const char *path, const char *mode)
{
	struct err why;
	int e;
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->path = path;
	if ((e = safe_replace_begin(&o->r, AT_FDCWD, path, 0, 0, &why))) {
		if (e == -EEXIST)
			die("%s: cannot write %s: %s (stax replaces only regular files, and leaves this"
			    " as it is; choose a file name, or -o - for standard output)", cmd, path, why.msg);
		die("%s: cannot write %s: %s (check the directory exists and is writable)", cmd, path, why.msg);
	}
	if (!mode)
		return;
	o->f = fdopen(o->r.fd, mode);
	if (!o->f)
		die("%s: cannot write %s: %s", cmd, path, strerror(errno));
	o->r.fd = -1; /* the stream has it */
}

void cmd_output_close(struct cmd_output *o)
{
	int e = 0;
	if (o->f) {
		if (fflush(o->f) || ferror(o->f))
			e = errno ? errno : EIO;
		if (fclose(o->f) && !e)
			e = errno;
		o->f = NULL;
	}
	if (e) {
		safe_replace_abort(&o->r);
		die("%s: cannot write %s: %s", o->cmd, o->path, strerror(e));
	}
	if ((e = safe_replace_commit(&o->r)))
		die("%s: cannot write %s: %s", o->cmd, o->path,
		    e == -EEXIST ? "something other than a regular file was put there meanwhile"
				 : strerror(-e));
}

void cmd_output_abort(struct cmd_output *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	safe_replace_abort(&o->r);
}
