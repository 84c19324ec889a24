/* view.h - the text and JSON views of a profile.
 *
 * Every view reads a symbolized profile and the samples the filter keeps,
 * and prints to out. They never fail (a profile with no samples prints an
 * empty table and says so).
 */
#ifndef STAX_VIEW_VIEW_H
#define STAX_VIEW_VIEW_H

#include "profile/profile.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct view_filter {
	int64_t pid, tid;      /* -1 = any */
	const char *comm;      /* NULL = any */
	uint64_t t0, t1;       /* sample times kept, [t0, t1]; t1 == 0: any
				* (stax serve's selection of a time range) */
};

bool view_keep(const struct profile *p, const struct view_filter *f, const struct rec_sample *s);
bool view_keep_offcpu(const struct profile *p, const struct view_filter *f, const struct rec_offcpu *o);

struct top_opts {
	size_t limit;          /* rows, 0 = all */
	bool sort_total;
	bool json;
	bool off_cpu;          /* weigh off-CPU intervals by time instead: self
				* is the blocking caller (view_blocking_frame())
				* of the kernel-folded stack (view_offcpu_frames()) */
	bool kernel_waits;     /* off_cpu: the stacks as recorded, self the
				* innermost frame (often the kernel's schedule) */
	enum top_by { TOP_BY_FUNCTION, TOP_BY_MODULE, TOP_BY_THREAD, TOP_BY_PROCESS } by;
};
void view_top(const struct profile *p, const struct view_filter *f, const struct top_opts *o, FILE *out);

struct flame_opts {
	bool folded;
	bool json;
	size_t max_depth;      /* 0 = unlimited */
	double threshold;      /* percent below which subtrees are hidden */
	enum { FLAME_SAMPLES, FLAME_OFFCPU, FLAME_WALL } weight;
	bool inverted;         /* leaf first (CALLTREE_INVERTED) */
	bool kernel_waits;     /* off-CPU stacks with their kernel frames
				* (CALLTREE_KERNEL_WAITS) */
};
void view_flame(const struct profile *p, const struct view_filter *f, const struct flame_opts *o, FILE *out);

struct wakers_opts {
	size_t limit;          /* rows, 0 = all */
	bool json;
	bool folded;           /* waiter stack;--;waker stack MICROSECONDS */
	const char *through;   /* NULL, or only the waits whose stack has a
				* function of that name (or label), or whose
				* leaf is that "[off-cpu: REASON]" frame
				* (stax serve's selected frame) */
	bool kernel_waits;     /* folded: the waiter's kernel frames too */
};
/* Who ended the off-CPU waits the filter keeps: waking threads and the
 * functions on their stacks, weighted by the off-CPU time they ended. */
void view_wakers(const struct profile *p, const struct view_filter *f, const struct wakers_opts *o,
		 FILE *out);
/* The waker of interval o (idx: p->wakers index + 1 by hash_mix(tid,
 * start)); NULL when none was recorded. */
const struct prof_waker *view_waker_of(const struct profile *p, const struct hmap *idx,
				       const struct rec_offcpu *o);

void view_threads(const struct profile *p, const struct view_filter *f, bool json, FILE *out);
void view_info(const struct profile *p, const struct view_filter *f, bool json, FILE *out);
void view_script(const struct profile *p, const struct view_filter *f, bool json, FILE *out);
/* Findings about stack quality, losses and symbols, most important first. */
void view_doctor(const struct profile *p, const struct view_filter *f, bool json, FILE *out);

/* Disassembly of one function (by name, or by "0xADDR" of one of its
 * frames) with samples per instruction and source lines; reads the binary
 * the recording names. color: highlight the hottest lines (ANSI). Returns
 * -1 with a message in err (what failed and what to do). */
int view_annotate(const struct profile *p, const struct view_filter *f, const char *what,
		  bool json, bool color, FILE *out, struct err *err);

/* The disassembly of the function holding the code of frame node (stax
 * serve's assembly view): read from the binary its mapping names, with
 * each instruction's source line (DWARF, the innermost inlined
 * function's). Returns -1 with the reason in err (a kernel function, a
 * JIT frame, the binary gone); view_disasm_release() either way. */
struct view_insn {
	uint64_t addr, size;       /* ELF address */
	bool undecoded;            /* bytes capstone cannot decode */
	char text[224];
	const char *file;          /* NULL: no line; borrowed from the disasm */
	uint32_t line;
};
struct view_disasm {
	const char *path;          /* the binary (borrowed from the profile) */
	uint64_t start, size;      /* the function's ELF address and size */
	struct view_insn *insns;   /* by address */
	size_t n;
	uint64_t file_offset;      /* of start */
	uint32_t mapping;          /* the mapping read (0 for the kernel's code) */
	bool kernel;               /* a kernel function: its code from /proc/kcore */
	struct sym_session *ss;
};
int view_disasm(const struct profile *p, uint32_t node, struct view_disasm *d, struct err *err);
/* The instruction of d holding frame node's address (a return address:
 * its call), or -1 when node's code is not in it (another function, or
 * another file). */
long view_disasm_row(const struct profile *p, const struct view_disasm *d, uint32_t node);
void view_disasm_release(struct view_disasm *d);
/* Offsets of kernel addresses addr[0..n) in the function name, from this
 * boot's /proc/kallsyms: off[i] is UINT64_MAX where kallsyms does not
 * name that function there (another boot, hidden addresses). Returns how
 * many were found. */
int view_kernel_offsets(const char *name, const uint64_t *addr, size_t n, uint64_t *off);

/* The callers (or callees) of one function, found by name as annotate
 * finds it or by 0xADDRESS of a frame (peek.c): samples and share of the
 * function's samples each has, merged over every place the function
 * appears on a stack, recursion counted once. Returns -1 with a message
 * in err when no function, or several in different modules, match. */
struct peek_opts {
	bool callees;
	bool json;
	size_t limit;          /* rows, 0 = all */
};
int view_peek(const struct profile *p, const struct view_filter *f, const char *what,
	      const struct peek_opts *o, FILE *out, struct err *err);

/* Samples per time bucket per thread, one row per thread, busiest first
 * (timeline.c); with hottest, the function with the most self samples
 * of each bucket. */
struct timeline_opts {
	size_t buckets;        /* 0: 60 (ignored when interval_ns is set) */
	uint64_t interval_ns;  /* bucket width, 0: the recording / buckets */
	bool hottest;
	bool json;
};
void view_timeline(const struct profile *p, const struct view_filter *f, const struct timeline_opts *o,
		   FILE *out);

/* Display name of a function id: its label ("name", or "name (file.c:LINE)"
 * when the profile was symbolized with lines). */
const char *view_func_name(const struct profile *p, uint32_t func);
/* The fields that name a function in every view's JSON: "name",
 * "module", "file" and "line" (when known), "python":true (a Python
 * frame), "kernel". */
struct jw;
void view_json_func(struct jw *w, const struct prof_func *fn);
/* "self_pct" and "total_pct": self and total as shares of all, two
 * decimals (0 when all is 0). */
void view_json_pcts(struct jw *w, uint64_t self, uint64_t total, uint64_t all);
/* The line a view prints when it has no samples to show: "no samples
 * match the filter", or "no samples in this recording". */
void view_no_samples(const struct profile *p, FILE *out);
/* The function a user names on the command line (annotate, callers,
 * callees): by name (or label), or by 0xADDRESS of one of its frames.
 * Marks in set[] (p->nfuncs + 1 entries) the ids of that name in its
 * module and returns the first; 0 with the reason in err when none is,
 * or when functions of that name are in several modules (err lists
 * them with an address each, to give instead). */
uint32_t view_find_funcs(const struct profile *p, const char *what, bool *set, struct err *err);
/* Off-CPU reasons: "lock", "read", ... and the leaf frame "[off-cpu: lock]". */
const char *view_offcpu_reason(enum offcpu_reason r);
const char *view_offcpu_frame(enum offcpu_reason r);
/* Off-CPU stacks as the views show them unless asked for the kernel's
 * frames: the frames of stack (leaf first, as profile_stack_frames())
 * with the kernel's part folded into the wait: when the stack has a
 * user-space frame, every kernel frame below it (the system call, the
 * scheduler) is dropped; a kernel thread's stack loses only its
 * scheduler frames (schedule, __schedule, ...). With kernel, the frames
 * as recorded. Returns the count (at most max). */
size_t view_offcpu_frames(const struct profile *p, uint32_t stack, bool kernel, struct prof_frame *out,
			  size_t max);
/* Is name one of the kernel scheduler's own functions (schedule,
 * __schedule, io_schedule, preempt_schedule*, __cond_resched, ...)? */
bool view_is_scheduler_name(const char *name);
/* Is fn code that tells how a program waits or wakes rather than which
 * part of it does: the kernel, the C and C++ runtime and the loader
 * (libc, libpthread, ld.so, libstdc++, libgcc_s, libm, the vDSO), the
 * Python interpreter's own C code, Go's runtime.*, a stack's roots
 * (start_thread, clone3, _start; not main), or an address with no name? */
bool view_func_is_system(const struct prof_func *fn);
/* The frame that answers "which code waited" (an off-CPU stack) or
 * "which code woke it" (a waker's stack) among fr[0..nf), leaf first:
 * the innermost frame that is not view_func_is_system(); else the
 * innermost named user-space frame; else the innermost named kernel
 * frame that is not the wake-up or scheduler machinery; else 0. */
size_t view_blocking_frame(const struct profile *p, const struct prof_frame *fr, size_t nf);
/* Nanoseconds of CPU time one sample stands for: its period for clock
 * events, else 1/freq seconds. */
uint64_t view_sample_ns(const struct profile *p, const struct rec_sample *s);
/* Milliseconds of CPU a sample weight stands for (clock events), else 0. */
double view_weight_ms(const struct profile *p, uint64_t weight);

#endif
