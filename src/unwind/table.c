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
#include "unwind/table-private.h"
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
	utable_add_nocfi_rows(elf, t);
	/* Distribution libraries keep local symbols (__libc_start_call_main,
	 * start_thread) only in their separate debug files. */
	if (!utable_find_roots(elf, t) && fd >= 0) {
		if (!de)
			de = debug_open(m, &dfd, &dpath);
		if (de)
			utable_find_roots(de, t);
	}
	utable_add_start_context(elf, t);
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
		utable_find_roots(elf, t);
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
