/* bench_unwind.c - warm unwinding cost per frame (not a test).
 *
 * Build and run from the repository root:
 *   cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE -o /tmp/bench_unwind \
 *      bench/bench_unwind.c src/unwind/?*.c src/lib/?*.c -lelf -lz
 *   /tmp/bench_unwind [depth]
 *
 * Captures a real stack (frame-pointer-less recursion of `depth` frames
 * under libc's qsort, so two modules are crossed), builds the tables once
 * (cold time printed), then unwinds the same sample many times and prints
 * ns per frame. The find callback answers from a sorted array of
 * /proc/self/maps, as the recorder's state module would.
 *
 * With -DHAVE_LIBUNWIND and -lunwind (Debian libunwind-dev; bench/run.sh
 * does this), it also times libunwind on the same stack, live, at the
 * bottom of the same recursion: unw_step() from unw_init_local() (how a
 * profiler walks with libunwind) and unw_backtrace() (its cached fast
 * path), both warm, best of 5 rounds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "unwind/unwind.h"

#ifdef HAVE_LIBUNWIND
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

#define NOFP __attribute__((noinline, noclone, optimize("omit-frame-pointer")))
#define KEEP() __asm__ volatile("" ::: "memory")

struct map { uint64_t start, end, pgoff; char path[256]; };
static struct map maps[512];
static size_t nmaps;

static void maps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	nmaps = 0;
	while (f && fgets(line, sizeof(line), f) && nmaps < 512) {
		unsigned long s, e, off;
		char perms[8], path[256] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &s, &e, perms, &off, path) < 4)
			continue;
		if (perms[2] != 'x')
			continue;
		maps[nmaps] = (struct map){ s, e, off, "" };
		snprintf(maps[nmaps].path, sizeof(maps[nmaps].path), "%s", path);
		nmaps++;
	}
	if (f)
		fclose(f);
}

static bool find_cb(void *arg, uint64_t pc, struct module_ref *out)
{
	size_t lo = 0, hi = nmaps;
	(void)arg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (maps[mid].end <= pc)
			lo = mid + 1;
		else if (maps[mid].start > pc)
			hi = mid;
		else {
			*out = (struct module_ref){ .path = maps[mid].path,
				.start = maps[mid].start, .end = maps[mid].end,
				.pgoff = maps[mid].pgoff };
			return true;
		}
	}
	return false;
}

static struct unwind_regs regs;
static uint8_t stack_copy[64 * 1024];
static size_t stack_size;
static uint64_t stack_top;
static int depth_left;

static NOFP void capture(void)
{
	__asm__ volatile(
		"mov %%rbx, 24(%0)\n\t" "mov %%rbp, 48(%0)\n\t"
		"mov %%r12, 96(%0)\n\t" "mov %%r13, 104(%0)\n\t"
		"mov %%r14, 112(%0)\n\t" "mov %%r15, 120(%0)\n\t"
		"lea 0(%%rip), %%rax\n\t" "mov %%rax, 128(%0)\n\t"
		"mov %%rsp, 56(%0)\n\t" : : "r"(regs.r) : "rax", "memory");
	uint64_t sp = regs.r[UNW_RSP];
	stack_size = MIN(sizeof(stack_copy), (size_t)(stack_top - sp));
	memcpy(stack_copy, (void *)(uintptr_t)sp, stack_size);
	regs.valid = 0x1ffff & ~((1u << UNW_RAX) | (1u << UNW_RDX) | (1u << UNW_RCX) |
				 (1u << UNW_RSI) | (1u << UNW_RDI) | (1u << UNW_R8) |
				 (1u << UNW_R9) | (1u << UNW_R10) | (1u << UNW_R11));
}

#ifdef HAVE_LIBUNWIND
/* Warm libunwind on the live stack: best of 5 rounds, ns per frame. */
static double lu_step_ns, lu_trace_ns;
static int lu_step_frames, lu_trace_frames;

static NOFP void libunwind_bench(int iters)
{
	static void *ips[UNWIND_MAX_DEPTH];
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_GLOBAL);
	for (int round = 0; round < 5; round++) {
		uint64_t t0 = now_ns();
		int n = 0;
		for (int i = 0; i < iters; i++) {
			unw_context_t ctx;
			unw_cursor_t cur;
			unw_getcontext(&ctx);
			unw_init_local(&cur, &ctx);
			n = 1;
			while (unw_step(&cur) > 0 && n < UNWIND_MAX_DEPTH)
				n++;
		}
		double ns = (double)(now_ns() - t0) / iters / n;
		if (!round || ns < lu_step_ns)
			lu_step_ns = ns;
		lu_step_frames = n;
		t0 = now_ns();
		for (int i = 0; i < iters; i++)
			n = unw_backtrace(ips, UNWIND_MAX_DEPTH);
		ns = (double)(now_ns() - t0) / iters / (n ? n : 1);
		if (!round || ns < lu_trace_ns)
			lu_trace_ns = ns;
		lu_trace_frames = n;
	}
	KEEP();
}
#endif

static NOFP int recurse(int n)
{
	int r;
	if (n == 0) {
		capture();
#ifdef HAVE_LIBUNWIND
		libunwind_bench(20000);
#endif
		r = 0;
	} else {
		r = recurse(n - 1) + 1;
	}
	KEEP();
	return r;
}

static int captured;
static NOFP int cmp(const void *a, const void *b)
{
	if (!captured++)
		recurse(depth_left);
	KEEP();
	return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 40;
	int v[8] = { 5, 3, 7, 1, 2, 8, 6, 4 };
	static struct unwind_frame frames[UNWIND_MAX_DEPTH];
	struct unwind_result res;

	maps_load();
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	uint64_t here = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && here >= s && here < e)
			stack_top = e;
	}
	if (f)
		fclose(f);
	depth_left = depth;
	qsort(v, 8, sizeof(v[0]), cmp);

	struct unwind_input in = { .regs = regs, .stack = stack_copy, .stack_size = stack_size,
				   .find = find_cb };
	struct unwinder *u = unwinder_new();
	uint64_t t0 = now_ns();
	unwind_sample(u, UNWIND_MODE_DWARF, &in, frames, UNWIND_MAX_DEPTH, &res);
	uint64_t cold = now_ns() - t0;
	struct unwind_stats st;
	unwind_get_stats(u, &st);
	printf("cold: first sample %.2f ms (%zu tables built in %.2f ms, %zu rows)\n",
	       cold / 1e6, st.modules, st.build_ns / 1e6, st.rows);
	printf("sample: %zu frames, %s, copy %zu bytes\n", res.n,
	       unwind_quality_name(res.quality), stack_size);

	const int iters = 200000;
	uint64_t best = UINT64_MAX;
	size_t frames_total = 0;
	for (int round = 0; round < 5; round++) {
		t0 = now_ns();
		for (int i = 0; i < iters; i++) {
			unwind_sample(u, UNWIND_MODE_DWARF, &in, frames, UNWIND_MAX_DEPTH, &res);
			frames_total += res.n;
		}
		uint64_t d = now_ns() - t0;
		if (d < best)
			best = d;
	}
	printf("warm: %.2f ns/sample, %.2f ns/frame (best of 5 x %d samples of %zu frames)\n",
	       (double)best / iters, (double)best / iters / res.n, iters, res.n);
#ifdef HAVE_LIBUNWIND
	printf("libunwind unw_step: %.2f ns/frame (best of 5 x 20000 walks of %d frames)\n",
	       lu_step_ns, lu_step_frames);
	printf("libunwind unw_backtrace: %.2f ns/frame (best of 5 x 20000 walks of %d frames)\n",
	       lu_trace_ns, lu_trace_frames);
#endif
	unwinder_free(u);
	return frames_total ? 0 : 1;
}
