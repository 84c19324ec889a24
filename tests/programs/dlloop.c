/* dlloop.c - dlopen and dlclose two libraries in turn, round after round.
 *
 * Each round dlopen()s build/libdlloop_a.so or build/libdlloop_b.so
 * (alternately, RTLD_NOW), calls its hot function (dl_hot_a or dl_hot_b,
 * the same loop, about 5 ms) and dlclose()s it, so the two libraries are
 * mapped and unmapped again and again, usually at the same address. A
 * profiler that keeps a stale mapping names one library's samples after
 * the other. Expected stacks:
 *   main;dl_round;dl_hot_a   ~50% (module libdlloop_a.so)
 *   main;dl_round;dl_hot_b   ~50% (module libdlloop_b.so)
 *
 * Build: see Makefile (dlloop-fp, dlloop-nofp; the libraries -fPIC).
 * usage: dlloop [SCALE]   about 1.5 s at scale 1
 */
#define _GNU_SOURCE
#include "common.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

NOINLINE unsigned long dl_round(const char *dir, int which)
{
	char lib[PATH_MAX];
	unsigned long (*hot)(unsigned long);
	unsigned long r;
	void *h;
	snprintf(lib, sizeof(lib), "%s/libdlloop_%c.so", dir, which ? 'b' : 'a');
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlloop: %s\n", dlerror());
		exit(1);
	}
	*(void **)&hot = dlsym(h, which ? "dl_hot_b" : "dl_hot_a");
	if (!hot) {
		fprintf(stderr, "dlloop: %s\n", dlerror());
		exit(1);
	}
	r = hot(2500000UL);
	dlclose(h);
	KEEP_FRAME();
	return r;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], *slash;
	double scale = arg_scale(argc, argv, 1, 1.0);
	struct timespec t0, t;
	int round = 0;
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return 1;
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	*slash = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += dl_round(dir, round++ & 1);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < 1.5 * scale);
	return 0;
}
