/* test_jit.c - JIT symbol parsers (perf map text, jitdump) and the file
 * ownership rule, through symbol.h. Inputs are written here: map lines
 * in the forms JITs write them, and a jitdump built record by record as
 * perf's jitdump.h lays it out. */
#include "lib/util.h"
#include "symbol/symbol.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool named(struct sym_jit *j, uint64_t addr, const char *want, uint64_t want_off)
{
	uint64_t off = 99;
	const char *n = sym_jit_find(j, addr, &off);
	return want ? n && !strcmp(n, want) && off == want_off : n == NULL;
}

static void test_perfmap(void)
{
	static const char map[] =
		"7f0000001000 40 LazyCompile:*hot /x.js:1:10\n"
		"0x7f0000002000 0x20 JS:~other\r\n"
		"not a line at all\n"
		"7f0000003000 10 \n"
		"7F0000004000 8 Stub:CEntry";
	struct sym_jit *j = sym_jit_new();
	struct err err = { 0 };
	int n = sym_jit_add_perfmap(j, map, sizeof(map) - 1, "perf-1.map", &err);
	CHECK(n == 3, "perf map: three functions read, bad lines skipped");
	CHECK(named(j, 0x7f0000001000, "LazyCompile:*hot /x.js:1:10", 0) &&
	      named(j, 0x7f000000103f, "LazyCompile:*hot /x.js:1:10", 0x3f) &&
	      named(j, 0x7f0000001040, NULL, 0), "perf map: name with spaces, [start, start+size)");
	CHECK(named(j, 0x7f0000002004, "JS:~other", 4), "perf map: 0x prefixes and CRLF");
	CHECK(named(j, 0x7f0000004007, "Stub:CEntry", 7), "perf map: upper-case hex, no final newline");
	CHECK(!strcmp(sym_jit_source(j), "perf-1.map"), "perf map: source named");
	sym_jit_free(j);
	j = sym_jit_new();
	CHECK(sym_jit_add_perfmap(j, "garbage\nmore", 12, "bad.map", &err) == -EINVAL &&
	      strstr(err.msg, "bad.map: line 1"), "perf map: nothing readable is an error with the line");
	sym_jit_free(j);
}

struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
} __attribute__((packed));
struct jd_load {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
} __attribute__((packed));
struct jd_move {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
} __attribute__((packed));

static size_t put_load(uint8_t *p, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	struct jd_load r = { 0, (uint32_t)(sizeof(r) + strlen(name) + 1 + size), 1, 7, 7, addr, addr, size, index };
	memcpy(p, &r, sizeof(r));
	memcpy(p + sizeof(r), name, strlen(name) + 1);
	memset(p + sizeof(r) + strlen(name) + 1, 0xc3, size);
	return r.total_size;
}

static void test_jitdump(void)
{
	uint8_t buf[4096];
	struct jd_header h = { 0x4A695444, 1, sizeof(h), 62, 0, 7, 0, 0 };
	struct jd_move mv = { 1, sizeof(mv), 2, 7, 7, 0x9000, 0x1000, 0x9000, 16, 1 };
	struct sym_jit *j = sym_jit_new();
	struct err err = { 0 };
	size_t n = 0, full;
	memcpy(buf, &h, sizeof(h));
	n = sizeof(h);
	n += put_load(buf + n, 0x1000, 16, 1, "jitted_a");
	n += put_load(buf + n, 0x2000, 32, 2, "jitted_b");
	memcpy(buf + n, &mv, sizeof(mv));
	n += sizeof(mv);
	full = n;
	n += put_load(buf + n, 0x3000, 8, 3, "torn");
	CHECK(sym_jit_add_jitdump(j, buf, n - 4, "jit-7.dump", &err) == 2,
	      "jitdump: two loads read, a torn last record ignored");
	CHECK(named(j, 0x1005, "jitted_a", 5) && named(j, 0x201f, "jitted_b", 0x1f) &&
	      named(j, 0x9003, "jitted_a", 3) && named(j, 0x3000, NULL, 0),
	      "jitdump: loads and a move name their code");
	sym_jit_free(j);
	(void)full;
	j = sym_jit_new();
	buf[0] ^= 0xff;
	CHECK(sym_jit_add_jitdump(j, buf, n, "x.dump", &err) == -EINVAL && strstr(err.msg, "not a jitdump"),
	      "jitdump: bad magic is an error");
	sym_jit_free(j);
}

static void test_ownership(void)
{
	char path[] = "/tmp/stax-test-jit-XXXXXX";
	struct err why = { 0 };
	void *data;
	size_t size;
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, "1000 10 f\n", 10) != 10) {
		SKIP("perf map ownership", "cannot write a temporary file");
		return;
	}
	close(fd);
	chmod(path, 0644);
	CHECK(sym_jit_read_file(path, &data, &size, &why) == 0 && size == 10,
	      "ownership: own file, 0644: read");
	free(data);
	chmod(path, 0666);
	CHECK(sym_jit_read_file(path, &data, &size, &why) == -EPERM && strstr(why.msg, "writable by other users"),
	      "ownership: writable by others: refused, and says why.msg");
	chmod(path, 0644);
	if (geteuid() == 0 && chown(path, 65534, 65534) == 0)
		CHECK(sym_jit_read_file(path, &data, &size, &why) == -EPERM && strstr(why.msg, "owned by uid 65534"),
		      "ownership: owned by another user: refused");
	else
		SKIP("ownership: owned by another user", "needs root to give the file away");
	CHECK(sym_jit_read_file("/tmp/stax-no-such-map", &data, &size, &why) == -ENOENT,
	      "ownership: a missing map is -ENOENT (no warning)");
	unlink(path);
}

int main(void)
{
	test_perfmap();
	test_jitdump();
	test_ownership();
	TEST_DONE();
}
