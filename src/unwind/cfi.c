/* cfi.c - run CFA programs and DWARF expressions (cfi.h); the entries
 * they come in are read by lib/ehframe.c.
 *
 * Every read is checked against an end pointer. Corruption returns
 * -EINVAL and records the source line and section offset in the
 * cfi_section, so a caller can say where.
 */
#include "unwind/cfi.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define CORRUPT(p) CFI_CORRUPT(sec, (p))

/* Offsets from corrupt input may overflow: wrap instead of UB. */
static inline int64_t wrap_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* ---- the CFA program interpreter ---- */

#define STATE_STACK 16

struct run {
	struct cfi_section *sec;
	const struct cfi_cie *cie;
	const struct cfi_fde *fde;
	unsigned ncols;            /* columns tracked (sec->ncols) */
	struct cfi_row row;        /* current */
	struct cfi_row init;       /* after the CIE instructions */
	struct cfi_row stack[STATE_STACK];
	int depth;
	uint64_t target;
	struct cfi_row *out;
	cfi_row_fn emit;
	void *arg;
	bool found;
};

/* Copy a row's rules up to reg[r->ncols]: a row with x86-64's 17
 * columns by a fixed-size copy (inlined: a row is copied at every FDE,
 * and at every remember/restore_state), else whole. */
#define ROW_SIZE(n) (offsetof(struct cfi_row, reg) + (n) * sizeof(struct cfi_rule))
static inline void row_copy(const struct run *r, struct cfi_row *dst, const struct cfi_row *src)
{
	if (r->ncols <= 17)
		memcpy(dst, src, ROW_SIZE(17));
	else
		*dst = *src;
}

/* The row [row.loc, newloc) is complete. Returns 1 to stop (target found
 * or emit asked), 0 to continue, <0 on error. */
static int close_row(struct run *r, uint64_t newloc)
{
	if (newloc > r->fde->pc_end)
		newloc = r->fde->pc_end;
	if (newloc <= r->row.loc)
		return 0;
	r->row.end = newloc;
	if (r->target != UINT64_MAX && r->target >= r->row.loc && r->target < newloc) {
		row_copy(r, r->out, &r->row);
		r->found = true;
		return 1;
	}
	if (r->emit) {
		int e = r->emit(r->arg, &r->row);
		if (e)
			return e;
	}
	return 0;
}

static struct cfi_rule *reg_rule(struct run *r, uint64_t reg)
{
	static __thread struct cfi_rule sink;
	/* (columns from ncols on are written and never read: a constant
	 * bound here, as this runs for every rule of every row) */
	if (reg < CFI_NREGS)
		return &r->row.reg[reg];
	return &sink; /* columns we do not track */
}

static int exec(struct run *r, const uint8_t *p, const uint8_t *end, bool in_cie)
{
	struct cfi_section *sec = r->sec;
	const struct cfi_cie *cie = r->cie;
	uint64_t u, reg, reg2;
	int64_t s;
	uint8_t op;
	int rc;

	while (p < end) {
		const uint8_t *at = p;
		op = *p++;
		uint8_t hi = op & 0xc0, lo = op & 0x3f;
		uint64_t adv = 0;
		bool advance = false;

		if (hi == 0x40) {
			adv = lo * cie->code_align;
			advance = true;
		} else if (hi == 0x80) {
			if (!cfi_rd_uleb(&p, end, &u))
				return CORRUPT(at);
			struct cfi_rule *x = reg_rule(r, lo);
			x->kind = CFI_R_OFFSET;
			x->off = wrap_mul((int64_t)u, cie->data_align);
			continue;
		} else if (hi == 0xc0) {
			if (in_cie)
				return CORRUPT(at);
			if (lo < r->ncols)
				r->row.reg[lo] = r->init.reg[lo];
			continue;
		} else {
			switch (op) {
			case 0x00: /* nop */
				continue;
			case 0x01: { /* set_loc */
				uint8_t enc = sec && sec->is_eh ? cie->fde_enc : 0;
				uint64_t loc;
				if (cfi_read_encoded(&p, end, enc, cfi_field_vaddr(sec, p), sec, &loc) < 0)
					return CORRUPT(at);
				if (loc < r->row.loc)
					return CORRUPT(at);
				rc = close_row(r, loc);
				if (rc)
					return rc;
				r->row.loc = loc;
				continue;
			}
			case 0x02:
				if (!cfi_rd_fixed(&p, end, 1, &u)) return CORRUPT(at);
				adv = u * cie->code_align; advance = true;
				break;
			case 0x03:
				if (!cfi_rd_fixed(&p, end, 2, &u)) return CORRUPT(at);
				adv = u * cie->code_align; advance = true;
				break;
			case 0x04:
				if (!cfi_rd_fixed(&p, end, 4, &u)) return CORRUPT(at);
				adv = u * cie->code_align; advance = true;
				break;
			case 0x1d: /* MIPS_advance_loc8 */
				if (!cfi_rd_fixed(&p, end, 8, &u)) return CORRUPT(at);
				adv = u * cie->code_align; advance = true;
				break;
			case 0x05: /* offset_extended */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_uleb(&p, end, &u))
					return CORRUPT(at);
				reg_rule(r, reg)->kind = CFI_R_OFFSET;
				reg_rule(r, reg)->off = wrap_mul((int64_t)u, cie->data_align);
				continue;
			case 0x06: /* restore_extended */
				if (in_cie || !cfi_rd_uleb(&p, end, &reg))
					return CORRUPT(at);
				if (reg < r->ncols)
					r->row.reg[reg] = r->init.reg[reg];
				continue;
			case 0x07: /* undefined */
				if (!cfi_rd_uleb(&p, end, &reg))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_UNDEF };
				continue;
			case 0x08: /* same_value */
				if (!cfi_rd_uleb(&p, end, &reg))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_SAME };
				continue;
			case 0x09: /* register */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_uleb(&p, end, &reg2))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_REG,
					.reg = reg2 > 255 ? 255 : (uint8_t)reg2 };
				continue;
			case 0x0a: /* remember_state */
				if (r->depth >= STATE_STACK)
					return CORRUPT(at);
				row_copy(r, &r->stack[r->depth++], &r->row);
				continue;
			case 0x0b: { /* restore_state */
				if (r->depth <= 0)
					return CORRUPT(at);
				uint64_t loc = r->row.loc;
				row_copy(r, &r->row, &r->stack[--r->depth]);
				r->row.loc = loc;
				continue;
			}
			case 0x0c: /* def_cfa */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_uleb(&p, end, &u))
					return CORRUPT(at);
				r->row.cfa_kind = CFI_CFA_REG_OFF;
				r->row.cfa_reg = reg > 255 ? 255 : (uint8_t)reg;
				r->row.cfa_off = (int64_t)u;
				continue;
			case 0x0d: /* def_cfa_register */
				if (!cfi_rd_uleb(&p, end, &reg) || r->row.cfa_kind != CFI_CFA_REG_OFF)
					return CORRUPT(at);
				r->row.cfa_reg = reg > 255 ? 255 : (uint8_t)reg;
				continue;
			case 0x0e: /* def_cfa_offset */
				if (!cfi_rd_uleb(&p, end, &u) || r->row.cfa_kind != CFI_CFA_REG_OFF)
					return CORRUPT(at);
				r->row.cfa_off = (int64_t)u;
				continue;
			case 0x0f: /* def_cfa_expression */
				if (!cfi_rd_uleb(&p, end, &u) || u > (uint64_t)(end - p))
					return CORRUPT(at);
				r->row.cfa_kind = CFI_CFA_EXPR;
				r->row.cfa_expr = p;
				r->row.cfa_expr_len = u;
				p += u;
				continue;
			case 0x10: /* expression */
			case 0x16: /* val_expression */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_uleb(&p, end, &u) ||
				    u > (uint64_t)(end - p))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){
					.kind = op == 0x10 ? CFI_R_EXPR : CFI_R_VAL_EXPR,
					.expr = p, .expr_len = u };
				p += u;
				continue;
			case 0x11: /* offset_extended_sf */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_sleb(&p, end, &s))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_OFFSET,
					.off = wrap_mul(s, cie->data_align) };
				continue;
			case 0x12: /* def_cfa_sf */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_sleb(&p, end, &s))
					return CORRUPT(at);
				r->row.cfa_kind = CFI_CFA_REG_OFF;
				r->row.cfa_reg = reg > 255 ? 255 : (uint8_t)reg;
				r->row.cfa_off = wrap_mul(s, cie->data_align);
				continue;
			case 0x13: /* def_cfa_offset_sf */
				if (!cfi_rd_sleb(&p, end, &s) || r->row.cfa_kind != CFI_CFA_REG_OFF)
					return CORRUPT(at);
				r->row.cfa_off = wrap_mul(s, cie->data_align);
				continue;
			case 0x14: /* val_offset */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_uleb(&p, end, &u))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_VAL_OFFSET,
					.off = wrap_mul((int64_t)u, cie->data_align) };
				continue;
			case 0x15: /* val_offset_sf */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_sleb(&p, end, &s))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_VAL_OFFSET,
					.off = wrap_mul(s, cie->data_align) };
				continue;
			case 0x2e: /* GNU_args_size */
				if (!cfi_rd_uleb(&p, end, &u))
					return CORRUPT(at);
				continue;
			case 0x2f: /* GNU_negative_offset_extended */
				if (!cfi_rd_uleb(&p, end, &reg) || !cfi_rd_uleb(&p, end, &u))
					return CORRUPT(at);
				*reg_rule(r, reg) = (struct cfi_rule){ .kind = CFI_R_OFFSET,
					.off = wrap_mul((int64_t)(0 - u), cie->data_align) };
				continue;
			case 0x2d: /* aarch64 negate_ra_state (GNU_window_save
				    * on SPARC, which stax does not unwind) */
				r->row.ra_signed = !r->row.ra_signed;
				continue;
			default:
				return CORRUPT(at);
			}
		}
		if (advance) {
			if (in_cie)
				return CORRUPT(at);
			uint64_t loc = r->row.loc + adv;
			if (loc < r->row.loc)
				return CORRUPT(at);
			rc = close_row(r, loc);
			if (rc)
				return rc;
			r->row.loc = loc;
			if (loc >= r->fde->pc_end)
				return 0;
		}
	}
	return 0;
}

int cfi_run(struct cfi_section *sec, const struct cfi_cie *cie,
	    const struct cfi_fde *fde, uint64_t target, struct cfi_row *out,
	    cfi_row_fn emit, void *arg)
{
	/* The run state (with its remember stack) lives on this frame, not
	 * in a static: tables are built on more than one thread. */
	struct run r;
	int rc;

	if (target != UINT64_MAX && (target < fde->pc_begin || target >= fde->pc_end))
		return -ENOENT;
	r.sec = sec;
	r.cie = cie;
	r.fde = fde;
	r.depth = 0;
	r.target = target;
	r.out = out;
	r.emit = emit;
	r.arg = arg;
	r.found = false;
	/* only the machine's columns: a row is copied at every FDE */
	r.ncols = sec && sec->ncols && sec->ncols < CFI_NREGS ? sec->ncols : CFI_NREGS;
	if (r.ncols <= 17)
		memset(&r.row, 0, ROW_SIZE(17));
	else
		memset(&r.row, 0, sizeof(r.row));
	r.row.loc = fde->pc_begin;
	r.row.cfa_reg = 255;

	rc = exec(&r, cie->insn, cie->insn_end, true);
	if (rc < 0)
		return rc;
	row_copy(&r, &r.init, &r.row);
	r.depth = 0;
	rc = exec(&r, fde->insn, fde->insn_end, false);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return r.found ? 0 : rc;
	rc = close_row(&r, fde->pc_end);
	if (rc < 0)
		return rc;
	if (target != UINT64_MAX)
		return r.found ? 0 : -ENOENT;
	return rc > 0 && !r.found ? rc : 0;
}

/* ---- DWARF expressions ---- */

int cfi_eval_expr(const uint8_t *p, size_t len, const uint64_t *regs,
		  uint64_t valid, bool push_cfa, uint64_t cfa,
		  cfi_read_fn read, void *arg, uint64_t *out)
{
	uint64_t st[64];
	int sp = 0;
	const uint8_t *start = p, *end = p + len;
	unsigned steps = 0;
	uint64_t u, a, b;
	int64_t s;

#define NEED(n) do { if (sp < (n)) return -EINVAL; } while (0)
#define PUSH(v) do { if (sp >= 64) return -EINVAL; uint64_t v_ = (v); st[sp] = v_; sp++; } while (0)
	if (push_cfa)
		PUSH(cfa);
	while (p < end) {
		if (++steps > 1000)
			return -EINVAL;
		uint8_t op = *p++;
		if (op >= 0x30 && op <= 0x4f) { /* lit */
			PUSH(op - 0x30);
			continue;
		}
		if (op >= 0x70 && op <= 0x8f) { /* breg */
			unsigned reg = op - 0x70;
			if (!cfi_rd_sleb(&p, end, &s))
				return -EINVAL;
			if (!(valid & (1ull << reg)))
				return -EFAULT;
			PUSH(regs[reg] + (uint64_t)s);
			continue;
		}
		switch (op) {
		case 0x03: if (!cfi_rd_fixed(&p, end, 8, &u)) return -EINVAL; PUSH(u); break;
		case 0x08: if (!cfi_rd_fixed(&p, end, 1, &u)) return -EINVAL; PUSH(u); break;
		case 0x09: if (!cfi_rd_fixed(&p, end, 1, &u)) return -EINVAL; PUSH((uint64_t)(int8_t)u); break;
		case 0x0a: if (!cfi_rd_fixed(&p, end, 2, &u)) return -EINVAL; PUSH(u); break;
		case 0x0b: if (!cfi_rd_fixed(&p, end, 2, &u)) return -EINVAL; PUSH((uint64_t)(int16_t)u); break;
		case 0x0c: if (!cfi_rd_fixed(&p, end, 4, &u)) return -EINVAL; PUSH(u); break;
		case 0x0d: if (!cfi_rd_fixed(&p, end, 4, &u)) return -EINVAL; PUSH((uint64_t)(int32_t)u); break;
		case 0x0e: case 0x0f: if (!cfi_rd_fixed(&p, end, 8, &u)) return -EINVAL; PUSH(u); break;
		case 0x10: if (!cfi_rd_uleb(&p, end, &u)) return -EINVAL; PUSH(u); break;
		case 0x11: if (!cfi_rd_sleb(&p, end, &s)) return -EINVAL; PUSH((uint64_t)s); break;
		case 0x12: NEED(1); PUSH(st[sp - 1]); break;
		case 0x13: NEED(1); sp--; break;
		case 0x14: NEED(2); PUSH(st[sp - 2]); break;
		case 0x15:
			if (!cfi_rd_fixed(&p, end, 1, &u)) return -EINVAL;
			NEED((int)u + 1); PUSH(st[sp - 1 - (int)u]);
			break;
		case 0x16: NEED(2); a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a; break;
		case 0x17: NEED(3); a = st[sp - 1]; st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3]; st[sp - 3] = a; break;
		case 0x06: /* deref */
			NEED(1);
			if (!read(arg, st[sp - 1], &st[sp - 1]))
				return -EFAULT;
			break;
		case 0x94: /* deref_size */
			if (!cfi_rd_fixed(&p, end, 1, &u) || u == 0 || u > 8) return -EINVAL;
			NEED(1);
			if (!read(arg, st[sp - 1], &a))
				return -EFAULT;
			st[sp - 1] = u == 8 ? a : a & ((1ull << (8 * u)) - 1);
			break;
		case 0x19: NEED(1); if ((int64_t)st[sp - 1] < 0) st[sp - 1] = -st[sp - 1]; break;
		case 0x1f: NEED(1); st[sp - 1] = -st[sp - 1]; break;
		case 0x20: NEED(1); st[sp - 1] = ~st[sp - 1]; break;
		case 0x23:
			if (!cfi_rd_uleb(&p, end, &u)) return -EINVAL;
			NEED(1); st[sp - 1] += u;
			break;
		case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e: case 0x21:
		case 0x22: case 0x24: case 0x25: case 0x26: case 0x27:
		case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (op) {
			case 0x1a: a &= b; break;
			case 0x1b: /* div; INT64_MIN / -1 would trap */
				if (!b) return -EINVAL;
				a = (int64_t)b == -1 ? 0 - a : (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case 0x1c: a -= b; break;
			case 0x1d: if (!b) return -EINVAL; a %= b; break;
			case 0x1e: a *= b; break;
			case 0x21: a |= b; break;
			case 0x22: a += b; break;
			case 0x24: a = b >= 64 ? 0 : a << b; break;
			case 0x25: a = b >= 64 ? 0 : a >> b; break;
			case 0x26: a = (uint64_t)((int64_t)a >> (b >= 64 ? 63 : b)); break;
			case 0x27: a ^= b; break;
			case 0x29: a = a == b; break;
			case 0x2a: a = (int64_t)a >= (int64_t)b; break;
			case 0x2b: a = (int64_t)a > (int64_t)b; break;
			case 0x2c: a = (int64_t)a <= (int64_t)b; break;
			case 0x2d: a = (int64_t)a < (int64_t)b; break;
			case 0x2e: a = a != b; break;
			}
			st[sp - 1] = a;
			break;
		case 0x28: /* bra */
		case 0x2f: { /* skip */
			if (!cfi_rd_fixed(&p, end, 2, &u)) return -EINVAL;
			int16_t d = (int16_t)u;
			bool take = true;
			if (op == 0x28) {
				NEED(1);
				take = st[--sp] != 0;
			}
			if (take) {
				if ((d < 0 && (size_t)(-d) > (size_t)(p - start)) ||
				    (d > 0 && d > end - p))
					return -EINVAL;
				p += d;
			}
			break;
		}
		case 0x92: /* bregx */
			if (!cfi_rd_uleb(&p, end, &u) || !cfi_rd_sleb(&p, end, &s)) return -EINVAL;
			if (u >= 64 || !(valid & (1ull << u)))
				return -EFAULT;
			PUSH(regs[u] + (uint64_t)s);
			break;
		case 0x96: /* nop */
			break;
		default:
			return -EINVAL;
		}
	}
	NEED(1);
	*out = st[sp - 1];
	return 0;
#undef NEED
#undef PUSH
}
