/* x86_64.c - the x86-64 machine: its registers (slots are DWARF numbers),
 * perf's register order, compiling CFI rows into rules and the signal
 * frame. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/arch.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The kernel's rt_sigframe on x86-64: the handler returns (ret pops
 * pretcode) to __restore_rt with the stack pointer at the ucontext; its
 * uc_mcontext (struct sigcontext) starts with the general registers in
 * the kernel's order: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp,
 * rip. Checked against <sys/ucontext.h> where it is x86-64's. */
#define X86_UC_MCONTEXT 40
enum {
	G_R8 = 0, G_R9, G_R10, G_R11, G_R12, G_R13, G_R14, G_R15, G_RDI, G_RSI, G_RBP,
	G_RBX, G_RDX, G_RAX, G_RCX, G_RSP, G_RIP
};

/* DWARF register -> index in the sigcontext's registers. */
static const int greg_of_dwarf[UNW_NREGS_X86] = {
	[UNW_RAX] = G_RAX, [UNW_RDX] = G_RDX, [UNW_RCX] = G_RCX,
	[UNW_RBX] = G_RBX, [UNW_RSI] = G_RSI, [UNW_RDI] = G_RDI,
	[UNW_RBP] = G_RBP, [UNW_RSP] = G_RSP, [UNW_R8] = G_R8,
	[UNW_R9] = G_R9, [UNW_R10] = G_R10, [UNW_R11] = G_R11,
	[UNW_R12] = G_R12, [UNW_R13] = G_R13, [UNW_R14] = G_R14,
	[UNW_R15] = G_R15, [UNW_RIP] = G_RIP,
};

#ifdef __x86_64__
#include <sys/ucontext.h>
_Static_assert(offsetof(ucontext_t, uc_mcontext) == X86_UC_MCONTEXT,
	       "uc_mcontext offset in the rt_sigframe's ucontext");
_Static_assert(offsetof(mcontext_t, gregs) == 0, "gregs first in mcontext");
_Static_assert(REG_R8 == (int)G_R8 && REG_RDI == (int)G_RDI && REG_RBP == (int)G_RBP &&
	       REG_RAX == (int)G_RAX && REG_RSP == (int)G_RSP && REG_RIP == (int)G_RIP,
	       "kernel sigcontext order");
#endif

int x86_signal_regs(uint64_t sp, cfi_read_fn read, void *arg,
		    uint64_t *regs, uint64_t *valid)
{
	uint64_t g = sp + X86_UC_MCONTEXT;
	for (int r = 0; r < UNW_NREGS_X86; r++)
		if (!read(arg, g + 8 * (uint64_t)greg_of_dwarf[r], &regs[r]))
			return -EFAULT;
	*valid = (1ull << UNW_NREGS_X86) - 1;
	return 0;
}

/* The PLT's CFA expression, as GNU ld writes it:
 *   DW_OP_breg7 (rsp) K; DW_OP_breg16 (rip) 0; DW_OP_lit15; DW_OP_and;
 *   DW_OP_litN; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
 * i.e. CFA = rsp + K + ((rip & 15) >= N ? 8 : 0). */
static bool match_plt_expr(const uint8_t *p, size_t len, int32_t *k, uint8_t *n)
{
	static const uint8_t mid[] = { 0x80, 0x00, 0x3f, 0x1a };
	if (len != 11 || p[0] != 0x77 || (p[1] & 0x80))
		return false;
	if (memcmp(p + 2, mid, sizeof(mid)) != 0)
		return false;
	if (p[6] < 0x30 || p[6] > 0x4f || p[7] != 0x2a || p[8] != 0x33 ||
	    p[9] != 0x24 || p[10] != 0x22)
		return false;
	*k = p[1] & 0x40 ? (int)p[1] - 128 : p[1];
	*n = (uint8_t)(p[6] - 0x30);
	return true;
}

void x86_compile_row(const struct cfi_row *row, bool signal, struct urule *out)
{
	const struct cfi_rule *ra = &row->reg[UNW_RIP];
	const struct cfi_rule *bp = &row->reg[UNW_RBP];
	const struct cfi_rule *sp = &row->reg[UNW_RSP];

	memset(out, 0, sizeof(*out));
	if (signal) {
		out->kind = UR_SIGNAL;
		return;
	}
	if (ra->kind == CFI_R_UNDEF) {
		out->kind = UR_STOP;
		return;
	}
	out->kind = UR_SLOW;
	if (ra->kind != CFI_R_OFFSET || ra->off < INT16_MIN || ra->off > INT16_MAX)
		return;
	if (!(sp->kind == CFI_R_UNSPEC || (sp->kind == CFI_R_VAL_OFFSET && sp->off == 0)))
		return;
	/* rbx: where it was saved, when the rule is a simple one; any other
	 * rule makes it unknown in the caller (never a reason for SLOW) */
	const struct cfi_rule *bx = &row->reg[UNW_RBX];
	if (bx->kind == CFI_R_OFFSET && bx->off >= INT16_MIN && bx->off <= INT16_MAX) {
		out->rbx = URBP_CFA;
		out->rbx_off = (int16_t)bx->off;
	} else if (bx->kind == CFI_R_UNSPEC || bx->kind == CFI_R_SAME) {
		out->rbx = URBP_SAME;
	} else {
		out->rbx = URBP_UNDEF;
	}
	switch (bp->kind) {
	case CFI_R_UNSPEC:
	case CFI_R_SAME:
		out->rbp = URBP_SAME;
		break;
	case CFI_R_UNDEF:
		out->rbp = URBP_UNDEF;
		break;
	case CFI_R_OFFSET:
		if (bp->off < INT16_MIN || bp->off > INT16_MAX)
			return;
		out->rbp = URBP_CFA;
		out->rbp_off = (int16_t)bp->off;
		break;
	default:
		return;
	}
	out->ra_off = (int16_t)ra->off;
	if (row->cfa_kind == CFI_CFA_EXPR) {
		int32_t k;
		uint8_t n;
		if (!match_plt_expr(row->cfa_expr, row->cfa_expr_len, &k, &n))
			return;
		out->kind = UR_PLT;
		out->cfa_reg = UNW_RSP;
		out->cfa_off = k;
		out->plt_thresh = n;
		return;
	}
	if ((row->cfa_reg != UNW_RSP && row->cfa_reg != UNW_RBP) ||
	    row->cfa_off < INT32_MIN || row->cfa_off > INT32_MAX)
		return;
	out->kind = UR_NORMAL;
	out->cfa_reg = row->cfa_reg;
	out->cfa_off = (int32_t)row->cfa_off;
}

/* Callee-saved registers keep their value without a rule (SysV ABI). */
#define CALLEE_SAVED ((1ull << UNW_RBX) | (1ull << UNW_RBP) | (1ull << UNW_R12) | \
		      (1ull << UNW_R13) | (1ull << UNW_R14) | (1ull << UNW_R15))
/* Registers a call may change (the System V ABI's caller-saved ones). */
#define CALLER_SAVED ((1ull << UNW_RAX) | (1ull << UNW_RDX) | (1ull << UNW_RCX) | \
		      (1ull << UNW_RSI) | (1ull << UNW_RDI) | (1ull << UNW_R8) | (1ull << UNW_R9) | \
		      (1ull << UNW_R10) | (1ull << UNW_R11))

/* perf_event_x86_regs numbering: AX BX CX DX SI DI BP SP IP FLAGS CS SS
 * DS ES FS GS R8..R15. We ask for AX..IP and R8..R15 (bits 0-8, 16-23). */
const struct arch arch_x86_64 = {
	.id = UNWIND_ARCH_X86_64,
	.name = "x86_64",
	.e_machine = EM_X86_64,
	.nregs = UNW_NREGS_X86,
	.ncols = UNW_NREGS_X86,
	.slot_of_col = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
			 [17 ... CFI_NREGS - 1] = 0xff },
	.ra_col = UNW_RIP,
	.sp_col = UNW_RSP,
	.callee_saved = CALLEE_SAVED,
	.caller_saved = CALLER_SAVED,
	.ra_mask = ~0ull,
	.record_at_cfa = true,
	.perf_mask = 0xff01ffull,
	.perf_slot = {
		UNW_RAX, UNW_RBX, UNW_RCX, UNW_RDX, UNW_RSI, UNW_RDI, UNW_RBP, UNW_RSP, UNW_RIP,
		-1, -1, -1, -1, -1, -1, -1,
		UNW_R8, UNW_R9, UNW_R10, UNW_R11, UNW_R12, UNW_R13, UNW_R14, UNW_R15,
		[24 ... 63] = -1,
	},
	.compile_row = x86_compile_row,
	.signal_regs = x86_signal_regs,
};
