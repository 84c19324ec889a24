/* test_elfguard.c - an ELF file cut short while stax reads it through
 * libelf's mapping (lib/elfguard.h): the reads past the new end see
 * zeros instead of killing the process with SIGBUS, and the file is
 * known as changed; a SIGBUS anywhere else still ends the process.
 *
 * The ELF file is a copy of this test program (built with -g: its
 * .symtab and DWARF lie far past the first 16 KiB). Each case runs in a
 * child, so a SIGBUS shows as a failed check, not a dead test.
 */
#include "test.h"
#include "lib/elfguard.h"
#include "lib/elffile.h"
#include "symbol/symbol-private.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64], copy[96];

static int copy_self(void)
{
	char buf[65536];
	ssize_t n;
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), out;
	if (in < 0)
		return -1;
	out = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	close(in);
	close(out);
	return n < 0 ? -1 : 0;
}

/* Child status of fn() run in a child: the exit code, or 128 + signal. */
static int in_child(int (*fn)(void))
{
	int st;
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

/* Every byte of every section, summed (touches every page of them). */
static unsigned long touch_all(Elf *e)
{
	Elf_Scn *scn = NULL;
	unsigned long sum = 0;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d = elf_rawdata(scn, NULL);
		GElf_Shdr sh;
		if (!d || !d->d_buf || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		for (size_t i = 0; i < d->d_size; i++)
			sum += ((const unsigned char *)d->d_buf)[i];
	}
	return sum;
}

/* 0: cut short after opening, every section read, the file known as
 * changed; 2: not known as changed; 3: could not set up */
static int cut_then_read(void)
{
	int fd = open(copy, O_RDONLY | O_CLOEXEC);
	Elf *e;
	bool changed;
	elf_version(EV_CURRENT);
	e = fd >= 0 ? elfguard_begin(fd) : NULL;
	if (!e || elf_kind(e) != ELF_K_ELF || elfguard_changed(e))
		return 3;
	if (truncate(copy, 16384))
		return 3;
	touch_all(e);
	changed = elfguard_end(e);
	close(fd);
	return changed ? 0 : 2;
}

/* the same through the symbol loader's open: 0 when the symbols read
 * and the file is known as changed */
static int cut_then_symbols(void)
{
	struct sym_table t = { 0 };
	struct sym_arena a = { 0 };
	int fd;
	Elf *e = elf_file_open(copy, &fd);
	bool changed;
	if (!e)
		return 3;
	if (truncate(copy, 16384))
		return 3;
	sym_elf_add_symbols(e, SHT_SYMTAB, &t, &a);
	changed = sym_elf_changed(e);
	elf_file_close(e, fd);
	sym_table_release(&t);
	sym_arena_release(&a);
	return changed ? 0 : 2;
}

/* a file read whole: not changed */
static int read_whole(void)
{
	int fd = open(copy, O_RDONLY | O_CLOEXEC);
	Elf *e;
	elf_version(EV_CURRENT);
	e = fd >= 0 ? elfguard_begin(fd) : NULL;
	if (!e)
		return 3;
	touch_all(e);
	return elfguard_end(e) ? 2 : 0;
}

/* a SIGBUS in a mapping that is not guarded, with the handler in place:
 * must still kill */
static int unguarded_fault(void)
{
	int fd = open(copy, O_RDONLY | O_CLOEXEC);
	Elf *e;
	volatile const char *m;
	elf_version(EV_CURRENT);
	e = fd >= 0 ? elfguard_begin(fd) : NULL; /* installs the handler */
	if (!e)
		return 3;
	m = mmap(NULL, 65536, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED || truncate(copy, 4096))
		return 3;
	return m[40000] == 0 ? 0 : 1; /* past the end: SIGBUS */
}

static int sent_sigbus(void)
{
	int fd = open(copy, O_RDONLY | O_CLOEXEC);
	elf_version(EV_CURRENT);
	if (fd < 0 || !elfguard_begin(fd))
		return 3;
	kill(getpid(), SIGBUS);
	return 0;
}

int main(void)
{
	int r = 0;
	snprintf(dir, sizeof(dir), "/tmp/stax-test-elfguard.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(copy, sizeof(copy), "%s/copy", dir);

	CHECK(copy_self() == 0 && (r = in_child(read_whole)) == 0,
	      "a file read whole, unchanged: not known as changed");
	CHECK(copy_self() == 0 && (r = in_child(cut_then_read)) == 0,
	      "cut to 16 KiB after elfguard_begin: every section read (zeros past the end), no SIGBUS, known as changed");
	if (r)
		printf("# child status %d (135: SIGBUS)\n", r);
	CHECK(copy_self() == 0 && (r = in_child(cut_then_symbols)) == 0,
	      "elf_file_open, cut to 16 KiB, its .symtab read: no SIGBUS, sym_elf_changed");
	if (r)
		printf("# child status %d (135: SIGBUS)\n", r);
	CHECK(copy_self() == 0 && in_child(unguarded_fault) == 128 + SIGBUS,
	      "a fault in a mapping not guarded still ends the process with SIGBUS");
	CHECK(copy_self() == 0 && in_child(sent_sigbus) == 128 + SIGBUS,
	      "a SIGBUS sent by kill() still ends the process");
	unlink(copy);
	rmdir(dir);
	TEST_DONE();
}
