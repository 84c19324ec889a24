/* kcore.c - the running kernel's code from /proc/kcore. */
#include "lib/kcore.h"
#include "lib/err.h"
#include "lib/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The headers are read whole: kcore has one segment per memory range
 * (tens to a few hundred; e_phnum is 16 bits, PN_XNUM is not used). */
#define KCORE_HDR_MAX ((size_t)1 << 20)

int kcore_offset(const uint8_t *hdr, size_t size, uint64_t addr, uint64_t len, uint64_t *off,
		 struct err *err)
{
	const uint8_t *end = hdr + size;
	Elf64_Ehdr eh;
	size_t i;

	if (size < sizeof(eh))
		return err_set(err, -EINVAL, "%zu bytes, shorter than an ELF header", size);
	memcpy(&eh, hdr, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_type != ET_CORE)
		return err_set(err, -EINVAL, "not a 64-bit little-endian ELF core file");
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == PN_XNUM)
		return err_set(err, -EINVAL, "program headers of %u bytes, %u of them", eh.e_phentsize,
			       eh.e_phnum);
	if (eh.e_phoff > size || (size_t)(end - (hdr + eh.e_phoff)) / sizeof(Elf64_Phdr) < eh.e_phnum)
		return err_set(err, -EINVAL, "program headers at offset %llu run past byte %zu",
			       (unsigned long long)eh.e_phoff, size);
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, hdr + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr)
			continue;
		/* the whole range in the segment's file bytes, no overflow */
		if (addr - ph.p_vaddr > ph.p_filesz || len > ph.p_filesz - (addr - ph.p_vaddr))
			continue;
		if (ph.p_offset > UINT64_MAX - (addr - ph.p_vaddr))
			continue;
		*off = ph.p_offset + (addr - ph.p_vaddr);
		return 0;
	}
	return err_set(err, -ENOENT, "no segment holds 0x%llx..0x%llx", (unsigned long long)addr,
		       (unsigned long long)(addr + len));
}

int kcore_read(const char *path, uint64_t addr, void *buf, size_t len, struct err *err)
{
	uint8_t *hdr = NULL;
	size_t got = 0, want = sizeof(Elf64_Ehdr);
	uint64_t off = 0;
	ssize_t n;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		return err_set(err, ret, "cannot open %s: %s%s", path, strerror(-ret),
			       ret == -EACCES || ret == -EPERM ? " (the kernel's code is readable by root only)" : "");
	}
	/* the ELF header, then as far as its program headers reach */
	for (;;) {
		hdr = xrealloc(hdr, want);
		while (got < want && (n = pread(fd, hdr + got, want - got, (off_t)got)) > 0)
			got += (size_t)n;
		if (got < want)
			break;
		if (want == sizeof(Elf64_Ehdr)) {
			Elf64_Ehdr eh;
			memcpy(&eh, hdr, sizeof(eh));
			if (eh.e_phoff <= KCORE_HDR_MAX &&
			    eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > want) {
				want = (size_t)(eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr));
				continue;
			}
		}
		break;
	}
	ret = kcore_offset(hdr, got, addr, len, &off, err);
	free(hdr);
	if (ret) {
		err_append(err, " (%s)", path);
		close(fd);
		return ret;
	}
	for (got = 0; got < len && (n = pread(fd, (uint8_t *)buf + got, len - got, (off_t)(off + got))) > 0;)
		got += (size_t)n;
	close(fd);
	if (got < len)
		return err_set(err, -EIO, "cannot read %zu bytes at 0x%llx from %s", len, (unsigned long long)addr,
			       path);
	return 0;
}
