#include "lib/elffile.h"
#include "lib/elfguard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_init_once(void)
{
	elf_version(EV_CURRENT);
}

void elf_file_init(void)
{
	pthread_once(&elf_once, elf_init_once);
}

int elf_file_fd(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

Elf *elf_file_begin(int fd)
{
	Elf *e;

	elf_file_init();
	e = elfguard_begin(fd); /* a file cut short meanwhile reads as zeros */
	if (e && elf_kind(e) != ELF_K_ELF) {
		elfguard_end(e);
		e = NULL;
	}
	return e;
}

Elf *elf_file_open(const char *path, int *fd)
{
	Elf *e;

	*fd = elf_file_fd(path);
	if (*fd < 0) {
		*fd = -1;
		return NULL;
	}
	e = elf_file_begin(*fd);
	if (!e) {
		close(*fd);
		*fd = -1;
	}
	return e;
}

void elf_file_close(Elf *e, int fd)
{
	elfguard_end(e);
	if (fd >= 0)
		close(fd);
}

Elf_Scn *elf_file_section(Elf *e, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;
		if (!gelf_getshdr(scn, shdr))
			continue;
		n = elf_strptr(e, shstrndx, shdr->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* A GNU build-id note in one block of notes. */
static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t max)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return 0;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		/* gelf_getnote checked that name and desc lie inside data */
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh.n_descsz > 0) {
			if (nh.n_descsz > max)
				return 0;
			memcpy(out, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t elf_file_build_id(Elf *e, uint8_t *out, size_t max)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t n, i, len;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		if ((len = note_build_id(elf_getdata(scn, NULL), out, max)))
			return len;
	}
	if (elf_getphdrnum(e, &n))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		len = note_build_id(elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
							 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR),
				    out, max);
		if (len)
			return len;
	}
	return 0;
}

int elf_file_debuglink(Elf *e, const char **name, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_file_section(e, ".gnu_debuglink", &sh);
	Elf_Data *d, src, dst;
	size_t len, crc_off;
	uint32_t raw;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -EINVAL;
	len = strnlen(d->d_buf, d->d_size);
	if (!len || len == d->d_size || memchr(d->d_buf, '/', len))
		return -EINVAL;
	crc_off = (len + 4) & ~(size_t)3;
	if (crc_off > d->d_size || d->d_size - crc_off < 4)
		return -EINVAL;
	memcpy(&raw, (const char *)d->d_buf + crc_off, 4);
	/* from the file's byte order to the host's */
	src.d_buf = &raw;
	src.d_size = 4;
	src.d_type = ELF_T_WORD;
	src.d_version = EV_CURRENT;
	dst = src;
	dst.d_buf = crc;
	if (!gelf_xlatetom(e, &dst, &src, elf_getident(e, NULL)[EI_DATA]))
		return -EINVAL;
	*name = d->d_buf;
	return 0;
}
