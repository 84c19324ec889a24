/* jitmap.c - "JIT" code that describes itself the way JITs do.
 *
 * Copies two tiny machine-code loops into anonymous executable memory and
 * runs them in turn (about 1/2 of the time each):
 *   jit_map_loop    named only in /tmp/perf-PID.map ("START SIZE NAME")
 *   jit_dump_loop   named only in jit-PID.dump (a jitdump JIT_CODE_LOAD
 *                   record), found through the file's executable marker
 *                   mapping, as perf's jitdump convention has it
 * Expected stacks: main;run_jitted;jit_map_loop and ...;jit_dump_loop.
 * usage: jitmap [SECONDS] [--open-map | --delete-maps | --no-maps]
 *        --open-map makes the perf map writable by everyone (a profiler
 *        must then refuse to read it); --delete-maps removes the perf map
 *        and the jitdump before exiting, as runtimes do at exit (a
 *        profiler must read them while they exist); --no-maps writes
 *        neither (JIT code nothing names, as a sanitizer runtime's)
 * x86-64 and aarch64 machine code (the loops are leaves: on aarch64 their
 * caller run_jitted is in the link register only, docs/UNWINDING.md A9).
 * Build: tests/e2e/jit.sh builds it; make arm64 builds jitmap-fp and
 * jitmap-nofp for the arm64 guest (tests/arm64/runtimes.sh).
 */
#define _GNU_SOURCE
#include "common.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__aarch64__)
/* ldr x1, 1f; 0: subs x1, x1, #1; b.ne 0b; ret; 1: .quad imm64 (a leaf:
 * no frame, the return address stays in x30) */
static const unsigned char loop_code[] = {
	0x81, 0x00, 0x00, 0x58, /* ldr x1, .+16 */
	0x21, 0x04, 0x00, 0xf1, /* subs x1, x1, #1 */
	0xe1, 0xff, 0xff, 0x54, /* b.ne .-4 */
	0xc0, 0x03, 0x5f, 0xd6, /* ret */
	0, 0, 0, 0, 0, 0, 0, 0, /* imm64 patched below */
};
#define LOOP_IMM 16
#define JIT_MACHINE EM_AARCH64
#else
/* mov rcx, imm64; 1: dec rcx; jnz 1b; ret */
static const unsigned char loop_code[] = {
	0x48, 0xb9, 0, 0, 0, 0, 0, 0, 0, 0, /* imm64 patched below */
	0x48, 0xff, 0xc9,
	0x75, 0xfb,
	0xc3,
};
#define LOOP_IMM 2
#define JIT_MACHINE EM_X86_64
#endif

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* jitdump (perf's tools/perf/util/jitdump.h): header, then records. */
struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};
struct jd_load {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

static void write_jitdump(void *code, size_t size, const char *name)
{
	char path[64];
	struct jd_header h = { 0x4A695444, 1, sizeof(h), JIT_MACHINE, 0, (uint32_t)getpid(), now_ns(), 0 };
	struct jd_load r;
	int fd;
	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		return;
	memset(&r, 0, sizeof(r));
	r.id = 0;
	r.total_size = (uint32_t)(sizeof(r) + strlen(name) + 1 + size);
	r.timestamp = now_ns();
	r.pid = r.tid = (uint32_t)getpid();
	r.vma = r.code_addr = (uint64_t)(uintptr_t)code;
	r.code_size = size;
	if (write(fd, &h, sizeof(h)) < 0 || write(fd, &r, sizeof(r)) < 0 ||
	    write(fd, name, strlen(name) + 1) < 0 || write(fd, code, size) < 0)
		perror("jitdump");
	/* the marker: an executable mapping of the dump file */
	mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
}

NOINLINE void run_jitted(void (*fn)(void))
{
	fn();
	KEEP_FRAME();
}

int main(int argc, char **argv)
{
	double secs = arg_scale(argc, argv, 1, 1.0), end;
	uint64_t iters = 2000000;
	unsigned char *mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void (*a)(void), (*b)(void);
	char path[64];
	FILE *f;

	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(mem, loop_code, sizeof(loop_code));
	memcpy(mem + LOOP_IMM, &iters, 8);
	memcpy(mem + 4096, loop_code, sizeof(loop_code));
	memcpy(mem + 4096 + LOOP_IMM, &iters, 8);
	/* (aarch64: the instruction cache does not see the stores) */
	__builtin___clear_cache((char *)mem, (char *)mem + 8192);
	a = (void (*)(void))(void *)mem;
	b = (void (*)(void))(void *)(mem + 4096);

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	if (argc > 2 && !strcmp(argv[2], "--no-maps")) {
		end = now() + secs;
		while (now() < end) {
			run_jitted(a);
			run_jitted(b);
		}
		printf("done\n");
		return 0;
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_map_loop\n", (unsigned long)(uintptr_t)mem, sizeof(loop_code));
	fclose(f);
	if (argc > 2 && !strcmp(argv[2], "--open-map"))
		chmod(path, 0666);
	write_jitdump(mem + 4096, sizeof(loop_code), "jit_dump_loop");

	end = now() + secs;
	while (now() < end) {
		run_jitted(a);
		run_jitted(b);
	}
	if (argc > 2 && !strcmp(argv[2], "--delete-maps")) {
		unlink(path);
		snprintf(path, sizeof(path), "/tmp/jit-%d.dump", getpid());
		unlink(path);
	}
	printf("done\n");
	return 0;
}
