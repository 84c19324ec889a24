/* unwind_lazy.c - samples inside ld.so's lazy binding of library calls.
 *
 * Each round dlopen()s build/libunwind_lazy.so (RTLD_LAZY), calls lz_all,
 * which makes the first call through each of its 800 PLT slots, and
 * dlclose()s it, so most of the time is spent resolving symbols:
 *   main;lazy_round;lz_all;[lz_fN;]_dl_runtime_resolve_xsavec;_dl_fixup;...
 * _dl_runtime_resolve_xsavec realigns the stack and defines its CFA by
 * rbx, which _dl_fixup saved: an unwinder that does not carry rbx through
 * _dl_fixup's frame stops there. Expected: the samples in _dl_fixup reach
 * main;lazy_round.
 *
 * Build: see Makefile (gcc -O2 -fomit-frame-pointer; the library -fPIC,
 * linked without -z now).
 * usage: unwind_lazy [SCALE]   1.5 s of its CPU time at scale 1 (CPU time,
 *                              so a busy machine gives as many samples)
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile int sink;

NOINLINE int lazy_round(const char *lib)
{
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	int (*all)(int);
	if (!h) {
		fprintf(stderr, "unwind_lazy: %s\n", dlerror());
		exit(1);
	}
	*(void **)&all = dlsym(h, "lz_all");
	int r = all(3);
	dlclose(h);
	KEEP_FRAME();
	return r;
}

int main(int argc, char **argv)
{
	char lib[PATH_MAX], *slash;
	double scale = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec t0, t;
	ssize_t n = readlink("/proc/self/exe", lib, sizeof(lib) - 32);
	if (n <= 0)
		return 1;
	lib[n] = '\0';
	slash = strrchr(lib, '/');
	strcpy(slash + 1, "libunwind_lazy.so");
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		sink += lazy_round(lib);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < 1.5 * scale);
	return 0;
}
