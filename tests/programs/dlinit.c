/* dlinit.c - a library's _init on the stack: main dlopen()s
 * build/libdlinit.so, whose _init (glibc's crti.o code, no CFI) calls
 * __gmon_start__, which the library defines (dlinit_lib.c) and which
 * burns CPU in gmon_hot. Expected samples, root first:
 *   main;dlopen;...;_dl_init;call_init;_init;__gmon_start__?;gmon_hot
 * (__gmon_start__ may tail-call gmon_hot and not be seen). Without rows
 * for _init the stacks stopped there: no CFI, no frame pointer.
 * usage: dlinit [SCALE]   (about 1 s of CPU at scale 1)
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char scale[32];

	if (n <= 0)
		return 1;
	path[n] = '\0';
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "libdlinit.so");
	/* the library reads its work from the environment: _init has no
	 * arguments */
	snprintf(scale, sizeof(scale), "%g", arg_scale(argc, argv, 1, 1.0));
	setenv("DLINIT_SCALE", scale, 1);
	if (!dlopen(path, RTLD_NOW)) {
		fprintf(stderr, "dlinit: %s\n", dlerror());
		return 1;
	}
	return 0;
}
