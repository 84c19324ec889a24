/* elf.c - read what the symbolizer needs from an ELF file: PT_LOAD
 * segments, function symbols, the build-id note, and the name it makes
 * up: _start at the entry point.
 *
 * Files are untrusted: every index and offset goes through libelf's
 * bounds-checked accessors (gelf_getsym, elf_strptr, gelf_getnote,
 * elf_getdata_rawchunk), and a failed accessor skips the item.
 */
#include "symbol/symbol-private.h"
#include "lib/util.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sym_elf_init(void)
{
	static bool done;
	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

Elf *sym_elf_open(const char *path, int *fd)
{
	struct stat st;
	Elf *e;

	sym_elf_init();
	/* O_NONBLOCK: a FIFO or device named in a mapping must not hang us. */
	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0)
		return NULL;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		goto fail;
	if (elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		goto fail;
	}
	return e;
fail:
	close(*fd);
	*fd = -1;
	return NULL;
}

void sym_elf_close(Elf *e, int fd)
{
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
}

Elf_Scn *sym_elf_section(Elf *e, const char *name, GElf_Shdr *shdr)
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

/* Look for a GNU build-id note in one block of notes. */
static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t max)
{
	size_t off = 0, name_off, desc_off, next;
	GElf_Nhdr nh;

	if (!data || !data->d_buf)
		return 0;
	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		/* gelf_getnote checked name and desc lie inside data. */
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(name, "GNU", 4) && nh.n_descsz > 0) {
			/* one longer than the caller keeps counts as none:
			 * callers compare and copy size bytes of out */
			if (nh.n_descsz > max)
				return 0;
			memcpy(out, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t sym_elf_build_id(Elf *e, uint8_t *out, size_t max)
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
	/* No section headers (or stripped of them): try PT_NOTE. */
	if (elf_getphdrnum(e, &n))
		return 0;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz,
					 ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if ((len = note_build_id(d, out, max)))
			return len;
	}
	return 0;
}

void sym_elf_segments(Elf *e, struct sym_module *m)
{
	size_t n, i;

	if (elf_getphdrnum(e, &n))
		return;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		m->segs = xrealloc(m->segs, (m->nsegs + 1) * sizeof(*m->segs));
		m->segs[m->nsegs].offset = ph.p_offset;
		m->segs[m->nsegs].filesz = ph.p_filesz;
		m->segs[m->nsegs].vaddr = ph.p_vaddr;
		m->nsegs++;
	}
}

struct sec_info {
	uint64_t addr, size;
	bool exec;
	bool valid;
};

static struct sec_info *read_sections(Elf *e, size_t *nsec)
{
	struct sec_info *secs;
	size_t i;

	if (elf_getshdrnum(e, nsec) || !*nsec)
		return NULL;
	secs = xcalloc(*nsec, sizeof(*secs));
	for (i = 0; i < *nsec; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		GElf_Shdr sh;
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		secs[i].addr = sh.sh_addr;
		secs[i].size = sh.sh_size;
		secs[i].exec = (sh.sh_flags & SHF_EXECINSTR) != 0;
		secs[i].valid = sh.sh_addr + sh.sh_size >= sh.sh_addr;
	}
	return secs;
}

size_t sym_elf_add_symbols(Elf *e, int shtype, struct sym_table *t,
			   struct sym_arena *arena)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *data;
	struct sec_info *secs = NULL;
	size_t nsec = 0, entsize, nsyms, i, added = 0;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == (GElf_Word)shtype)
			break;
	if (!scn)
		goto out;
	data = elf_getdata(scn, NULL);
	entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !data->d_buf || !entsize)
		goto out;
	nsyms = data->d_size / entsize;
	secs = read_sections(e, &nsec);

	for (i = 1; i < nsyms; i++) {
		GElf_Sym s;
		const char *name;
		const struct sec_info *sec = NULL;
		int type;
		struct sym_cand *c;

		if (!gelf_getsym(data, i, &s))
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE)
			continue;
		if (s.st_shndx < nsec && secs && secs[s.st_shndx].valid)
			sec = &secs[s.st_shndx];
		/* Functions live in executable sections; a NOTYPE symbol is
		 * a function (an assembly label such as ld.so's _start) only
		 * in one. Without a size it names the code up to the next
		 * symbol (sym_table_finish). */
		if (sec && !sec->exec)
			continue;
		if (type == STT_NOTYPE && !sec)
			continue;
		name = elf_strptr(e, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		/* mapping symbols ($x, $d) and kept local labels are not names */
		if (type == STT_NOTYPE && !s.st_size && (name[0] == '$' || !strncmp(name, ".L", 2)))
			continue;

		GROW(t->cand, t->cap_cand, t->ncand + 1);
		c = &t->cand[t->ncand++];
		c->start = s.st_value;
		c->size = s.st_size;
		c->has_size = s.st_size != 0;
		c->sec_start = sec ? sec->addr : 0;
		c->sec_end = sec ? sec->addr + sec->size : 0;
		switch (GELF_ST_BIND(s.st_info)) {
		case STB_LOCAL: c->bind_rank = 2; break;
		case STB_WEAK: c->bind_rank = 1; break;
		default: c->bind_rank = 0; break;
		}
		/* "memcpy@@GLIBC_2.14": the symbol version is not part of
		 * the function's name (perf shows it bare too). */
		c->name = sym_arena_strndup(arena, name, strcspn(name, "@"));
		added++;
	}
out:
	free(secs);
	return added;
}

/* ---- a synthetic symbol: the entry point ---- */

static void add_cand(struct sym_table *t, uint64_t start, uint64_t size, const GElf_Shdr *sec,
		     const char *name, uint8_t bind_rank, uint32_t max_len)
{
	struct sym_cand *c;
	GROW(t->cand, t->cap_cand, t->ncand + 1);
	c = &t->cand[t->ncand++];
	*c = (struct sym_cand){
		.start = start, .size = size, .name = name, .bind_rank = bind_rank,
		.has_size = size != 0, .max_len = max_len,
	};
	if (sec) {
		c->sec_start = sec->sh_addr;
		c->sec_end = sec->sh_addr + sec->sh_size;
	}
}

/* True when e is a program rather than a library: it has PT_INTERP, or
 * no DT_NEEDED (ld.so itself, static-pie). */
static bool dyn_is_program(Elf *e)
{
	size_t n, i, j;
	bool interp = false, needed = false;

	if (elf_getphdrnum(e, &n))
		return false;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		GElf_Dyn dyn;
		if (!gelf_getphdr(e, i, &ph))
			continue;
		if (ph.p_type == PT_INTERP)
			interp = true;
		if (ph.p_type != PT_DYNAMIC ||
		    !(d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, ELF_T_DYN)))
			continue;
		for (j = 0; gelf_getdyn(d, (int)j, &dyn) && dyn.d_tag != DT_NULL; j++)
			if (dyn.d_tag == DT_NEEDED)
				needed = true;
	}
	return interp || !needed;
}

size_t sym_elf_add_entry(Elf *e, struct sym_table *t, struct sym_arena *arena)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool any = false;

	if (!gelf_getehdr(e, &eh) || !eh.e_entry)
		return 0;
	if (eh.e_type != ET_EXEC && !(eh.e_type == ET_DYN && dyn_is_program(e)))
		return 0;
	/* in an executable section, when there are section headers */
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		any = true;
		if ((sh.sh_flags & SHF_EXECINSTR) && eh.e_entry >= sh.sh_addr &&
		    eh.e_entry - sh.sh_addr < sh.sh_size)
			break;
	}
	if (any && !scn)
		return 0;
	add_cand(t, eh.e_entry, 0, scn ? &sh : NULL, sym_arena_strdup(arena, "_start"), 3,
		 SYM_ENTRY_MAX_LEN);
	return 1;
}
