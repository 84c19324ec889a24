/* test_unwind_libdw.c - differential check of compiled unwind tables
 * against libdw's own CFI interpreter (dwarf_cfi_addrframe).
 *
 * For every row of the compiled table of libc, of this test binary and of
 * the unwinder's test programs (tests/programs/build/unwind_*), at
 * the row's first and last byte: libdw must give the same CFA rule, the
 * same return-address rule and the same rbp rule, unless the row is SLOW
 * (then the interpreter runs at unwind time) and must agree that gap rows
 * have no CFI. Prints the counts; mismatches must be 0.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/util.h"
#include "test.h"
#include "unwind/table.h"
#include "unwind/unwind.h"

struct counts {
	size_t rows, checked, slow, plt, stop, signal, gaps, crti, mismatches;
};

static bool is_offset_rule(const Dwarf_Op *ops, size_t nops, int64_t off)
{
	if (nops == 0 || !ops || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (off == 0)
		return nops == 1;
	return nops == 2 && ops[1].atom == DW_OP_plus_uconst && (int64_t)ops[1].number == off;
}

static int mismatch(struct counts *c, uint64_t a, const char *what)
{
	if (c->mismatches++ < 10)
		printf("# mismatch at %#lx: %s\n", (unsigned long)a, what);
	return 1;
}

/* Is vaddr a in the section called name? */
static bool in_section(Elf *elf, uint64_t a, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && a >= sh.sh_addr && a - sh.sh_addr < sh.sh_size &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return true;
	return false;
}

/* Compare the rule at vaddr a with libdw's. */
static void check_addr(Dwarf_CFI *cfi, Elf *elf, const struct urule *r, uint64_t a,
		       struct counts *c)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops, mem[3];
	size_t nops;

	if (dwarf_cfi_addrframe(cfi, a, &frame) != 0) {
		if (r->kind == UR_FP)
			c->gaps++;
		else if (r->kind == UR_NORMAL && r->cfa_reg == UNW_RSP &&
			 (r->cfa_off == 8 || r->cfa_off == 16) && r->ra_off == -8 &&
			 (in_section(elf, a, ".init") || in_section(elf, a, ".fini")))
			c->crti++; /* crti.o's _init and _fini, given rows of their own */
		else
			mismatch(c, a, "libdw has no frame where we have a rule");
		return;
	}
	if (r->kind == UR_FP) {
		mismatch(c, a, "libdw has a frame where we have a gap");
		goto out;
	}
	c->checked++;
	if (r->kind == UR_SLOW) {
		c->slow++;
		goto out;
	}
	if (r->kind == UR_SIGNAL) {
		bool sig = false;
		Dwarf_Addr s, e;
		dwarf_frame_info(frame, &s, &e, &sig);
		if (!sig)
			mismatch(c, a, "SIGNAL row not a signal frame in libdw");
		c->signal++;
		goto out;
	}
	if (dwarf_frame_register(frame, 16 /* rip */, mem, &ops, &nops) != 0) {
		mismatch(c, a, "libdw cannot give the RA rule");
		goto out;
	}
	if (r->kind == UR_STOP) {
		/* libdw: nops 0 and ops == ops_mem means undefined */
		if (nops != 0 || ops != mem)
			mismatch(c, a, "STOP row but RA is defined in libdw");
		c->stop++;
		goto out;
	}
	if (!is_offset_rule(ops, nops, r->ra_off))
		mismatch(c, a, "RA rule differs");
	if (dwarf_frame_register(frame, 6, mem, &ops, &nops) != 0) {
		mismatch(c, a, "libdw cannot give the rbp rule");
		goto out;
	}
	switch (r->rbp) {
	case URBP_SAME: /* libdw: nops 0 and ops NULL */
		if (nops != 0 || ops != NULL)
			mismatch(c, a, "rbp should be same-value");
		break;
	case URBP_UNDEF:
		if (nops != 0 || ops != mem)
			mismatch(c, a, "rbp should be undefined");
		break;
	case URBP_CFA:
		if (!is_offset_rule(ops, nops, r->rbp_off))
			mismatch(c, a, "rbp offset differs");
		break;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0) {
		mismatch(c, a, "libdw cannot give the CFA");
		goto out;
	}
	if (r->kind == UR_PLT) {
		c->plt++;
		if (nops != 9 || ops[0].atom != DW_OP_breg7 || (int64_t)ops[0].number != r->cfa_off ||
		    ops[1].atom != DW_OP_breg16 || ops[1].number != 0 ||
		    ops[2].atom != DW_OP_lit15 || ops[3].atom != DW_OP_and ||
		    ops[4].atom != DW_OP_lit0 + r->plt_thresh || ops[5].atom != DW_OP_ge ||
		    ops[6].atom != DW_OP_lit3 || ops[7].atom != DW_OP_shl ||
		    ops[8].atom != DW_OP_plus)
			mismatch(c, a, "PLT expression differs");
		goto out;
	}
	if (nops != 1 || ops[0].atom != DW_OP_bregx || ops[0].number != r->cfa_reg ||
	    (int64_t)ops[0].number2 != r->cfa_off)
		mismatch(c, a, "CFA rule differs");
out:
	free(frame);
}

static void check_module(const char *name, const char *path)
{
	char label[256];
	struct counts c = { 0 };
	uint64_t t0 = now_ns();
	struct utable *t = utable_load(path);
	double ms = (now_ns() - t0) / 1e6;

	snprintf(label, sizeof(label), "%s: table built from %s", name, path);
	CHECK(t->nrows > 0 && t->source != NULL, label);
	printf("# %s: %u rows, %u rules (%d commands), %u FDEs, %u SLOW rows in %u FDEs, "
	       "source %s, built in %.2f ms\n", name, t->nrows, t->nrules, UR_NCOMMANDS,
	       t->nfde, t->nslow_rows, t->nslow, t->source ? t->source : "-", ms);

	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	if (!cfi) {
		SKIP(name, "libdw cannot read the CFI");
		goto out;
	}
	for (uint32_t i = 0; i + 1 < t->nrows; i++) {
		const struct urule *r = &t->rules[t->rule[i]];
		uint64_t a = t->base + t->addr[i], e = t->base + t->addr[i + 1];
		c.rows++;
		check_addr(cfi, elf, r, a, &c);
		if (e - 1 != a)
			check_addr(cfi, elf, r, e - 1, &c);
		/* the lookup function agrees with the row arrays */
		if (utable_find(t, a) != r || utable_find(t, e - 1) != r)
			mismatch(&c, a, "utable_find disagrees with the rows");
	}
	printf("# %s: %zu rows compared (%zu addresses with CFI, %zu gap addresses, %zu of"
	       " crti's _init and _fini), %zu SLOW, %zu PLT, %zu STOP, %zu SIGNAL, %zu mismatches\n",
	       name, c.rows, c.checked, c.gaps, c.crti, c.slow, c.plt, c.stop, c.signal, c.mismatches);
	snprintf(label, sizeof(label), "%s: every row agrees with libdw", name);
	CHECK(c.mismatches == 0 && c.checked > 0, label);
	snprintf(label, sizeof(label), "%s: SLOW rows are rare (<1%%)", name);
	CHECK(c.slow * 100 <= c.checked, label);
out:
	if (cfi)
		dwarf_cfi_end(cfi);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	utable_free(t);
}

int main(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";

	elf_version(EV_CURRENT);
	if (access(libc, R_OK) == 0)
		check_module("libc", libc);
	else
		SKIP("libc", "no /lib/x86_64-linux-gnu/libc.so.6");
	check_module("test binary", "/proc/self/exe");
	/* The unwinder's test programs (make programs): gcc without frame
	 * pointers, clang with, mixed in one binary, a PLT into a .so, and an
	 * assembly function without CFI (a gap row). */
	static const char *const progs[] = {
		"tests/programs/build/unwind_qsort-nofp", "tests/programs/build/unwind_signal-fp",
		"tests/programs/build/unwind_deep", "tests/programs/build/unwind_plt-nofp",
		"tests/programs/build/libunwind_plt.so", "tests/programs/build/unwind_nocfi-nofp",
	};
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++) {
		if (access(progs[i], R_OK) == 0)
			check_module(strrchr(progs[i], '/') + 1, progs[i]);
		else
			SKIP(progs[i], "missing (run make programs from the top directory)");
	}

	/* How fast libc's table builds (target: under 50 ms) is measured by
	 * make bench (section 7, bench/bench_tables.c), not here: a test's
	 * result must not depend on how busy the machine is. */
	TEST_DONE();
}
