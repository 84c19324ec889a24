/* test_arch.c - the machines' rules (unwind/arch.h), on any host: names,
 * perf's register order, aarch64 CFI compiled into rules (the link
 * register, pointer authentication's negate_ra_state, a CFA by x29),
 * aarch64's signal frame and the full rule application of a SLOW row.
 * The aarch64 walk itself is tested in an arm64 kernel (tests/arm64,
 * make check-arm64).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "unwind/arch.h"
#include "unwind/table.h"

static void test_names(void)
{
	CHECK(unwind_arch_by_name("aarch64") == UNWIND_ARCH_AARCH64 &&
	      unwind_arch_by_name("arm64") == UNWIND_ARCH_AARCH64 &&
	      unwind_arch_by_name("x86_64") == UNWIND_ARCH_X86_64 &&
	      unwind_arch_by_name("ppc64le") == UNWIND_ARCH_NONE &&
	      unwind_arch_by_name(NULL) == UNWIND_ARCH_NONE, "machines by uname name");
	CHECK(unwind_arch_by_elf(183) == UNWIND_ARCH_AARCH64 && unwind_arch_by_elf(62) == UNWIND_ARCH_X86_64 &&
	      unwind_arch_by_elf(40) == UNWIND_ARCH_NONE, "machines by e_machine (183, 62; 40 is 32-bit arm)");
	CHECK(!strcmp(unwind_arch_name(UNWIND_ARCH_AARCH64), "aarch64") &&
	      !strcmp(unwind_arch_name(UNWIND_ARCH_NONE), "unknown"), "machine names");
	CHECK(unwind_perf_regs_mask(UNWIND_ARCH_X86_64) == 0xff01ffull &&
	      unwind_perf_regs_mask(UNWIND_ARCH_AARCH64) == 0x1ffffffffull,
	      "perf register masks: x86-64 ax..ip, r8..r15; aarch64 x0-x30, sp, pc");
}

/* aarch64's perf registers (x0..x30, sp, pc) land in their slots: x29,
 * sp and pc in the walk's UNW_FP, UNW_SP, UNW_PC; x6, x7 and x16 where
 * those went */
static void test_perf_regs(void)
{
	uint64_t v[33];
	struct unwind_regs r;

	for (int i = 0; i < 33; i++)
		v[i] = 0x1000 + (uint64_t)i;
	unwind_regs_from_perf(UNWIND_ARCH_AARCH64, 0x1ffffffffull, (const uint8_t *)v, 33, &r);
	CHECK(r.r[UNW_FP] == 0x1000 + 29 && r.r[UNW_SP] == 0x1000 + 31 && r.r[UNW_PC] == 0x1000 + 32 &&
	      r.r[UNW_LR] == 0x1000 + 30 && r.r[29] == 0x1000 + 6 && r.r[31] == 0x1000 + 7 &&
	      r.r[32] == 0x1000 + 16 && r.r[0] == 0x1000 && r.r[19] == 0x1000 + 19 &&
	      r.valid == 0x1ffffffffull, "aarch64 perf registers into slots");
	/* only some registers, in mask order */
	unwind_regs_from_perf(UNWIND_ARCH_AARCH64, (1ull << 29) | (1ull << 31) | (1ull << 32),
			      (const uint8_t *)v, 3, &r);
	CHECK(r.r[UNW_FP] == 0x1000 && r.r[UNW_SP] == 0x1001 && r.r[UNW_PC] == 0x1002 &&
	      r.valid == ((1ull << UNW_FP) | (1ull << UNW_SP) | (1ull << UNW_PC)), "a partial aarch64 mask");
	unwind_regs_from_perf(UNWIND_ARCH_X86_64, 0xff01ffull, (const uint8_t *)v, 17, &r);
	CHECK(r.r[UNW_RAX] == 0x1000 && r.r[UNW_RBX] == 0x1001 && r.r[UNW_RBP] == 0x1006 &&
	      r.r[UNW_RSP] == 0x1007 && r.r[UNW_RIP] == 0x1008 && r.r[UNW_R8] == 0x1009 &&
	      r.r[UNW_R15] == 0x1010 && r.valid == 0x1ffff, "x86-64 perf registers: DWARF numbers");
	/* fewer values than the mask says: no read past them */
	unwind_regs_from_perf(UNWIND_ARCH_AARCH64, 0x1ffffffffull, (const uint8_t *)v, 2, &r);
	CHECK(r.valid == 3, "values short of the mask");
}

/* a byte builder for .eh_frame */
struct eh {
	uint8_t b[256];
	size_t n;
};
static void u8(struct eh *e, unsigned v) { e->b[e->n++] = (uint8_t)v; }
static void u32(struct eh *e, uint32_t v) { memcpy(e->b + e->n, &v, 4); e->n += 4; }
static void u64(struct eh *e, uint64_t v) { memcpy(e->b + e->n, &v, 8); e->n += 8; }
static void pad(struct eh *e, size_t start) { while ((e->n - start) % 8) u8(e, 0); /* DW_CFA_nop */ }
static void set_len(struct eh *e, size_t at) { uint32_t l = (uint32_t)(e->n - at - 4); memcpy(e->b + at, &l, 4); }

/* gcc's aarch64 prologue and epilogue with pac-ret, and clang's CFA by
 * x29 after "mov x29, sp":
 *   0x1000 paciasp                    (sign the return address)
 *   0x1004 stp x29, x30, [sp, #-16]!
 *   0x1008 mov x29, sp
 *   ...
 *   0x1018 ldp x29, x30, [sp], #16
 *   0x101c autiasp
 *   0x1020 ret */
static size_t a64_eh_frame(struct eh *e)
{
	size_t cie = e->n, fde;
	u32(e, 0);               /* length, set below */
	u32(e, 0);               /* CIE id */
	u8(e, 1);                /* version */
	u8(e, 'z'); u8(e, 'R'); u8(e, 0);
	u8(e, 4);                /* code alignment */
	u8(e, 0x78);             /* data alignment -8 */
	u8(e, 30);               /* return address column: x30 */
	u8(e, 1); u8(e, 0x00);   /* 'R': absptr */
	u8(e, 0x0c); u8(e, 31); u8(e, 0);   /* def_cfa sp, 0 */
	pad(e, cie);
	set_len(e, cie);
	fde = e->n;
	u32(e, 0);
	u32(e, (uint32_t)(e->n - cie)); /* back to the CIE */
	u64(e, 0x1000);
	u64(e, 0x20);
	u8(e, 0);                /* no augmentation data */
	u8(e, 0x41); u8(e, 0x2d);                   /* 0x1004: negate_ra_state */
	u8(e, 0x41); u8(e, 0x0e); u8(e, 16);        /* 0x1008: def_cfa_offset 16 */
	u8(e, 0x80 | 29); u8(e, 2);                 /* x29 at CFA-16 */
	u8(e, 0x80 | 30); u8(e, 1);                 /* x30 at CFA-8 */
	u8(e, 0x41); u8(e, 0x0d); u8(e, 29);        /* 0x100c: def_cfa_register x29 */
	u8(e, 0x43); u8(e, 0x0c); u8(e, 31); u8(e, 0); /* 0x1018: def_cfa sp, 0 */
	u8(e, 0xc0 | 29); u8(e, 0xc0 | 30);         /* restore x29, x30 */
	u8(e, 0x41); u8(e, 0x2d);                   /* 0x101c: negate_ra_state */
	pad(e, fde);
	set_len(e, fde);
	u32(e, 0);               /* terminator */
	return e->n;
}

static int rule_at(const struct utable *t, uint64_t a, const struct urule **r)
{
	*r = utable_find(t, a);
	return (*r)->kind;
}

static void test_a64_rules(void)
{
	struct eh e = { .n = 0 };
	struct cfi_section sec = { 0 };
	struct utable *t = calloc(1, sizeof(*t));
	const struct urule *r;

	sec.size = a64_eh_frame(&e);
	sec.data = e.b;
	sec.vaddr = 0x10000;
	sec.is_eh = true;
	t->arch = UNWIND_ARCH_AARCH64;
	CHECK(utable_compile(t, &sec, 1) == 0 && t->nrows > 0 && t->arch == UNWIND_ARCH_AARCH64,
	      "aarch64 CFI compiles");
	CHECK(rule_at(t, 0x1000, &r) == UR_LEAF && r->cfa_reg == UNW_SP && r->cfa_off == 0 &&
	      r->flags == UR_F_RA_LR, "entry: CFA = sp, return address in the link register, unsigned");
	CHECK(rule_at(t, 0x1004, &r) == UR_LEAF && r->cfa_reg == UNW_SP && r->cfa_off == 0 &&
	      r->flags == (UR_F_RA_LR | UR_F_RA_SIGNED),
	      "after paciasp: still in the link register, signed (negate_ra_state)");
	CHECK(rule_at(t, 0x1008, &r) == UR_PAC && r->cfa_reg == UNW_SP && r->cfa_off == 16 &&
	      r->ra_off == -8 && r->rbp == URBP_CFA && r->rbp_off == -16 && r->flags == UR_F_RA_SIGNED,
	      "after stp x29, x30: CFA = sp + 16, return address at CFA-8, x29 at CFA-16, signed");
	CHECK(rule_at(t, 0x1010, &r) == UR_PAC && r->cfa_reg == UNW_FP && r->cfa_off == 16 &&
	      r->ra_off == -8 && r->flags == UR_F_RA_SIGNED, "after mov x29, sp: CFA = x29 + 16");
	CHECK(rule_at(t, 0x1018, &r) == UR_LEAF && r->cfa_reg == UNW_SP && r->cfa_off == 0 &&
	      r->flags == (UR_F_RA_LR | UR_F_RA_SIGNED) && r->rbp == URBP_SAME,
	      "after ldp: back in the link register, still signed");
	CHECK(rule_at(t, 0x101c, &r) == UR_LEAF && r->flags == UR_F_RA_LR,
	      "after autiasp: unsigned (negate_ra_state again)");
	CHECK(rule_at(t, 0x1020, &r) == UR_FP && rule_at(t, 0xfff, &r) == UR_FP, "outside the FDE: no rule");
	free(t->addr);
	free(t->rule);
	free(t->page);
	free(t->rules);
	free(t->slow);
	free(t->blob);
	free(t);
}

/* memory for the rule application: a stack image, or made-up values */
struct mem {
	uint64_t base;
	const uint8_t *bytes;
	size_t size;
};

static bool mem_read(void *arg, uint64_t addr, uint64_t *v)
{
	const struct mem *m = arg;
	if (addr < m->base || addr - m->base + 8 > m->size)
		return false;
	memcpy(v, m->bytes + (addr - m->base), 8);
	return true;
}

/* the rt_sigframe: siginfo (128), ucontext with uc_mcontext at 176:
 * fault_address, x0-x30, sp, pc */
static void test_a64_signal(void)
{
	static uint8_t stack[4096];
	struct mem m = { 0x7fff0000, stack, sizeof(stack) };
	uint64_t regs[UNW_NREGS], valid = 0, v;
	size_t sc = 128 + 176;

	for (int i = 0; i < 31; i++) {
		v = 0x5000 + (uint64_t)i;
		memcpy(stack + sc + 8 + 8 * (size_t)i, &v, 8);
	}
	v = 0x7fff1234;
	memcpy(stack + sc + 8 + 31 * 8, &v, 8);
	v = 0xaaaa0000abcdull;
	memcpy(stack + sc + 8 + 32 * 8, &v, 8);
	CHECK(arch_aarch64.signal_regs(m.base, mem_read, &m, regs, &valid) == 0 &&
	      regs[UNW_PC] == 0xaaaa0000abcdull && regs[UNW_SP] == 0x7fff1234 &&
	      regs[UNW_FP] == 0x5000 + 29 && regs[UNW_LR] == 0x5000 + 30 && regs[29] == 0x5000 + 6 &&
	      regs[0] == 0x5000 && valid == 0x1ffffffffull, "aarch64 signal frame: the interrupted registers");
	CHECK(arch_aarch64.signal_regs(m.base + sizeof(stack) - 300, mem_read, &m, regs, &valid) < 0,
	      "a signal frame beyond the memory: -EFAULT");
}

/* A SLOW row: CFA by a callee-saved register (x19 + 32), return address
 * and x29 saved, the return address signed (top bits set): the caller's
 * pc is stripped, its sp is the CFA, x19 kept, a caller-saved register
 * dropped, the link register not carried on */
static void test_a64_apply(void)
{
	static uint8_t stack[256];
	struct mem m = { 0x7000, stack, sizeof(stack) };
	struct cfi_row row;
	uint64_t regs[UNW_NREGS] = { 0 }, out[UNW_NREGS] = { 0 }, valid, ov = 0, cfa = 0, v;

	memset(&row, 0, sizeof(row));
	row.cfa_kind = CFI_CFA_REG_OFF;
	row.cfa_reg = 19;
	row.cfa_off = 32;
	row.reg[30] = (struct cfi_rule){ .kind = CFI_R_OFFSET, .off = -8 };
	row.reg[29] = (struct cfi_rule){ .kind = CFI_R_OFFSET, .off = -16 };
	v = 0x002f0000aaaa1234ull; /* a signed return address */
	memcpy(stack + 0x18, &v, 8);
	v = 0x7080;
	memcpy(stack + 0x10, &v, 8);
	regs[19] = 0x7000;
	regs[UNW_SP] = 0x6f00;
	regs[1] = 42;
	regs[UNW_LR] = 0x1111;
	regs[UNW_PC] = 0xaaaa0000;
	valid = (1ull << 19) | (1ull << UNW_SP) | (1ull << 1) | (1ull << UNW_LR) | (1ull << UNW_PC);
	CHECK(arch_apply_row(&arch_aarch64, &row, regs, valid, mem_read, &m, out, &ov, &cfa) == 0 &&
	      cfa == 0x7020 && out[UNW_PC] == 0xaaaa1234ull && out[UNW_FP] == 0x7080 &&
	      out[UNW_SP] == 0x7020 && out[19] == 0x7000 && (ov & (1ull << 19)) &&
	      !(ov & (1ull << 1)) && !(ov & (1ull << UNW_LR)),
	      "aarch64 SLOW row: CFA by x19, return address stripped, x19 kept, x1 and x30 dropped");
	row.reg[30].kind = CFI_R_UNDEF;
	CHECK(arch_apply_row(&arch_aarch64, &row, regs, valid, mem_read, &m, out, &ov, &cfa) == -ENOENT,
	      "an undefined return address: the outermost frame");
	row.reg[30].kind = CFI_R_UNSPEC;
	CHECK(arch_apply_row(&arch_aarch64, &row, regs, valid, mem_read, &m, out, &ov, &cfa) == 0 &&
	      out[UNW_PC] == 0x1111, "nothing said of x30: the return address is the link register's");
	CHECK(arch_apply_row(&arch_aarch64, &row, regs, valid & ~(1ull << UNW_LR), mem_read, &m, out, &ov,
			     &cfa) == -EINVAL, "... which a caller's frame does not have");
	CHECK(arch_apply_row(&arch_aarch64, &row, regs, valid & ~(1ull << 19), mem_read, &m, out, &ov,
			     &cfa) == -ENODATA, "the CFA's register unknown: -ENODATA");
}

int main(void)
{
	test_names();
	test_perf_regs();
	test_a64_rules();
	test_a64_signal();
	test_a64_apply();
	TEST_DONE();
}
