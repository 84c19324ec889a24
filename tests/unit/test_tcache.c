/* test_tcache.c - the unwind table cache (src/unwind/tcache.c).
 *
 * Real ELF files (libc, ld.so, this test program): a table read back
 * from the cache must be the table compiled from the file, row for row,
 * rule for rule, SLOW FDE for SLOW FDE, and answer every lookup the
 * same. A damaged, truncated or foreign entry, or a symbolic link put
 * where an entry goes, gives a compiled table (and a rewritten entry),
 * never a crash or a link followed. STAX_NO_CACHE=1 reads and writes
 * nothing. XDG_CACHE_HOME is a temporary directory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test.h"
#include "cachetest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "unwind/table.h"
#include "unwind/tcache.h"

static char dir[256], udir[320];

static bool entry_path(char *out, size_t n) { return cache_entry_path(udir, out, n); }
static void clear_cache(void) { cache_clear(udir); }

static bool same_tables(const struct utable *a, const struct utable *b)
{
	if (a->nrows != b->nrows || a->base != b->base || a->nrules != b->nrules ||
	    a->nslow != b->nslow || a->blob_len != b->blob_len || a->nload != b->nload ||
	    a->nroots != b->nroots || a->entry != b->entry || a->nfde != b->nfde ||
	    a->nslow_rows != b->nslow_rows || a->nsignal_tramp != b->nsignal_tramp ||
	    a->err != b->err || a->npages != b->npages ||
	    a->build_id_size != b->build_id_size ||
	    memcmp(a->build_id, b->build_id, a->build_id_size) ||
	    memcmp(a->nfde_sec, b->nfde_sec, sizeof(a->nfde_sec)) ||
	    strcmp(a->path, b->path) || (!a->source) != (!b->source) ||
	    (a->source && strcmp(a->source, b->source)))
		return false;
	if (memcmp(a->addr, b->addr, a->nrows * sizeof(*a->addr)) ||
	    memcmp(a->rule, b->rule, a->nrows * sizeof(*a->rule)) ||
	    memcmp(a->page, b->page, (a->npages + 1) * sizeof(*a->page)) ||
	    memcmp(a->rules, b->rules, a->nrules * sizeof(*a->rules)) ||
	    (a->blob_len && memcmp(a->blob, b->blob, a->blob_len)))
		return false;
	for (int i = 0; i < a->nload; i++)
		if (a->load[i].vaddr != b->load[i].vaddr || a->load[i].off != b->load[i].off ||
		    a->load[i].filesz != b->load[i].filesz || a->load[i].exec != b->load[i].exec)
			return false;
	for (int i = 0; i < a->nroots; i++)
		if (a->roots[i].start != b->roots[i].start || a->roots[i].end != b->roots[i].end ||
		    a->roots[i].kind != b->roots[i].kind)
			return false;
	for (uint32_t i = 0; i < a->nslow; i++) {
		const struct uslow *x = &a->slow[i], *y = &b->slow[i];
		if (x->pc_begin != y->pc_begin || x->pc_end != y->pc_end ||
		    x->fde_insn_vaddr != y->fde_insn_vaddr || x->cie_insn != y->cie_insn ||
		    x->cie_len != y->cie_len || x->fde_insn != y->fde_insn || x->fde_len != y->fde_len ||
		    x->cie.code_align != y->cie.code_align || x->cie.data_align != y->cie.data_align ||
		    x->cie.ra_reg != y->cie.ra_reg || x->cie.fde_enc != y->cie.fde_enc ||
		    x->cie.addr_size != y->cie.addr_size || x->cie.signal != y->cie.signal)
			return false;
	}
	/* every lookup: each row's start, end and a byte inside */
	for (uint32_t i = 0; i < a->nrows; i++) {
		uint64_t at = a->base + a->addr[i];
		for (int d = -1; d <= 1; d++)
			if (utable_find(a, at + d) != &a->rules[0] + (utable_find(b, at + d) - &b->rules[0]))
				return false;
	}
	return true;
}

static void test_file(const char *path, const char *what)
{
	char name[128], entry[512];

	clear_cache();
	struct utable *a = utable_load(path);
	if (!a->nrows) {
		SKIP(what, "no CFI in the file");
		utable_free(a);
		return;
	}
	snprintf(name, sizeof(name), "%s: the first load compiles and writes an entry", what);
	CHECK(!a->cached && entry_path(entry, sizeof(entry)), name);
	struct utable *b = utable_load(path);
	snprintf(name, sizeof(name), "%s: the second load reads the entry", what);
	CHECK(b->cached, name);
	snprintf(name, sizeof(name), "%s: the cached table is the compiled one (%u rows, %u SLOW FDEs)",
		 what, a->nrows, a->nslow);
	CHECK(same_tables(a, b), name);
	utable_free(b);

	/* damage: one byte of the payload, then the header, then a cut */
	struct stat st;
	if (stat(entry, &st) == 0) {
		off_t at[3] = { st.st_size / 2, 12, 0 };
		const char *how[3] = { "a changed payload byte", "another compiler version",
				       "a truncated file" };
		for (int k = 0; k < 3; k++) {
			int fd = open(entry, O_RDWR);
			if (fd < 0)
				break;
			if (k < 2) {
				uint8_t c;
				if (pread(fd, &c, 1, at[k]) == 1) {
					c ^= 0x40;
					if (pwrite(fd, &c, 1, at[k]) != 1)
						printf("# pwrite failed\n");
				}
			} else if (ftruncate(fd, st.st_size - 9)) {
				printf("# ftruncate failed\n");
			}
			close(fd);
			b = utable_load(path);
			snprintf(name, sizeof(name), "%s: %s gives a compiled table, the same", what, how[k]);
			CHECK(!b->cached && same_tables(a, b), name);
			utable_free(b);
			b = utable_load(path);
			snprintf(name, sizeof(name), "%s: after %s the entry is written anew", what, how[k]);
			CHECK(b->cached && same_tables(a, b), name);
			utable_free(b);
		}
	}
	utable_free(a);
}

/* Every cut of a valid payload, and a byte changed at every offset, is
 * refused or parsed: never read out of bounds (ASan in make
 * check-sanitize), never a table whose lookups leave it. */
static void test_parse_damage(const char *path)
{
	struct utable *a = utable_load(path);
	struct buf b = BUF_INIT;
	int refused = 0, cuts = 0, odd = 0;

	if (!a->nrows) {
		SKIP("payload cuts", "no CFI");
		utable_free(a);
		return;
	}
	tcache_image(a, &b);
	for (size_t n = 0; n < b.len; n += 1 + n / 64) {
		struct utable *t = xcalloc(1, sizeof(*t));
		cuts++;
		if (tcache_parse(b.data, n, t) < 0)
			refused++;
		utable_free(t);
	}
	CHECK(refused == cuts, "payload cut short anywhere: refused");
	for (size_t i = 0; i < b.len; i += 1 + i / 32) {
		uint8_t *p = (uint8_t *)b.data;
		p[i] ^= 0xa5;
		struct utable *t = xcalloc(1, sizeof(*t));
		if (tcache_parse(b.data, b.len, t) == 0) {
			/* accepted: lookups stay within the table */
			for (uint32_t r = 0; r < t->nrows; r += 1 + t->nrows / 50) {
				const struct urule *u = utable_find(t, t->base + t->addr[r]);
				if (u < t->rules || u >= t->rules + t->nrules)
					odd++;
			}
		}
		utable_free(t);
		p[i] ^= 0xa5;
	}
	CHECK(odd == 0, "payload with a changed byte: refused, or lookups stay in the table");
	struct utable *t = xcalloc(1, sizeof(*t));
	int r = tcache_parse(b.data, b.len, t);
	/* the build-id is the key's, not the payload's */
	memcpy(t->build_id, a->build_id, sizeof(t->build_id));
	t->build_id_size = a->build_id_size;
	CHECK(r == 0 && same_tables(a, t),
	      "the payload parses back into the same table");
	utable_free(t);
	buf_release(&b);
	utable_free(a);
}

static void test_link(const char *path)
{
	char entry[512], target[300];

	clear_cache();
	utable_free(utable_load(path));
	if (!entry_path(entry, sizeof(entry))) {
		SKIP("a symbolic link at the entry", "no entry was written");
		return;
	}
	/* a link to a valid entry elsewhere: not followed, not changed */
	snprintf(target, sizeof(target), "%s/elsewhere", dir);
	if (rename(entry, target) || symlink(target, entry)) {
		SKIP("a symbolic link at the entry", "cannot make the link");
		return;
	}
	struct stat before, after, at;
	stat(target, &before);
	struct utable *t = utable_load(path);
	CHECK(!t->cached, "a symbolic link at the entry is not followed");
	utable_free(t);
	stat(target, &after);
	CHECK(lstat(entry, &at) == 0 && S_ISREG(at.st_mode) && before.st_ino == after.st_ino &&
	      before.st_mtim.tv_nsec == after.st_mtim.tv_nsec && before.st_size == after.st_size,
	      "the link is replaced by an entry of its own; its target is left as it was");
}

static void test_no_cache(const char *path)
{
	char entry[512];
	clear_cache();
	setenv("STAX_NO_CACHE", "1", 1);
	utable_free(utable_load(path));
	CHECK(!entry_path(entry, sizeof(entry)), "STAX_NO_CACHE=1 writes no entry");
	unsetenv("STAX_NO_CACHE");
	utable_free(utable_load(path));
	setenv("STAX_NO_CACHE", "1", 1);
	struct utable *t = utable_load(path);
	CHECK(!t->cached, "STAX_NO_CACHE=1 reads no entry");
	utable_free(t);
	unsetenv("STAX_NO_CACHE");
}

/* An entry of 600 MiB (sparse: no disk), used two hours ago: a trim
 * of the directory (to 512 MiB) removes it. */
static void plant_big(const char *name, char *path, size_t n)
{
	struct timespec old[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", udir);
	if (system(cmd) != 0)
		printf("# %s failed\n", cmd);
	snprintf(path, n, "%s/%s", udir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0) {
		if (ftruncate(fd, 600ll << 20))
			printf("# ftruncate failed\n");
		futimens(fd, old);
		close(fd);
	}
}

/* The directory is trimmed at the first write of a process, not at
 * every write: a trim reads every entry. */
static void test_trim(const char *path, bool first)
{
	char big[512];
	struct stat st;
	plant_big(first ? "0a0a0a0a" : "0b0b0b0b", big, sizeof(big));
	utable_free(utable_load(path));
	if (first)
		CHECK(stat(big, &st) != 0, "the first entry a process writes trims the directory"
		      " (an old entry past the 512 MiB limit is removed)");
	else
		CHECK(stat(big, &st) == 0, "a later entry does not trim it again (the old entry"
		      " past the limit stays)");
	unlink(big);
}

int main(void)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;

	snprintf(dir, sizeof(dir), "/tmp/stax-tcache.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("not ok - tcache: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(udir, sizeof(udir), "%s/stax/unwind", dir);
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("STAX_NO_CACHE");

	test_trim("/lib64/ld-linux-x86-64.so.2", true);
	test_file("/lib/x86_64-linux-gnu/libc.so.6", "libc");
	test_file("/lib64/ld-linux-x86-64.so.2", "ld.so");
	test_file(self, "test_tcache itself");
	test_parse_damage("/lib64/ld-linux-x86-64.so.2");
	test_link(self);
	test_no_cache(self);
	clear_cache();
	test_trim("/lib64/ld-linux-x86-64.so.2", false);

	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# %s failed\n", cmd);
	TEST_DONE();
}
