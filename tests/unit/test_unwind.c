/* test_unwind.c - the unwinder on real stacks of this very process.
 *
 * Fixture functions below have known call graphs; frame-pointer-less
 * ones are built with optimize("omit-frame-pointer"), frame-pointer ones
 * with optimize("no-omit-frame-pointer") (gcc 12 keeps no frame in leaf
 * functions either way, UNWINDING.md trap 13, so leaves here call on).
 * A leaf captures its own registers with inline asm and copies its stack
 * from rsp, exactly what perf's REGS_USER + STACK_USER give the recorder;
 * the unwinder then runs on the copy with a find callback built from
 * /proc/self/maps, and frames are symbolized from the ELF symbol tables
 * (libc's from its separate debug file when libc6-dbg is installed).
 *
 * Scenarios: a plain chain to _start, a comparator called by libc's
 * qsort, signal handlers (timer and raise), the vDSO, a pthread (clone3),
 * a truncated copy, hybrid splicing with the frame-pointer chain on a
 * clone() child stack with deep recursion, and garbage input.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "lib/hash.h"
#include "lib/util.h"
#include "test.h"
#include "unwind/jitcfi.h"
#include "unwind/table.h"
#include "unwind/unwind.h"

#ifdef __clang__
/* clang has neither noclone nor per-function optimize(): the splice
 * checks that need WITHFP say so (check_splice) */
#define NOINLINE __attribute__((noinline))
#define NOFP NOINLINE
#define WITHFP NOINLINE
#else
#define NOINLINE __attribute__((noinline, noclone))
#define NOFP __attribute__((noinline, noclone, optimize("omit-frame-pointer")))
#define WITHFP __attribute__((noinline, noclone, optimize("no-omit-frame-pointer")))
#endif
/* Keeps a call from becoming a tail call or being merged. */
#define KEEP() __asm__ volatile("" ::: "memory")

/* ---------------------------------------------------------------- maps */

struct map {
	uint64_t start, end, pgoff;
	bool exec;
	char *path;
};

static struct map *maps;
static size_t nmaps;

static void maps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];

	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	free(maps);
	maps = NULL;
	nmaps = 0;
	size_t cap = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		char perms[8], path[4096] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &s, &e, perms, &off, path) < 4)
			continue;
		GROW(maps, cap, nmaps + 1);
		char *p = path;
		while (*p == ' ')
			p++;
		maps[nmaps].start = s;
		maps[nmaps].end = e;
		maps[nmaps].pgoff = off;
		maps[nmaps].exec = perms[2] == 'x';
		maps[nmaps].path = xstrdup(p);
		nmaps++;
	}
	fclose(f);
}

static const struct map *map_of(uint64_t a)
{
	size_t lo = 0, hi = nmaps;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (maps[mid].end <= a)
			lo = mid + 1;
		else if (maps[mid].start > a)
			hi = mid;
		else
			return &maps[mid];
	}
	return NULL;
}

static unsigned find_calls;

static bool find_cb(void *arg, uint64_t pc, struct module_ref *out)
{
	(void)arg;
	find_calls++;
	const struct map *m = map_of(pc);
	if (!m || !m->exec)
		return false;
	if (m->path[0] == '[' && strcmp(m->path, "[vdso]") != 0)
		return false;
	/* anonymous executable memory (JIT code) is a mapping, as the
	 * recorder's MMAP records say: "//anon" */
	out->path = m->path[0] ? m->path : "//anon";
	out->build_id = NULL;
	out->build_id_size = 0;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	return true;
}

/* ---------------------------------------------------------- symbolizer */

struct sym {
	uint64_t addr, size;
	const char *name;
};

struct symfile {
	char *path;
	struct sym *syms;
	size_t n;
	struct utable *t;    /* only for its PT_LOAD list (utable_bias) */
	char *strs;          /* names live here */
};

static struct symfile files[64];
static size_t nfiles;

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct buf_s {
	char *p;
	size_t len, cap;
};

static void add_syms(struct symfile *sf, Elf *elf, size_t *cap, struct buf_s *strs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			size_t l = strlen(name) + 1;
			if (strs->len + l > strs->cap) {
				strs->cap = (strs->len + l) * 2;
				strs->p = xrealloc(strs->p, strs->cap);
			}
			memcpy(strs->p + strs->len, name, l);
			GROW(sf->syms, *cap, sf->n + 1);
			sf->syms[sf->n].addr = s.st_value;
			sf->syms[sf->n].size = s.st_size;
			sf->syms[sf->n].name = (const char *)(uintptr_t)strs->len; /* fixed below */
			sf->n++;
			strs->len += l;
		}
	}
}

static void load_syms_from(struct symfile *sf, const char *path, size_t *cap, struct buf_s *strs,
			   uint8_t *bid, size_t *bid_len)
{
	int fd = -1;
	Elf *elf;
	if (strcmp(path, "[vdso]") == 0) {
		const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
		elf = elf_memory((char *)eh, eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize);
	} else {
		fd = open(path, O_RDONLY);
		elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	}
	if (elf) {
		add_syms(sf, elf, cap, strs);
		if (bid) {
			Elf_Scn *scn = NULL;
			GElf_Shdr sh;
			while ((scn = elf_nextscn(elf, scn))) {
				if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
					continue;
				Elf_Data *d = elf_getdata(scn, NULL);
				GElf_Nhdr nh;
				size_t off = 0, no, dof;
				while (d && (off = gelf_getnote(d, off, &nh, &no, &dof)) > 0)
					if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 20) {
						memcpy(bid, (char *)d->d_buf + dof, nh.n_descsz);
						*bid_len = nh.n_descsz;
					}
			}
		}
		elf_end(elf);
	}
	if (fd >= 0)
		close(fd);
}

static struct symfile *symfile_get(const char *path)
{
	for (size_t i = 0; i < nfiles; i++)
		if (strcmp(files[i].path, path) == 0)
			return &files[i];
	if (nfiles == ARRAY_SIZE(files))
		return NULL;
	struct symfile *sf = &files[nfiles++];
	struct buf_s strs = { 0 };
	size_t cap = 0;
	uint8_t bid[20];
	size_t bid_len = 0;

	memset(sf, 0, sizeof(*sf));
	sf->path = xstrdup(path);
	load_syms_from(sf, path, &cap, &strs, bid, &bid_len);
	if (bid_len > 1) {
		char dbg[128];
		int o = snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/", bid[0]);
		for (size_t i = 1; i < bid_len; i++)
			o += snprintf(dbg + o, sizeof(dbg) - o, "%02x", bid[i]);
		snprintf(dbg + o, sizeof(dbg) - o, ".debug");
		if (access(dbg, R_OK) == 0)
			load_syms_from(sf, dbg, &cap, &strs, NULL, NULL);
	}
	for (size_t i = 0; i < sf->n; i++)
		sf->syms[i].name = strs.p + (uintptr_t)sf->syms[i].name;
	sf->strs = strs.p;
	qsort(sf->syms, sf->n, sizeof(*sf->syms), cmp_sym);
	sf->t = utable_load(path);
	return sf;
}

/* Name of the function containing pc ("?" when unknown). flags says
 * whether pc is a return address (look at pc-1). */
static const char *symbolize(uint64_t pc, uint32_t flags)
{
	uint64_t a = (flags & UNWIND_F_RA) ? pc - 1 : pc;
	const struct map *m = map_of(a);
	if (!m || !m->path[0])
		return "?";
	struct symfile *sf = symfile_get(m->path);
	uint64_t bias;
	if (!sf || !utable_bias(sf->t, m->start, m->pgoff, &bias))
		return "?";
	uint64_t v = a - bias;
	const char *best = "?";
	size_t lo = 0, hi = sf->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sf->syms[mid].addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* among symbols at or before v, the nearest containing one; prefer
	 * names without leading underscores at the same address last */
	for (size_t i = lo; i-- > 0 && lo - i < 64;) {
		const struct sym *s = &sf->syms[i];
		if (v < s->addr + (s->size ? s->size : 1)) {
			best = s->name;
			break;
		}
		if (s->size == 0 && i + 1 == lo) {
			best = s->name;
			break;
		}
	}
	return best;
}

/* ------------------------------------------------------------- capture */

struct capture {
	struct unwind_regs regs;
	uint8_t *stack;
	size_t cap, size;
	uint64_t top;              /* end of the stack mapping */
	bool want_chain;
	uint64_t chain[256];
	size_t chain_len;
	int done;
};

static struct capture cap_main;

/* Copy [sp, top) and, if asked, walk the rbp chain like the kernel does
 * (arch/x86/events/core.c: ip, then *(fp+8) while fp readable, fp = *fp). */
static NOINLINE void capture_finish(struct capture *c)
{
	uint64_t sp = c->regs.r[UNW_RSP];
	size_t n = c->top > sp ? (size_t)(c->top - sp) : 0;
	if (n > c->cap)
		n = c->cap;
	/* process_vm_readv as the kernel copies it: memcheck would flag
	 * plain reads of the signal frame's bytes */
	struct iovec local = { c->stack, n }, remote = { (void *)(uintptr_t)sp, n };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got < 0) {
		memcpy(c->stack, (const void *)(uintptr_t)sp, n);
		got = (ssize_t)n;
	}
	c->size = (size_t)got;
	c->regs.valid = (1u << UNW_RBX) | (1u << UNW_RBP) | (1u << UNW_RSP) |
			(1u << UNW_R12) | (1u << UNW_R13) | (1u << UNW_R14) |
			(1u << UNW_R15) | (1u << UNW_RIP);
	if (c->want_chain) {
		uint64_t fp = c->regs.r[UNW_RBP];
		c->chain_len = 0;
		c->chain[c->chain_len++] = c->regs.r[UNW_RIP];
		while (c->chain_len < 127 && fp >= sp && fp + 16 <= sp + c->size) {
			uint64_t rec[2];
			memcpy(rec, c->stack + (fp - sp), 16);
			c->chain[c->chain_len++] = rec[1];
			fp = rec[0];
		}
	}
	c->done++;
}

/* Registers at this very instruction, then the stack copy. */
#define CAPTURE(c) do { \
	__asm__ volatile( \
		"mov %%rbx, 24(%0)\n\t" \
		"mov %%rbp, 48(%0)\n\t" \
		"mov %%r12, 96(%0)\n\t" \
		"mov %%r13, 104(%0)\n\t" \
		"mov %%r14, 112(%0)\n\t" \
		"mov %%r15, 120(%0)\n\t" \
		"lea 0(%%rip), %%rax\n\t" \
		"mov %%rax, 128(%0)\n\t" \
		"mov %%rsp, 56(%0)\n\t" \
		: : "r"((c)->regs.r) : "rax", "memory"); \
	capture_finish(c); \
} while (0)

static uint64_t stack_top_of(uint64_t sp)
{
	maps_load();
	const struct map *m = map_of(sp);
	return m ? m->end : sp;
}

static struct unwinder *uw;
static struct unwind_frame frames[UNWIND_MAX_DEPTH];

static void unwind_capture(const struct capture *c, size_t size, enum unwind_mode mode,
			   const uint64_t *chain, size_t chain_len, struct unwind_frame *fr,
			   struct unwind_result *res)
{
	struct unwind_input in = {
		.regs = c->regs, .stack = c->stack, .stack_size = size,
		.fp_chain = chain, .fp_chain_len = chain_len,
		.find = find_cb, .find_arg = NULL,
	};
	unwind_sample(uw, mode, &in, fr, UNWIND_MAX_DEPTH, res);
}

static void print_frames(const char *what, const struct unwind_frame *fr,
			 const struct unwind_result *res)
{
	printf("# %s: %zu frames, %s, %s, %zu by CFI\n", what, res->n,
	       unwind_quality_name(res->quality), unwind_method_name(res->method),
	       res->dwarf_frames);
	for (size_t i = 0; i < res->n && i < 40; i++)
		printf("#   %2zu %#14lx %c%c%c %s\n", i, (unsigned long)fr[i].pc,
		       fr[i].flags & UNWIND_F_RA ? 'r' : '-',
		       fr[i].flags & UNWIND_F_SIGNAL ? 's' : '-',
		       fr[i].flags & UNWIND_F_SIGTRAMP ? 't' : '-',
		       symbolize(fr[i].pc, fr[i].flags));
	if (res->n > 40)
		printf("#   ...\n");
}

static bool name_is(const char *got, const char *want)
{
	return strcmp(got, want) == 0;
}

static bool is_libc_start(const char *s)
{
	return strstr(s, "__libc_start_call_main") || strstr(s, "__libc_start_main");
}

/* Index of the first frame >= from named want, or -1. */
static long find_frame(const struct unwind_frame *fr, size_t n, size_t from, const char *want)
{
	for (size_t i = from; i < n; i++)
		if (name_is(symbolize(fr[i].pc, fr[i].flags), want))
			return (long)i;
	return -1;
}

/* The frames from `from` on end main, libc start, _start. */
static bool ends_at_start(const struct unwind_frame *fr, size_t n, long from)
{
	long m = find_frame(fr, n, from < 0 ? 0 : (size_t)from, "main");
	if (m < 0 || (size_t)m + 2 >= n)
		return false;
	size_t i = (size_t)m + 1;
	if (!is_libc_start(symbolize(fr[i].pc, fr[i].flags)))
		return false;
	while (i < n && is_libc_start(symbolize(fr[i].pc, fr[i].flags)))
		i++;
	return i + 1 == n && name_is(symbolize(fr[i].pc, fr[i].flags), "_start");
}

/* ----------------------------------------------------- 1. a plain chain */

static volatile int sink;

NOFP static int chain_d(int x)
{
	CAPTURE(&cap_main);
	KEEP();
	return x + sink;
}

NOFP static int chain_c(int x) { int r = chain_d(x + 1); KEEP(); return r + 1; }
NOFP static int chain_b(int x) { int r = chain_c(x + 1); KEEP(); return r + 2; }
NOFP static int chain_a(int x) { int r = chain_b(x + 1); KEEP(); return r + 3; }

static NOINLINE void test_chain(void)
{
	struct unwind_result res;
	cap_main.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	cap_main.want_chain = false;
	chain_a(1);
	KEEP();
	unwind_capture(&cap_main, cap_main.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("chain", frames, &res);
	CHECK(res.n >= 8 && name_is(symbolize(frames[0].pc, frames[0].flags), "chain_d") &&
	      frames[0].flags == 0, "chain: leaf frame is the capturing function");
	CHECK(res.n >= 8 &&
	      name_is(symbolize(frames[1].pc, frames[1].flags), "chain_c") &&
	      name_is(symbolize(frames[2].pc, frames[2].flags), "chain_b") &&
	      name_is(symbolize(frames[3].pc, frames[3].flags), "chain_a") &&
	      name_is(symbolize(frames[4].pc, frames[4].flags), "test_chain") &&
	      frames[1].flags == UNWIND_F_RA, "chain: callers in order, frame-pointer-less");
	CHECK(ends_at_start(frames, res.n, 5), "chain: reaches main, __libc_start_*, _start");
	CHECK(res.quality == UNWIND_Q_COMPLETE && res.method == UNWIND_M_DWARF,
	      "chain: verdict complete at _start");

	/* never an invented frame: chain_c's return address (into chain_b)
	 * overwritten with a data address in a copy of the stack; the walk
	 * ends at chain_c with the verdict that says why */
	{
		uint64_t ra = res.n >= 8 ? frames[2].pc : 0, data = (uint64_t)(uintptr_t)&sink;
		struct capture bad = cap_main;
		size_t at = SIZE_MAX;
		bad.stack = malloc(cap_main.size);
		memcpy(bad.stack, cap_main.stack, cap_main.size);
		for (size_t o = 0; ra && o + 8 <= bad.size && at == SIZE_MAX; o += 8)
			if (!memcmp(bad.stack + o, &ra, 8))
				at = o;
		if (at != SIZE_MAX) {
			memcpy(bad.stack + at, &data, 8);
			unwind_capture(&bad, bad.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
			print_frames("data address as a return address", frames, &res);
			bool shown = false;
			for (size_t i = 0; i < res.n; i++)
				shown |= frames[i].pc == data;
			CHECK(!shown && res.n == 2 && res.quality == UNWIND_Q_BROKEN &&
			      res.stop == UNWIND_STOP_NOT_CODE &&
			      name_is(symbolize(frames[1].pc, frames[1].flags), "chain_c"),
			      "invented frame: a return address outside executable code ends the stack");
		} else {
			CHECK(false, "invented frame: chain_c's return address found in the copy");
		}
		free(bad.stack);
	}

	/* 2. a truncated copy */
	unwind_capture(&cap_main, 256, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("truncated", frames, &res);
	CHECK(res.quality == UNWIND_Q_TRUNCATED && res.n >= 1 && res.n < 8,
	      "truncated: 256-byte copy is truncated, never complete");
	/* hybrid with no chain behaves like DWARF */
	unwind_capture(&cap_main, 256, UNWIND_MODE_HYBRID, NULL, 0, frames, &res);
	CHECK(res.quality == UNWIND_Q_TRUNCATED && res.method == UNWIND_M_DWARF,
	      "truncated: hybrid without a chain is truncated too");
	/* mode FP copies the chain */
	uint64_t chain[3] = { 1, 2, 3 };
	unwind_capture(&cap_main, 256, UNWIND_MODE_FP, chain, 3, frames, &res);
	CHECK(res.n == 3 && frames[2].pc == 3 && frames[1].flags == UNWIND_F_RA &&
	      res.method == UNWIND_M_FP && res.quality == UNWIND_Q_UNKNOWN,
	      "fp mode: the kernel chain as is");
	/* room for 3 frames only */
	struct unwind_frame few[3];
	struct unwind_input in = {
		.regs = cap_main.regs, .stack = cap_main.stack, .stack_size = cap_main.size,
		.find = find_cb,
	};
	unwind_capture(&cap_main, cap_main.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	unwind_sample(uw, UNWIND_MODE_DWARF, &in, few, 3, &res);
	CHECK(res.n == 3 && res.quality == UNWIND_Q_TRUNCATED && few[2].pc == frames[2].pc,
	      "max: three frames asked, three given, truncated");
}

/* ----------------------------------------------------------- 3. qsort */

static int qsort_captured;

NOFP static int cmp_capture(const void *a, const void *b)
{
	if (!qsort_captured++) {
		CAPTURE(&cap_main);
		KEEP();
	}
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static NOINLINE void test_qsort(void)
{
	struct unwind_result res;
	int v[16];
	for (int i = 0; i < 16; i++)
		v[i] = (i * 7) % 16;
	/* libc's own qsort: under AddressSanitizer (make check-sanitize) the
	 * name qsort is the sanitizer's interceptor, which is not libc */
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	void (*libc_qsort)(void *, size_t, size_t, int (*)(const void *, const void *)) =
		libc ? (void (*)(void *, size_t, size_t, int (*)(const void *, const void *)))dlsym(libc, "qsort") : NULL;
	if (!libc_qsort)
		libc_qsort = qsort;
	cap_main.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	qsort_captured = 0;
	libc_qsort(v, 16, sizeof(v[0]), cmp_capture);
	KEEP();
	if (libc)
		dlclose(libc);
	unwind_capture(&cap_main, cap_main.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("qsort", frames, &res);
	const struct map *m = res.n > 1 ? map_of(frames[1].pc - 1) : NULL;
	long q = find_frame(frames, res.n, 1, "test_qsort");
	CHECK(res.n > 3 && name_is(symbolize(frames[0].pc, 0), "cmp_capture") &&
	      m && strstr(m->path, "libc.so"), "qsort: comparator's caller is in libc");
	CHECK(q > 1 && ends_at_start(frames, res.n, q) && res.quality == UNWIND_Q_COMPLETE,
	      "qsort: through libc back to test_qsort, main, _start: complete");
}

/* ------------------------------------------------------------ 4. signals */

static struct capture cap_sig;
static volatile sig_atomic_t sig_seen;

NOFP static void sig_leaf(void)
{
	CAPTURE(&cap_sig);
	KEEP();
}

NOFP static void on_alarm(int sig)
{
	(void)sig;
	if (!sig_seen) {
		sig_leaf();
		KEEP();
	}
	sig_seen = 1;
}

NOFP static void spin_victim(void)
{
	struct itimerval it = { .it_value = { 0, 2000 } };
	setitimer(ITIMER_REAL, &it, NULL);
	while (!sig_seen)
		;
	KEEP();
}

NOFP static void raise_victim(void)
{
	raise(SIGUSR1);
	KEEP();
}

static void check_signal_stack(const char *what, const char *interrupted, const char *caller)
{
	struct unwind_result res;
	char label[128];
	unwind_capture(&cap_sig, cap_sig.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames(what, frames, &res);
	long h = find_frame(frames, res.n, 0, "on_alarm");
	long t = h >= 0 ? (long)h + 1 : -1;
	snprintf(label, sizeof(label), "%s: sig_leaf -> handler -> __restore_rt", what);
	CHECK(res.n > 4 && name_is(symbolize(frames[0].pc, 0), "sig_leaf") && h == 1 &&
	      name_is(symbolize(frames[t].pc, frames[t].flags), "__restore_rt") &&
	      frames[t].flags == UNWIND_F_SIGTRAMP, label);
	snprintf(label, sizeof(label), "%s: interrupted frame at its exact pc, then its callers", what);
	bool ok = t > 0 && (size_t)t + 2 < res.n && frames[t + 1].flags == UNWIND_F_SIGNAL;
	if (ok && interrupted)
		ok = name_is(symbolize(frames[t + 1].pc, frames[t + 1].flags), interrupted);
	long c = ok ? find_frame(frames, res.n, (size_t)t + 1, caller) : -1;
	CHECK(ok && c > t, label);
	snprintf(label, sizeof(label), "%s: complete at _start", what);
	CHECK(c > 0 && ends_at_start(frames, res.n, c) && res.quality == UNWIND_Q_COMPLETE, label);
}

static NOINLINE void test_signal_timer(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGALRM, &sa, NULL);
	cap_sig.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	sig_seen = 0;
	cap_sig.done = 0;
	spin_victim();
	KEEP();
	if (!cap_sig.done) {
		SKIP("signal (timer)", "no capture");
		return;
	}
	check_signal_stack("signal (timer)", "spin_victim", "test_signal_timer");
}

static NOINLINE void test_signal_raise(void)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	sigaction(SIGUSR1, &sa, NULL);
	cap_sig.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	sig_seen = 0;
	cap_sig.done = 0;
	raise_victim();
	KEEP();
	check_signal_stack("signal (raise)", NULL, "raise_victim");
}

/* --------------------------------------------------------------- 5. vDSO */

static uint64_t vdso_lo, vdso_hi;
static volatile sig_atomic_t vdso_hit;

NOFP static void on_prof(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	uint64_t ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	(void)sig; (void)si;
	if (vdso_hit || ip < vdso_lo || ip >= vdso_hi)
		return;
	sig_leaf();
	KEEP();
	vdso_hit = 1;
}

/* Until a SIGPROF lands in the vDSO, for at most 3 s of this process's
 * CPU time (ITIMER_PROF ticks with it: a busy machine takes longer but
 * gives as many chances). */
NOFP static void vdso_victim(void)
{
	struct timespec ts;
	unsigned long i;
	clock_t end = clock() + 3 * CLOCKS_PER_SEC;
	for (i = 0; !vdso_hit && ((i & 4095) || clock() < end); i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		KEEP();
	}
}

static NOINLINE void test_vdso(void)
{
	struct sigaction sa = { .sa_sigaction = on_prof, .sa_flags = SA_SIGINFO };
	struct itimerval it = { .it_interval = { 0, 1000 }, .it_value = { 0, 1000 } };
	struct itimerval off = { 0 };

	maps_load();
	for (size_t i = 0; i < nmaps; i++)
		if (strcmp(maps[i].path, "[vdso]") == 0) {
			vdso_lo = maps[i].start;
			vdso_hi = maps[i].end;
		}
	if (!vdso_lo) {
		SKIP("vdso", "no [vdso] mapping");
		return;
	}
	struct utable *t = utable_load("[vdso]");
	printf("# vdso table: %u rows, %u FDEs\n", t->nrows, t->nfde);
	CHECK(t->nrows > 0, "vdso: CFI read from this process's vDSO image");
	utable_free(t);

	sigaction(SIGPROF, &sa, NULL);
	cap_sig.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	vdso_hit = 0;
	setitimer(ITIMER_PROF, &it, NULL);
	vdso_victim();
	setitimer(ITIMER_PROF, &off, NULL);
	KEEP();
	if (!vdso_hit) {
		SKIP("vdso: unwinding out of the vDSO", "no sample landed in the vDSO in 3 s of CPU time");
		return;
	}
	struct unwind_result res;
	unwind_capture(&cap_sig, cap_sig.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("vdso", frames, &res);
	long tr = find_frame(frames, res.n, 0, "__restore_rt");
	bool in_vdso = tr > 0 && (size_t)tr + 1 < res.n &&
		frames[tr + 1].pc >= vdso_lo && frames[tr + 1].pc < vdso_hi &&
		frames[tr + 1].flags == UNWIND_F_SIGNAL;
	long v = find_frame(frames, res.n, 0, "vdso_victim");
	CHECK(in_vdso && v > tr + 1 && ends_at_start(frames, res.n, v) &&
	      res.quality == UNWIND_Q_COMPLETE,
	      "vdso: interrupted in the vDSO, unwound out of it to _start");
}

/* ------------------------------------------------------------ 6. pthread */

static struct capture cap_thr;

NOFP static void thread_leaf(void)
{
	CAPTURE(&cap_thr);
	KEEP();
}

NOFP static void *thread_main(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	(void)arg;
	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	cap_thr.top = (uint64_t)(uintptr_t)addr + size;
	thread_leaf();
	KEEP();
	return NULL;
}

static NOINLINE void test_thread(void)
{
	pthread_t th;
	struct unwind_result res;
	if (pthread_create(&th, NULL, thread_main, NULL) != 0) {
		SKIP("thread", "pthread_create failed");
		return;
	}
	pthread_join(th, NULL);
	maps_load();
	unwind_capture(&cap_thr, cap_thr.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("thread", frames, &res);
	const char *last = res.n ? symbolize(frames[res.n - 1].pc, frames[res.n - 1].flags) : "";
	CHECK(res.n >= 4 && name_is(symbolize(frames[1].pc, frames[1].flags), "thread_main") &&
	      strstr(last, "clone") && res.quality == UNWIND_Q_COMPLETE,
	      "thread: thread_main, start_thread, clone3: complete");
}

/* ------------------------------------------------------ 7. hybrid splice */

/* A clone() child runs these on a stack of its own: the outer functions
 * keep frame pointers and recurse with 1 KiB frames, the inner ones do
 * not. glibc's clone zeroes rbp and marks the child's return address
 * undefined, so the kernel's rbp walk ends exactly at the root. */
static struct capture cap_clone;

NOFP static void clone_leaf(void)
{
	CAPTURE(&cap_clone);
	KEEP();
}

NOFP static int clone_nofp(int x)
{
	clone_leaf();
	KEEP();
	return x + sink;
}

WITHFP static int clone_recurse(int depth)
{
	volatile char pad[1024];
	pad[depth] = (char)depth;
	int r = depth ? clone_recurse(depth - 1) : clone_nofp(depth);
	KEEP();
	return r + pad[depth];
}

WITHFP static int clone_fn(void *arg)
{
	int r = clone_recurse(*(int *)arg);
	KEEP();
	return r & 0;
}

static void check_splice(int depth, size_t copy_size)
{
	static struct unwind_frame full[UNWIND_MAX_DEPTH], sp[UNWIND_MAX_DEPTH];
	struct unwind_result rf, rs, rd;
	char label[160];

	unwind_capture(&cap_clone, cap_clone.size, UNWIND_MODE_DWARF, NULL, 0, full, &rf);
	unwind_capture(&cap_clone, copy_size, UNWIND_MODE_HYBRID, cap_clone.chain,
		       cap_clone.chain_len, sp, &rs);
	unwind_capture(&cap_clone, copy_size, UNWIND_MODE_DWARF, NULL, 0, frames, &rd);
	if (depth == 24 && copy_size == 4096) {
		print_frames("clone, full copy", full, &rf);
		print_frames("clone, spliced", sp, &rs);
	}
	long leaf = find_frame(full, rf.n, 0, "clone_leaf");
	snprintf(label, sizeof(label),
		 "splice depth %d, copy %zu: full unwind complete, %d recursion frames, ends in clone",
		 depth, copy_size, depth + 1);
	size_t nrec = 0;
	for (size_t i = 0; i < rf.n; i++)
		nrec += name_is(symbolize(full[i].pc, full[i].flags), "clone_recurse");
	CHECK(leaf == 0 && rf.quality == UNWIND_Q_COMPLETE && nrec == (size_t)depth + 1 &&
	      strstr(symbolize(full[rf.n - 1].pc, full[rf.n - 1].flags), "clone"), label);

	bool same = rs.n == rf.n;
	for (size_t i = 0; same && i < rf.n; i++)
		same = sp[i].pc == full[i].pc && sp[i].flags == full[i].flags;
	snprintf(label, sizeof(label),
		 "splice depth %d, copy %zu: spliced frames equal the full unwind (%zu by CFI, %zu from chain)",
		 depth, copy_size, rs.dwarf_frames, rs.n - rs.dwarf_frames);
#ifdef __clang__
	/* clang ignores optimize("no-omit-frame-pointer"): at -O1 and above
	 * clone_recurse keeps no frame pointer and the kernel-style chain
	 * has nothing to splice (the e2e tests splice real programs) */
	if (!same && rs.n == rs.dwarf_frames) {
		SKIP(label, "built with clang, which has no per-function frame-pointer attribute");
	} else
#endif
	CHECK(same && rs.method == UNWIND_M_SPLICED && rs.quality == UNWIND_Q_COMPLETE &&
	      rs.dwarf_frames < rs.n, label);
	snprintf(label, sizeof(label), "splice depth %d, copy %zu: DWARF alone is truncated",
		 depth, copy_size);
	CHECK(rd.quality == UNWIND_Q_TRUNCATED && rd.n < rf.n, label);
}

static NOINLINE void test_splice(void)
{
	static const int depths[] = { 0, 3, 24, 100 };
	size_t stack_size = 1 << 20;
	const char *pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, "vgpreload")) {
		SKIP("splice", "valgrind does not run clone(CLONE_VM) children");
		return;
	}
	uint8_t *stk = xmalloc(stack_size);

	for (size_t d = 0; d < ARRAY_SIZE(depths); d++) {
		int depth = depths[d];
		memset(&cap_clone.regs, 0, sizeof(cap_clone.regs));
		cap_clone.top = (uint64_t)(uintptr_t)(stk + stack_size);
		cap_clone.want_chain = true;
		cap_clone.done = 0;
		pid_t pid = clone(clone_fn, stk + stack_size, CLONE_VM | SIGCHLD, &depth);
		if (pid < 0) {
			SKIP("splice", "clone failed");
			break;
		}
		int st;
		waitpid(pid, &st, 0);
		if (!cap_clone.done) {
			SKIP("splice", "the clone child did not capture");
			continue;
		}
		maps_load();
		printf("# splice depth %d: copy %zu bytes, kernel-style chain %zu entries\n",
		       depth, cap_clone.size, cap_clone.chain_len);
		size_t sizes[] = { 512, 4096, 8192 };
		for (size_t s = 0; s < ARRAY_SIZE(sizes); s++) {
			if (sizes[s] >= cap_clone.size)
				continue;
			/* the chain must reach beyond the copy to test a splice */
			if ((size_t)depth * 1040 < sizes[s] + 2048)
				continue;
			check_splice(depth, sizes[s]);
		}
	}

	/* A chain that does not belong to this stack is never spliced. */
	if (cap_clone.done && cap_clone.chain_len > 3) {
		uint64_t bad[256];
		struct unwind_result res;
		memcpy(bad, cap_clone.chain, cap_clone.chain_len * sizeof(bad[0]));
		bad[1] ^= 0x10;
		unwind_capture(&cap_clone, 4096, UNWIND_MODE_HYBRID, bad, cap_clone.chain_len,
			       frames, &res);
		CHECK(res.method == UNWIND_M_DWARF && res.quality == UNWIND_Q_TRUNCATED,
		      "splice: an inconsistent chain is not spliced (truncated)");
		/* A chain cut short (kernel max stack) gives truncated, not complete. */
		unwind_capture(&cap_clone, 4096, UNWIND_MODE_HYBRID, cap_clone.chain,
			       cap_clone.chain_len - 2, frames, &res);
		CHECK(res.method == UNWIND_M_SPLICED && res.quality == UNWIND_Q_TRUNCATED,
		      "splice: a chain cut short is truncated");
	}
	free(stk);
}

/* ------------------------------------ 9. SLOW rows and a bare trampoline */

/* slow_caller(fn): calls fn with its CFA given by a DWARF expression,
 * CFA = *(rbp - 8) (the DRAP shape gcc uses when it realigns the stack),
 * which no compiled rule expresses: the row is SLOW and the interpreter
 * runs at unwind time.
 * bare_restorer: "mov $15,%rax; syscall" without any CFI, as musl's
 * __restore_rt: only its bytes say it is a signal trampoline. */
__asm__(
	".text\n"
	".p2align 4\n"
	".type slow_caller,@function\n"
	"slow_caller:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	lea 16(%rbp), %rax\n"
	"	push %rax\n"
	"	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n"
	"	and $-64, %rsp\n"
	"	call *%rdi\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size slow_caller, .-slow_caller\n"
	".p2align 4\n"
	"	nop\n"
	".type bare_restorer,@function\n"
	"bare_restorer:\n"
	"	mov $15, %rax\n"
	"	syscall\n"
	"	hlt\n"
	".size bare_restorer, .-bare_restorer\n");
void slow_caller(void (*fn)(void));
void bare_restorer(void);

NOFP static void slow_leaf(void)
{
	CAPTURE(&cap_main);
	KEEP();
}

static NOINLINE void test_slow(void)
{
	struct unwind_result res;
	cap_main.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	slow_caller(slow_leaf);
	KEEP();
	unwind_capture(&cap_main, cap_main.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("slow", frames, &res);
	struct symfile *sf = symfile_get("/proc/self/exe");
	CHECK(sf && sf->t->nslow_rows > 0, "slow: the CFA-expression row compiles to SLOW");
	CHECK(res.n > 4 && name_is(symbolize(frames[1].pc, frames[1].flags), "slow_caller") &&
	      name_is(symbolize(frames[2].pc, frames[2].flags), "test_slow") &&
	      ends_at_start(frames, res.n, 2) && res.quality == UNWIND_Q_COMPLETE,
	      "slow: unwound through the interpreted frame to _start");
}

struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static NOINLINE void test_bare_trampoline(void)
{
	struct kernel_sigaction ksa = {
		.handler = on_alarm, .flags = 0x04000000 /* SA_RESTORER */,
		.restorer = bare_restorer,
	};
	if (syscall(SYS_rt_sigaction, SIGUSR2, &ksa, NULL, 8) != 0) {
		SKIP("bare trampoline", "rt_sigaction failed");
		return;
	}
	cap_sig.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	sig_seen = 0;
	cap_sig.done = 0;
	raise(SIGUSR2);
	KEEP();
	struct unwind_result res;
	unwind_capture(&cap_sig, cap_sig.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames("bare trampoline", frames, &res);
	long t = find_frame(frames, res.n, 0, "bare_restorer");
	CHECK(t == 2 && frames[t].flags == UNWIND_F_SIGTRAMP && (size_t)t + 1 < res.n &&
	      frames[t + 1].flags == UNWIND_F_SIGNAL &&
	      find_frame(frames, res.n, t, "test_bare_trampoline") > t &&
	      res.quality == UNWIND_Q_COMPLETE,
	      "bare trampoline: recognized by its bytes (musl style), unwound to _start");
	signal(SIGUSR2, SIG_DFL);
}

/* ------------------------------------------- 10. .debug_frame only */

/* A library built without unwind tables has its CFI in .debug_frame only
 * (or, once stripped, in a separate debug file found by .gnu_debuglink).
 * Built at run time with cc; skipped when there is no compiler. */
static const char fx_source[] =
	"__attribute__((noinline)) int fx_inner(int (*cb)(int), int x)\n"
	"{ int r = cb(x); __asm__ volatile(\"\" ::: \"memory\"); return r + 1; }\n"
	"__attribute__((noinline)) int fx_outer(int (*cb)(int), int x)\n"
	"{ int r = fx_inner(cb, x + 1); __asm__ volatile(\"\" ::: \"memory\"); return r + 2; }\n";

NOFP static int fx_callback(int x)
{
	CAPTURE(&cap_main);
	KEEP();
	return x;
}

static NOINLINE void run_fx(const char *label, const char *so, const char *want_source)
{
	char name[160];
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(name, sizeof(name), "%s: dlopen", label);
		SKIP(name, dlerror());
		return;
	}
	int (*outer)(int (*)(int), int) = (int (*)(int (*)(int), int))dlsym(h, "fx_outer");
	cap_main.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	outer(fx_callback, 1);
	KEEP();
	maps_load();
	struct unwind_result res;
	unwind_capture(&cap_main, cap_main.size, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	print_frames(label, frames, &res);
	struct utable *t = utable_load(so);
	printf("# %s: table from %s (%s), %u FDEs\n", label, t->path,
	       t->source ? t->source : "-", t->nfde);
	snprintf(name, sizeof(name), "%s: CFI taken from %s", label, want_source);
	CHECK(t->source && strcmp(t->source, want_source) == 0 && t->nfde >= 2, name);
	utable_free(t);
	snprintf(name, sizeof(name), "%s: fx_inner, fx_outer, run_fx ... _start", label);
	CHECK(res.n > 5 && name_is(symbolize(frames[1].pc, frames[1].flags), "fx_inner") &&
	      name_is(symbolize(frames[2].pc, frames[2].flags), "fx_outer") &&
	      name_is(symbolize(frames[3].pc, frames[3].flags), "run_fx") &&
	      ends_at_start(frames, res.n, 3) && res.quality == UNWIND_Q_COMPLETE, name);
	dlclose(h);
	maps_load();
}

static NOINLINE void test_debug_frame(void)
{
	char dir[] = "/tmp/stax-unwind-XXXXXX", cmd[1024], path[256];
	if (!mkdtemp(dir)) {
		SKIP("debug_frame", "mkdtemp failed");
		return;
	}
	snprintf(path, sizeof(path), "%s/fx.c", dir);
	FILE *f = fopen(path, "w");
	if (f) {
		fputs(fx_source, f);
		fclose(f);
	}
	/* -fomit-frame-pointer: without CFI the frame pointer cannot help */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && cc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables "
		 "-fno-unwind-tables -shared -fPIC -o libfx.so fx.c && "
		 "cp libfx.so libfx2.so && objcopy --only-keep-debug libfx2.so libfx2.so.dbg && "
		 "objcopy --strip-debug --add-gnu-debuglink=libfx2.so.dbg libfx2.so 2>/dev/null",
		 dir);
	if (system(cmd) != 0) {
		SKIP("debug_frame", "cannot build the fixture with cc and objcopy");
	} else {
		snprintf(path, sizeof(path), "%s/libfx.so", dir);
		run_fx("debug_frame", path, ".debug_frame");
		snprintf(path, sizeof(path), "%s/libfx2.so", dir);
		run_fx("debuglink", path, "debug file .debug_frame");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

/* ----------------------------------------------------------- 8. garbage */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static NOINLINE void test_garbage(void)
{
	static uint8_t junk[16384];
	static uint64_t chain[64];
	struct capture c = { 0 };
	size_t bad = 0, complete = 0;
	uint64_t code = (uint64_t)(uintptr_t)&test_chain;

	for (int trial = 0; trial < 3000; trial++) {
		for (size_t i = 0; i < sizeof(junk); i += 8) {
			uint64_t v = rnd();
			/* sprinkle plausible values: code and stack addresses */
			switch (v & 7) {
			case 0: v = code + (v >> 40); break;
			case 1: v = 0x7ff000000000ull + (i & ~7ull) + 8 * (v >> 60); break;
			}
			memcpy(junk + i, &v, 8);
		}
		for (int r = 0; r < UNW_NREGS; r++)
			c.regs.r[r] = rnd();
		c.regs.r[UNW_RSP] = 0x7ff000000000ull;
		c.regs.r[UNW_RBP] = 0x7ff000000000ull + (rnd() & 0x3ff8);
		if (trial & 1)
			c.regs.r[UNW_RIP] = code + (rnd() & 0xff);
		c.regs.valid = (trial & 2) ? 0x1ffff : (1u << UNW_RIP) | (1u << UNW_RSP) | (1u << UNW_RBP);
		c.stack = junk;
		size_t size = (trial % 7 == 0) ? (rnd() & 0x3fff) : sizeof(junk);
		for (int i = 0; i < 64; i++)
			chain[i] = rnd();
		struct unwind_result res;
		enum unwind_mode mode = trial % 3 == 0 ? UNWIND_MODE_HYBRID : UNWIND_MODE_DWARF;
		unwind_capture(&c, size, mode, chain, rnd() & 63, frames, &res);
		if (res.quality == UNWIND_Q_BROKEN || res.quality == UNWIND_Q_TRUNCATED)
			bad++;
		else if (res.quality == UNWIND_Q_COMPLETE)
			complete++;
		if (res.n > UNWIND_MAX_DEPTH)
			break;
	}
	printf("# garbage: %zu of 3000 broken/truncated, %zu complete\n", bad, complete);
	CHECK(bad + complete == 3000 && complete * 100 <= 3000,
	      "garbage: no crash, nearly all broken or truncated");

	/* No registers at all. */
	struct unwind_result res;
	memset(&c.regs, 0, sizeof(c.regs));
	unwind_capture(&c, 0, UNWIND_MODE_DWARF, NULL, 0, frames, &res);
	CHECK(res.quality == UNWIND_Q_BROKEN && res.n == 0, "garbage: no registers is broken");
}

/* ---------------------------------------------- the cache of mappings */

/* Mappings a program moves between in every sample (its executable and
 * libc) must stay cached together, even when their (start, pgoff) hash
 * alike: this program's code mapping at three made-up addresses chosen to
 * collide in a direct-mapped cache of 64, used in turn by 300 samples,
 * must be entered into the unwinder's cache 3 times, not 300. */
static struct module_ref fake_maps[3];

static bool fake_find(void *arg, uint64_t pc, struct module_ref *out)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		if (pc >= fake_maps[i].start && pc < fake_maps[i].end) {
			*out = fake_maps[i];
			return true;
		}
	return false;
}

static NOINLINE void test_mapping_cache(void)
{
	static uint8_t zeros[256];
	const struct map *self = map_of((uint64_t)(uintptr_t)&test_chain);
	struct unwinder *u = unwinder_new();
	struct unwind_stats st;
	struct unwind_result res;
	uint64_t start = 0x100000000ull, slot;
	int n = 0;

	if (!self || !self->exec) {
		SKIP("mapping cache: colliding mappings stay cached", "no mapping of test_chain");
		unwinder_free(u);
		return;
	}
	slot = hash_mix(start, self->pgoff) & 63;
	for (; n < 3; start += 0x1000000ull) {
		if ((hash_mix(start, self->pgoff) & 63) != slot)
			continue;
		fake_maps[n] = (struct module_ref){ .path = self->path, .start = start,
			.end = start + (self->end - self->start), .pgoff = self->pgoff };
		n++;
	}
	for (int i = 0; i < 300; i++) {
		const struct module_ref *m = &fake_maps[i % 3];
		struct unwind_input in = {
			.regs = { .valid = (1u << UNW_RIP) | (1u << UNW_RSP) },
			.stack = zeros, .stack_size = sizeof(zeros), .find = fake_find,
		};
		in.regs.r[UNW_RIP] = m->start + ((uint64_t)(uintptr_t)&test_chain - self->start);
		in.regs.r[UNW_RSP] = 0x7ff000000000ull;
		unwind_sample(u, UNWIND_MODE_DWARF, &in, frames, UNWIND_MAX_DEPTH, &res);
	}
	unwind_get_stats(u, &st);
	printf("# mapping cache: %zu mappings entered for 300 samples over 3\n", st.mappings);
	CHECK(st.mappings == 3, "mapping cache: colliding mappings stay cached");
	unwinder_free(u);
}

/* Samples of one address space version (unwind_input.space) reuse the
 * mappings found for the previous one: the captured chain unwound 100
 * times asks find() only for its few modules; with space 0, or with the
 * version changed, find() is asked again; the frames are the same. */
static bool same_frames(const struct unwind_frame *a, const struct unwind_frame *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].pc != b[i].pc || a[i].flags != b[i].flags)
			return false;
	return true;
}

static NOINLINE void test_space_reuse(void)
{
	struct unwinder *u = unwinder_new();
	struct unwind_frame ref[64], got[64];
	struct unwind_result rr, res;
	struct unwind_input in = {
		.regs = cap_main.regs, .stack = cap_main.stack, .stack_size = cap_main.size,
		.find = find_cb, .space = 7,
	};
	unsigned first, same, zero, changed;
	bool identical = true;

	/* the chain of test_chain, captured again (other tests reuse cap_main) */
	cap_main.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	cap_main.want_chain = false;
	chain_a(1);
	KEEP();
	in.regs = cap_main.regs;
	in.stack = cap_main.stack;
	in.stack_size = cap_main.size;
	unwind_sample(u, UNWIND_MODE_DWARF, &in, ref, 64, &rr);
	first = find_calls;
	for (int i = 0; i < 100; i++) {
		unwind_sample(u, UNWIND_MODE_DWARF, &in, got, 64, &res);
		identical &= res.n == rr.n && same_frames(got, ref, rr.n);
	}
	same = find_calls - first;
	in.space = 0;
	first = find_calls;
	for (int i = 0; i < 10; i++) {
		unwind_sample(u, UNWIND_MODE_DWARF, &in, got, 64, &res);
		identical &= res.n == rr.n && same_frames(got, ref, rr.n);
	}
	zero = find_calls - first;
	in.space = 8;
	first = find_calls;
	unwind_sample(u, UNWIND_MODE_DWARF, &in, got, 64, &res);
	identical &= res.n == rr.n && same_frames(got, ref, rr.n);
	changed = find_calls - first;
	printf("# space reuse: %u finds for 100 samples of one version, %u for 10 without one,"
	       " %u after a change\n", same, zero, changed);
	CHECK(rr.quality == UNWIND_Q_COMPLETE && identical, "space reuse: the same frames every time");
	CHECK(same == 0 && zero >= 10 && changed >= 1,
	      "space reuse: find() is not asked again while the version stays, asked when it is 0 or changes");
	unwinder_free(u);
}

/* --------------------------------------------------------------- main */

/* ------------------------- 12. JIT code: CPython's perf trampoline */

/* CPython 3.12/3.13's trampoline (Python/asm_trampoline.S) copied into
 * anonymous executable memory the way -X perf does, then called: it calls
 * *%rcx (the 4th argument) with no frame pointer and no CFI. The frame is
 * recognised by its bytes (read through read_code), or, with no bytes, by
 * its consistency; code bytes that are something else are not taken for
 * it. Then the same code described by a jitdump's UNWINDING_INFO (the
 * .eh_frame CPython 3.13's -X perf_jit writes) is unwound by that CFI. */
static const uint8_t py_tramp_bytes[11] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
					    0x48, 0x83, 0xc4, 0x08, 0xc3 };
static uint8_t *jit_page;
typedef int (*tramp_fn)(long, long, long, int (*)(void));

NOFP static int jit_leaf(void)
{
	CAPTURE(&cap_main);
	KEEP();
	return sink;
}

NOFP static int jit_caller(void)
{
	int r = ((tramp_fn)(void *)(jit_page + 16))(0, 0, 0, jit_leaf);
	KEEP();
	return r + 1;
}

/* read_code: this process's anonymous memory; zeros when zero_code */
static bool zero_code;
static bool read_self(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	(void)arg;
	const struct map *m = map_of(addr);
	if (!m || m->path[0] == '/' || addr + len > m->end)
		return false;
	if (zero_code)
		memset(buf, 0, len);
	else
		memcpy(buf, (const void *)(uintptr_t)addr, len);
	return true;
}

static struct jit_cfi *test_jcfi;
static const struct utable *jit_table_cb(void *arg, uint64_t pc)
{
	(void)arg;
	return jit_cfi_find(test_jcfi, pc);
}

static void unwind_jit(bool read, bool cfi, struct unwind_result *res)
{
	struct unwind_input in = {
		.regs = cap_main.regs, .stack = cap_main.stack, .stack_size = cap_main.size,
		.find = find_cb, .read_code = read ? read_self : NULL,
		.jit_table = cfi ? jit_table_cb : NULL,
	};
	unwind_sample(uw, UNWIND_MODE_DWARF, &in, frames, UNWIND_MAX_DEPTH, res);
}

/* The trampoline is frame 1 and jit_caller follows: whole to _start. */
static bool through_trampoline(const struct unwind_result *res)
{
	return res->n > 4 && name_is(symbolize(frames[0].pc, 0), "jit_leaf") &&
	       frames[1].pc == (uint64_t)(uintptr_t)(jit_page + 16 + 6) &&
	       name_is(symbolize(frames[2].pc, frames[2].flags), "jit_caller") &&
	       ends_at_start(frames, res->n, 2) && res->quality == UNWIND_Q_COMPLETE;
}

static NOINLINE void test_jit_trampoline(void)
{
	struct unwind_result res;
	jit_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit_page == MAP_FAILED) {
		SKIP("CPython trampoline", "mmap failed");
		return;
	}
	memset(jit_page, 0xcc, 4096);
	memcpy(jit_page, py_tramp_bytes, sizeof(py_tramp_bytes));
	memcpy(jit_page + 16, py_tramp_bytes, sizeof(py_tramp_bytes));
	if (mprotect(jit_page, 4096, PROT_READ | PROT_EXEC)) {
		SKIP("CPython trampoline", "mprotect PROT_EXEC failed");
		return;
	}
	cap_main.top = stack_top_of((uint64_t)(uintptr_t)__builtin_frame_address(0));
	cap_main.want_chain = false;
	jit_caller();
	KEEP();
	maps_load();

	unwind_jit(true, false, &res);
	print_frames("CPython trampoline", frames, &res);
	CHECK(through_trampoline(&res) && res.jit == UNWIND_JIT_TRAMPOLINE && res.jit_frames == 1,
	      "CPython trampoline: recognised by its bytes, unwound to _start");

	unwind_jit(false, false, &res);
	CHECK(through_trampoline(&res) && res.jit == UNWIND_JIT_TRAMPOLINE,
	      "CPython trampoline, bytes unknown (perf.data): taken where the frame is consistent");

	zero_code = true;
	unwind_jit(true, false, &res);
	zero_code = false;
	CHECK(!(res.jit & UNWIND_JIT_TRAMPOLINE) && !through_trampoline(&res),
	      "other code bytes: not taken for the trampoline");

	/* A jitdump: header, UNWINDING_INFO with the .eh_frame CPython 3.13
	 * writes for a trampoline (pc-relative FDE placed after the code),
	 * then the code load. */
	static const uint8_t eh[] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x7a, 0x52, 0, 0x01, 0x78, 0x10, 0x01,
		0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0,
		0x14, 0, 0, 0, 0x1c, 0, 0, 0, 0xd0, 0xff, 0xff, 0xff, 0x0b, 0, 0, 0,
		0, 0x44, 0x0e, 0x10, 0x46, 0x0e, 0x08, 0, 0, 0, 0, 0,
	};
	uint8_t dump[512];
	size_t n = 0, off = 0;
	uint32_t u32;
	uint64_t u64;
	struct err err = { 0 };
#define PUT(v, sz) do { memcpy(dump + n, &(v), sz); n += sz; } while (0)
	u32 = 0x4A695444; PUT(u32, 4);
	u32 = 1; PUT(u32, 4);
	u32 = 40; PUT(u32, 4);
	memset(dump + n, 0, 28); n += 28;
	u32 = 4; PUT(u32, 4);
	u32 = (uint32_t)(16 + 24 + sizeof(eh)); PUT(u32, 4);
	u64 = 0; PUT(u64, 8);
	u64 = sizeof(eh); PUT(u64, 8);
	u64 = 0; PUT(u64, 8);   /* no .eh_frame_hdr */
	u64 = 0; PUT(u64, 8);
	memcpy(dump + n, eh, sizeof(eh)); n += sizeof(eh);
	u32 = 0; PUT(u32, 4);
	u32 = 16 + 40 + 5 + 11; PUT(u32, 4);
	u64 = 0; PUT(u64, 8);
	u32 = (uint32_t)getpid(); PUT(u32, 4); PUT(u32, 4);
	u64 = (uint64_t)(uintptr_t)(jit_page + 16); PUT(u64, 8); PUT(u64, 8);
	u64 = 11; PUT(u64, 8);
	u64 = 1; PUT(u64, 8);
	memcpy(dump + n, "py::", 5); n += 5;
	memcpy(dump + n, py_tramp_bytes, 11); n += 11;
#undef PUT
	test_jcfi = jit_cfi_new();
	/* first only up to the unwinding info, as a file still being written */
	int a = jit_cfi_add(test_jcfi, dump, n - 72, &off, &err);
	int b = jit_cfi_add(test_jcfi, dump, n, &off, &err);
	CHECK(a == 0 && b == 1 && off == n && jit_cfi_find(test_jcfi, (uint64_t)(uintptr_t)(jit_page + 20)) &&
	      !jit_cfi_find(test_jcfi, (uint64_t)(uintptr_t)(jit_page + 27)),
	      "jitdump: UNWINDING_INFO read with the code load that follows it");
	zero_code = true; /* the bytes rule must not be what works */
	unwind_jit(true, true, &res);
	zero_code = false;
	CHECK(through_trampoline(&res) && res.jit == UNWIND_JIT_CFI,
	      "jitdump UNWINDING_INFO: the trampoline unwound by its .eh_frame");
	jit_cfi_free(test_jcfi);
	munmap(jit_page, 4096);
}

int main(void)
{
	static uint8_t buf_main[256 * 1024], buf_sig[256 * 1024], buf_thr[256 * 1024];
	static uint8_t buf_clone[1 << 20];

	elf_version(EV_CURRENT);
	cap_main.stack = buf_main;
	cap_main.cap = sizeof(buf_main);
	cap_sig.stack = buf_sig;
	cap_sig.cap = sizeof(buf_sig);
	cap_thr.stack = buf_thr;
	cap_thr.cap = sizeof(buf_thr);
	cap_clone.stack = buf_clone;
	cap_clone.cap = sizeof(buf_clone);
	uw = unwinder_new();

	test_chain();
	KEEP();
	test_qsort();
	KEEP();
	test_signal_timer();
	KEEP();
	test_signal_raise();
	KEEP();
	test_vdso();
	KEEP();
	test_thread();
	KEEP();
	test_splice();
	KEEP();
	test_slow();
	KEEP();
	test_bare_trampoline();
	KEEP();
	test_debug_frame();
	KEEP();
	test_garbage();
	KEEP();
	test_mapping_cache();
	test_space_reuse();
	KEEP();
	test_jit_trampoline();
	KEEP();

	struct unwind_stats st;
	unwind_get_stats(uw, &st);
	printf("# unwinder: %zu tables (%zu without CFI) built in %.2f ms, %zu rows, "
	       "%zu SLOW; %zu samples, %zu spliced\n", st.modules, st.modules_no_cfi,
	       st.build_ns / 1e6, st.rows, st.slow_rows, st.samples, st.spliced);
	unwinder_free(uw);
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].path);
		free(files[i].syms);
		free(files[i].strs);
		utable_free(files[i].t);
	}
	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].path);
	free(maps);
	TEST_DONE();
}
