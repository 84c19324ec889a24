/* aarch64.c - the aarch64 machine: its registers, perf's register order,
 * compiling CFI rows into rules and the signal frame.
 *
 * What sets it apart from x86-64 (docs/UNWINDING.md, the arm64 traps):
 * - a call leaves its return address in x30 (the link register), not on
 *   the stack: a function stores it (with x29, the frame pointer: a frame
 *   record) only when it calls others. Where the CFI says the return
 *   address is still in x30 (a leaf, a prologue before the store, a PLT
 *   stub), the caller's pc is the link register: known in the sampled
 *   frame and in a frame a signal interrupted, nowhere else (rule flag
 *   UR_F_RA_LR);
 * - the CFA is the stack pointer at the call: a frame that stored
 *   nothing has CFA = sp + 0 (the walk lets such a step keep sp);
 * - with pointer authentication (-mbranch-protection=pac-ret) return
 *   addresses are signed in their top bits, where the CFI's
 *   DW_CFA_AARCH64_negate_ra_state says (rule UR_PAC): those are ANDed
 *   with ra_mask, as are the link register's and every one read without
 *   CFI (a frame record, a SLOW row);
 * - a frame record may be anywhere in its frame (gcc puts it at the
 *   bottom, clang at the top), so the splice finds it by the return
 *   address slot;
 * - signal handlers return into the vDSO's __kernel_rt_sigreturn, whose
 *   CIE says 'S' (rule SIGNAL); the interrupted registers are in the
 *   rt_sigframe's ucontext.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/arch.h"

#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* DWARF columns (AADWARF64): x0-x30 are 0-30, sp 31, pc 32. */
enum { A64_X29 = 29, A64_X30 = 30, A64_SP = 31, A64_PC = 32 };

/* Slot of a column: the column, with x6<->x29, x7<->sp and x16<->pc
 * swapped so that fp, sp and pc are in UNW_FP, UNW_SP and UNW_PC. */
#define A64_SLOT(c) ((c) == 6 ? 29 : (c) == 29 ? 6 : (c) == 7 ? 31 : (c) == 31 ? 7 : \
		     (c) == 16 ? 32 : (c) == 32 ? 16 : (c))
_Static_assert(A64_SLOT(A64_X29) == UNW_FP && A64_SLOT(A64_SP) == UNW_SP &&
	       A64_SLOT(A64_PC) == UNW_PC && A64_SLOT(A64_X30) == UNW_LR, "aarch64 slots");

/* The rt_sigframe (arch/arm64/kernel/signal.c): struct siginfo (128
 * bytes), then struct ucontext: uc_flags, uc_link, uc_stack (24 bytes),
 * uc_sigmask padded to 128 bytes (glibc's sigset_t), then uc_mcontext, a
 * struct sigcontext aligned to 16: fault_address, regs[31], sp, pc,
 * pstate. The handler returns into __kernel_rt_sigreturn with the stack
 * pointer at the rt_sigframe (where rt_sigreturn reads it). */
#define A64_SIGINFO 128
#define A64_UC_MCONTEXT 176
#define A64_SC_REGS 8          /* regs[0] in struct sigcontext */
#define A64_SC_SP (8 + 31 * 8)
#define A64_SC_PC (A64_SC_SP + 8)

#ifdef __aarch64__
#include <signal.h>
#include <sys/ucontext.h>
_Static_assert(sizeof(siginfo_t) == A64_SIGINFO, "siginfo in the rt_sigframe");
_Static_assert(offsetof(ucontext_t, uc_mcontext) == A64_UC_MCONTEXT, "uc_mcontext offset");
_Static_assert(offsetof(mcontext_t, regs) == A64_SC_REGS && offsetof(mcontext_t, sp) == A64_SC_SP &&
	       offsetof(mcontext_t, pc) == A64_SC_PC, "struct sigcontext");
#endif

int a64_signal_regs(uint64_t sp, cfi_read_fn read, void *arg, uint64_t *regs, uint64_t *valid)
{
	uint64_t sc = sp + A64_SIGINFO + A64_UC_MCONTEXT;

	for (int c = 0; c <= A64_X30; c++)
		if (!read(arg, sc + A64_SC_REGS + 8 * (uint64_t)c, &regs[A64_SLOT(c)]))
			return -EFAULT;
	if (!read(arg, sc + A64_SC_SP, &regs[UNW_SP]) || !read(arg, sc + A64_SC_PC, &regs[UNW_PC]))
		return -EFAULT;
	*valid = (1ull << 33) - 1;
	return 0;
}

void a64_compile_row(const struct cfi_row *row, bool signal, struct urule *out)
{
	const struct cfi_rule *ra = &row->reg[A64_X30];
	const struct cfi_rule *fp = &row->reg[A64_X29];
	const struct cfi_rule *sp = &row->reg[A64_SP];

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
	if (!(sp->kind == CFI_R_UNSPEC || (sp->kind == CFI_R_VAL_OFFSET && sp->off == 0)))
		return;
	if (ra->kind == CFI_R_OFFSET) {
		if (ra->off < INT16_MIN || ra->off > INT16_MAX)
			return;
		out->ra_off = (int16_t)ra->off;
	} else if (ra->kind == CFI_R_UNSPEC || ra->kind == CFI_R_SAME ||
		   (ra->kind == CFI_R_REG && ra->reg == A64_X30)) {
		out->flags |= UR_F_RA_LR;
	} else {
		return;
	}
	switch (fp->kind) {
	case CFI_R_UNSPEC:
	case CFI_R_SAME:
		out->rbp = URBP_SAME;
		break;
	case CFI_R_UNDEF:
		out->rbp = URBP_UNDEF;
		break;
	case CFI_R_OFFSET:
		if (fp->off < INT16_MIN || fp->off > INT16_MAX)
			return;
		out->rbp = URBP_CFA;
		out->rbp_off = (int16_t)fp->off;
		break;
	default:
		return;
	}
	out->rbx = URBP_SAME; /* x86-64's; nothing here */
	if (row->ra_signed)
		out->flags |= UR_F_RA_SIGNED;
	if (row->cfa_kind != CFI_CFA_REG_OFF || (row->cfa_reg != A64_SP && row->cfa_reg != A64_X29) ||
	    row->cfa_off < INT32_MIN || row->cfa_off > INT32_MAX)
		return;
	out->kind = out->flags & UR_F_RA_LR ? UR_LEAF : out->flags & UR_F_RA_SIGNED ? UR_PAC : UR_NORMAL;
	out->cfa_reg = row->cfa_reg == A64_SP ? UNW_SP : UNW_FP;
	out->cfa_off = (int32_t)row->cfa_off;
}

/* AAPCS64: x19-x29 and sp are callee-saved; x30 holds the return address
 * until a function saves it (a SLOW row that says nothing of it leaves
 * it where it is); x0-x18 may change in a call. */
#define A64_CALLEE ((((1ull << 29) - 1) & ~((1ull << 19) - 1)) | (1ull << A64_X29) | \
		    (1ull << A64_X30))

/* The address bits of a user return address: 48 (Linux's user space
 * without the 52-bit opt-in); the signature is in bits 48-54 (and 56-63
 * where top-byte-ignore is off for instructions). */
#define A64_RA_MASK ((1ull << 48) - 1)

#define S(c) A64_SLOT(c)
/* a mask of columns as a mask of slots */
#define SLOTS(x) (((x) & ~((1ull << 6) | (1ull << 7) | (1ull << 16) | (1ull << 29) | (1ull << 31))) | \
		  ((((x) >> 6) & 1) << 29) | ((((x) >> 29) & 1) << 6) | ((((x) >> 7) & 1) << 31) | \
		  ((((x) >> 31) & 1) << 7) | ((((x) >> 16) & 1) << 32))

/* perf_event_arm64_regs: x0..x28, x29 (fp), lr, sp, pc: bits 0-32. */
const struct arch arch_aarch64 = {
	.id = UNWIND_ARCH_AARCH64,
	.name = "aarch64",
	.e_machine = EM_AARCH64,
	.nregs = 33,
	.ncols = 33,
	.slot_of_col = {
		S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7), S(8), S(9), S(10), S(11), S(12),
		S(13), S(14), S(15), S(16), S(17), S(18), S(19), S(20), S(21), S(22), S(23),
		S(24), S(25), S(26), S(27), S(28), S(29), S(30), S(31), S(32),
	},
	.ra_col = A64_X30,
	.sp_col = A64_SP,
	.callee_saved = SLOTS(A64_CALLEE),
	.caller_saved = SLOTS((1ull << 19) - 1),
	.ra_mask = A64_RA_MASK,
	.record_at_cfa = false,
	.perf_mask = (1ull << 33) - 1,
	.perf_slot = {
		S(0), S(1), S(2), S(3), S(4), S(5), S(6), S(7), S(8), S(9), S(10), S(11), S(12),
		S(13), S(14), S(15), S(16), S(17), S(18), S(19), S(20), S(21), S(22), S(23),
		S(24), S(25), S(26), S(27), S(28), S(29), S(30), S(31), S(32),
		[33 ... 63] = -1,
	},
	.compile_row = a64_compile_row,
	.signal_regs = a64_signal_regs,
};
