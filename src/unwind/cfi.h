/* cfi.h - DWARF call frame information: .eh_frame / .debug_frame parsing,
 * the CFA program interpreter and the DWARF expression evaluator.
 *
 * Everything here reads untrusted bytes: each reader carries an end
 * pointer, and a failure is reported as -EINVAL with the source line and
 * section offset of the first bad byte in the cfi_section (err_line,
 * err_off), never as a crash. Nothing allocates except cfi_fde_list().
 *
 * Pointers returned in struct cfi_cie / cfi_fde / cfi_row point into the
 * section bytes the caller passed in; they stay valid as long as those.
 */
#ifndef STAX_UNWIND_CFI_H
#define STAX_UNWIND_CFI_H

#include "lib/ehframe.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Columns the interpreter tracks: DWARF 0..16 on x86-64 (rax..r15, rip:
 * 17..32 are xmm0-15, tracked and never read), 0..32 on aarch64 (x0..x30,
 * sp, pc). Rules for higher columns (vector registers, ...) are parsed
 * and ignored. */
#define CFI_NREGS 33

enum cfi_rule_kind {
	CFI_R_UNSPEC = 0,   /* not mentioned: ABI default */
	CFI_R_UNDEF,
	CFI_R_SAME,
	CFI_R_OFFSET,       /* saved at CFA + off */
	CFI_R_VAL_OFFSET,   /* value is CFA + off */
	CFI_R_REG,          /* value is in register reg */
	CFI_R_EXPR,         /* saved at the address the expression yields */
	CFI_R_VAL_EXPR,     /* value is what the expression yields */
};

struct cfi_rule {
	uint8_t kind;
	uint8_t reg;
	int64_t off;
	const uint8_t *expr;
	size_t expr_len;
};

enum cfi_cfa_kind { CFI_CFA_REG_OFF = 0, CFI_CFA_EXPR };

struct cfi_row {
	uint64_t loc, end;          /* the row holds for pc in [loc, end) */
	uint8_t cfa_kind;
	uint8_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr;
	size_t cfa_expr_len;
	/* aarch64: the return address is signed here (pointer
	 * authentication): DW_CFA_AARCH64_negate_ra_state toggles it (the
	 * RA_SIGN_STATE pseudo-register's bit 0) */
	bool ra_signed;
	struct cfi_rule reg[CFI_NREGS];
};

/* Run the CIE's and the FDE's instructions. When emit is non-NULL it is
 * called with every row in address order (row->loc..row->end, the last one
 * ending at pc_end); a non-zero return from emit stops the run and is
 * returned. When target is not UINT64_MAX, the run stops at the row that
 * contains target and copies it to *out (returns -ENOENT when target is
 * outside the FDE). Returns 0 or -EINVAL on bad instructions. */
typedef int (*cfi_row_fn)(void *arg, const struct cfi_row *row);
int cfi_run(struct cfi_section *sec, const struct cfi_cie *cie,
	    const struct cfi_fde *fde, uint64_t target, struct cfi_row *out,
	    cfi_row_fn emit, void *arg);

/* Read memory for the expression evaluator and rule application. Returns
 * false when the 8 bytes at addr are not available. */
typedef bool (*cfi_read_fn)(void *arg, uint64_t addr, uint64_t *val);

/* Evaluate a DWARF expression with the register values regs, indexed by
 * column (valid is a bitmask of known columns, 0..63) and an initial stack value (push_cfa: the
 * CFA is pushed first, as for DW_CFA_expression rules). Bounded: at most
 * 64 stack entries and 1000 operations. Returns 0 and *out, -EINVAL on a
 * malformed or unsupported expression, -EFAULT on an unavailable read or
 * an unknown register. */
int cfi_eval_expr(const uint8_t *p, size_t len, const uint64_t *regs,
		  uint64_t valid, bool push_cfa, uint64_t cfa,
		  cfi_read_fn read, void *arg, uint64_t *out);

#endif
