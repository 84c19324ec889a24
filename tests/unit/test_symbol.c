/* test_symbol.c - the symbolizer against real binaries: this test itself,
 * libc, the vDSO, /proc/kallsyms, and small programs built here with cc
 * (split debug info with debuglink, MiniDebugInfo, corrupted copies).
 *
 * Fixture programs are written to a temporary directory and built with
 *   cc -g -O1 [-Wl,--build-id=none] -o prog prog.c
 * then split with objcopy/strip as each test says.
 */

/* stax-test: seconds=8 */
#include "symbol/symbol.h"
#include "test.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef __clang__
#define NOINLINE __attribute__((noinline, used))
#else
#define NOINLINE __attribute__((noinline, noclone, used))
#endif

struct test_map {
	uint64_t start, end, pgoff;
	char path[4096];
};

static volatile int sink;

NOINLINE int sym_test_global_fn(int n)
{
	int i, acc = 0;
	for (i = 0; i < n; i++)
		acc += i * sink + (acc >> 3);
	return acc;
}

NOINLINE static int sym_test_static_fn(int n)
{
	int i, acc = 1;
	for (i = 0; i < n; i++)
		acc ^= i * 7 + sink;
	return acc;
}

/* Mapping of this process that contains addr, from /proc/self/maps. */
static int find_map(uint64_t addr, struct test_map *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4352];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long s, e, off;
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &s, &e, &off, &pos) < 3)
			continue;
		if (addr < s || addr >= e)
			continue;
		m->start = s;
		m->end = e;
		m->pgoff = off;
		snprintf(m->path, sizeof(m->path), "%s", pos ? line + pos : "");
		m->path[strcspn(m->path, "\n")] = '\0';
		found = 1;
	}
	fclose(f);
	return found;
}

static void lookup_self(struct sym_session *s, const void *p, struct sym_result *r,
			struct test_map *m)
{
	struct module_ref ref = { 0 };
	uint64_t addr = (uint64_t)(uintptr_t)p;
	memset(r, 0, sizeof(*r));
	if (!find_map(addr, m)) {
		m->path[0] = '\0';
		return;
	}
	ref.path = m->path;
	ref.start = m->start;
	ref.end = m->end;
	ref.pgoff = m->pgoff;
	sym_lookup(s, &ref, addr, r);
}

static int streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

static void test_self(void)
{
	struct sym_session *s = sym_session_new();
	struct sym_result r;
	struct test_map m;
	const char *src;
	size_t n;
	struct module_ref ref = { 0 };

	lookup_self(s, (const void *)sym_test_global_fn, &r, &m);
	CHECK(streq(r.name, "sym_test_global_fn") && r.sym_offset == 0,
	      "self: global function by its start");
	CHECK(streq(r.source, "symtab"), "self: source is symtab");
	CHECK(streq(r.module, "test_symbol") || (r.module && strstr(m.path, r.module)),
	      "self: module is the binary's base name");
	CHECK(r.file_offset == (uint64_t)(uintptr_t)sym_test_global_fn - m.start + m.pgoff,
	      "self: file offset");

	lookup_self(s, (const char *)sym_test_static_fn + 5, &r, &m);
	CHECK(streq(r.name, "sym_test_static_fn") && r.sym_offset == 5,
	      "self: static function, address in the middle");

	lookup_self(s, (const void *)test_self, &r, &m);
	CHECK(streq(r.name, "test_self"), "self: another static function");

	ref.path = m.path;
	ref.start = m.start;
	ref.end = m.end;
	ref.pgoff = m.pgoff;
	CHECK(sym_module_info(s, &ref, &src, &n) && streq(src, "symtab") && n > 10,
	      "self: module info");
	ref.path = "/nonexistent/stax-test";
	ref.start = 0;
	ref.pgoff = 0;
	CHECK(!sym_module_info(s, &ref, &src, &n) && streq(src, "none") && n == 0,
	      "module info of a missing file is false");
	sym_lookup(s, &ref, 0x1234, &r);
	CHECK(!r.name && streq(r.module, "stax-test") && r.file_offset == 0x1234,
	      "missing file: no name, module and offset still set");
	sym_session_free(s);
}

/* Many lookups in one module, then alternating between two (the module
 * cache, not the fast path): the answers must be the ones a fresh session
 * gives. Timing is printed for context only; speed is measured by
 * `make bench`, not asserted here. */
static void test_many_lookups(void)
{
	struct sym_session *s = sym_session_new(), *fresh = sym_session_new();
	struct module_ref ref = { 0 }, ref2;
	struct sym_result r, f;
	struct test_map m, m2;
	uint64_t base = (uint64_t)(uintptr_t)sym_test_global_fn;
	struct timespec t0, t1;
	long i, hits = 0, n = 200000, checked = 0, same = 0;
	void *qs = dlsym(RTLD_DEFAULT, "qsort");

	if (!find_map(base, &m) || !qs || !find_map((uint64_t)(uintptr_t)qs, &m2)) {
		SKIP("many lookups", "no mapping for the test binary or libc");
		sym_session_free(s);
		sym_session_free(fresh);
		return;
	}
	ref.path = m.path;
	ref.start = m.start;
	ref.end = m.end;
	ref.pgoff = m.pgoff;
	ref2 = ref;
	ref2.path = m2.path;
	ref2.start = m2.start;
	ref2.end = m2.end;
	ref2.pgoff = m2.pgoff;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++) {
		uint64_t a = m.start + (uint64_t)(i * 7919) % (m.end - m.start);
		sym_lookup(s, &ref, a, &r);
		hits += r.name != NULL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("# %ld lookups in one module in %.3fs (%ld named)\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, hits);
	CHECK(hits > n / 2, "many lookups: most addresses of the test binary's code are named");
	for (i = 0; i < n; i++) {
		const struct module_ref *rr = i & 1 ? &ref2 : &ref;
		uint64_t a = rr->start + (uint64_t)(i * 7919) % (rr->end - rr->start);
		sym_lookup(s, rr, a, &r);
		if (i % 101)
			continue;
		/* every 101st answer against a session that saw nothing else */
		sym_lookup(fresh, rr, a, &f);
		checked++;
		same += (r.name == f.name || (r.name && f.name && !strcmp(r.name, f.name))) &&
			(!r.name || r.sym_offset == f.sym_offset);
	}
	CHECK(checked > 1000 && same == checked,
	      "many lookups: alternating two modules gives the answers of a fresh session");
	/* a released module is loaded again by the next lookup in it; the
	 * other module stays as it was */
	checked = same = 0;
	for (i = 0; i < 2000; i++) {
		const struct module_ref *rr = i & 1 ? &ref2 : &ref;
		uint64_t a = rr->start + (uint64_t)(i * 7919) % (rr->end - rr->start);
		if (i % 7 == 0)
			sym_session_release(s, i % 14 ? &ref : &ref2);
		sym_lookup(s, rr, a, &r);
		sym_lookup(fresh, rr, a, &f);
		checked++;
		same += (r.name == f.name || (r.name && f.name && !strcmp(r.name, f.name))) &&
			(!r.name || r.sym_offset == f.sym_offset);
	}
	CHECK(same == checked, "sym_session_release: lookups after releases give a fresh session's answers");
	sym_session_release(s, &ref);
	sym_session_release(s, &ref); /* twice: nothing more to free */
	sym_session_free(s);
	sym_session_free(fresh);
}

static void test_libc(void)
{
	struct sym_session *s = sym_session_new();
	struct sym_result r;
	struct test_map m, base_map;
	void *qs = dlsym(RTLD_DEFAULT, "qsort");
	void *ml = dlsym(RTLD_DEFAULT, "malloc");
	char cmd[4200], line[512];
	FILE *p;
	uint64_t prev_start = 0, prev_end = 0, gap = 0, load = 0;
	int found = 0;

	lookup_self(s, (const char *)qs + 3, &r, &m);
	CHECK(r.name && strstr(r.name, "qsort") && r.sym_offset == 3, "libc: qsort");
	printf("# libc source: %s, module %s\n", r.source, r.module);
	lookup_self(s, ml, &r, &m);
	CHECK(r.name && strstr(r.name, "malloc"), "libc: malloc");

	/* An address in alignment padding right after a sized function:
	 * no symbol covers it, so the name must be NULL and not the
	 * function before it. Found with nm, independently of our code. */
	snprintf(cmd, sizeof(cmd),
		 "nm -D --defined-only -S -n '%s' 2>/dev/null", m.path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a, sz;
		char t;
		if (sscanf(line, "%llx %llx %c", &a, &sz, &t) != 3)
			continue;
		if (t != 'T' && t != 't' && t != 'W' && t != 'i')
			continue;
		if (!found && prev_end && a > prev_end && a - prev_end < 16 && prev_start) {
			gap = prev_end;
			found = 1;
		}
		if (a >= prev_end) {
			prev_start = a;
			prev_end = a + sz;
		}
	}
	if (p)
		pclose(p);
	/* libc's first PT_LOAD has offset 0 and vaddr 0: base = mapping
	 * with pgoff 0. */
	{
		FILE *f = fopen("/proc/self/maps", "r");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long s0, e0, off;
			if (strstr(line, m.path) &&
			    sscanf(line, "%lx-%lx %*s %lx", &s0, &e0, &off) == 3 && off == 0) {
				load = s0;
				break;
			}
		}
		if (f)
			fclose(f);
	}
	if (!found || !load || !find_map(load + gap, &base_map)) {
		SKIP("libc: padding between functions has no name", "no gap found with nm -D");
	} else {
		lookup_self(s, (const void *)(uintptr_t)(load + gap), &r, &m);
		CHECK(!r.name, "libc: padding between functions has no name");
		if (r.name)
			printf("# padding at %#" PRIx64 " named %s by %s\n", gap, r.name, r.source);
	}
	sym_session_free(s);
}

static void test_kernel(void)
{
	struct sym_session *s = sym_session_new();
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], name[256], type;
	unsigned long long addr = 0, a;
	struct sym_result r;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    (type == 'T' || type == 't') && !strcmp(name, "schedule")) {
			addr = a;
			break;
		}
	if (f)
		fclose(f);
	if (!addr) {
		sym_lookup_kernel(s, 0xffffffff81000000ull, &r);
		CHECK(!r.name && streq(r.module, "[kernel.kallsyms]"),
		      "kernel: hidden kallsyms gives no name");
		SKIP("kernel: schedule", "kallsyms unreadable or hidden by kptr_restrict");
	} else {
		sym_lookup_kernel(s, addr + 2, &r);
		CHECK(streq(r.name, "schedule") && r.sym_offset == 2 &&
		      streq(r.module, "[kernel.kallsyms]") && streq(r.source, "kallsyms"),
		      "kernel: schedule");
		sym_lookup_kernel(s, 0x10, &r);
		CHECK(!r.name, "kernel: user address has no kernel name");
	}
	sym_session_free(s);
}

static void test_vdso(void)
{
	struct sym_session *s = sym_session_new();
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	struct sym_result r;
	struct test_map m;

	if (!fn) {
		SKIP("vdso: clock_gettime", "no vDSO symbol via dlsym");
	} else {
		lookup_self(s, (const char *)fn + 1, &r, &m);
		CHECK(streq(m.path, "[vdso]") && r.name && strstr(r.name, "clock_gettime") &&
		      streq(r.module, "[vdso]") && r.sym_offset == 1,
		      "vdso: clock_gettime");
	}
	if (h)
		dlclose(h);
	sym_session_free(s);
}

static void test_demangle(void)
{
	char *d;

	d = sym_demangle("_ZN3foo3barEv");
	CHECK(streq(d, "foo::bar()"), "demangle: C++");
	free(d);
	d = sym_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
	CHECK(streq(d, "core::fmt::write"), "demangle: Rust legacy");
	free(d);
	d = sym_demangle("_RNvNtCs1cm4JkEbg6R_3std2io5stdio");
	CHECK(streq(d, "std::io::stdio"), "demangle: Rust v0");
	free(d);
	d = sym_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi@GLIBCXX_3.4");
	CHECK(d && strstr(d, "std::vector<int") && strstr(d, "@GLIBCXX_3.4"),
	      "demangle: version suffix kept");
	free(d);
	CHECK(sym_demangle("main") == NULL && sym_demangle("_Zgarbage") == NULL,
	      "demangle: plain and invalid names give NULL");
}

static void test_build_id(void)
{
	uint8_t bid[64];
	char hex[129] = "", line[512], want[129] = "";
	size_t n, i;
	FILE *p = popen("readelf -n /bin/ls 2>/dev/null", "r");

	while (p && fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");
		if (b)
			sscanf(b + 10, "%128s", want);
	}
	if (p)
		pclose(p);
	n = sym_read_build_id("/bin/ls", bid, sizeof(bid));
	for (i = 0; i < n && i < 64; i++)
		sprintf(hex + 2 * i, "%02x", bid[i]);
	if (!want[0])
		SKIP("build-id of /bin/ls", "readelf shows none");
	else
		CHECK(n == 20 && !strcmp(hex, want), "build-id of /bin/ls matches readelf");
	CHECK(sym_read_build_id("/nonexistent", bid, sizeof(bid)) == 0,
	      "build-id of a missing file is 0");
}

/* Run a shell command; 0 on success. */
static int sh(const char *fmt, const char *dir)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), fmt, dir, dir, dir, dir, dir, dir, dir, dir, dir, dir);
	return system(cmd);
}

static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"static volatile int v;\n"
	"__attribute__((noinline, noclone)) static int hidden_worker(int n)\n"
	"{ int i, a = 0; for (i = 0; i < n; i++) a += i ^ v; return a; }\n"
	"int main(void)\n"
	"{\n"
	"\tchar line[4352]; unsigned long s, e, off, a = (unsigned long)hidden_worker;\n"
	"\tFILE *f = fopen(\"/proc/self/maps\", \"r\");\n"
	"\twhile (fgets(line, sizeof(line), f))\n"
	"\t\tif (sscanf(line, \"%lx-%lx %*s %lx\", &s, &e, &off) == 3 && a >= s && a < e)\n"
	"\t\t\tprintf(\"%lx %lx %lx %lx\\n\", a, s, e, off);\n"
	"\treturn hidden_worker(3) == 12345;\n"
	"}\n";

/* Run prog and build a ref for the mapping of its hidden_worker. */
static int run_prog(const char *path, struct module_ref *ref, uint64_t *addr)
{
	FILE *p = popen(path, "r");
	unsigned long a, s, e, off;
	int ok = p && fscanf(p, "%lx %lx %lx %lx", &a, &s, &e, &off) == 4;
	if (p)
		pclose(p);
	if (!ok)
		return 0;
	memset(ref, 0, sizeof(*ref));
	ref->path = path;
	ref->start = s;
	ref->end = e;
	ref->pgoff = off;
	*addr = a;
	return 1;
}

static void check_prog(const char *path, const char *want_source, const char *name)
{
	struct sym_session *s = sym_session_new();
	struct module_ref ref;
	struct sym_result r;
	uint64_t addr;
	char what[256];

	snprintf(what, sizeof(what), "%s: static function via %s", name, want_source);
	if (!run_prog(path, &ref, &addr)) {
		CHECK(0, what);
	} else {
		sym_lookup(s, &ref, addr + 1, &r);
		CHECK(streq(r.name, "hidden_worker") && r.sym_offset == 1 &&
		      streq(r.source, want_source), what);
		if (!streq(r.source, want_source))
			printf("# got %s from %s\n", r.name ? r.name : "(null)", r.source);
	}
	sym_session_free(s);
}

static void test_fixtures(const char *dir)
{
	char path[4200], buf[4200];
	FILE *f;
	struct sym_session *s;
	struct module_ref ref;
	struct sym_result r;
	uint64_t addr;

	snprintf(path, sizeof(path), "%s/prog.c", dir);
	f = fopen(path, "w");
	if (!f || fputs(prog_src, f) < 0) {
		SKIP("fixtures", "cannot write the fixture source");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	if (sh("cd %s && cc -g -O1 -o prog prog.c && cp prog prog_full && "
	       "cc -g -O1 -Wl,--build-id=none -o prog_nobid prog.c && "
	       "cp prog prog_mini && cp prog prog_dotdebug", dir)) {
		SKIP("fixtures", "cc failed");
		return;
	}
	check_prog(strcat(strcpy(buf, dir), "/prog_full"), "symtab", "unstripped");

	/* Split debug info, found by debuglink (build-id checked). */
	if (sh("cd %s && objcopy --only-keep-debug prog prog.debug && strip --strip-all prog && "
	       "objcopy --add-gnu-debuglink=prog.debug prog", dir))
		SKIP("debuglink", "objcopy/strip failed");
	else
		check_prog(strcat(strcpy(buf, dir), "/prog"), "debuglink", "debuglink");

	/* No build-id: the debuglink CRC decides. */
	if (sh("cd %s && objcopy --only-keep-debug prog_nobid prog_nobid.debug && "
	       "strip --strip-all prog_nobid && "
	       "objcopy --add-gnu-debuglink=prog_nobid.debug prog_nobid", dir))
		SKIP("debuglink crc", "objcopy/strip failed");
	else
		check_prog(strcat(strcpy(buf, dir), "/prog_nobid"), "debuglink", "debuglink crc");

	/* Debug file in .debug/ next to the binary. */
	if (sh("cd %s && mkdir -p .debug && objcopy --only-keep-debug prog_dotdebug dd.debug && "
	       "strip --strip-all prog_dotdebug && "
	       "objcopy --add-gnu-debuglink=dd.debug prog_dotdebug && mv dd.debug .debug/", dir))
		SKIP("debuglink .debug/", "objcopy/strip failed");
	else
		check_prog(strcat(strcpy(buf, dir), "/prog_dotdebug"), "debuglink", "debuglink .debug/");

	/* A debug file of another build under the linked name must be
	 * refused (CRC mismatch), or it would name the wrong functions. */
	snprintf(path, sizeof(path), "%s/prog_nobid", dir);
	if (!run_prog(path, &ref, &addr) ||
	    sh("cd %s && sed 's/a += i/a -= 3 * i/' prog.c > other.c && "
	       "cc -g -O1 -Wl,--build-id=none -o other other.c && "
	       "objcopy --only-keep-debug other prog_nobid.debug", dir)) {
		SKIP("debuglink crc mismatch", "cannot build the other program");
	} else {
		s = sym_session_new();
		sym_lookup(s, &ref, addr + 1, &r);
		CHECK(!r.name && !streq(r.source, "debuglink"),
		      "debuglink: debug file of another build is refused");
		sym_session_free(s);
	}

	/* MiniDebugInfo: an xz-compressed ELF with .symtab. */
	if (sh("cd %s && objcopy --only-keep-debug prog_mini mini && strip --strip-debug mini && "
	       "rm -f mini.xz && xz mini && strip --strip-all prog_mini && "
	       "objcopy --add-section .gnu_debugdata=mini.xz prog_mini", dir))
		SKIP("minidebuginfo", "objcopy/strip/xz failed");
	else
		check_prog(strcat(strcpy(buf, dir), "/prog_mini"), "minidebuginfo", "minidebuginfo");

	/* A build-id that does not match the file: no names from it. */
	snprintf(path, sizeof(path), "%s/prog_full", dir);
	if (run_prog(path, &ref, &addr)) {
		static const uint8_t wrong[20] = { 0xde, 0xad, 0xbe, 0xef };
		ref.build_id = wrong;
		ref.build_id_size = sizeof(wrong);
		s = sym_session_new();
		sym_lookup(s, &ref, addr, &r);
		CHECK(!r.name && streq(r.source, "none"), "wrong build-id: file not used");
		sym_session_free(s);
	}
}

/* A ref that maps ELF virtual address vaddr of the file at path as its
 * PT_LOAD segment does (from readelf -lW), so lookups take vaddr. */
static int elf_ref(const char *path, uint64_t vaddr, struct module_ref *ref)
{
	char cmd[4200], line[512];
	unsigned long long off, va, fsz;
	int found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -lW '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p))
		if (sscanf(line, " LOAD 0x%llx 0x%llx %*s 0x%llx", &off, &va, &fsz) == 3 &&
		    vaddr >= va && vaddr < va + fsz) {
			memset(ref, 0, sizeof(*ref));
			ref->path = path;
			ref->start = va;
			ref->end = va + fsz;
			ref->pgoff = off;
			found = 1;
		}
	if (p)
		pclose(p);
	return found;
}

/* The name at ELF address vaddr of path (NULL when none), its offset in
 * *off. */
static const char *name_at(struct sym_session *s, const char *path, uint64_t vaddr, uint64_t *off)
{
	struct module_ref ref;
	struct sym_result r;
	*off = 0;
	if (!elf_ref(path, vaddr, &ref))
		return NULL;
	sym_lookup(s, &ref, vaddr, &r);
	*off = r.sym_offset;
	return r.name;
}

/* The value of the first symbol called name in the output of cmd (nm or
 * readelf -s style lines), 0 when none. */
static uint64_t sym_value(const char *cmd, const char *name)
{
	char line[1024], a[64], b[64], c[512];
	uint64_t v = 0;
	FILE *p = popen(cmd, "r");
	while (!v && p && fgets(line, sizeof(line), p)) {
		char *w = strstr(line, name);
		size_t n = strlen(name);
		if (!w || (w[n] != '\n' && w[n] != '\0' && w[n] != ' ') || (w > line && w[-1] != ' '))
			continue;
		if (sscanf(line, "%63s %63s %511s", a, b, c) == 3 && strchr(a, ':'))
			v = strtoull(b, NULL, 16); /* readelf -s: "N: VALUE ..." */
		else if (sscanf(line, "%63s", a) == 1)
			v = strtoull(a, NULL, 16); /* nm: "VALUE T name" */
	}
	if (p)
		pclose(p);
	return v;
}

/* Every PLT entry objdump names "NAME@plt" in .plt, .plt.sec and .plt.got
 * of path gets the same name from us, at its start and 2 bytes in.
 * Returns the number checked (*bad: how many differed; *sec: how many
 * were in .plt.sec), -1 when objdump fails. */
static int check_plt_names(const char *path, int demangle, int *bad, int *sec)
{
	struct sym_session *s = sym_session_new();
	char cmd[4200], line[1024], want[512], cur[64] = "";
	int n = 0;
	FILE *p;

	*bad = *sec = 0;
	sym_set_demangle(s, demangle);
	snprintf(cmd, sizeof(cmd), "objdump -d %s -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null",
		 demangle ? "-C" : "", path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		uint64_t off, off2;
		const char *got, *got2;
		char *e;
		if (sscanf(line, "Disassembly of section %63[^:]", cur) == 1)
			continue;
		if (sscanf(line, "%llx <%511[^\n]", &a, want) != 2 || !(e = strstr(want, "@plt>:")))
			continue;
		e[4] = '\0';
		got = name_at(s, path, a, &off);
		got2 = name_at(s, path, a + 2, &off2);
		n++;
		*sec += !strcmp(cur, ".plt.sec");
		if (!streq(got, want) || off || !streq(got2, want) || off2 != 2) {
			if ((*bad)++ < 3)
				printf("# %s: %#llx objdump %s, stax %s+%#" PRIx64 "\n", path, a, want,
				       got ? got : "(none)", off);
		}
	}
	if (!p || pclose(p))
		n = -1;
	sym_session_free(s);
	return n;
}

static const char plt_lib_src[] =
	"#include <string.h>\n"
	"int plt_callee(int x) { return x * 3 + 1; }\n"
	"unsigned long lib_len(const char *s) { return strlen(s) + (unsigned long)plt_callee(1); }\n";
static const char plt_main_src[] =
	"#include <stdio.h>\n"
	"int plt_callee(int x);\n"
	"unsigned long lib_len(const char *s);\n"
	"int main(int argc, char **argv)\n"
	"{ printf(\"%d\\n\", plt_callee(argc) + (int)lib_len(argv[0])); return 0; }\n";
static const char plt_cxx_lib_src[] =
	"namespace plt_ns { int callee(int x) { return x * 3 + 1; } }\n";
static const char plt_cxx_main_src[] =
	"namespace plt_ns { int callee(int x); }\n"
	"int main(int argc, char **) { return plt_ns::callee(argc) == 7; }\n";

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[4200];
	FILE *f;
	int ok;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ok = f && fputs(text, f) >= 0;
	if (f && fclose(f))
		ok = 0;
	return ok;
}

/* NAME@plt for PLT stubs, in every layout GNU ld and lld make: lazy,
 * -z now (no lazy entries; .plt.got), IBT (.plt.sec), in executables
 * and shared libraries, checked against objdump's names. */
static void test_plt(const char *dir)
{
	static const struct {
		const char *what, *flags;
		int lld, ibt;
	} v[] = {
		{ "gcc/ld lazy", "", 0, 0 },
		{ "gcc/ld -z now", "-Wl,-z,now", 0, 0 },
		{ "gcc/ld IBT (.plt.sec)", "-fcf-protection -Wl,-z,ibtplt", 0, 1 },
		{ "gcc/ld IBT -z now", "-fcf-protection -Wl,-z,ibtplt -Wl,-z,now", 0, 1 },
		{ "lld lazy", "-fuse-ld=lld", 1, 0 },
		{ "lld -z now", "-fuse-ld=lld -Wl,-z,now", 1, 0 },
		{ "lld IBT (.plt.sec)", "-fuse-ld=lld -fcf-protection -Wl,-z,force-ibt", 1, 1 },
	};
	char what[256], path[4200], cmd[8192];
	struct sym_session *s;
	int lld = !system("command -v ld.lld >/dev/null 2>&1");
	size_t i;

	if (!write_file(dir, "plt_lib.c", plt_lib_src) || !write_file(dir, "plt_main.c", plt_main_src)) {
		SKIP("plt", "cannot write the fixture sources");
		return;
	}
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int n, bad, sec, nlib, badlib, seclib;
		if (v[i].lld && !lld) {
			snprintf(what, sizeof(what), "plt %s", v[i].what);
			SKIP(what, "ld.lld is not installed (apt-get install lld)");
			continue;
		}
		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && cc -O1 -fPIC -shared %s -o libplt%zu.so plt_lib.c 2>/dev/null && "
			 "cc -O1 %s -o plt%zu plt_main.c -L. -lplt%zu 2>/dev/null",
			 dir, v[i].flags, i, v[i].flags, i, i);
		snprintf(what, sizeof(what), "plt %s: build", v[i].what);
		if (system(cmd)) {
			CHECK(0, what);
			continue;
		}
		snprintf(path, sizeof(path), "%s/plt%zu", dir, i);
		n = check_plt_names(path, 0, &bad, &sec);
		snprintf(path, sizeof(path), "%s/libplt%zu.so", dir, i);
		nlib = check_plt_names(path, 0, &badlib, &seclib);
		snprintf(what, sizeof(what),
			 "plt %s: objdump's %d NAME@plt in the program, %d in the library, named alike",
			 v[i].what, n, nlib);
		/* the program calls plt_callee and lib_len (and
		 * __cxa_finalize through .plt.got); the library strlen and
		 * plt_callee (interposable) */
		CHECK(n >= 3 && nlib >= 2 && !bad && !badlib && (!v[i].ibt || (sec >= 2 && seclib >= 2)),
		      what);
		if (i == 0) {
			/* the lazy header: what perf calls it */
			uint64_t plt, off = 1;
			const char *name;
			snprintf(cmd, sizeof(cmd), "readelf -SW '%s/plt0' | awk '{ for (i = 1; i < NF; i++) "
				 "if ($i == \".plt\") print $(i + 2), \".plt\" }'", dir);
			plt = sym_value(cmd, ".plt");
			snprintf(path, sizeof(path), "%s/plt0", dir);
			s = sym_session_new();
			name = plt ? name_at(s, path, plt + 3, &off) : NULL;
			CHECK(streq(name, ".plt") && off == 3, "plt: the lazy-binding header is .plt");
			sym_session_free(s);
		}
	}

	/* A static binary: IFUNC stubs of 8 bytes in .plt (entry size 0),
	 * each named by the IFUNC its IRELATIVE resolver belongs to. */
	snprintf(cmd, sizeof(cmd), "cd '%s' && cc -O1 -static -o plt_static plt_main.c plt_lib.c "
		 ">/dev/null 2>&1", dir);
	if (system(cmd)) {
		SKIP("plt static: IFUNC stubs", "cannot link statically (no libc.a)");
	} else {
		uint64_t a, start, size, off, off7, off8;
		int named = 0, exact = 1, strlen_seen = 0;
		snprintf(path, sizeof(path), "%s/plt_static", dir);
		snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | awk '{ for (i = 1; i < NF; i++) "
			 "if ($i == \".plt\") print $(i + 2), \"start\" }'", path);
		start = sym_value(cmd, "start");
		snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | awk '{ for (i = 1; i < NF; i++) "
			 "if ($i == \".plt\") print $(i + 4), \"size\" }'", path);
		size = sym_value(cmd, "size");
		s = sym_session_new();
		sym_set_demangle(s, 0);
		for (a = start; start && a < start + size; a += 8) {
			const char *n0 = name_at(s, path, a, &off);
			const char *n7 = name_at(s, path, a + 7, &off7);
			const char *n8 = a + 8 < start + size ? name_at(s, path, a + 8, &off8) : NULL;
			named += n0 != NULL;
			strlen_seen |= streq(n0, "strlen@plt");
			if (!n0 || off || !strstr(n0, "@plt") || !streq(n0, n7) || off7 != 7 ||
			    (n8 && off8))
				exact = 0;
		}
		printf("# static: %d IFUNC stubs in %" PRIu64 " bytes of .plt\n", named, size);
		CHECK(named >= 3 && exact && strlen_seen,
		      "plt static: every 8-byte IFUNC stub named NAME@plt, strlen@plt among them");
		sym_session_free(s);
	}

	/* C++: the name is demangled, the suffix kept */
	if (!write_file(dir, "pltx_lib.cc", plt_cxx_lib_src) ||
	    !write_file(dir, "pltx_main.cc", plt_cxx_main_src) ||
	    system("command -v c++ >/dev/null 2>&1")) {
		SKIP("plt C++: demangled NAME@plt", "no C++ compiler");
	} else {
		int n, bad, sec;
		snprintf(cmd, sizeof(cmd), "cd '%s' && c++ -O1 -fPIC -shared -o libpltx.so pltx_lib.cc && "
			 "c++ -O1 -o pltx pltx_main.cc -L. -lpltx", dir);
		if (system(cmd)) {
			CHECK(0, "plt C++: build");
		} else {
			snprintf(path, sizeof(path), "%s/pltx", dir);
			n = check_plt_names(path, 1, &bad, &sec);
			s = sym_session_new();
			snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s' | "
				 "awk '/<_ZN6plt_ns6calleeEi@plt>:/ { print $1, \"callee\" }'", path);
			{
				uint64_t a = sym_value(cmd, "callee"), off = 1;
				const char *name = a ? name_at(s, path, a, &off) : NULL;
				CHECK(n >= 1 && !bad && streq(name, "plt_ns::callee(int)@plt") && !off,
				      "plt C++: demangled NAME@plt (plt_ns::callee(int)@plt)");
			}
			sym_session_free(s);
		}
	}
}

static const char labels_src[] =
	"__asm__(\".text\\n\"\n"
	"\t\".globl label_only\\n\"\n"            /* NOTYPE, size 0 */
	"\t\"label_only:\\n\\tnop\\n\\tnop\\n\\tnop\\n\\tret\\n\"\n"
	"\t\".globl sized_fn\\n.type sized_fn, @function\\n\"\n"
	"\t\"sized_fn:\\n\\tnop\\n\"\n"
	"\t\".globl inner_label\\n\"\n"           /* NOTYPE, size 0, inside sized_fn */
	"\t\"inner_label:\\n\\tnop\\n\\tnop\\n\\tret\\n\"\n"
	"\t\".size sized_fn, .-sized_fn\\n\");\n"
	"void label_only(void);\n"
	"void sized_fn(void);\n"
	"int main(void) { label_only(); sized_fn(); return 0; }\n";

/* Symbols without a size (assembly labels, ld.so's _start) and the entry
 * point of a stripped binary. */
static void test_labels(const char *dir)
{
	char path[4200], cmd[8192], stripped[4200];
	struct sym_session *s;
	uint64_t a, off = 99;
	const char *name;

	if (!write_file(dir, "labels.c", labels_src)) {
		SKIP("labels", "cannot write the fixture source");
		return;
	}
	snprintf(cmd, sizeof(cmd), "cd '%s' && cc -O1 -o labels labels.c && cp labels labels_stripped && "
		 "strip --strip-all labels_stripped", dir);
	if (system(cmd)) {
		CHECK(0, "labels: build");
		return;
	}
	snprintf(path, sizeof(path), "%s/labels", dir);
	snprintf(stripped, sizeof(stripped), "%s/labels_stripped", dir);
	s = sym_session_new();

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	a = sym_value(cmd, "label_only");
	name = a ? name_at(s, path, a + 2, &off) : NULL;
	CHECK(streq(name, "label_only") && off == 2,
	      "labels: a NOTYPE label without a size names the code after it");
	a = sym_value(cmd, "inner_label");
	name = a ? name_at(s, path, a + 1, &off) : NULL;
	CHECK(streq(name, "sized_fn") && off == 2,
	      "labels: a label inside a sized function does not rename it");

	/* e_entry of a binary stripped of every symbol */
	snprintf(cmd, sizeof(cmd), "readelf -hW '%s' | awk '/Entry point/ { print $4, \"entry\" }'",
		 stripped);
	a = sym_value(cmd, "entry");
	name = a ? name_at(s, stripped, a + 4, &off) : NULL;
	CHECK(streq(name, "_start") && off == 4, "labels: a stripped binary's entry point is _start");
	name = a ? name_at(s, stripped, a + 47, &off) : NULL;
	CHECK(streq(name, "_start") && off == 47, "labels: _start of a stripped binary has 48 bytes");
	name = a ? name_at(s, stripped, a + 48, &off) : "?";
	CHECK(!streq(name, "_start"), "labels: and not one more (glibc's next function is there)");
	sym_session_free(s);
}

/* ld.so's _start (a NOTYPE label of size 0 in libc6-dbg's symbol table,
 * and the ELF entry point): the root frame of every stack sampled while
 * a program starts. Looked up where ld.so is mapped in this process. */
static void test_ldso(void)
{
	struct sym_session *s = sym_session_new();
	char line[4352], cmd[8192], path[4096] = "", dbg[4200];
	uint64_t base = 0, entry, label;
	uint8_t bid[64];
	size_t n, i;
	struct sym_result r;
	struct test_map m;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s0, e0, off;
		int pos = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &s0, &e0, &off, &pos) >= 3 && pos &&
		    strstr(line + pos, "/ld-linux") && off == 0 && !base) {
			base = s0;
			snprintf(path, sizeof(path), "%s", line + pos);
			path[strcspn(path, "\n")] = '\0';
		}
	}
	if (f)
		fclose(f);
	if (!base) {
		SKIP("ld.so: _start", "no ld-linux mapped in this process");
		sym_session_free(s);
		return;
	}
	snprintf(cmd, sizeof(cmd), "readelf -hW '%s' | awk '/Entry point/ { print $4, \"entry\" }'", path);
	entry = sym_value(cmd, "entry");
	lookup_self(s, (const void *)(uintptr_t)(base + entry + 7), &r, &m);
	CHECK(entry && streq(r.name, "_start") && r.sym_offset == 7,
	      "ld.so: the code at its entry point is _start");
	printf("# ld.so %s: entry %#" PRIx64 " named %s from %s\n", path, entry,
	       r.name ? r.name : "(none)", r.source ? r.source : "?");

	/* the label after _start, when the debug symbols are installed */
	n = sym_read_build_id(path, bid, sizeof(bid));
	i = (size_t)snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/");
	for (size_t k = 0; k < n && i + 4 < sizeof(dbg); k++)
		i += (size_t)snprintf(dbg + i, sizeof(dbg) - i, k == 1 ? "/%02x" : "%02x", bid[k]);
	snprintf(dbg + i, sizeof(dbg) - i, ".debug");
	snprintf(cmd, sizeof(cmd), "readelf -sW '%s' 2>/dev/null", dbg);
	label = n ? sym_value(cmd, "_dl_start_user") : 0;
	if (!label) {
		SKIP("ld.so: _dl_start_user, a label of size 0", "no debug file for ld.so (apt-get install libc6-dbg)");
	} else {
		lookup_self(s, (const void *)(uintptr_t)(base + label + 1), &r, &m);
		CHECK(streq(r.name, "_dl_start_user") && r.sym_offset == 1,
		      "ld.so: _dl_start_user, a label of size 0, names the code after it");
	}
	sym_session_free(s);
}

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

/* Junk, truncated and bit-flipped ELF files: no crash, no names from
 * junk. */
static void test_corrupt(const char *dir)
{
	char path[4200], src[4200];
	struct module_ref ref = { 0 };
	struct sym_result r;
	uint8_t bid[64], *img = NULL;
	FILE *f;
	long size = 0, i, iter, named = 0;
	int ok = 1;

	snprintf(path, sizeof(path), "%s/junk", dir);
	f = fopen(path, "w");
	for (i = 0; f && i < 10000; i++)
		fputc(i == 0 ? 0x7f : (int)(rnd() & 0xff), f);
	if (f)
		fclose(f);
	ref.path = path;
	ref.start = 0x400000;
	ref.end = 0x500000;
	{
		struct sym_session *s = sym_session_new();
		sym_lookup(s, &ref, 0x401000, &r);
		CHECK(!r.name && streq(r.source, "none"), "junk file: no name");
		CHECK(sym_read_build_id(path, bid, sizeof(bid)) == 0, "junk file: no build-id");
		sym_session_free(s);
	}

	/* Mutate the unstripped fixture (or this binary) many ways. */
	snprintf(src, sizeof(src), "%s/prog_full", dir);
	f = fopen(src, "rb");
	if (!f)
		f = fopen("/proc/self/exe", "rb");
	if (f) {
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		fseek(f, 0, SEEK_SET);
		img = malloc((size_t)size);
		if (fread(img, 1, (size_t)size, f) != (size_t)size)
			size = 0;
		fclose(f);
	}
	if (!size) {
		SKIP("corrupt ELF files", "no binary to mutate");
		free(img);
		return;
	}
	snprintf(path, sizeof(path), "%s/mutant", dir);
	for (iter = 0; iter < 300; iter++) {
		uint8_t *m = malloc((size_t)size);
		long len = size, k;
		struct sym_session *s;
		memcpy(m, img, (size_t)size);
		if (iter % 3 == 0) {
			len = (long)(rnd() % (uint32_t)size);
		} else {
			/* Flip bytes, mostly in headers and tables. */
			for (k = 0; k < 1 + (long)(rnd() % 20); k++) {
				long at = iter % 3 == 1 ? (long)(rnd() % 64)
						      : (long)(rnd() % (uint32_t)size);
				m[at] = (uint8_t)rnd();
			}
			if (iter % 2)
				for (k = 0; k < 8; k++)
					m[size - 1 - (long)(rnd() % 4096 % size)] = (uint8_t)rnd();
		}
		f = fopen(path, "wb");
		if (!f || fwrite(m, 1, (size_t)len, f) != (size_t)len)
			ok = 0;
		if (f)
			fclose(f);
		free(m);
		s = sym_session_new();
		ref.path = path;
		ref.pgoff = 0;
		for (k = 0; k < 64; k++) {
			sym_lookup(s, &ref, ref.start + (uint64_t)(rnd() % 0x10000), &r);
			named += r.name != NULL;
		}
		sym_read_build_id(path, bid, sizeof(bid));
		sym_session_free(s);
	}
	printf("# %ld names from mutated files\n", named);
	CHECK(ok, "corrupt ELF files: 300 mutants, no crash");
	free(img);
}

int main(void)
{
	char dir[] = "/tmp/stax-test-symbol-XXXXXX";
	char cmd[128];

	sink = sym_test_global_fn(1) + sym_test_static_fn(1);
	test_self();
	test_libc();
	test_kernel();
	test_vdso();
	test_demangle();
	test_build_id();
	test_ldso();
	if (!mkdtemp(dir)) {
		SKIP("fixtures", "mkdtemp failed");
	} else {
		test_fixtures(dir);
		test_plt(dir);
		test_labels(dir);
		test_corrupt(dir);
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			printf("# could not remove %s\n", dir);
	}
	test_many_lookups();
	TEST_DONE();
}
