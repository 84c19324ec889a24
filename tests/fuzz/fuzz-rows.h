/* fuzz-rows.h - the unwind rows of fuzz_cfi and fuzz_unwind_elf applied
 * as a walk would: registers at fixed addresses, and stack memory that
 * reads as a hash of its address (unreadable where the low byte is 0x42,
 * so that rules meet failed reads too). */
#ifndef STAX_FUZZ_ROWS_H
#define STAX_FUZZ_ROWS_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/table.h"
#include "unwind/arch.h"

static bool fake_read(void *arg, uint64_t addr, uint64_t *v)
{
	(void)arg;
	*v = addr * 0x9e3779b97f4a7c15ull;
	return (addr & 0xff) != 0x42;
}

/* The FDE row of t at a (a SLOW row, or any of a provisional table),
 * applied to made-up registers. */
static void apply_slow_row(const struct utable *t, uint64_t a)
{
	struct cfi_row row;
	struct cfi_cie cie;
	if (utable_slow_row(t, a, &row, &cie) == 0) {
		uint64_t regs[UNW_NREGS], out[UNW_NREGS], cfa, ov;
		for (int k = 0; k < UNW_NREGS; k++)
			regs[k] = 0x7ff000000000ull + 8 * k;
		arch_apply_row(arch_of(t->arch), &row, regs, (1ull << UNW_NREGS) - 1, fake_read, NULL, out,
			       &ov, &cfa);
	}
}

#endif
