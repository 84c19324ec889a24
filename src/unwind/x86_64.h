/* x86_64.h - register rules and the signal frame on x86-64 (internal).
 *
 * Registers are in DWARF numbering (UNW_* in unwind.h), 17 of them. The
 * functions read memory only through the cfi_read_fn they are given.
 */
#ifndef STAX_UNWIND_X86_64_H
#define STAX_UNWIND_X86_64_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/cfi.h"

/* Offset of uc_mcontext.gregs in the ucontext_t that the kernel's
 * rt_sigframe holds right after the return address (pretcode); checked
 * against <sys/ucontext.h> in x86_64.c. */
#define X86_UC_MCONTEXT 40

/* The registers of the frame a signal interrupted. sp is the stack
 * pointer in the signal trampoline (__restore_rt), which is the address
 * of the ucontext. Fills regs[0..16] and sets *valid to all 17 bits.
 * Returns 0, or -EFAULT when a read fails. */
int x86_signal_regs(uint64_t sp, cfi_read_fn read, void *arg,
		    uint64_t *regs, uint32_t *valid);

/* Apply an interpreted CFI row to the registers of a frame (regs, valid)
 * and produce the caller's (out, out_valid) and the CFA. Callee-saved
 * registers without a rule keep their value; caller-saved ones without a
 * rule become unknown. Returns 0; -EFAULT when a read fails; -ENODATA
 * when the CFA's register is not known; -EINVAL for rules we cannot
 * evaluate; -ENOENT when the return address is undefined (outermost). */
int x86_apply_row(const struct cfi_row *row, const uint64_t *regs, uint32_t valid,
		  cfi_read_fn read, void *arg, uint64_t *out, uint32_t *out_valid,
		  uint64_t *cfa);

#endif
