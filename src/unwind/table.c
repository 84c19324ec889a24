/* table.c - compile a module's CFI into sorted compact rows.
 *
 * Build: walk every FDE of the section (linear walk, so .eh_frame_hdr is
 * not needed), sort the FDEs by start address, run each FDE's program
 * once and turn every row into a dictionary rule (by the file's machine:
 * x86_64.c, aarch64.c). Consecutive rows with the same rule merge; a gap
 * row (UR_FP) closes every FDE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/table.h"
#include "unwind/arch.h"
#include "unwind/roots.h"
#include "lib/elfguard.h"
#include "unwind/tcache.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/debugfile.h"
#include "lib/elffile.h"
#include "lib/hash.h"
#include "lib/util.h"
#include "module/module.h"

struct fde_ref {
	uint64_t pc_begin, pc_end;
	size_t off;
	int sec;
};

struct builder {
	struct utable *t;
	struct cfi_section *sec;
	size_t cap_raddr, cap_rule, cap_rules, cap_slow, cap_blob;
	uint64_t *raddr;   /* absolute addresses while building */
	struct hmap dict;  /* rule bytes -> index */
	uint64_t fde_begin;
	bool fde_slow;
	const struct cfi_cie *cie;
	const struct cfi_fde *fde;
	void (*compile_row)(const struct cfi_row *row, bool signal, struct urule *out);
};

static uint64_t rule_key(const struct urule *r)
{
	uint64_t a, b;
	memcpy(&a, r, 8);
	memcpy(&b, (const uint8_t *)r + 8, 8);
	return hash_mix(hash_mix(0x5eed, a), b);
}

static uint16_t rule_index(struct builder *b, const struct urule *r)
{
	struct utable *t = b->t;
	uint64_t key = rule_key(r);
	uint32_t idx;

	/* The hash is over all 16 bytes; a collision between two different
	 * rules is checked and resolved by probing with a salted key. */
	for (unsigned salt = 0; salt < 8; salt++) {
		uint64_t k = salt ? hash_mix(key, salt) : key;
		if (!hmap_get(&b->dict, k, &idx)) {
			if (t->nrules >= 0xffff)
				return UR_SLOW;
			GROW(t->rules, b->cap_rules, t->nrules + 1);
			t->rules[t->nrules] = *r;
			hmap_put(&b->dict, k, t->nrules);
			return (uint16_t)t->nrules++;
		}
		if (memcmp(&t->rules[idx], r, sizeof(*r)) == 0)
			return (uint16_t)idx;
	}
	return UR_SLOW;
}

static void push_row(struct builder *b, uint64_t addr, uint16_t rule)
{
	struct utable *t = b->t;
	/* A later FDE overlapping an earlier one wins from its start on
	 * (as a binary search over FDE starts would decide). */
	while (t->nrows && b->raddr[t->nrows - 1] >= addr)
		t->nrows--;
	if (t->nrows && t->rule[t->nrows - 1] == rule)
		return;
	GROW(b->raddr, b->cap_raddr, t->nrows + 1);
	GROW(t->rule, b->cap_rule, t->nrows + 1);
	b->raddr[t->nrows] = addr;
	t->rule[t->nrows] = rule;
	t->nrows++;
}

static int emit_row(void *arg, const struct cfi_row *row)
{
	struct builder *b = arg;
	struct urule r;

	b->compile_row(row, b->cie->signal, &r);
	uint16_t idx = r.kind == UR_SLOW ? UR_SLOW : rule_index(b, &r);
	if (idx == UR_SLOW) {
		b->fde_slow = true;
		b->t->nslow_rows++;
	}
	push_row(b, row->loc, idx);
	return 0;
}

static void blob_add(struct builder *b, const uint8_t *p, size_t n, uint32_t *off, uint32_t *len)
{
	struct utable *t = b->t;
	/* at least a byte: even an empty program needs a non-NULL blob to
	 * point into (NULL + 0 is undefined) */
	GROW(t->blob, b->cap_blob, t->blob_len + (n ? n : 1));
	if (n)
		memcpy(t->blob + t->blob_len, p, n);
	*off = (uint32_t)t->blob_len;
	*len = (uint32_t)n;
	t->blob_len += n;
}

static void add_slow(struct builder *b)
{
	struct utable *t = b->t;
	struct uslow *s;

	GROW(t->slow, b->cap_slow, t->nslow + 1);
	s = &t->slow[t->nslow++];
	memset(s, 0, sizeof(*s));
	s->pc_begin = b->fde->pc_begin;
	s->pc_end = b->fde->pc_end;
	s->fde_insn_vaddr = b->sec->vaddr + (uint64_t)(b->fde->insn - b->sec->data);
	s->cie = *b->cie;
	s->cie.insn = s->cie.insn_end = NULL;
	blob_add(b, b->cie->insn, (size_t)(b->cie->insn_end - b->cie->insn), &s->cie_insn, &s->cie_len);
	blob_add(b, b->fde->insn, (size_t)(b->fde->insn_end - b->fde->insn), &s->fde_insn, &s->fde_len);
}

void utable_build_pages(struct utable *t)
{
	free(t->page);
	t->npages = (t->addr[t->nrows - 1] >> UTABLE_PAGE_SHIFT) + 1;
	t->page = xmalloc((t->npages + 1) * sizeof(*t->page));
	uint32_t row = 0;
	for (uint32_t p = 0; p <= t->npages; p++) {
		uint64_t at = (uint64_t)p << UTABLE_PAGE_SHIFT;
		while (row + 1 < t->nrows && t->addr[row + 1] <= at)
			row++;
		t->page[p] = row;
	}
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;
	if (x->pc_begin != y->pc_begin)
		return x->pc_begin < y->pc_begin ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static void init_commands(struct utable *t, size_t *cap)
{
	GROW(t->rules, *cap, UR_NCOMMANDS);
	memset(t->rules, 0, UR_NCOMMANDS * sizeof(*t->rules));
	t->rules[UR_FP].kind = UR_FP;
	t->rules[UR_STOP].kind = UR_STOP;
	t->rules[UR_SIGNAL].kind = UR_SIGNAL;
	t->rules[UR_SLOW].kind = UR_SLOW;
	t->nrules = UR_NCOMMANDS;
}

/* Does [b, e) overlap an FDE of the preferred section (sorted by start)? */
static bool covered(const struct fde_ref *pref, size_t n, uint64_t b, uint64_t e)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (pref[mid].pc_begin < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* pref[lo-1] is the last one starting before e */
	for (size_t i = lo; i-- > 0 && lo - i <= 4;)
		if (pref[i].pc_end > b)
			return true;
	return false;
}

int utable_compile(struct utable *t, struct cfi_section *secs, int nsecs)
{
	struct builder b = { .t = t };
	struct fde_ref *fdes = NULL, *pref = NULL;
	size_t nfde = 0, cap_fde = 0, npref = 0, next;
	struct cfi_cie cie[UTABLE_MAX_SECS];
	struct cfi_fde fde;
	int ret = 0, r;

	if (nsecs > UTABLE_MAX_SECS)
		nsecs = UTABLE_MAX_SECS;
	if (t->arch == UNWIND_ARCH_NONE)
		t->arch = unwind_arch_host();
	b.compile_row = arch_of(t->arch)->compile_row;
	for (int s = 0; s < nsecs; s++)
		secs[s].ncols = arch_of(t->arch)->ncols;
	hmap_init(&b.dict);
	if (!t->rules)
		init_commands(t, &b.cap_rules);
	else
		b.cap_rules = t->nrules;
	for (uint32_t i = UR_NCOMMANDS; i < t->nrules; i++)
		hmap_put(&b.dict, rule_key(&t->rules[i]), i);

	/* Pass 1: find the FDEs of every section. An FDE of a later section
	 * counts only where the earlier ones have none (.eh_frame is what the
	 * program's own unwinder uses; .debug_frame fills its gaps). */
	for (int s = 0; s < nsecs; s++) {
		struct cfi_section *sec = &secs[s];
		size_t off = 0, first = nfde;
		memset(&cie[s], 0, sizeof(cie[s]));
		for (;;) {
			r = cfi_parse_entry(sec, off, &next, &cie[s], &fde);
			if (r < 0) {
				/* Keep the FDEs before the damage. */
				if (!t->err)
					t->err = r;
				t->err_sec = s;
				break;
			}
			if (r == 0)
				break;
			if (r == 2 && fde.pc_end > fde.pc_begin &&
			    !(s > 0 && covered(pref, npref, fde.pc_begin, fde.pc_end))) {
				GROW(fdes, cap_fde, nfde + 1);
				fdes[nfde].pc_begin = fde.pc_begin;
				fdes[nfde].pc_end = fde.pc_end;
				fdes[nfde].off = off;
				fdes[nfde].sec = s;
				nfde++;
			}
			off = next;
		}
		/* the FDEs so far are the preferred ones for later sections */
		if (s + 1 < nsecs && nfde > first) {
			free(pref);
			npref = nfde;
			pref = xmalloc(npref * sizeof(*pref));
			memcpy(pref, fdes, npref * sizeof(*pref));
			qsort(pref, npref, sizeof(*pref), cmp_fde);
		}
	}
	if (!nfde)
		goto out;
	/* .eh_frame is usually in address order already. */
	for (size_t i = 1; i < nfde; i++) {
		if (cmp_fde(&fdes[i - 1], &fdes[i]) > 0) {
			qsort(fdes, nfde, sizeof(*fdes), cmp_fde);
			break;
		}
	}

	/* Pass 2: run every FDE. */
	for (int s = 0; s < nsecs; s++)
		memset(&cie[s], 0, sizeof(cie[s]));
	for (size_t i = 0; i < nfde; i++) {
		struct cfi_section *sec = &secs[fdes[i].sec];
		struct cfi_cie *c = &cie[fdes[i].sec];
		r = cfi_parse_entry(sec, fdes[i].off, &next, c, &fde);
		if (r != 2) {
			ret = r < 0 ? r : -EINVAL;
			goto out;
		}
		b.sec = sec;
		b.cie = c;
		b.fde = &fde;
		b.fde_slow = false;
		size_t rows_before = t->nrows;
		uint32_t slow_before = t->nslow_rows;
		r = cfi_run(sec, c, &fde, UINT64_MAX, NULL, emit_row, &b);
		if (r < 0) {
			/* A bad program poisons only its FDE: drop its rows
			 * (they become FP fallback) and keep going, but remember
			 * where the corruption was. */
			t->nrows = rows_before;
			t->nslow_rows = slow_before;
			while (t->nrows && b.raddr[t->nrows - 1] >= fde.pc_begin)
				t->nrows--;
			if (!t->err) {
				t->err = r;
				t->err_sec = fdes[i].sec;
			}
			push_row(&b, fde.pc_begin, UR_FP);
			continue;
		}
		if (b.fde_slow)
			add_slow(&b);
		push_row(&b, fde.pc_end, UR_FP);
		t->nfde++;
		t->nfde_sec[fdes[i].sec]++;
	}
	if (!t->nrows)
		goto out;

	/* Offsets from base must fit 32 bits. */
	t->base = b.raddr[0];
	if (b.raddr[t->nrows - 1] - t->base > 0xffffffffull) {
		ret = -EFBIG;
		t->nrows = 0;
		goto out;
	}
	t->addr = xmalloc(t->nrows * sizeof(*t->addr));
	for (uint32_t i = 0; i < t->nrows; i++)
		t->addr[i] = (uint32_t)(b.raddr[i] - t->base);
	utable_build_pages(t);
out:
	free(fdes);
	free(pref);
	free(b.raddr);
	hmap_release(&b.dict);
	if (ret < 0) {
		free(t->addr);
		t->addr = NULL;
		t->nrows = 0;
		t->nslow = t->nslow_rows = t->nfde = 0;
		memset(t->nfde_sec, 0, sizeof(t->nfde_sec));
		t->blob_len = 0;
	}
	return ret;
}

long utable_row_index(const struct utable *t, uint64_t vaddr)
{
	if (!t->nrows || vaddr < t->base || vaddr - t->base >= t->addr[t->nrows - 1])
		return -1;
	uint32_t off = (uint32_t)(vaddr - t->base);
	uint32_t lo = 0, hi = t->nrows - 1;
	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) >> 1;
		if (t->addr[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

struct ulazy {
	uint8_t *frame;          /* .eh_frame's bytes */
	size_t frame_size;
	uint64_t frame_vaddr;
	uint8_t *table;          /* .eh_frame_hdr's search table: nfde pairs of
				  * sdata4 (initial location, FDE address),
				  * relative to hdr_vaddr, sorted */
	uint32_t nfde;
	uint64_t hdr_vaddr, text_vaddr;
};

static int32_t rd_s32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* utable_slow_row() of a provisional table: the FDE the search table
 * gives for vaddr, run to it. -ENOENT where no FDE covers vaddr. */
static int lazy_row(const struct utable *t, uint64_t vaddr, struct cfi_row *row, struct cfi_cie *cie)
{
	const struct ulazy *z = t->lazy;
	uint32_t lo = 0, hi = z->nfde;
	struct cfi_fde fde;
	uint64_t fv;
	size_t next;
	int r;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (z->hdr_vaddr + (uint64_t)(int64_t)rd_s32(z->table + (size_t)mid * 8) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	fv = z->hdr_vaddr + (uint64_t)(int64_t)rd_s32(z->table + (size_t)(lo - 1) * 8 + 4);
	if (fv < z->frame_vaddr || fv - z->frame_vaddr >= z->frame_size)
		return -EINVAL;
	struct cfi_section sec = {
		.data = z->frame, .size = z->frame_size, .vaddr = z->frame_vaddr,
		.datarel = z->hdr_vaddr, .textrel = z->text_vaddr, .is_eh = true,
		.ncols = arch_of(t->arch)->ncols,
	};
	memset(cie, 0, sizeof(*cie));
	r = cfi_parse_entry(&sec, (size_t)(fv - z->frame_vaddr), &next, cie, &fde);
	if (r != 2)
		return r < 0 ? r : -EINVAL;
	if (vaddr < fde.pc_begin || vaddr >= fde.pc_end)
		return -ENOENT;
	return cfi_run(&sec, cie, &fde, vaddr, row, NULL, NULL);
}

int utable_slow_row(const struct utable *t, uint64_t vaddr, struct cfi_row *row,
		    struct cfi_cie *cie)
{
	uint32_t lo = 0, hi = t->nslow;
	const struct uslow *s = NULL;

	if (t->lazy)
		return lazy_row(t, vaddr, row, cie);
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (t->slow[mid].pc_begin <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Rows are in FDE start order, so the last FDE starting at or
	 * before vaddr is the one the table used. */
	if (lo == 0)
		return -ENOENT;
	s = &t->slow[lo - 1];
	if (vaddr >= s->pc_end)
		return -ENOENT;
	*cie = s->cie;
	cie->insn = t->blob + s->cie_insn;
	cie->insn_end = cie->insn + s->cie_len;
	struct cfi_fde fde = {
		.pc_begin = s->pc_begin, .pc_end = s->pc_end,
		.insn = t->blob + s->fde_insn,
	};
	fde.insn_end = fde.insn + s->fde_len;
	struct cfi_section sec = {
		.data = fde.insn, .size = s->fde_len, .vaddr = s->fde_insn_vaddr,
		.is_eh = true, .ncols = arch_of(t->arch)->ncols,
	};
	return cfi_run(&sec, cie, &fde, vaddr, row, NULL, NULL);
}

bool utable_bias(const struct utable *t, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	int found = -1;
	for (int i = 0; i < t->nload; i++) {
		uint64_t seg_start = t->load[i].off & ~0xfffull;
		if (pgoff >= seg_start && pgoff < t->load[i].off + t->load[i].filesz &&
		    (found < 0 || (t->load[i].exec && !t->load[found].exec)))
			found = i;
	}
	if (found < 0)
		return false;
	*bias = start - pgoff + t->load[found].off - t->load[found].vaddr;
	return true;
}

/* ---- ELF ---- */

/* The bytes of a section, or NULL: none in the file (SHT_NOBITS, as in
 * a separate debug file, or empty), or (*why set to libelf's reason)
 * they cannot be read: outside the file, or compressed and not
 * inflating. libelf checks offset and size against the file. */
static Elf_Data *section_data(Elf_Scn *scn, GElf_Shdr *shdr, const char **why)
{
	*why = NULL;
	if (shdr->sh_type == SHT_NOBITS || !shdr->sh_size)
		return NULL;
	if (shdr->sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, shdr)) {
			*why = elf_errmsg(-1);
			return NULL;
		}
	}
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d)
		*why = elf_errmsg(-1);
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	return d;
}

static void read_loads(Elf *elf, struct utable *t)
{
	size_t n;
	GElf_Phdr ph;

	GElf_Ehdr eh;
	if (gelf_getehdr(elf, &eh)) {
		t->entry = eh.e_entry;
		t->arch = unwind_arch_by_elf(eh.e_machine);
	}
	if (elf_getphdrnum(elf, &n) < 0)
		return;
	for (size_t i = 0; i < n && t->nload < (int)ARRAY_SIZE(t->load); i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		t->load[t->nload].vaddr = ph.p_vaddr;
		t->load[t->nload].off = ph.p_offset;
		t->load[t->nload].filesz = ph.p_filesz;
		t->load[t->nload].exec = (ph.p_flags & PF_X) != 0;
		t->nload++;
	}
}

static uint64_t section_addr(Elf *elf, const char *name)
{
	GElf_Shdr shdr;
	return elf_file_section(elf, name, &shdr) ? shdr.sh_addr : 0;
}

/* The named CFI section of elf, in *sec. Returns 1, 0 when it is absent
 * or has no bytes in this file, -EINVAL when its bytes cannot be read
 * (*why says why). */
static int get_section(Elf *elf, const char *name, struct cfi_section *sec, const char **why)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_file_section(elf, name, &shdr);
	*why = NULL;
	if (!scn)
		return 0;
	Elf_Data *d = section_data(scn, &shdr, why);
	if (!d)
		return *why ? -EINVAL : 0;
	if (d->d_size < 8)
		return 0;
	*sec = (struct cfi_section){
		.data = d->d_buf, .size = d->d_size, .vaddr = shdr.sh_addr,
		.datarel = section_addr(elf, ".eh_frame_hdr"),
		.textrel = section_addr(elf, ".text"),
		.is_eh = strcmp(name, ".eh_frame") == 0,
	};
	return 1;
}

/* The first range [*g0, *g1) without CFI (rule UR_FP) that ends after
 * vaddr; false when there is none. */
static bool next_gap(const struct utable *t, uint64_t vaddr, uint64_t *g0, uint64_t *g1)
{
	long r;
	if (!t->nrows) {
		*g0 = 0;
		*g1 = UINT64_MAX;
		return true;
	}
	if (vaddr < t->base) {
		*g0 = 0;
		*g1 = t->base;
		return true;
	}
	r = utable_row_index(t, vaddr);
	if (r < 0) { /* past the last row: no CFI beyond */
		*g0 = t->base + t->addr[t->nrows - 1];
		*g1 = UINT64_MAX;
		return true;
	}
	for (uint32_t i = (uint32_t)r; i < t->nrows; i++) {
		if (t->rule[i] != UR_FP)
			continue;
		*g0 = t->base + t->addr[i];
		*g1 = i + 1 < t->nrows ? t->base + t->addr[i + 1] : UINT64_MAX;
		return true;
	}
	return false;
}

/* Recognize musl-style signal trampolines, which have no CFI:
 * "mov $15,%rax; syscall" (rt_sigreturn). The unwinder looks them up at
 * RA-1, so the SIGNAL row starts one byte before. Only gaps get them. */
/* A Go binary has a .go.buildinfo section (or Go's build-id note). */
static bool is_go_binary(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		if (gelf_getshdr(scn, &shdr) && (name = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
		    (!strcmp(name, ".go.buildinfo") || !strcmp(name, ".note.go.buildid")))
			return true;
	}
	return false;
}

/* A range of code without CFI given a rule of its own. */
struct xrange {
	uint64_t start, end;
	uint16_t rule;
};

/* Put x[0..*nx) in the order insert_ranges needs: empty (or wrapped:
 * end <= start) ranges dropped, sorted by start, overlaps resolved (the
 * same rule: merged; else the later range starts where the earlier
 * ends). Ranges come from a file's bytes: sections in any order, at any
 * address, overlapping each other. */
static void normalize_ranges(struct xrange *x, int *nx)
{
	int n = 0;
	for (int i = 0; i < *nx; i++) {
		if (x[i].end <= x[i].start)
			continue;
		struct xrange v = x[i];
		int j = n++;
		for (; j > 0 && x[j - 1].start > v.start; j--)
			x[j] = x[j - 1];
		x[j] = v;
	}
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m && x[i].start < x[m - 1].end) {
			if (x[i].rule == x[m - 1].rule) {
				x[m - 1].end = MAX(x[m - 1].end, x[i].end);
				continue;
			}
			x[i].start = x[m - 1].end;
			if (x[i].end <= x[i].start)
				continue;
		}
		x[m++] = x[i];
	}
	*nx = m;
}

/* Append the row (a, rule) to abs/rules[0..*k): a row at the address of
 * the last one replaces it, a row repeating its predecessor's rule is
 * left out (no two equal neighbours). */
static void emit_range_row(uint64_t *abs, uint16_t *rules, uint32_t *k, uint64_t a, uint16_t rule)
{
	if (*k && abs[*k - 1] == a) {
		--*k;
		if (*k && rules[*k - 1] == rule)
			return;
	} else if (*k && rules[*k - 1] == rule) {
		return;
	}
	abs[*k] = a;
	rules[(*k)++] = rule;
}

/* Rebuild t's rows with the ranges x[0..nx) (reordered and trimmed in
 * place by normalize_ranges) inserted: inside a range its rule, after it
 * the rule the table had there (UR_FP in a gap or past the last row).
 * False when nothing is left to insert or the table cannot hold them
 * (then t is as it was). */
static bool insert_ranges(struct utable *t, struct xrange *x, int nx)
{
	normalize_ranges(x, &nx);
	if (!nx)
		return false;
	uint32_t n = t->nrows + 2 * (uint32_t)nx;
	uint64_t *abs = xmalloc(n * sizeof(*abs));
	uint16_t *rule = xmalloc(n * sizeof(*rule));
	uint32_t k = 0, i = 0;
#define ROW_AT(j) (t->base + t->addr[j])
	for (int h = 0; h <= nx; h++) {
		uint64_t stop = h < nx ? x[h].start : UINT64_MAX;
		for (; i < t->nrows && ROW_AT(i) < stop; i++)
			emit_range_row(abs, rule, &k, ROW_AT(i), t->rule[i]);
		if (h == nx)
			break;
		emit_range_row(abs, rule, &k, x[h].start, x[h].rule);
		/* rows starting inside the range give way to it; the last
		 * of them (or of those before it) rules again at its end */
		for (; i < t->nrows && ROW_AT(i) <= x[h].end; i++)
			;
		uint16_t after = i > 0 && i < t->nrows ? t->rule[i - 1] : UR_FP;
		emit_range_row(abs, rule, &k, x[h].end, after);
	}
#undef ROW_AT
	uint64_t base = abs[0];
	if (abs[k - 1] - base > 0xffffffffull) {
		free(abs);
		free(rule);
		return false;
	}
	free(t->addr);
	free(t->rule);
	t->addr = xmalloc(k * sizeof(*t->addr));
	for (uint32_t j = 0; j < k; j++)
		t->addr[j] = (uint32_t)(abs[j] - base);
	free(abs);
	t->rule = rule;
	t->nrows = k;
	t->base = base;
	utable_build_pages(t);
	return true;
}

/* Can a trampoline of len bytes at a have its rows, [a - 1, a + len)?
 * Not at address 0 or at the very top of the address space (a crafted
 * file's section can be anywhere). */
static bool tramp_fits(uint64_t a, size_t len)
{
	return a >= 1 && a <= UINT64_MAX - len;
}

static void add_trampolines(Elf *elf, struct utable *t)
{
	static const uint8_t pat[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	uint64_t hits[8];
	int nhits = 0;
	bool go = is_go_binary(elf);

	while ((scn = elf_nextscn(elf, scn)) && nhits < 8) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS ||
		    !(shdr.sh_flags & SHF_EXECINSTR))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		if (go) {
			/* Go's runtime.sigreturn has an FDE of a plain function
			 * (CFA = rsp + 8) after int3 padding: still the
			 * trampoline, nothing calls it. CFI covers it, so a Go
			 * binary's code is searched whole. */
			const uint8_t *p = d->d_buf, *end = p + d->d_size;
			while (nhits < 8 && (p = memmem(p, (size_t)(end - p), pat, sizeof(pat)))) {
				uint64_t a = shdr.sh_addr + (uint64_t)(p - (const uint8_t *)d->d_buf);
				const struct urule *r = utable_find(t, a);
				bool plain = r->kind == UR_NORMAL && r->cfa_reg == UNW_RSP && r->cfa_off == 8 &&
					     p > (const uint8_t *)d->d_buf && p[-1] == 0xcc;
				if (tramp_fits(a, sizeof(pat)) &&
				    ((r->kind == UR_FP && utable_find(t, a - 1)->kind == UR_FP) || plain))
					hits[nhits++] = a;
				p += sizeof(pat);
			}
			continue;
		}
		/* only where no CFI covers the code: a hit must start in a
		 * gap. Searching just the gaps, not the whole section, spares
		 * big binaries whose CFI covers nearly everything a scan of
		 * all their code (librustc_driver: 30% of the table's build) */
		if (d->d_size > UINT64_MAX - shdr.sh_addr)
			continue; /* a section that wraps the address space */
		uint64_t cur = shdr.sh_addr, send = shdr.sh_addr + d->d_size, g0, g1;
		while (nhits < 8 && cur < send && next_gap(t, cur, &g0, &g1)) {
			g0 = MAX(g0, cur);
			if (g0 >= send)
				break;
			/* patterns starting in [g0, g1) may run past g1 */
			uint64_t stop = g1 < send - MIN(send, sizeof(pat) - 1) ? g1 + sizeof(pat) - 1 : send;
			/* offsets into the section's bytes, never a pointer
			 * outside them */
			const uint8_t *buf = d->d_buf;
			const uint8_t *p = buf + (g0 - shdr.sh_addr), *end = buf + (stop - shdr.sh_addr);
			while (nhits < 8 && p < end && (p = memmem(p, (size_t)(end - p), pat, sizeof(pat)))) {
				uint64_t a = shdr.sh_addr + (uint64_t)(p - buf);
				if (a >= g1)
					break;
				if (tramp_fits(a, sizeof(pat)) && utable_find(t, a)->kind == UR_FP &&
				    utable_find(t, a - 1)->kind == UR_FP)
					hits[nhits++] = a;
				p += sizeof(pat);
			}
			cur = g1;
		}
	}
	if (!nhits)
		return;
	struct xrange x[8];
	for (int i = 0; i < nhits; i++)
		x[i] = (struct xrange){ hits[i] - 1, hits[i] + sizeof(pat), UR_SIGNAL };
	if (insert_ranges(t, x, nhits))
		t->nsignal_tramp = (uint32_t)nhits;
}

/* The bytes at vaddr in the executable section of elf that holds it (at
 * most max of them, the count in *len), else NULL. */
static const uint8_t *code_bytes(Elf *elf, uint64_t vaddr, size_t max, size_t *len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr)
			continue;
		if (!(d = elf_getdata(scn, NULL)) || !d->d_buf || vaddr - sh.sh_addr >= d->d_size)
			continue;
		*len = MIN(max, d->d_size - (vaddr - sh.sh_addr));
		return (const uint8_t *)d->d_buf + (vaddr - sh.sh_addr);
	}
	return NULL;
}

/* The index of rule r in t's dictionary, added when missing. */
static uint16_t rule_add(struct utable *t, const struct urule *r)
{
	for (uint32_t i = UR_NCOMMANDS; i < t->nrules; i++)
		if (!memcmp(&t->rules[i], r, sizeof(*r)))
			return (uint16_t)i;
	if (t->nrules >= 0xffff)
		return UR_FP;
	t->rules = xrealloc(t->rules, (t->nrules + 1) * sizeof(*t->rules));
	t->rules[t->nrules] = *r;
	return (uint16_t)t->nrules++;
}

/* glibc's crti.o gives every shared library and executable _init and
 * _fini (DT_INIT, DT_FINI) without CFI: [endbr64;] sub $8,%rsp; ...;
 * add $8,%rsp; ret. ld.so calls _init of a library it loads (dlopen), and
 * _init calls __gmon_start__ when one is defined (a profiled build): a
 * sample there stopped the stack at _init. Where no CFI covers them and
 * the code is that, rows for it: CFA = rsp + 8 before the sub and from
 * the add on, rsp + 16 between. */
static void add_init_fini(Elf *elf, struct utable *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t at[2] = { 0, 0 };
	struct xrange x[6] = { { 0, 0, 0 } };
	int nx = 0;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
		size_t n = d && d->d_buf && entsize ? d->d_size / entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_INIT)
				at[0] = dyn.d_un.d_ptr;
			else if (dyn.d_tag == DT_FINI)
				at[1] = dyn.d_un.d_ptr;
		}
	}
	struct urule r = { .kind = UR_NORMAL, .cfa_reg = UNW_RSP, .ra_off = -8, .rbp = URBP_SAME,
			   .rbx = URBP_SAME };
	for (int f = 0; f < 2; f++) {
		static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa }, sub[] = { 0x48, 0x83, 0xec, 0x08 },
				     add[] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
		size_t len = 0, pre, a;
		const uint8_t *c = at[f] ? code_bytes(elf, at[f], 64, &len) : NULL;
		if (!c || len < sizeof(sub) + sizeof(add))
			continue;
		pre = len >= sizeof(endbr) + sizeof(sub) + sizeof(add) && !memcmp(c, endbr, 4) ? 4 : 0;
		if (memcmp(c + pre, sub, 4))
			continue;
		for (a = pre + 4; a + sizeof(add) <= len && memcmp(c + a, add, sizeof(add)); a++)
			;
		if (a + sizeof(add) > len)
			continue;
		/* in a gap of the CFI, whole */
		long i0 = utable_row_index(t, at[f]), i1 = utable_row_index(t, at[f] + a + 4);
		if (t->nrows && (i0 != i1 || (i0 >= 0 && t->rule[i0] != UR_FP)))
			continue;
		/* not over _init's rows (a DT_FINI inside _init); _fini may
		 * come first in the address space (insert_ranges sorts) */
		if (nx && at[f] < x[nx - 1].end && at[f] + a + 5 > x[0].start)
			continue;
		r.cfa_off = 8;
		uint16_t r8 = rule_add(t, &r);
		r.cfa_off = 16;
		uint16_t r16 = rule_add(t, &r);
		x[nx++] = (struct xrange){ at[f], at[f] + pre + 4, r8 };
		x[nx++] = (struct xrange){ at[f] + pre + 4, at[f] + a + 4, r16 };
		x[nx++] = (struct xrange){ at[f] + a + 4, at[f] + a + 5, r8 };
	}
	if (nx)
		insert_ranges(t, x, nx);
}

/* A PLT section named name in a gap of t's CFI: its range in *sh. */
static bool plt_in_gap(Elf *elf, Elf_Scn *scn, size_t shstrndx, const struct utable *t, GElf_Shdr *sh,
		       const char *const *names)
{
	const char *name;
	long i0, i1;
	if (!gelf_getshdr(scn, sh) || sh->sh_type != SHT_PROGBITS || !(sh->sh_flags & SHF_EXECINSTR) ||
	    !sh->sh_size || sh->sh_addr > UINT64_MAX - sh->sh_size ||
	    !(name = elf_strptr(elf, shstrndx, sh->sh_name)))
		return false;
	for (; *names && strcmp(name, *names); names++)
		;
	if (!*names)
		return false;
	i0 = utable_row_index(t, sh->sh_addr);
	i1 = utable_row_index(t, sh->sh_addr + sh->sh_size - 1);
	return !t->nrows || (i0 == i1 && (i0 < 0 || t->rule[i0] == UR_FP));
}

/* x86-64 PLT stubs without CFI: lld writes none (GNU ld writes the
 * DW_CFA_def_cfa_expression x86_64.c reads), so a sample in a PLT stub of
 * a library lld linked (Rust's libLLVM and librustc_driver, clang's) had
 * no caller. A stub jumps on through the GOT with the return address at
 * rsp (CFA = rsp + 8); a lazy .plt entry pushes its index at 6 bytes in
 * (jmp *GOT; push; jmp PLT0: CFA rsp + 16 from its 11th byte on, as GNU
 * ld's expression says; 9th with an endbr64 first), and PLT0 pushes the
 * GOT's second word (rsp + 16, then + 24). .plt.sec, .plt.got and .iplt
 * only jump. Rows where no CFI covers them. */
static void add_plt_x86(Elf *elf, struct utable *t)
{
	static const char *const lazy[] = { ".plt", NULL }, *const jumps[] = { ".plt.sec", ".plt.got", ".iplt", NULL };
	static const uint8_t endbr[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	struct urule r = { .kind = UR_NORMAL, .cfa_reg = UNW_RSP, .ra_off = -8, .rbp = URBP_SAME,
			   .rbx = URBP_SAME };
	struct xrange x[8];
	Elf_Scn *scn = NULL;
	size_t shstrndx, len;
	GElf_Shdr sh;
	int nx = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) && nx + 3 <= (int)ARRAY_SIZE(x)) {
		const uint8_t *c;
		uint16_t r8, r16, r24;
		if (plt_in_gap(elf, scn, shstrndx, t, &sh, jumps)) {
			r.kind = UR_NORMAL;
			r.cfa_off = 8;
			x[nx++] = (struct xrange){ sh.sh_addr, sh.sh_addr + sh.sh_size, rule_add(t, &r) };
			continue;
		}
		if (!plt_in_gap(elf, scn, shstrndx, t, &sh, lazy))
			continue;
		r.kind = UR_NORMAL;
		r.cfa_off = 8;
		r8 = rule_add(t, &r);
		c = code_bytes(elf, sh.sh_addr, 32, &len);
		if ((sh.sh_addr & 15) || sh.sh_size < 32 || !c || len < 32 ||
		    c[0] != 0xff || c[1] != 0x35) {
			/* not the layout known: a stub is sampled at its jump */
			x[nx++] = (struct xrange){ sh.sh_addr, sh.sh_addr + sh.sh_size, r8 };
			continue;
		}
		r.cfa_off = 16;
		r16 = rule_add(t, &r);
		r.cfa_off = 24;
		r24 = rule_add(t, &r);
		r.kind = UR_PLT;
		r.cfa_off = 8;
		r.plt_thresh = !memcmp(c + 16, endbr, sizeof(endbr)) ? 9 : 11;
		x[nx++] = (struct xrange){ sh.sh_addr, sh.sh_addr + 6, r16 };
		x[nx++] = (struct xrange){ sh.sh_addr + 6, sh.sh_addr + 16, r24 };
		x[nx++] = (struct xrange){ sh.sh_addr + 16, sh.sh_addr + sh.sh_size, rule_add(t, &r) };
		r.plt_thresh = 0;
	}
	if (nx)
		insert_ranges(t, x, nx);
}

/* aarch64's PLT stubs have no CFI (GNU ld writes none): they jump on with
 * x16 and x17 and leave sp and the link register alone, so the return
 * address is in the link register, CFA = sp. Rows for .plt and .iplt
 * where no CFI covers them. */
static void add_plt_a64(Elf *elf, struct utable *t)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct xrange x[2];
	int nx = 0;
	struct urule r = { .kind = UR_LEAF, .cfa_reg = UNW_SP, .rbp = URBP_SAME, .rbx = URBP_SAME,
			   .flags = UR_F_RA_LR };

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) && nx < 2) {
		const char *name;
		long i0, i1;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size ||
		    sh.sh_addr > UINT64_MAX - sh.sh_size ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    (strcmp(name, ".plt") && strcmp(name, ".iplt")))
			continue;
		/* in a gap of the CFI, whole */
		i0 = utable_row_index(t, sh.sh_addr);
		i1 = utable_row_index(t, sh.sh_addr + sh.sh_size - 1);
		if (t->nrows && (i0 != i1 || (i0 >= 0 && t->rule[i0] != UR_FP)))
			continue;
		if (nx && (x[0].end > sh.sh_addr && x[0].start < sh.sh_addr + sh.sh_size))
			continue;
		x[nx++] = (struct xrange){ sh.sh_addr, sh.sh_addr + sh.sh_size, rule_add(t, &r) };
	}
	if (nx == 2 && x[0].start > x[1].start) {
		struct xrange tmp = x[0];
		x[0] = x[1];
		x[1] = tmp;
	}
	if (nx)
		insert_ranges(t, x, nx);
}

/* aarch64's signal return trampoline, "mov x8, #139 (rt_sigreturn); svc
 * #0": the vDSO's __kernel_rt_sigreturn, which has no CFI since Linux
 * 5.x (its directives are commented out so that libgcc recognises it by
 * these bytes and reads the sigcontext), and musl's __restore_rt. */
static const uint8_t a64_sigreturn[8] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 };

/* Does code (4-byte instructions) make a frame anywhere: store x29 and x30
 * as a pair (a frame record) or move sp (sub or add with sp as
 * destination)? */
static bool a64_makes_frames(const uint8_t *code, size_t len)
{
	for (size_t i = 0; i + 4 <= len; i += 4) {
		uint32_t in;
		memcpy(&in, code + i, 4);
		if ((in & 0xfc407fffu) == 0xa8007bfdu || /* stp x29, x30, [sp...] */
		    (in & 0x7f80001fu) == 0x5100001fu || /* sub sp, Xn, #imm */
		    (in & 0x7f80001fu) == 0x1100001fu)   /* add sp, Xn, #imm */
			return true;
	}
	return false;
}

/* aarch64 code without CFI: the signal return trampolines (rule SIGNAL,
 * from the byte before, as the handler "returns" to their first byte),
 * and, in a file with no CFI at all whose code makes no frame (the
 * vDSO: Linux's arm64 vDSO has no .eh_frame, and its functions are
 * leaves that touch neither sp nor x29), a leaf rule for the whole code:
 * CFA = sp, the return address in the link register. */
static void add_code_a64(Elf *elf, struct utable *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	struct xrange x[12];
	int nx = 0;
	bool leaf = t->nrows == 0;
	struct urule r = { .kind = UR_LEAF, .cfa_reg = UNW_SP, .rbp = URBP_SAME, .rbx = URBP_SAME,
			   .flags = UR_F_RA_LR };
	uint16_t leaf_rule = 0;

	while ((scn = elf_nextscn(elf, scn)) && nx + 3 <= (int)ARRAY_SIZE(x)) {
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
		    d->d_size < 8 || d->d_size > UINT64_MAX - sh.sh_addr || sh.sh_addr < 1)
			continue;
		const uint8_t *buf = d->d_buf, *p = buf, *end = buf + d->d_size;
		bool whole = leaf && !a64_makes_frames(buf, d->d_size);
		uint64_t from = sh.sh_addr;
		if (whole && !leaf_rule)
			leaf_rule = rule_add(t, &r);
		while (nx + 3 <= (int)ARRAY_SIZE(x) && p < end &&
		       (p = memmem(p, (size_t)(end - p), a64_sigreturn, sizeof(a64_sigreturn)))) {
			uint64_t a = sh.sh_addr + (uint64_t)(p - buf);
			p += 4;
			if ((a & 3) || a - 1 < from || utable_find(t, a)->kind != UR_FP ||
			    utable_find(t, a - 1)->kind != UR_FP)
				continue;
			if (whole && a - 1 > from)
				x[nx++] = (struct xrange){ from, a - 1, leaf_rule };
			x[nx++] = (struct xrange){ a - 1, a + sizeof(a64_sigreturn), UR_SIGNAL };
			from = a + sizeof(a64_sigreturn);
			t->nsignal_tramp++;
		}
		if (whole && from < sh.sh_addr + d->d_size)
			x[nx++] = (struct xrange){ from, sh.sh_addr + d->d_size, leaf_rule };
	}
	if (nx && !insert_ranges(t, x, nx))
		t->nsignal_tramp = 0;
}

/* Record where the functions of roots.h's list are (roots, and stack
 * switches). Returns false when elf has no .symtab to look in. */
static bool find_root_callers(Elf *elf, struct utable *t)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	bool have_symtab = false;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) ||
		    (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM))
			continue;
		have_symtab |= shdr.sh_type == SHT_SYMTAB;
		/* gelf_getsym checks each index against the data */
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
		size_t n = d && d->d_buf && entsize ? d->d_size / entsize : 0;
		for (size_t i = 0; i < n && t->nroots < (int)ARRAY_SIZE(t->roots); i++) {
			GElf_Sym sym;
			const char *name;
			int kind;
			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value || !sym.st_size ||
			    !(name = elf_strptr(elf, shdr.sh_link, sym.st_name)))
				continue;
			/* mangled C++ and Rust names ("_Z", "_R"), most symbols
			 * of a big library, are never roots */
			if (name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
				continue;
			if (!(kind = roots_kind(name, SIZE_MAX)))
				continue;
			int j = 0;
			while (j < t->nroots && t->roots[j].start != sym.st_value)
				j++;
			if (j == t->nroots) {
				t->roots[j].start = sym.st_value;
				t->roots[j].end = sym.st_value + sym.st_size;
				t->roots[j].kind = kind;
				t->nroots++;
			}
		}
	}
	return have_symtab;
}

/* glibc's __start_context where the symbol tables did not name it. */
static void add_start_context(Elf *elf, struct utable *t)
{
	uint64_t start, size;
	int i;

	for (i = 0; i < t->nroots; i++)
		if (t->roots[i].kind == ROOT_K_CONTEXT)
			return;
	if (t->nroots >= (int)ARRAY_SIZE(t->roots) || !(start = module_elf_start_context(elf, &size)))
		return;
	t->roots[t->nroots].start = start;
	t->roots[t->nroots].end = start + size;
	t->roots[t->nroots].kind = ROOT_K_CONTEXT;
	t->nroots++;
}


/* Whether this is the first time this process finds bad CFI in path: a
 * table let go and built again (stax agent, for weeks) says it once. */
static bool first_bad_cfi(const char *path)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t seen[256];
	static size_t nseen, next; /* the oldest forgotten past 256 */
	uint64_t h = hash_bytes(path, strlen(path)) | 1;
	bool first = true;
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nseen && first; i++)
		first = seen[i] != h;
	if (first) {
		seen[next] = h;
		next = (next + 1) % ARRAY_SIZE(seen);
		nseen += nseen < ARRAY_SIZE(seen);
	}
	pthread_mutex_unlock(&lock);
	return first;
}

/* Find m's debug file (by build-id, else by .gnu_debuglink) once. */
static Elf *debug_open(struct module *m, int *fd, char **dpath)
{
	const char *found;
	Elf *d = module_open_debug(m, MODULE_DEBUG_BUILD_ID, fd, &found);

	if (!d)
		d = module_open_debug(m, MODULE_DEBUG_LINK, fd, &found);
	if (d)
		*dpath = xstrdup(found);
	return d;
}

struct utable *utable_build(struct module *m)
{
	const char *path = module_path(m);
	static const char *const names[] = { ".eh_frame", ".debug_frame", "debug file .debug_frame" };
	struct utable *t = xcalloc(1, sizeof(*t));
	struct cfi_section secs[UTABLE_MAX_SECS];
	const char *secname[UTABLE_MAX_SECS];
	size_t cap = 0;
	int fd = -1, dfd = -1, nsecs = 0, r;
	Elf *elf = NULL, *de = NULL;
	char *dpath = NULL;
	uint64_t t0 = now_ns();
	struct cache_key key;
	bool use_cache = false, warned = false;

	init_commands(t, &cap);
	t->path = xstrdup(path);
	if (!(elf = module_open(m, &fd))) {
		t->err = -ENOENT;
		goto out;
	}
	t->build_id_size = elf_file_build_id(elf, t->build_id, sizeof(t->build_id));
	if (fd >= 0 && (use_cache = cache_key_of(elf, fd, path, t->build_id, t->build_id_size, &key))) {
		struct utable *c = tcache_load(&key);
		if (c) {
			utable_free(t);
			t = c;
			goto out;
		}
	}
	read_loads(elf, t);
	if (t->arch == UNWIND_ARCH_NONE) {
		/* a machine stax does not unwind (32-bit code, ...): no
		 * rules, every frame there falls back to frame pointers */
		t->err = -ENOEXEC;
		goto out;
	}
	/* .eh_frame first; .debug_frame only fills what it leaves uncovered
	 * (code built with -fno-asynchronous-unwind-tables), from the file
	 * itself or else from its separate debug file. */
	const char *why;
	if ((r = get_section(elf, ".eh_frame", &secs[nsecs], &why)) > 0)
		secname[nsecs++] = names[0];
	else if (r < 0)
		warned = true, warn("cannot read .eh_frame of %s: %s; frames there fall back to frame"
				    " pointers", path, why);
	if ((r = get_section(elf, ".debug_frame", &secs[nsecs], &why)) > 0) {
		secname[nsecs++] = names[1];
	} else {
		if (r < 0)
			warned = true, warn("cannot read .debug_frame of %s: %s; frames there fall back"
					    " to frame pointers", path, why);
		if (fd >= 0 && (de = debug_open(m, &dfd, &dpath))) {
			if ((r = get_section(de, ".debug_frame", &secs[nsecs], &why)) > 0)
				secname[nsecs++] = names[2];
			else if (r < 0)
				warned = true, warn("cannot read .debug_frame of %s: %s; frames there"
						    " fall back to frame pointers", dpath, why);
		}
	}
	r = nsecs ? utable_compile(t, secs, nsecs) : -ENOENT;
	if ((t->err == -EINVAL || r == -EINVAL) && first_bad_cfi(path)) {
		int s = t->err_sec < nsecs ? t->err_sec : 0;
		const char *f = secs[s].err_file ? secs[s].err_file : "?";
		warn("bad CFI in %s: %s at offset %#zx (%s:%d); "
		     "frames there fall back to frame pointers", path, secname[s],
		     secs[s].err_off, strncmp(f, "src/", 4) ? f : f + 4, secs[s].err_line);
	}
	if (t->nrows) {
		bool later = t->nfde > t->nfde_sec[0];
		t->source = !later ? secname[0] : t->nfde_sec[0] ? "mixed" : secname[nsecs - 1];
		if (dpath && t->nfde_sec[nsecs - 1]) {
			free(t->path);
			t->path = dpath;
			dpath = NULL;
		}
	} else if (!t->err) {
		t->err = r < 0 ? r : -ENOENT;
	}
	if (t->arch == UNWIND_ARCH_X86_64) {
		add_trampolines(elf, t);
		add_init_fini(elf, t);
		add_plt_x86(elf, t);
	} else {
		add_code_a64(elf, t);
		add_plt_a64(elf, t);
	}
	/* Distribution libraries keep local symbols (__libc_start_call_main,
	 * start_thread) only in their separate debug files. */
	if (!find_root_callers(elf, t) && fd >= 0) {
		if (!de)
			de = debug_open(m, &dfd, &dpath);
		if (de)
			find_root_callers(de, t);
	}
	add_start_context(elf, t);
	t->build_ns = now_ns() - t0;
	/* only a table made without complaint: a cached one says nothing */
	if (use_cache && !warned && !t->err && t->nrows && !elfguard_changed(elf) &&
	    !elfguard_changed(de))
		tcache_store(t, &key);
out:
	/* a file cut short while read: its bytes past the new end read as
	 * zeros, so the table is not to be trusted */
	if (elfguard_changed(elf) || elfguard_changed(de)) {
		warn("cannot read %s: it changed while being read; frames there fall back to frame"
		     " pointers", elfguard_changed(elf) ? path : t->path);
		t->nrows = 0;
		t->nroots = 0;
		t->err = -EIO;
	}
	free(dpath);
	module_close(de, dfd);
	module_close(elf, fd);
	if (!t->build_ns || t->cached)
		t->build_ns = now_ns() - t0;
	return t;
}

/* The provisional table's CFI from elf into t->lazy: false when it has no
 * .eh_frame and .eh_frame_hdr with a search table of the encodings every
 * linker writes (version 1; pcrel sdata4, udata4, datarel sdata4). */
static bool lazy_read(Elf *elf, struct utable *t)
{
	struct cfi_section fr, hd;
	const char *why;
	const uint8_t *h;
	uint64_t lo, hi = 0;
	uint32_t n;
	struct ulazy *z;

	if (get_section(elf, ".eh_frame", &fr, &why) <= 0 || get_section(elf, ".eh_frame_hdr", &hd, &why) <= 0)
		return false;
	h = hd.data;
	if (hd.size < 12 || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(&n, h + 8, 4);
	if (!n || (hd.size - 12) / 8 < n)
		return false;
	/* from the first FDE to the end of the last executable segment (a
	 * file BOLT rewrote has its code in several) */
	lo = hd.vaddr + (uint64_t)(int64_t)rd_s32(h + 12);
	for (int i = 0; i < t->nload; i++)
		if (t->load[i].exec && t->load[i].vaddr + t->load[i].filesz > hi)
			hi = t->load[i].vaddr + t->load[i].filesz;
	if (hi <= lo || hi - lo > 0xffffffffull)
		return false;
	z = xcalloc(1, sizeof(*z));
	z->frame = xmalloc(fr.size);
	memcpy(z->frame, fr.data, fr.size);
	z->frame_size = fr.size;
	z->frame_vaddr = fr.vaddr;
	z->table = xmalloc((size_t)n * 8);
	memcpy(z->table, h + 12, (size_t)n * 8);
	z->nfde = n;
	z->hdr_vaddr = hd.vaddr;
	z->text_vaddr = fr.textrel;
	t->lazy = z;
	/* one row: every frame from the first FDE to the end of its code
	 * runs its CFI (a pc no FDE covers falls back to frame pointers) */
	t->base = lo;
	t->nrows = 2;
	t->addr = xmalloc(2 * sizeof(*t->addr));
	t->rule = xmalloc(2 * sizeof(*t->rule));
	t->addr[0] = 0;
	t->addr[1] = (uint32_t)(hi - lo);
	t->rule[0] = UR_SLOW;
	t->rule[1] = UR_FP;
	utable_build_pages(t);
	t->nfde = n;
	t->source = ".eh_frame";
	return true;
}

struct utable *utable_build_quick(struct module *m)
{
	struct utable *t = xcalloc(1, sizeof(*t));
	uint64_t t0 = now_ns();
	size_t cap = 0;
	Elf *elf;
	int fd = -1;
	bool ok;

	init_commands(t, &cap);
	t->path = xstrdup(module_path(m));
	if (!(elf = module_open(m, &fd))) {
		utable_free(t);
		return NULL;
	}
	t->build_id_size = elf_file_build_id(elf, t->build_id, sizeof(t->build_id));
	read_loads(elf, t);
	ok = t->arch != UNWIND_ARCH_NONE && lazy_read(elf, t);
	if (ok)
		find_root_callers(elf, t);
	if (elfguard_changed(elf))
		ok = false;
	module_close(elf, fd);
	if (!ok) {
		utable_free(t);
		return NULL;
	}
	t->build_ns = now_ns() - t0;
	return t;
}

struct utable *utable_load(const char *path)
{
	struct module *m = module_get(path, NULL, 0);
	struct utable *t = utable_build(m);
	module_put(m);
	return t;
}

void utable_free(struct utable *t)
{
	if (!t)
		return;
	if (t->map) {
		munmap(t->map, t->map_size);
	} else {
		free(t->addr);
		free(t->rule);
	}
	free(t->page);
	free(t->rules);
	free(t->slow);
	if (t->lazy) {
		free(t->lazy->frame);
		free(t->lazy->table);
		free(t->lazy);
	}
	free(t->blob);
	free(t->path);
	free(t);
}
