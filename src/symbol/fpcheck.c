#include "symbol/fpcheck.h"
#include "lib/elfguard.h"
#include "module/module.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const unsigned char prologue[] = { 0x55, 0x48, 0x89, 0xe5 };        /* push rbp; mov rbp,rsp */
static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* Bytes at virtual address addr, if a loaded PROGBITS section holds them. */
static const unsigned char *code_at(Elf *e, GElf_Addr addr, size_t want)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		/* addr - sh_addr + want could wrap: compare what is left */
		if (addr < sh.sh_addr || addr - sh.sh_addr > sh.sh_size ||
		    sh.sh_size - (addr - sh.sh_addr) < want)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			return NULL;
		return (const unsigned char *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

static void scan_symbols(Elf *e, Elf_Scn *scn, struct fp_report *r)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n, entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	/* the count from the data, not the header: gelf_getsym checks
	 * each index against the data anyway */
	if (!d || !d->d_buf || !entsize)
		return;
	n = d->d_size / entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym sym;
		const unsigned char *c;
		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_size < 8)
			continue;
		c = code_at(e, sym.st_value, 8);
		if (!c)
			continue;
		r->functions++;
		if (!memcmp(c, endbr64, 4))
			c += 4;
		if (!memcmp(c, prologue, 4))
			r->with_fp++;
	}
}

/* Fill r from e (the ELF of a binary, open on fd). */
static int check_elf(Elf *e, struct fp_report *r)
{
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	size_t shstrndx;

	memset(r, 0, sizeof(*r));
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		/* a NOBITS section (a separate debug file's) has no bytes */
		if (name && !strcmp(name, ".eh_frame") && sh.sh_size > 16 && sh.sh_type != SHT_NOBITS)
			r->has_eh_frame = true;
		if (name && !strcmp(name, ".debug_frame") && sh.sh_type != SHT_NOBITS)
			r->has_debug_frame = true;
	}
	r->has_symtab = symtab != NULL;
	if (symtab || dynsym)
		scan_symbols(e, symtab ? symtab : dynsym, r);
	return 0;
}

/* The module's part (MODULE_FP): the report and the result. */
struct fp_part {
	int ret;
	struct fp_report r;
};

static void *fp_build(struct module *m, void *arg)
{
	struct fp_part *p = calloc(1, sizeof(*p));
	int fd;
	Elf *e;

	if (!p)
		return NULL;
	/* a regular file only: a FIFO must not hang doctor (module_open) */
	e = module_open(m, &fd);
	if (!e) {
		p->ret = -ENOENT;
		return p;
	}
	p->ret = check_elf(e, &p->r);
	/* cut short while read: what was read there was zeros */
	if (elfguard_changed(e) && !p->ret)
		p->ret = -EIO;
	module_close(e, fd);
	return p;
}

int fp_check_module(struct module *m, struct fp_report *r)
{
	struct fp_part *p = module_part(m, MODULE_FP, fp_build, free, NULL);
	int ret = p ? p->ret : -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (p)
		*r = p->r;
	module_part_put(m, MODULE_FP);
	return ret;
}

int fp_check_file(const char *path, struct fp_report *r)
{
	struct module *m = module_get(path, NULL, 0);
	int ret = fp_check_module(m, r);
	module_put(m);
	return ret;
}
