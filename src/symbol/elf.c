/* elf.c - read what the symbolizer needs from an ELF file: PT_LOAD
 * segments, function symbols, the build-id note, and the names it
 * makes up: NAME@plt for PLT entries and _start at the entry point.
 *
 * Files are untrusted: every index and offset goes through libelf's
 * bounds-checked accessors (gelf_getsym, elf_strptr, gelf_getnote,
 * elf_getdata_rawchunk), and a failed accessor skips the item.
 */
#include "symbol/symbol-private.h"
#include "module/module.h"
#include "lib/ehframe.h"
#include "lib/elfguard.h"
#include "lib/util.h"

#include <elf.h>
#include <errno.h>
#include "lib/elffile.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sym_elf_init(void)
{
	elf_file_init();
}

bool sym_elf_changed(Elf *e)
{
	return elfguard_changed(e);
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
		memset(c, 0, sizeof(*c)); /* no max_len: a symbol's extent is its own */
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

/* ---- synthetic symbols: PLT entries and the entry point ---- */

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A dynamic relocation of a GOT slot a PLT entry may jump through. */
struct plt_rel {
	uint64_t got;         /* r_offset: the slot */
	uint64_t info;        /* r_info: type and symbol index */
	int64_t addend;
	size_t syms;          /* index in plt_info.syms */
};

/* The symbol table a relocation section links to. */
struct rela_syms {
	Elf_Data *data;       /* NULL: none */
	size_t strndx;
};

struct plt_info {
	struct plt_rel *rels; /* sorted by got */
	size_t nrels, cap;
	struct plt_rel *jmprel; /* .rela.plt in its order (lazy pushes) */
	size_t njmprel;
	struct rela_syms *syms;
	size_t nsyms;
	bool sorted;          /* the table's candidates (IRELATIVE) */
};

static int rel_cmp(const void *pa, const void *pb)
{
	const struct plt_rel *a = pa, *b = pb;
	return a->got < b->got ? -1 : a->got > b->got;
}

static const struct plt_rel *rel_find(const struct plt_info *pi, uint64_t got)
{
	size_t lo = 0, hi = pi->nrels;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pi->rels[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pi->nrels && pi->rels[lo].got == got ? &pi->rels[lo] : NULL;
}

static bool rel_wanted(uint64_t info)
{
	uint32_t type = (uint32_t)GELF_R_TYPE(info);
	return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT ||
	       type == R_X86_64_IRELATIVE;
}

/* "NAME@plt" for relocation r (in the arena), NULL when it names
 * nothing. JUMP_SLOT and GLOB_DAT are named by their symbol; IRELATIVE
 * has none, and its addend is the resolver, named like the IFUNC (t's
 * candidates are sorted the first time one is asked for). */
static const char *rel_name(Elf *e, struct plt_info *pi, const struct plt_rel *r,
			    struct sym_table *t, struct sym_arena *arena)
{
	const struct rela_syms *rs = &pi->syms[r->syms];
	const char *name = NULL;
	GElf_Sym sym;
	char *s, *out;

	if (!rel_wanted(r->info))
		return NULL;
	if (GELF_R_TYPE(r->info) == R_X86_64_IRELATIVE) {
		if (!pi->sorted) {
			sym_table_sort(t);
			pi->sorted = true;
		}
		name = sym_table_cand_name(t, (uint64_t)r->addend);
	} else if (rs->data && gelf_getsym(rs->data, (int)GELF_R_SYM(r->info), &sym)) {
		name = elf_strptr(e, rs->strndx, sym.st_name);
	}
	if (!name || !*name)
		return NULL;
	/* a version ("memcpy@GLIBC_2.14") is not part of the name */
	s = xasprintf("%.*s@plt", (int)strcspn(name, "@"), name);
	out = sym_arena_strdup(arena, s);
	free(s);
	return out;
}

/* Collect the dynamic relocations of GOT slots, and .rela.plt's order. */
static void plt_collect(Elf *e, struct plt_info *pi)
{
	size_t shstrndx, entsize = gelf_fsize(e, ELF_T_RELA, 1, EV_CURRENT);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(e, &shstrndx) || !entsize)
		return;
	while ((scn = elf_nextscn(e, scn))) {
		struct rela_syms rs = { NULL, 0 };
		Elf_Scn *symscn;
		GElf_Shdr symsh;
		Elf_Data *d;
		const char *sname;
		bool jmprel;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(sh.sh_flags & SHF_ALLOC))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		n = d->d_size / entsize;
		symscn = sh.sh_link ? elf_getscn(e, sh.sh_link) : NULL;
		if (symscn && gelf_getshdr(symscn, &symsh) &&
		    (symsh.sh_type == SHT_DYNSYM || symsh.sh_type == SHT_SYMTAB)) {
			rs.data = elf_getdata(symscn, NULL);
			rs.strndx = symsh.sh_link;
		}
		pi->syms = xrealloc(pi->syms, (pi->nsyms + 1) * sizeof(*pi->syms));
		pi->syms[pi->nsyms] = rs;
		sname = elf_strptr(e, shstrndx, sh.sh_name);
		jmprel = sname && !strcmp(sname, ".rela.plt") && !pi->jmprel;
		if (jmprel) {
			pi->jmprel = xcalloc(n ? n : 1, sizeof(*pi->jmprel));
			pi->njmprel = n;
		}
		for (i = 0; i < n; i++) {
			struct plt_rel pr;
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r))
				continue;
			pr = (struct plt_rel){ r.r_offset, r.r_info, r.r_addend, pi->nsyms };
			if (jmprel)
				pi->jmprel[i] = pr;
			if (!rel_wanted(r.r_info))
				continue;
			GROW(pi->rels, pi->cap, pi->nrels + 1);
			pi->rels[pi->nrels++] = pr;
		}
		pi->nsyms++;
	}
	if (pi->nrels)
		qsort(pi->rels, pi->nrels, sizeof(*pi->rels), rel_cmp);
}

enum plt_insn { PLT_OTHER, PLT_JMP_GOT, PLT_PUSH_GOT, PLT_PUSH_INDEX };

/* Decode the start of a PLT entry at address addr, bytes [p, end): an
 * optional endbr64 and bnd prefix, then jmp *slot(%rip) (*val = slot),
 * push slot(%rip) (the lazy header), or push $index (a lazy entry). */
static enum plt_insn plt_decode(const uint8_t *p, const uint8_t *end, uint64_t addr, uint64_t *val)
{
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	const uint8_t *q = p;

	if (end - q >= 4 && !memcmp(q, endbr64, 4))
		q += 4;
	if (end - q >= 1 && *q == 0xf2)
		q++;
	if (end - q >= 6 && q[0] == 0xff && (q[1] == 0x25 || q[1] == 0x35)) {
		*val = addr + (uint64_t)(q + 6 - p) + (uint64_t)(int64_t)(int32_t)le32(q + 2);
		return q[1] == 0x25 ? PLT_JMP_GOT : PLT_PUSH_GOT;
	}
	if (end - q >= 5 && q[0] == 0x68) {
		*val = le32(q + 1);
		return PLT_PUSH_INDEX;
	}
	return PLT_OTHER;
}

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

/* PLT entries are 8 or 16 bytes (GNU ld's .plt.got without IBT and
 * the IFUNC .plt of a static binary: 8). */
#define PLT_MAX_ENTRY 16

/* The PLT entry at offset off of a section's bytes [p, end) at address
 * addr: true when one starts there, with the relocation that names it in
 * *r, or *r NULL for the lazy-binding header (the first entry of .plt). */
static bool plt_entry(const struct plt_info *pi, const uint8_t *p, const uint8_t *end, uint64_t off,
		      uint64_t addr, bool lazy, const struct plt_rel **r)
{
	const uint8_t *q = p + off;
	uint64_t val;

	*r = NULL;
	switch (plt_decode(q, (uint64_t)(end - q) > PLT_MAX_ENTRY ? q + PLT_MAX_ENTRY : end,
			   addr + off, &val)) {
	case PLT_JMP_GOT:
		return (*r = rel_find(pi, val)) != NULL;
	case PLT_PUSH_GOT:
		return lazy && !off;
	case PLT_PUSH_INDEX:
		if (lazy && val < pi->njmprel)
			*r = &pi->jmprel[val];
		return *r != NULL;
	case PLT_OTHER:
		break;
	}
	return false;
}

/* Name the entries of one PLT section (header sh, bytes d) into add. */
static void plt_section(Elf *e, struct plt_info *pi, struct sym_table *t, struct sym_arena *arena,
			struct sym_table *add, const GElf_Shdr *sh, const Elf_Data *d, bool lazy)
{
	const uint8_t *p = d->d_buf, *end = p + d->d_size;
	/* GNU ld gives the entry size; lld and static links leave it 0:
	 * then every 8 bytes is tried, and an entry lasts up to the next
	 * one (or 16 bytes) */
	bool fixed = sh->sh_entsize == 8 || sh->sh_entsize == 16;
	uint64_t step = fixed ? sh->sh_entsize : 8, off, next;

	for (off = 0; off < d->d_size; off = next) {
		const struct plt_rel *r, *unused;
		const char *name;

		next = off + step;
		if (!plt_entry(pi, p, end, off, sh->sh_addr, lazy, &r))
			continue;
		while (!fixed && next < d->d_size && next - off < PLT_MAX_ENTRY &&
		       !plt_entry(pi, p, end, next, sh->sh_addr, lazy, &unused))
			next += step;
		next = MIN(next, (uint64_t)d->d_size);
		name = r ? rel_name(e, pi, r, t, arena) : ".plt";
		if (name)
			add_cand(add, sh->sh_addr + off, next - off, sh, name, 0, 0);
	}
}

size_t sym_elf_add_plt(Elf *e, struct sym_table *t, struct sym_arena *arena)
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got", ".plt.bnd" };
	struct plt_info pi = { 0 };
	struct sym_table add = { 0 }; /* kept apart: t's stay sorted (IRELATIVE) */
	GElf_Ehdr eh;
	size_t shstrndx, i;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!gelf_getehdr(e, &eh) || eh.e_machine != EM_X86_64 ||
	    gelf_getclass(e) != ELFCLASS64 || elf_getshdrstrndx(e, &shstrndx))
		return 0;
	plt_collect(e, &pi);
	if (!pi.nrels)
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		const char *sname;
		Elf_Data *d;
		size_t k;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || sh.sh_addr + sh.sh_size < sh.sh_addr ||
		    !(sname = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		for (k = 0; k < ARRAY_SIZE(names) && strcmp(sname, names[k]); k++)
			;
		if (k < ARRAY_SIZE(names) && (d = elf_getdata(scn, NULL)) && d->d_buf)
			plt_section(e, &pi, t, arena, &add, &sh, d, k == 0);
	}
	GROW(t->cand, t->cap_cand, t->ncand + add.ncand);
	for (i = 0; i < add.ncand; i++)
		t->cand[t->ncand++] = add.cand[i];
out:
	free(add.cand);
	free(pi.rels);
	free(pi.jmprel);
	free(pi.syms);
	return add.ncand;
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

size_t sym_elf_add_start_context(Elf *e, struct sym_table *t, struct sym_arena *arena)
{
	uint64_t size, start = module_elf_start_context(e, &size);

	if (!start)
		return 0;
	add_cand(t, start, size, NULL, sym_arena_strdup(arena, "__start_context"), 3, 0);
	return 1;
}

/* ---- function ranges of the unwind tables (stripped binaries) ---- */

static int cmp_range(const void *a, const void *b)
{
	const struct sym_range *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end < y->end) - (x->end > y->end);
}

/* FDEs of one CFI section added to *r; stops quietly at damage (the
 * unwinder reports it), keeping what came before. */
static void add_fdes(Elf *e, const char *name, struct sym_range **r, size_t *n, size_t *cap)
{
	GElf_Shdr shdr, hdr;
	Elf_Scn *scn = elf_file_section(e, name, &shdr);
	struct cfi_section sec;
	struct cfi_cie cie;
	struct cfi_fde fde;
	Elf_Data *d;
	size_t off = 0, next;
	int kind;

	if (!scn || shdr.sh_type == SHT_NOBITS || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size < 8)
		return;
	memset(&sec, 0, sizeof(sec));
	sec.data = d->d_buf;
	sec.size = d->d_size;
	sec.vaddr = shdr.sh_addr;
	sec.is_eh = !strcmp(name, ".eh_frame");
	if (elf_file_section(e, ".eh_frame_hdr", &hdr))
		sec.datarel = hdr.sh_addr;
	if (elf_file_section(e, ".text", &hdr))
		sec.textrel = hdr.sh_addr;
	memset(&cie, 0, sizeof(cie));
	while ((kind = cfi_parse_entry(&sec, off, &next, &cie, &fde)) > 0 && next > off) {
		/* a CIE (1) leaves fde as it was: only an FDE (2) has a range */
		if (kind == 2 && fde.pc_end > fde.pc_begin && fde.pc_begin) {
			GROW(*r, *cap, *n + 1);
			(*r)[*n].start = fde.pc_begin;
			(*r)[*n].end = fde.pc_end;
			(*n)++;
		}
		off = next;
	}
}

size_t sym_elf_fde_ranges(Elf *e, struct sym_range **out)
{
	struct sym_range *r = NULL;
	size_t n = 0, cap = 0, i, k;

	add_fdes(e, ".eh_frame", &r, &n, &cap);
	if (!n)
		add_fdes(e, ".debug_frame", &r, &n, &cap);
	if (n > 1)
		qsort(r, n, sizeof(*r), cmp_range);
	/* drop ranges that start inside an earlier one (the outer one names
	 * the code) */
	for (i = k = 0; i < n; i++) {
		if (k && r[i].start < r[k - 1].end)
			continue;
		r[k++] = r[i];
	}
	*out = r;
	return k;
}
