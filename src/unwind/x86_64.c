/* x86_64.c - x86-64 register rules: compiling rows, the signal frame and
 * the full rule application for SLOW rows. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/x86_64.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ucontext.h>

#include "unwind/table.h"
#include "unwind/unwind.h"

/* DWARF register -> index in mcontext gregs. */
static const int greg_of_dwarf[UNW_NREGS] = {
	[UNW_RAX] = REG_RAX, [UNW_RDX] = REG_RDX, [UNW_RCX] = REG_RCX,
	[UNW_RBX] = REG_RBX, [UNW_RSI] = REG_RSI, [UNW_RDI] = REG_RDI,
	[UNW_RBP] = REG_RBP, [UNW_RSP] = REG_RSP, [UNW_R8] = REG_R8,
	[UNW_R9] = REG_R9, [UNW_R10] = REG_R10, [UNW_R11] = REG_R11,
	[UNW_R12] = REG_R12, [UNW_R13] = REG_R13, [UNW_R14] = REG_R14,
	[UNW_R15] = REG_R15, [UNW_RIP] = REG_RIP,
};

_Static_assert(offsetof(ucontext_t, uc_mcontext) == X86_UC_MCONTEXT,
	       "uc_mcontext offset in the rt_sigframe's ucontext");
_Static_assert(offsetof(mcontext_t, gregs) == 0, "gregs first in mcontext");
_Static_assert(REG_RIP == 16 && REG_RSP == 15 && REG_RBP == 10,
	       "kernel sigcontext order");

int x86_signal_regs(uint64_t sp, cfi_read_fn read, void *arg,
		    uint64_t *regs, uint32_t *valid)
{
	uint64_t g = sp + X86_UC_MCONTEXT;
	for (int r = 0; r < UNW_NREGS; r++)
		if (!read(arg, g + 8 * (uint64_t)greg_of_dwarf[r], &regs[r]))
			return -EFAULT;
	*valid = (1u << UNW_NREGS) - 1;
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
#define CALLEE_SAVED ((1u << UNW_RBX) | (1u << UNW_RBP) | (1u << UNW_R12) | \
		      (1u << UNW_R13) | (1u << UNW_R14) | (1u << UNW_R15))

int x86_apply_row(const struct cfi_row *row, const uint64_t *regs, uint32_t valid,
		  cfi_read_fn read, void *arg, uint64_t *out, uint32_t *out_valid,
		  uint64_t *cfa_out)
{
	uint64_t cfa;
	uint32_t ov = 0;
	int r;

	*cfa_out = 0;
	if (row->cfa_kind == CFI_CFA_REG_OFF) {
		if (row->cfa_reg >= UNW_NREGS)
			return -EINVAL;
		if (!(valid & (1u << row->cfa_reg)))
			return -ENODATA;
		cfa = regs[row->cfa_reg] + (uint64_t)row->cfa_off;
	} else {
		r = cfi_eval_expr(row->cfa_expr, row->cfa_expr_len, regs, valid,
				  false, 0, read, arg, &cfa);
		if (r < 0)
			return r;
	}
	*cfa_out = cfa;
	if (row->reg[UNW_RIP].kind == CFI_R_UNDEF)
		return -ENOENT;
	for (int i = 0; i < UNW_NREGS; i++) {
		const struct cfi_rule *x = &row->reg[i];
		uint64_t v = 0;
		switch (x->kind) {
		case CFI_R_UNSPEC:
			if (i == UNW_RSP) {
				v = cfa;
				break;
			}
			if (!(CALLEE_SAVED & (1u << i)) || !(valid & (1u << i)))
				continue;
			v = regs[i];
			break;
		case CFI_R_SAME:
			if (!(valid & (1u << i)))
				continue;
			v = regs[i];
			break;
		case CFI_R_UNDEF:
			continue;
		case CFI_R_OFFSET:
			/* A save slot below the stack pointer was popped
			 * already (epilogue): the register holds its value. */
			if ((valid & (1u << UNW_RSP)) && cfa + (uint64_t)x->off < regs[UNW_RSP]) {
				if (!(valid & (1u << i)))
					continue;
				v = regs[i];
				break;
			}
			if (!read(arg, cfa + (uint64_t)x->off, &v))
				return -EFAULT;
			break;
		case CFI_R_VAL_OFFSET:
			v = cfa + (uint64_t)x->off;
			break;
		case CFI_R_REG:
			if (x->reg >= UNW_NREGS || !(valid & (1u << x->reg)))
				continue;
			v = regs[x->reg];
			break;
		case CFI_R_EXPR:
		case CFI_R_VAL_EXPR: {
			uint64_t a;
			r = cfi_eval_expr(x->expr, x->expr_len, regs, valid, true, cfa,
					  read, arg, &a);
			if (r < 0) {
				if (i == UNW_RIP || i == UNW_RSP || i == UNW_RBP)
					return r;
				continue;
			}
			if (x->kind == CFI_R_EXPR) {
				if (!read(arg, a, &v))
					return -EFAULT;
			} else {
				v = a;
			}
			break;
		}
		default:
			continue;
		}
		out[i] = v;
		ov |= 1u << i;
	}
	if (!(ov & (1u << UNW_RIP)))
		return -EINVAL;
	*out_valid = ov;
	return 0;
}
