/* test_unwind_table.c - the rows unwind/rows.c adds to a module's table
 * for code without CFI (signal trampolines found by their bytes), on
 * small ELF files written here with their sections where an odd or
 * crafted file may put them: at address 0, out of address order, back to
 * back, running into the CFI; and for glibc's _init and _fini. Each table is checked against the
 * invariants of table.h (rows sorted, no two equal neighbours, the last
 * a gap row) and looked up around every trampoline.
 *
 * The files are real ELF files on disk read through utable_load(), as
 * the recorder reads every binary a sampled process maps.
 *
 * And the provisional table (utable_build_quick(): .eh_frame_hdr's search
 * table, each frame's FDE found and run at lookup) of real files (libc,
 * this test's own binary) gives at every compiled row of theirs the CFA
 * and the saved rbp that row says; a file without .eh_frame_hdr has none.
 */
#include "test.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/table.h"
#include "unwind/unwind.h"
#include "module/module.h"
#include "lib/util.h"

/* mov $15,%rax; syscall (rt_sigreturn), as musl's __restore_rt */
static const uint8_t tramp[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

struct sec {
	const char *name;
	uint32_t type;
	uint64_t flags, addr;
	const uint8_t *data;
	size_t size;
};

static char dir[] = "/tmp/stax-unwind-table-XXXXXX";

/* An ELF64 x86-64 shared object with sections s[0..n) (no program
 * headers: the table reads sections). Returns its path (static). */
static const char *write_elf(const char *name, const struct sec *s, int n)
{
	static char path[128];
	uint8_t img[8192];
	char strtab[256] = "";
	size_t off = sizeof(Elf64_Ehdr), slen = 1, name_off[16];
	Elf64_Shdr sh[18];

	memset(img, 0, sizeof(img));
	memset(sh, 0, sizeof(sh));
	for (int i = 0; i < n; i++) {
		name_off[i] = slen;
		strcpy(strtab + slen, s[i].name);
		slen += strlen(s[i].name) + 1;
		off = (off + 15) & ~(size_t)15;
		memcpy(img + off, s[i].data, s[i].size);
		sh[i + 1] = (Elf64_Shdr){ .sh_name = (uint32_t)name_off[i], .sh_type = s[i].type,
					  .sh_flags = s[i].flags, .sh_addr = s[i].addr,
					  .sh_offset = off, .sh_size = s[i].size, .sh_addralign = 1 };
		off += s[i].size;
	}
	size_t shstr = (size_t)n + 1;
	sh[shstr] = (Elf64_Shdr){ .sh_name = (uint32_t)slen, .sh_type = SHT_STRTAB,
				  .sh_offset = off, .sh_size = slen + 10, .sh_addralign = 1 };
	strcpy(strtab + slen, ".shstrtab");
	slen += 10;
	memcpy(img + off, strtab, slen);
	off = (off + slen + 7) & ~(size_t)7;
	Elf64_Ehdr eh = {
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT },
		.e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		.e_shoff = off, .e_ehsize = sizeof(Elf64_Ehdr), .e_shentsize = sizeof(Elf64_Shdr),
		.e_shnum = (uint16_t)(n + 2), .e_shstrndx = (uint16_t)shstr,
	};
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + off, sh, (size_t)(n + 2) * sizeof(Elf64_Shdr));
	off += (size_t)(n + 2) * sizeof(Elf64_Shdr);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(img, 1, off, f) != off || fclose(f)) {
		printf("# cannot write %s\n", path);
		exit(1);
	}
	return path;
}

/* table.h's row invariants; prints the first broken one */
static bool rows_valid(const struct utable *t)
{
	if (!t->nrows)
		return true;
	if (t->addr[0] != 0) {
		printf("# first row at offset %u, not 0\n", t->addr[0]);
		return false;
	}
	for (uint32_t i = 0; i < t->nrows; i++) {
		if (t->rule[i] >= t->nrules) {
			printf("# row %u: rule %u of %u\n", i, t->rule[i], t->nrules);
			return false;
		}
		if (i && t->addr[i] <= t->addr[i - 1]) {
			printf("# row %u at %#llx after row %u at %#llx\n", i,
			       (unsigned long long)(t->base + t->addr[i]), i - 1,
			       (unsigned long long)(t->base + t->addr[i - 1]));
			return false;
		}
		if (i && t->rule[i] == t->rule[i - 1]) {
			printf("# rows %u and %u have the same rule %u\n", i - 1, i, t->rule[i]);
			return false;
		}
	}
	if (t->rule[t->nrows - 1] != UR_FP) {
		printf("# the last row is not a gap row\n");
		return false;
	}
	return true;
}

static int kind_at(const struct utable *t, uint64_t a)
{
	return utable_find(t, a)->kind;
}

/* [a - 1, a + 9) is SIGNAL, and the bytes just around it are not */
static bool signal_at(const struct utable *t, uint64_t a)
{
	for (uint64_t v = a - 1; v < a + sizeof(tramp); v++)
		if (kind_at(t, v) != UR_SIGNAL)
			return false;
	return kind_at(t, a - 2) != UR_SIGNAL && kind_at(t, a + sizeof(tramp)) != UR_SIGNAL;
}

/* code: 16 bytes of int3, the trampoline at +16, int3 after it */
static void code_with_tramp(uint8_t *code, size_t size, size_t at)
{
	memset(code, 0xcc, size);
	memcpy(code + at, tramp, sizeof(tramp));
}

static void test_at_zero(void)
{
	uint8_t code[32];
	code_with_tramp(code, sizeof(code), 0);
	struct sec s[] = { { ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0, code, sizeof(code) } };
	struct utable *t = utable_load(write_elf("at-zero", s, 1));
	/* its row would start at -1: no room; the table stays empty */
	CHECK(t && rows_valid(t) && t->nsignal_tramp == 0 && kind_at(t, 0) == UR_FP,
	      "trampoline at address 0: no row (none fits before it), no crash");
	utable_free(t);

	/* the last bytes of the address space: [a - 1, a + 9) would wrap */
	struct sec g[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, UINT64_MAX - 8 - 16, code, 25 },
		{ ".go.buildinfo", SHT_PROGBITS, SHF_ALLOC, 0x1000, code, 4 },
	};
	code_with_tramp(code, sizeof(code), 16);
	t = utable_load(write_elf("at-top", g, 2));
	CHECK(t && rows_valid(t) && t->nsignal_tramp == 0,
	      "trampoline ending at the top of the address space (Go search): no row, no crash");
	utable_free(t);
}

static void test_out_of_order(void)
{
	uint8_t a[48], b[48];
	code_with_tramp(a, sizeof(a), 16);
	code_with_tramp(b, sizeof(b), 16);
	/* the section at the higher address first in the file */
	struct sec s[] = {
		{ ".text.hi", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x2000, a, sizeof(a) },
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, b, sizeof(b) },
	};
	struct utable *t = utable_load(write_elf("out-of-order", s, 2));
	CHECK(t && rows_valid(t) && t->nsignal_tramp == 2 && signal_at(t, 0x1010) &&
	      signal_at(t, 0x2010),
	      "trampolines in sections out of address order: both found, rows sorted");
	utable_free(t);

	/* two sections at the same address: the same trampoline twice */
	struct sec d[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, a, sizeof(a) },
		{ ".text.dup", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, a, sizeof(a) },
	};
	t = utable_load(write_elf("overlap", d, 2));
	CHECK(t && rows_valid(t) && signal_at(t, 0x1010),
	      "overlapping sections: the trampoline once, rows sorted");
	utable_free(t);
}

static void test_back_to_back(void)
{
	uint8_t code[64];
	code_with_tramp(code, sizeof(code), 16);
	memcpy(code + 16 + sizeof(tramp), tramp, sizeof(tramp));
	struct sec s[] = { { ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, code, sizeof(code) } };
	struct utable *t = utable_load(write_elf("back-to-back", s, 1));
	bool all = true;
	for (uint64_t v = 0x100f; v < 0x1010 + 2 * sizeof(tramp); v++)
		all &= kind_at(t, v) == UR_SIGNAL;
	CHECK(t && rows_valid(t) && t->nsignal_tramp == 2 && all &&
	      kind_at(t, 0x1010 + 2 * sizeof(tramp)) == UR_FP,
	      "two trampolines back to back: one SIGNAL range, rows sorted");
	utable_free(t);
}

/* .eh_frame with one CIE (CFA = rsp + 8, RA at CFA - 8; absolute
 * addresses) and one FDE for [begin, begin + len) */
static size_t eh_frame(uint8_t *p, uint64_t begin, uint64_t len)
{
	static const uint8_t cie[] = {
		16, 0, 0, 0,  0, 0, 0, 0,  1, 0,  1, 0x78, 16,
		0x0c, 7, 8,  0x90, 1,  0, 0,
	};
	memcpy(p, cie, sizeof(cie));
	uint8_t *f = p + sizeof(cie);
	uint32_t flen = 20, cptr = (uint32_t)(sizeof(cie) + 4);
	memcpy(f, &flen, 4);
	memcpy(f + 4, &cptr, 4);
	memcpy(f + 8, &begin, 8);
	memcpy(f + 16, &len, 8);
	memset(f + 24, 0, 4); /* the terminator */
	return sizeof(cie) + 28;
}

static void test_into_cfi(void)
{
	uint8_t code[64], eh[64];
	code_with_tramp(code, sizeof(code), 16);
	/* a function with CFI from 0x1014 (inside the trampoline's bytes:
	 * a crafted file) to 0x1030 */
	size_t n = eh_frame(eh, 0x1014, 0x1c);
	struct sec s[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, code, sizeof(code) },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x2000, eh, n },
	};
	struct utable *t = utable_load(write_elf("into-cfi", s, 2));
	CHECK(t && t->nfde == 1 && rows_valid(t) && signal_at(t, 0x1010) &&
	      kind_at(t, 0x1019) == UR_NORMAL && kind_at(t, 0x102f) == UR_NORMAL &&
	      kind_at(t, 0x1030) == UR_FP,
	      "trampoline running into a function's CFI: that CFI again after it");
	utable_free(t);
}

/* glibc's crti.o _init and _fini (no CFI), found by DT_INIT and DT_FINI:
 * here _fini at a lower address than _init */
static void test_init_fini(void)
{
	static const uint8_t fini[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	static const uint8_t init[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08, 0x90,
					0x48, 0x83, 0xc4, 0x08, 0xc3 };
	uint8_t code[48];
	memset(code, 0xcc, sizeof(code));
	memcpy(code, fini, sizeof(fini));
	memcpy(code + 0x10, init, sizeof(init));
	Elf64_Dyn dyn[] = { { DT_INIT, { 0x1010 } }, { DT_FINI, { 0x1000 } }, { DT_NULL, { 0 } } };
	struct sec s[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, code, sizeof(code) },
		{ ".dynamic", SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, 0x2000, (const uint8_t *)dyn, sizeof(dyn) },
	};
	struct utable *t = utable_load(write_elf("init-fini", s, 2));
	/* CFA = rsp + 8 at the sub, rsp + 16 up to the add, rsp + 8 at the ret */
	static const struct { uint64_t at; int32_t cfa; } want[] = {
		{ 0x1000, 8 }, { 0x1004, 16 }, { 0x1007, 16 }, { 0x1008, 8 },
		{ 0x1010, 8 }, { 0x1017, 8 }, { 0x1018, 16 }, { 0x101c, 16 }, { 0x101d, 8 },
	};
	bool ok = t && rows_valid(t) && kind_at(t, 0x1009) == UR_FP && kind_at(t, 0x101e) == UR_FP;
	for (size_t i = 0; ok && i < sizeof(want) / sizeof(want[0]); i++) {
		const struct urule *r = utable_find(t, want[i].at);
		if (r->kind != UR_NORMAL || r->cfa_reg != UNW_RSP || r->cfa_off != want[i].cfa) {
			printf("# %#llx: kind %d, CFA rsp + %d\n", (unsigned long long)want[i].at, r->kind,
			       r->cfa_off);
			ok = false;
		}
	}
	CHECK(ok, "_init and _fini without CFI (_fini first): rows for both");
	utable_free(t);
}

static int bad_cfi_warnings;

static void count_bad_cfi(void *arg, const char *msg)
{
	(void)arg;
	bad_cfi_warnings += strstr(msg, "bad CFI in ") != NULL;
}

/* bad CFI (an FDE whose CIE pointer leads nowhere) is said once per file
 * and process, however often its table is built again (stax agent lets
 * unused tables go and builds them again at the next sample) */
static void test_bad_cfi_once(void)
{
	uint8_t code[64], eh[64];
	memset(code, 0x90, sizeof(code));
	size_t n = eh_frame(eh, 0x1000, 0x20);
	uint32_t bad = 0x7fff;
	memcpy(eh + 20 + 4, &bad, 4); /* the FDE's CIE pointer */
	struct sec s[] = {
		{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, code, sizeof(code) },
		{ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0x2000, eh, n },
	};
	const char *path = write_elf("bad-cfi", s, 2);
	warn_set_sink(count_bad_cfi, NULL);
	for (int i = 0; i < 3; i++)
		utable_free(utable_load(path));
	warn_set_sink(NULL, NULL);
	printf("# %d bad CFI warnings\n", bad_cfi_warnings);
	CHECK(bad_cfi_warnings == 1, "bad CFI: said once for three builds of the table");
}

/* The provisional table of path against its compiled one: at each row
 * of a compiled rule (NORMAL), the row run from the FDE the search table
 * finds has the same CFA and rbp rule. */
static void test_quick(const char *path)
{
	struct module *m = module_get(path, NULL, 0);
	struct utable *q = utable_build_quick(m), *t = utable_build(m);
	size_t same = 0, differ = 0, lost = 0;

	char name[512];
	snprintf(name, sizeof(name), "provisional table of %s", path);
	CHECK(q && q->lazy && t && t->nrows, name);
	for (uint32_t i = 0; q && t && i + 1 < t->nrows; i++) {
		const struct urule *r = &t->rules[t->rule[i]];
		struct cfi_row row;
		struct cfi_cie cie;
		uint64_t pc = t->base + t->addr[i];
		if (r->kind != UR_NORMAL)
			continue;
		if (utable_slow_row(q, pc, &row, &cie) != 0) {
			lost++;
			continue;
		}
		const struct cfi_rule *bp = &row.reg[UNW_RBP];
		bool bp_same = r->rbp == URBP_CFA ? bp->kind == CFI_R_OFFSET && bp->off == r->rbp_off
						  : bp->kind != CFI_R_OFFSET;
		if (row.cfa_kind == CFI_CFA_REG_OFF && row.cfa_reg == r->cfa_reg && row.cfa_off == r->cfa_off &&
		    bp_same)
			same++;
		else if (differ++ < 3)
			printf("# %s at %#llx: compiled cfa r%u%+d, provisional r%u%+lld\n", path,
			       (unsigned long long)pc, r->cfa_reg, r->cfa_off, row.cfa_reg, (long long)row.cfa_off);
	}
	snprintf(name, sizeof(name),
		 "%s: the provisional table's rows are the compiled ones (%zu same, %zu differ, %zu without an FDE)",
		 path, same, differ, lost);
	CHECK(same >= 1000 && !differ && lost * 100 <= same, name);
	utable_free(q);
	utable_free(t);
	module_put(m);
}

int main(void)
{
	/* no entries in the user's table cache */
	setenv("STAX_NO_CACHE", "1", 1);
	if (!mkdtemp(dir)) {
		printf("not ok - unwind table: mkdtemp failed\n");
		return 1;
	}
	test_at_zero();
	test_out_of_order();
	test_back_to_back();
	test_into_cfi();
	test_init_fini();
	test_bad_cfi_once();
	test_quick("/lib/x86_64-linux-gnu/libc.so.6");
	{
		char self[4096];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n > 0) {
			self[n] = 0;
			test_quick(self);
		}
	}
	{
		/* a file with .eh_frame and no .eh_frame_hdr: no provisional table */
		static const uint8_t code[16] = { 0xc3 };
		struct sec sx[] = {
			{ ".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, 0x1000, code, sizeof(code) },
		};
		struct module *m = module_get(write_elf("nohdr.so", sx, 1), NULL, 0);
		struct utable *q = utable_build_quick(m);
		CHECK(!q, "no .eh_frame_hdr: no provisional table");
		utable_free(q);
		module_put(m);
	}
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	TEST_DONE();
}
