/* test_dwarf.c - inline chains and source lines against addr2line.
 *
 * The fixture is written to a temporary directory and built with
 *   gcc -O2 -g -o inl inl.c      (always_inline helpers, see inl_src)
 * then split (objcopy --only-keep-debug, strip, --add-gnu-debuglink).
 * For every instruction of the functions with inlined code, the chain
 * sym_lookup() reports must equal `addr2line -i -f -e inl ADDR`: the
 * same functions, innermost first, with the same file:line each.
 *
 * The DWARF cache (symbol/dwcache.c) is tested on a copy with compressed
 * sections (objcopy --compress-debug-sections=zlib inl inl_z), with
 * XDG_CACHE_HOME in the temporary directory: the chains must stay those
 * of addr2line when the entry is made, used, corrupted, stale or turned
 * off with STAX_NO_CACHE=1.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "module/module.h"
#include "lib/elffile.h"
#include "test.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* sym_dwarf_open() of the file at path (opened as module_open() does). */
static struct sym_dwarf *dwarf_open_path(const char *path, const uint8_t *bid, size_t n)
{
	int fd;
	Elf *e = elf_file_open(path, &fd);
	return sym_dwarf_open(e, fd, bid, n);
}

static const char inl_src[] =
	"#include <stdio.h>\n"
	"static volatile int sink;\n"
	"#define AI static inline __attribute__((always_inline))\n"
	"AI int leaf(int x)\n"
	"{\n"
	"\tint s = 0;\n"
	"\tfor (int i = 0; i < x; i++)\n"
	"\t\ts += i * sink;\n"
	"\treturn s;\n"
	"}\n"
	"AI int mid(int x)\n"
	"{\n"
	"\treturn leaf(x) + leaf(x / 2) * 3;\n"
	"}\n"
	"__attribute__((noinline)) int outer(int x)\n"
	"{\n"
	"\treturn mid(x) * 2 + mid(x + 1);\n"
	"}\n"
	"int main(void)\n"
	"{\n"
	"\tint t = 0;\n"
	"\tfor (int i = 0; i < 100; i++)\n"
	"\t\tt += outer(i);\n"
	"\tprintf(\"%d\\n\", t);\n"
	"\treturn 0;\n"
	"}\n";

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "??";
}

/* Our chain as addr2line prints it: "func base:line" per frame, innermost
 * first, joined by " | ". */
static void ours(struct sym_session *s, const char *path, uint64_t addr, char *out, size_t n)
{
	struct module_ref ref = { path, NULL, 0, 0, UINT64_MAX, 0 };
	struct sym_result r;
	size_t i, len = 0;
	sym_lookup(s, &ref, addr, &r);
	out[0] = '\0';
	for (i = 0; i < r.ninlined; i++)
		len += snprintf(out + len, n - len, "%s %s:%u | ", r.inlined[i].name ? r.inlined[i].name : "??",
				base(r.inlined[i].file), r.inlined[i].line);
	snprintf(out + len, n - len, "%s %s:%u", r.name ? r.name : "??", base(r.file), r.line);
}

/* addr2line -i -f for many addresses at once: one chain per address. */
static int theirs(const char *path, const uint64_t *addrs, size_t n, char **chains, size_t cap)
{
	char cmd[8192], line[4096], fn[4096];
	size_t len, i, k = 0;
	FILE *f;
	len = (size_t)snprintf(cmd, sizeof(cmd), "addr2line -i -f -a -e '%s'", path);
	for (i = 0; i < n && len < sizeof(cmd) - 32; i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, " %" PRIx64, addrs[i]);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *d;
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0x", 2)) {
			if (k >= n)
				break;
			chains[k++][0] = '\0';
			continue;
		}
		if (!k)
			continue;
		snprintf(fn, sizeof(fn), "%s", line);
		if (!fgets(line, sizeof(line), f))
			break;
		line[strcspn(line, "\n")] = '\0';
		if ((d = strstr(line, " (discriminator")))
			*d = '\0';
		len = strlen(chains[k - 1]);
		snprintf(chains[k - 1] + len, cap - len, "%s%s %s", len ? " | " : "", fn, base(line));
	}
	pclose(f);
	return (int)k;
}

/* Instruction addresses of function fn, from objdump. */
static size_t insns(const char *path, const char *fn, uint64_t *out, size_t max)
{
	char cmd[4200], line[512];
	size_t n = 0;
	bool in = false;
	FILE *f;
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s'", path);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char want[256];
		uint64_t a;
		snprintf(want, sizeof(want), "<%s>:", fn);
		if (strstr(line, want)) {
			in = true;
			continue;
		}
		if (in && line[0] == '\n')
			in = false;
		if (in && n < max && sscanf(line, " %" SCNx64 ":", &a) == 1)
			out[n++] = a;
	}
	pclose(f);
	return n;
}

/* Compare at the instructions of fn in the unstripped file syms (the
 * stripped one has no symbols for objdump to find fn by). Addresses
 * addr2line has no line for (padding after the function) are left out. */
static void compare(const char *path, const char *syms, const char *fn, const char *name,
		    size_t *inlined_seen)
{
	struct sym_session *s = sym_session_new();
	uint64_t addrs[256];
	char *chains[256], mine[4096];
	size_t n = insns(syms, fn, addrs, 256), i, same = 0, skipped = 0;
	int got;

	for (i = 0; i < 256; i++)
		chains[i] = calloc(1, 4096);
	got = theirs(path, addrs, n, chains, 4096);
	for (i = 0; i < n && (int)i < got; i++) {
		if (strstr(chains[i], "??:?")) {
			skipped++;
			same++;
			continue;
		}
		ours(s, path, addrs[i], mine, sizeof(mine));
		if (!strcmp(mine, chains[i]))
			same++;
		else if (n - same < 4 || getenv("V"))
			printf("# %" PRIx64 ": ours   %s\n#   addr2line %s\n", addrs[i], mine, chains[i]);
		if (strchr(mine, '|') && inlined_seen)
			(*inlined_seen)++;
	}
	printf("# %s: %zu of %zu addresses agree with addr2line (%zu without a line)\n", name,
	       same - skipped, n - skipped, skipped);
	CHECK(n >= 8 && skipped < n / 2 && (int)n == got && same == n, name);
	for (i = 0; i < 256; i++)
		free(chains[i]);
	sym_session_free(s);
}

/* ---- the DWARF cache ---- */

static char cache_entry[4400];

static bool file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* Open path's DWARF as the symbolizer does; 1 from the cache, 0 not, -1
 * no DWARF at all. */
static int opened_from_cache(const char *path)
{
	uint8_t bid[64];
	size_t n = sym_read_build_id(path, bid, sizeof(bid));
	struct sym_dwarf *d = dwarf_open_path(path, bid, n);
	int r = d ? sym_dwarf_from_cache(d) : -1;
	sym_dwarf_free(d);
	return r;
}

/* Overwrite n bytes at off of the cache entry (it stays 0600). */
static void poke(off_t off, const char *bytes, size_t n)
{
	int fd = open(cache_entry, O_WRONLY);
	if (fd >= 0) {
		if (pwrite(fd, bytes, n, off) != (ssize_t)n)
			printf("# pwrite failed\n");
		close(fd);
	}
}

static void test_cache(const char *dir, const char *full)
{
	char z[4200], label[256];
	uint8_t bid[64];
	size_t n, i;
	char hex[129];
	struct stat st;
	struct timespec ts[2];

	snprintf(z, sizeof(z), "%s/inl_z", dir);
	if (sh("objcopy --compress-debug-sections=zlib '%s' '%s'", full, z)) {
		SKIP("dwarf cache", "objcopy --compress-debug-sections failed");
		return;
	}
	n = sym_read_build_id(z, bid, sizeof(bid));
	if (!n) {
		SKIP("dwarf cache", "the fixture has no build-id");
		return;
	}
	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("STAX_NO_CACHE");
	snprintf(cache_entry, sizeof(cache_entry), "%s/stax/dwarf/%s", dir, hex);

	/* an uncompressed file gains nothing from an entry: none is made */
	opened_from_cache(full);
	CHECK(!file_exists(cache_entry), "dwarf cache: no entry for uncompressed DWARF");

	compare(z, full, "outer", "dwarf cache: compressed sections, first open: chains as addr2line", NULL);
	CHECK(file_exists(cache_entry) && stat(cache_entry, &st) == 0 && (st.st_mode & 0777) == 0600,
	      "dwarf cache: the first open writes the entry (mode 0600)");
	CHECK(opened_from_cache(z) == 1, "dwarf cache: the next open maps the entry");
	compare(z, full, "outer", "dwarf cache: from the entry: chains as addr2line", NULL);
	compare(z, full, "main", "dwarf cache: from the entry: main() as addr2line", NULL);

	/* corruptions: each entry is refused, the chains stay right, and
	 * the entry is written anew */
	struct { const char *what; off_t off; const char *bytes; size_t n; int truncate_to; } bad[] = {
		{ "a byte of the image changed", 4096 + 200, "\x5a", 1, -1 },
		{ "a byte of the header changed", 100, "\x01", 1, -1 },
		{ "the magic changed", 0, "STAXDWC9", 8, -1 },
		{ "truncated", 0, "", 0, 5000 },
		{ "only a header", 0, "", 0, 152 },
		{ "empty", 0, "", 0, 0 },
	};
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (bad[i].truncate_to >= 0) {
			if (truncate(cache_entry, bad[i].truncate_to))
				printf("# truncate failed\n");
		} else {
			poke(bad[i].off, bad[i].bytes, bad[i].n);
		}
		snprintf(label, sizeof(label), "dwarf cache, %s: not used", bad[i].what);
		CHECK(opened_from_cache(z) == 0, label);
		snprintf(label, sizeof(label), "dwarf cache, %s: chains as addr2line", bad[i].what);
		compare(z, full, "outer", label, NULL);
		snprintf(label, sizeof(label), "dwarf cache, %s: rewritten and used again", bad[i].what);
		CHECK(opened_from_cache(z) == 1, label);
	}
	/* random bytes of the size of a real entry */
	if (stat(cache_entry, &st) == 0) {
		sh("head -c %lld /dev/urandom > '%s'", (long long)st.st_size, cache_entry);
		CHECK(opened_from_cache(z) == 0 && opened_from_cache(z) == 1,
		      "dwarf cache: random bytes are not used, and replaced");
	}
	/* an entry others may write is not trusted */
	chmod(cache_entry, 0666);
	CHECK(opened_from_cache(z) == 0, "dwarf cache: an entry writable by others is not used");
	CHECK(stat(cache_entry, &st) == 0 && (st.st_mode & 0777) == 0600 && opened_from_cache(z) == 1,
	      "dwarf cache: ... and is replaced by one of mode 0600");
	/* a changed source file (another mtime) makes the entry stale */
	ts[0].tv_sec = ts[1].tv_sec = time(NULL) - 3600;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	utimensat(AT_FDCWD, z, ts, 0);
	CHECK(opened_from_cache(z) == 0 && opened_from_cache(z) == 1,
	      "dwarf cache: an entry of an older copy of the file is stale, and replaced");

	/* STAX_NO_CACHE=1: neither read nor written */
	setenv("STAX_NO_CACHE", "1", 1);
	CHECK(opened_from_cache(z) == 0, "dwarf cache: STAX_NO_CACHE=1 does not read the entry");
	unlink(cache_entry);
	compare(z, full, "outer", "dwarf cache: STAX_NO_CACHE=1: chains as addr2line", NULL);
	CHECK(!file_exists(cache_entry), "dwarf cache: STAX_NO_CACHE=1 writes no entry");
	setenv("STAX_NO_CACHE", "0", 1);
	opened_from_cache(z);
	CHECK(file_exists(cache_entry), "dwarf cache: STAX_NO_CACHE=0 keeps the cache on");
	unsetenv("STAX_NO_CACHE");
	unsetenv("XDG_CACHE_HOME");
}

int main(void)
{
	char dir[] = "/tmp/stax-test-dwarf-XXXXXX", path[4200], full[4200];
	size_t seen = 0;
	FILE *f;

	if (!mkdtemp(dir)) {
		SKIP("dwarf fixtures", "mkdtemp failed");
		TEST_DONE();
	}
	snprintf(path, sizeof(path), "%s/inl.c", dir);
	f = fopen(path, "w");
	if (!f || fputs(inl_src, f) < 0 || fclose(f)) {
		SKIP("dwarf fixtures", "cannot write the fixture");
		TEST_DONE();
	}
	if (sh("cd %s && gcc -O2 -g -Wl,--build-id -o inl inl.c && cp inl inl_split && "
	       "objcopy --only-keep-debug inl_split inl_split.debug && strip --strip-all inl_split && "
	       "objcopy --add-gnu-debuglink=inl_split.debug inl_split", dir)) {
		SKIP("dwarf fixtures", "gcc/objcopy failed");
		TEST_DONE();
	}
	snprintf(full, sizeof(full), "%s/inl", dir);
	compare(full, full, "outer", "inline chains and lines of outer() match addr2line -i", &seen);
	CHECK(seen > 4, "outer() has addresses inside inlined leaf() and mid()");
	compare(full, full, "main", "inline chains and lines of main() match addr2line -i", NULL);
	snprintf(path, sizeof(path), "%s/inl_split", dir);
	compare(path, full, "outer", "split debug (debuglink): same chains as addr2line", NULL);
	test_cache(dir, full);
	sh("rm -rf '%s'", dir);
	TEST_DONE();
}
