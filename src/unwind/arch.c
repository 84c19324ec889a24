/* arch.c - choosing the machine, perf's registers, and the full rule
 * application for SLOW rows (every machine's, by its facts). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/arch.h"

#include <errno.h>
#include <string.h>

/* (stax builds for x86-64 and aarch64: any other host would need a
 * struct arch of its own) */
enum unwind_arch unwind_arch_host(void)
{
#if defined(__aarch64__)
	return UNWIND_ARCH_AARCH64;
#else
	return UNWIND_ARCH_X86_64;
#endif
}

const struct arch *arch_of(enum unwind_arch a)
{
	if (a == UNWIND_ARCH_NONE)
		a = unwind_arch_host();
	return a == UNWIND_ARCH_AARCH64 ? &arch_aarch64 : &arch_x86_64;
}

enum unwind_arch unwind_arch_by_name(const char *name)
{
	if (!name)
		return UNWIND_ARCH_NONE;
	if (!strcmp(name, "x86_64") || !strcmp(name, "amd64"))
		return UNWIND_ARCH_X86_64;
	if (!strcmp(name, "aarch64") || !strcmp(name, "arm64"))
		return UNWIND_ARCH_AARCH64;
	return UNWIND_ARCH_NONE;
}

enum unwind_arch unwind_arch_by_elf(unsigned e_machine)
{
	if (e_machine == arch_x86_64.e_machine)
		return UNWIND_ARCH_X86_64;
	if (e_machine == arch_aarch64.e_machine)
		return UNWIND_ARCH_AARCH64;
	return UNWIND_ARCH_NONE;
}

const char *unwind_arch_name(enum unwind_arch a)
{
	return a == UNWIND_ARCH_NONE ? "unknown" : arch_of(a)->name;
}

uint64_t unwind_perf_regs_mask(enum unwind_arch a)
{
	return arch_of(a)->perf_mask;
}

void unwind_regs_from_perf(enum unwind_arch a, uint64_t mask, const uint8_t *vals, size_t n,
			   struct unwind_regs *out)
{
	const struct arch *ar = arch_of(a);
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	for (int bit = 0; bit < 64 && k < n; bit++) {
		uint64_t v;
		if (!(mask & (1ull << bit)))
			continue;
		memcpy(&v, vals + 8 * k++, 8);
		if (ar->perf_slot[bit] >= 0) {
			out->r[ar->perf_slot[bit]] = v;
			out->valid |= 1ull << ar->perf_slot[bit];
		}
	}
}

/* The register rules are by CFI column; the expressions read registers
 * by column too. Where slots are not columns (aarch64) the registers are
 * copied into columns and the results back. */
int arch_apply_row(const struct arch *a, const struct cfi_row *row, const uint64_t *regs,
		   uint64_t valid, cfi_read_fn read, void *arg, uint64_t *out,
		   uint64_t *out_valid, uint64_t *cfa_out)
{
	uint64_t cr[CFI_NREGS], cout[CFI_NREGS], cvalid = 0, ov = 0, cfa;
	int r;

	/* the frame's registers by column */
	for (unsigned c = 0; c < a->ncols; c++) {
		int s = a->slot_of_col[c];
		if (s != 0xff && (valid & (1ull << s))) {
			cr[c] = regs[s];
			cvalid |= 1ull << c;
		}
	}
	*cfa_out = 0;
	if (row->cfa_kind == CFI_CFA_REG_OFF) {
		if (row->cfa_reg >= a->ncols || a->slot_of_col[row->cfa_reg] == 0xff)
			return -EINVAL;
		if (!(cvalid & (1ull << row->cfa_reg)))
			return -ENODATA;
		cfa = cr[row->cfa_reg] + (uint64_t)row->cfa_off;
	} else {
		r = cfi_eval_expr(row->cfa_expr, row->cfa_expr_len, cr, cvalid,
				  false, 0, read, arg, &cfa);
		if (r < 0)
			return r;
	}
	*cfa_out = cfa;
	if (row->reg[a->ra_col].kind == CFI_R_UNDEF)
		return -ENOENT;
	for (unsigned i = 0; i < a->ncols; i++) {
		const struct cfi_rule *x = &row->reg[i];
		int s = a->slot_of_col[i];
		uint64_t v = 0;
		if (s == 0xff)
			continue;
		switch (x->kind) {
		case CFI_R_UNSPEC:
			if ((int)i == a->sp_col) {
				v = cfa;
				break;
			}
			if (!(a->callee_saved & (1ull << s)) || !(cvalid & (1ull << i)))
				continue;
			v = cr[i];
			break;
		case CFI_R_SAME:
			if (!(cvalid & (1ull << i)))
				continue;
			v = cr[i];
			break;
		case CFI_R_UNDEF:
			continue;
		case CFI_R_OFFSET:
			/* A save slot below the stack pointer was popped
			 * already (epilogue): the register holds its value. */
			if ((cvalid & (1ull << a->sp_col)) && cfa + (uint64_t)x->off < cr[a->sp_col]) {
				if (!(cvalid & (1ull << i)))
					continue;
				v = cr[i];
				break;
			}
			if (!read(arg, cfa + (uint64_t)x->off, &v))
				return -EFAULT;
			break;
		case CFI_R_VAL_OFFSET:
			v = cfa + (uint64_t)x->off;
			break;
		case CFI_R_REG:
			if (x->reg >= a->ncols || !(cvalid & (1ull << x->reg)))
				continue;
			v = cr[x->reg];
			break;
		case CFI_R_EXPR:
		case CFI_R_VAL_EXPR: {
			uint64_t at;
			r = cfi_eval_expr(x->expr, x->expr_len, cr, cvalid, true, cfa,
					  read, arg, &at);
			if (r < 0) {
				if ((int)i == a->ra_col || (int)i == a->sp_col || s == UNW_FP)
					return r;
				continue;
			}
			if (x->kind == CFI_R_EXPR) {
				if (!read(arg, at, &v))
					return -EFAULT;
			} else {
				v = at;
			}
			break;
		}
		default:
			continue;
		}
		cout[i] = v;
		ov |= 1ull << i;
	}
	if (!(ov & (1ull << a->ra_col)))
		return -EINVAL;
	/* back into slots: the caller's pc is the return address (on
	 * aarch64 the link register's column, which says nothing of the
	 * caller's own link register: not kept) */
	*out_valid = 0;
	for (unsigned i = 0; i < a->ncols; i++) {
		int s = a->slot_of_col[i];
		if (s == 0xff || !(ov & (1ull << i)) || (int)i == a->ra_col)
			continue;
		out[s] = cout[i];
		*out_valid |= 1ull << s;
	}
	out[UNW_PC] = cout[a->ra_col] & a->ra_mask;
	*out_valid |= 1ull << UNW_PC;
	return 0;
}
