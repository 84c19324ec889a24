/* test_symcache.c - the symbol table cache (src/symbol/symcache.c).
 *
 * A real ELF file: a copy of this test program, grown with zeros past
 * SYMCACHE_MIN_FILE (bytes after the section headers change no ELF
 * reader's view). Every address of its code must get the same answer
 * (name, offset, function address) from a table built from the file
 * with no cache, one built and written to the cache, and one read back
 * from it. An entry whose names were changed and sealed again gives the
 * changed name (so the entry is what was read); a damaged, truncated or
 * foreign entry gives the built table and is written anew, never a
 * crash. The payload: cut anywhere, refused; a byte changed anywhere,
 * refused or a table whose every lookup stays in it. XDG_CACHE_HOME is
 * a temporary directory.
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
#include <unistd.h>

#include "lib/buf.h"
#include "lib/util.h"
#include "symbol/symbol.h"
#include "symbol/symcache.h"

static char dir[256], sdir[320], big[320];
static uint8_t bid[64];
static size_t bid_size;
static uint64_t big_size, code_size; /* the copy's, and the test program's */

static bool entry_path(char *out, size_t n) { return cache_entry_path(sdir, out, n); }
static void clear_cache(void) { cache_clear(sdir); }

/* What a session answers at every 4th byte of the program, as one string
 * per address joined (names, offsets, function addresses); and the
 * module's source and symbol count. */
struct answers {
	struct buf text;
	size_t named;
	const char *source;
	size_t nsyms;
};

static void answers(struct answers *a)
{
	struct sym_session *s = sym_session_new();
	struct module_ref ref = { big, bid, bid_size, 0, big_size, 0 };
	struct sym_result r;

	sym_set_lines(s, false);
	memset(a, 0, sizeof(*a));
	for (uint64_t at = 0; at < code_size; at += 4) {
		sym_lookup(s, &ref, at, &r);
		if (r.name)
			a->named++;
		buf_printf(&a->text, "%s+%llx %llx %d\n", r.name ? r.name : "-",
			   (unsigned long long)r.sym_offset, (unsigned long long)r.func_vaddr,
			   r.has_vaddr);
	}
	buf_add_u8(&a->text, 0);
	sym_module_info(s, &ref, &a->source, &a->nsyms);
	a->source = xstrdup(a->source ? a->source : "?");
	sym_session_free(s);
}

static bool same(const struct answers *a, const struct answers *b)
{
	return a->text.len == b->text.len && !memcmp(a->text.data, b->text.data, a->text.len) &&
	       !strcmp(a->source, b->source) && a->nsyms == b->nsyms;
}

static void release(struct answers *a)
{
	buf_release(&a->text);
	free((char *)a->source);
}

/* Change the entry's first name "main" to "mXin" and seal it again. */
static bool rename_main(const char *entry)
{
	int fd = open(entry, O_RDWR);
	struct stat st;
	bool done = false;
	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	uint8_t *d = xmalloc((size_t)st.st_size);
	if (pread(fd, d, (size_t)st.st_size, 0) == st.st_size) {
		for (off_t i = CACHE_FILE_HEADER; i + 5 <= st.st_size; i++) {
			if (d[i - 1] == 0 && !memcmp(d + i, "main", 5)) {
				d[i + 1] = 'X';
				done = true;
				break;
			}
		}
		struct cache_key k;
		symcache_seal(d, (size_t)st.st_size, &k);
		done = done && pwrite(fd, d, (size_t)st.st_size, 0) == st.st_size;
	}
	free(d);
	close(fd);
	return done;
}

static void test_tables(void)
{
	struct answers plain, first, cached, again;
	char entry[512], name[200];

	setenv("STAX_NO_CACHE", "1", 1);
	answers(&plain);
	unsetenv("STAX_NO_CACHE");
	snprintf(name, sizeof(name), "the file's symbols are from its .symtab (%s, %zu symbols,"
		 " %zu of %llu addresses named)", plain.source, plain.nsyms, plain.named,
		 (unsigned long long)code_size / 4);
	CHECK(!strcmp(plain.source, "symtab") && plain.nsyms > 100 && plain.named > 1000, name);
	CHECK(!entry_path(entry, sizeof(entry)), "STAX_NO_CACHE=1 writes no entry");

	clear_cache();
	answers(&first);
	CHECK(entry_path(entry, sizeof(entry)), "the first session builds the table and writes an entry");
	CHECK(same(&plain, &first), "the table built with the cache on answers as without it");
	answers(&cached);
	CHECK(same(&plain, &cached), "the table read from the entry answers every address the same");

	/* the entry is what the second session read */
	CHECK(rename_main(entry), "the entry's name of main changed and sealed again");
	answers(&again);
	CHECK(strstr((char *)again.text.data, "mXin+") && !strstr((char *)again.text.data, "\nmain+"),
	      "a session after that names main as the entry says (mXin)");
	release(&again);

	/* damage: a payload byte, the version, a cut */
	struct stat st;
	if (stat(entry, &st) == 0) {
		off_t at[3] = { st.st_size - 100, 12, 0 };
		const char *how[3] = { "a changed payload byte", "another version",
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
			answers(&again);
			snprintf(name, sizeof(name), "%s: the table is built again, the same", how[k]);
			CHECK(same(&plain, &again), name);
			release(&again);
			struct stat now;
			snprintf(name, sizeof(name), "%s: the entry is written anew", how[k]);
			CHECK(stat(entry, &now) == 0 && now.st_size == st.st_size &&
			      now.st_ino != st.st_ino, name);
			st = now;
		}
	}
	setenv("STAX_NO_CACHE", "1", 1);
	answers(&again);
	CHECK(same(&plain, &again), "STAX_NO_CACHE=1 reads no entry (built again, the same)");
	unsetenv("STAX_NO_CACHE");
	release(&again);
	release(&plain);
	release(&first);
	release(&cached);
}

/* Payload cuts and changed bytes: refused, or lookups stay in the table. */
static void test_parse_damage(const char *entry_file)
{
	struct stat st;
	int fd = open(entry_file, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		SKIP("payload damage", "no entry");
		if (fd >= 0)
			close(fd);
		return;
	}
	size_t n = (size_t)st.st_size - CACHE_FILE_HEADER;
	uint8_t *d = xmalloc((size_t)st.st_size);
	if (pread(fd, d, (size_t)st.st_size, 0) != st.st_size)
		n = 0;
	close(fd);
	uint8_t *p = d + CACHE_FILE_HEADER;
	int cuts = 0, refused = 0, odd = 0;

	struct sym_module m;
	memset(&m, 0, sizeof(m));
	CHECK(n && symcache_parse(p, n, &m) == 0 && m.table.nsyms > 100,
	      "the entry's payload parses");
	free(m.segs);
	free(m.fdes);
	sym_table_release(&m.table);
	for (size_t k = 0; k < n; k += 1 + k / 64) {
		memset(&m, 0, sizeof(m));
		cuts++;
		if (symcache_parse(p, k, &m) < 0)
			refused++;
		free(m.segs);
		free(m.fdes);
		sym_table_release(&m.table);
	}
	CHECK(cuts > 10 && refused == cuts, "payload cut short anywhere: refused");
	for (size_t i = 0; i < n; i += 1 + i / 16) {
		p[i] ^= 0xa5;
		memset(&m, 0, sizeof(m));
		if (symcache_parse(p, n, &m) == 0) {
			for (size_t s = 0; s < m.table.nsyms; s += 1 + m.table.nsyms / 50) {
				struct sym_entry *e = sym_table_find(&m.table, m.table.syms[s].start);
				if (e != &m.table.syms[s] || (const uint8_t *)e->name < p ||
				    (const uint8_t *)e->name + strlen(e->name) >= p + n)
					odd++;
			}
		}
		free(m.segs);
		free(m.fdes);
		sym_table_release(&m.table);
		p[i] ^= 0xa5;
	}
	CHECK(odd == 0, "payload with a changed byte: refused, or lookups and names stay in it");
	free(d);
}

int main(void)
{
	char self[4096], cmd[8400], entry[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;

	snprintf(dir, sizeof(dir), "/tmp/stax-symcache.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("not ok - symcache: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(sdir, sizeof(sdir), "%s/stax/symbols", dir);
	snprintf(big, sizeof(big), "%s/big", dir);
	setenv("XDG_CACHE_HOME", dir, 1);
	unsetenv("STAX_NO_CACHE");

	struct stat st;
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", self, big);
	if (system(cmd) != 0 || stat(big, &st)) {
		printf("not ok - symcache: %s failed\n", cmd);
		return 1;
	}
	big_size = code_size = (uint64_t)st.st_size;
	if (big_size < SYMCACHE_MIN_FILE && truncate(big, (big_size = SYMCACHE_MIN_FILE + 4096))) {
		printf("not ok - symcache: cannot grow %s: %s\n", big, strerror(errno));
		return 1;
	}
	bid_size = sym_read_build_id(big, bid, sizeof(bid));

	test_tables();
	if (entry_path(entry, sizeof(entry)))
		test_parse_damage(entry);
	else
		CHECK(0, "an entry is there for the payload checks");

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# %s failed\n", cmd);
	TEST_DONE();
}
