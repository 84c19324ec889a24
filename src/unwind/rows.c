/* rows.c - the rows a module's table gets for code no CFI covers, and its
 * roots (table.c compiles the CFI, then calls these; table-private.h):
 * signal trampolines found by their bytes (musl's __restore_rt, code at
 * odd addresses), glibc's _init and _fini, PLT stubs (lld writes no CFI
 * for them; aarch64's have none), aarch64 code without CFI that makes no
 * frame, and the functions of roots.h's list (roots, stack switches, the
 * makecontext trampoline). Each range is inserted only where no CFI
 * covers it; the rows keep table.h's invariants.
 */
#include "unwind/table-private.h"
#include "unwind/arch.h"
#include "unwind/roots.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elffile.h"
#include "lib/util.h"
#include "module/module.h"

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
bool utable_find_roots(Elf *elf, struct utable *t)
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
void utable_add_start_context(Elf *elf, struct utable *t)
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



void utable_add_nocfi_rows(Elf *elf, struct utable *t)
{
	if (t->arch == UNWIND_ARCH_X86_64) {
		add_trampolines(elf, t);
		add_init_fini(elf, t);
		add_plt_x86(elf, t);
	} else {
		add_code_a64(elf, t);
		add_plt_a64(elf, t);
	}
}
