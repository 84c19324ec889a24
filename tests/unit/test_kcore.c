/* test_kcore.c - lib/kcore.c: the file offset of a kernel address in an
 * ELF core file like /proc/kcore, and reading it, on files made here (two
 * PT_LOAD segments and a PT_NOTE; this machine's kernel may have no
 * /proc/kcore), and every malformed header refused with a reason. */
#include "lib/kcore.h"
#include "lib/err.h"
#include "test.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define TEXT 0xffffffff81000000ull
#define DATA 0xffff888000000000ull

struct core {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[3];
	uint8_t text[256];
	uint8_t data[64];
};

static void make(struct core *c)
{
	size_t i;
	memset(c, 0, sizeof(*c));
	memcpy(c->eh.e_ident, ELFMAG, SELFMAG);
	c->eh.e_ident[EI_CLASS] = ELFCLASS64;
	c->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	c->eh.e_ident[EI_VERSION] = EV_CURRENT;
	c->eh.e_type = ET_CORE;
	c->eh.e_machine = EM_X86_64;
	c->eh.e_phoff = offsetof(struct core, ph);
	c->eh.e_phentsize = sizeof(Elf64_Phdr);
	c->eh.e_phnum = 3;
	c->ph[0].p_type = PT_NOTE;
	c->ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = offsetof(struct core, text), .p_vaddr = TEXT,
				 .p_filesz = sizeof(c->text), .p_memsz = sizeof(c->text) };
	c->ph[2] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = offsetof(struct core, data), .p_vaddr = DATA,
				 .p_filesz = sizeof(c->data), .p_memsz = sizeof(c->data) };
	for (i = 0; i < sizeof(c->text); i++)
		c->text[i] = (uint8_t)i;
	memset(c->data, 0xab, sizeof(c->data));
}

static int offset(const struct core *c, size_t size, uint64_t addr, uint64_t len, uint64_t *off, struct err *e)
{
	return kcore_offset((const uint8_t *)c, size, addr, len, off, e);
}

int main(void)
{
	struct core c;
	struct err e;
	uint64_t off = 0;
	char path[] = "/tmp/stax-test-kcore.XXXXXX";
	uint8_t buf[16];
	int fd, rc;

	make(&c);
	CHECK(!offset(&c, sizeof(c), TEXT + 16, 16, &off, &e) && off == offsetof(struct core, text) + 16,
	      "an address in the text segment: its file offset");
	CHECK(!offset(&c, sizeof(c), DATA, 64, &off, &e) && off == offsetof(struct core, data),
	      "the whole second segment");
	CHECK(offset(&c, sizeof(c), TEXT + 250, 16, &off, &e) == -ENOENT && strstr(e.msg, "no segment holds"),
	      "a range running past its segment: -ENOENT, no segment holds it");
	CHECK(offset(&c, sizeof(c), TEXT - 1, 2, &off, &e) == -ENOENT, "a range starting below a segment");
	CHECK(offset(&c, sizeof(c), TEXT + 8, UINT64_MAX, &off, &e) == -ENOENT, "a length that overflows");
	CHECK(offset(&c, sizeof(c.eh) - 1, TEXT, 1, &off, &e) == -EINVAL && strstr(e.msg, "shorter than"),
	      "bytes shorter than an ELF header");
	CHECK(offset(&c, sizeof(c.eh) + sizeof(Elf64_Phdr), TEXT, 1, &off, &e) == -EINVAL &&
	      strstr(e.msg, "run past"), "program headers past the bytes given");
	make(&c);
	c.eh.e_phoff = UINT64_MAX - 8;
	CHECK(offset(&c, sizeof(c), TEXT, 1, &off, &e) == -EINVAL, "e_phoff near the end of the address space");
	make(&c);
	c.eh.e_type = ET_EXEC;
	CHECK(offset(&c, sizeof(c), TEXT, 1, &off, &e) == -EINVAL && strstr(e.msg, "core"), "not a core file");
	make(&c);
	c.eh.e_ident[EI_CLASS] = ELFCLASS32;
	CHECK(offset(&c, sizeof(c), TEXT, 1, &off, &e) == -EINVAL, "a 32-bit file");
	make(&c);
	c.eh.e_phentsize = 32;
	CHECK(offset(&c, sizeof(c), TEXT, 1, &off, &e) == -EINVAL && strstr(e.msg, "program headers of 32"),
	      "program headers of another size");
	make(&c);
	c.ph[1].p_offset = UINT64_MAX - 4;
	CHECK(offset(&c, sizeof(c), TEXT + 16, 1, &off, &e) == -ENOENT, "a segment offset that overflows");

	/* kcore_read on a file */
	make(&c);
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, &c, sizeof(c)) == (ssize_t)sizeof(c), "the core file is written");
	close(fd);
	memset(buf, 0, sizeof(buf));
	rc = kcore_read(path, TEXT + 100, buf, sizeof(buf), &e);
	CHECK(!rc && buf[0] == 100 && buf[15] == 115, "kcore_read: the bytes at the address");
	rc = kcore_read(path, DATA + 60, buf, 8, &e);
	CHECK(rc == -ENOENT && strstr(e.msg, path), "kcore_read past a segment: -ENOENT naming the file");
	c.ph[2].p_filesz = 128; /* says more than the file holds */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, &c, sizeof(c)) == (ssize_t)sizeof(c), "a core file cut short is written");
	close(fd);
	rc = kcore_read(path, DATA + 60, buf, 8, &e);
	CHECK(rc == -EIO && strstr(e.msg, "cannot read"), "kcore_read of bytes the file does not hold: -EIO");
	unlink(path);
	rc = kcore_read(path, TEXT, buf, 8, &e);
	CHECK(rc == -ENOENT && strstr(e.msg, "cannot open"), "kcore_read of a missing file: cannot open it");
	TEST_DONE();
}
