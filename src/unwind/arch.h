/* arch.h - what differs between the machines stax unwinds (internal to
 * unwind/): registers, perf's register order, CFI columns, how a CFI row
 * becomes a compiled rule, the signal frame, and return addresses.
 *
 * One struct arch per machine, each in a file of its own (x86_64.c,
 * aarch64.c); the walk (unwind.c), the tables (table.c) and the splice
 * read the machine's facts from it. A table is compiled by the rules of
 * its ELF file's machine (e_machine), an unwinder walks by the rules of
 * the machine its samples came from (unwinder_set_arch()); a table of
 * another machine than the unwinder's is not used.
 *
 * Registers are in slots (unwind.h): UNW_PC, UNW_SP and UNW_FP are the
 * same slots on every machine; a CFI column (a DWARF register number) is
 * turned into a slot by slot_of_col.
 */
#ifndef STAX_UNWIND_ARCH_H
#define STAX_UNWIND_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/cfi.h"
#include "unwind/table.h"
#include "unwind/unwind.h"

struct arch {
	enum unwind_arch id;
	const char *name;           /* uname's */
	unsigned e_machine;         /* EM_X86_64, EM_AARCH64 */
	int nregs;                  /* slots used: 0 .. nregs-1 */
	unsigned ncols;             /* CFI columns read: 0 .. ncols-1 (cfi_section.ncols) */
	/* CFI column -> slot (columns < CFI_NREGS; 0xff: not a register the
	 * unwinder keeps) */
	uint8_t slot_of_col[CFI_NREGS];
	int ra_col;                 /* the CIE's return address column */
	int sp_col;                 /* the stack pointer's column */
	uint64_t callee_saved;      /* slots that keep their value where the
				     * CFI says nothing (the ABI's) */
	uint64_t caller_saved;      /* slots a call may change */
	/* The address bits of a return address: a return address read from
	 * the stack or the link register is ANDed with it, which strips
	 * aarch64's pointer-authentication signature (pac-ret). All ones on
	 * x86-64. */
	uint64_t ra_mask;
	/* The splice (splice.h): the frame record F the kernel's chain goes
	 * on from is found at CFA - 16 (x86-64: the call pushed the return
	 * address right below the CFA, the prologue rbp below it), else it
	 * is where the frame's return address was read from, less 8
	 * (aarch64: a frame record is anywhere in the frame). */
	bool record_at_cfa;
	/* perf_event's user registers: the mask to ask for, and perf's
	 * register number -> slot (-1: not used) */
	uint64_t perf_mask;
	int8_t perf_slot[64];
	/* Turn one interpreted CFI row into a rule (kind UR_NORMAL, UR_PLT,
	 * UR_STOP, UR_SIGNAL or UR_SLOW); signal: the CIE says 'S'. */
	void (*compile_row)(const struct cfi_row *row, bool signal, struct urule *out);
	/* The registers of the frame a signal interrupted, from the signal
	 * frame on the stack; sp is the stack pointer in the signal return
	 * trampoline. Fills the machine's slots and *valid. Returns 0, or
	 * -EFAULT when a read fails. */
	int (*signal_regs)(uint64_t sp, cfi_read_fn read, void *arg, uint64_t *regs,
			   uint64_t *valid);
};

extern const struct arch arch_x86_64, arch_aarch64;

/* The facts of machine a (NONE: the host's). Never NULL. */
const struct arch *arch_of(enum unwind_arch a);

/* Apply an interpreted CFI row to the registers of a frame (regs in slots,
 * valid) and produce the caller's (out, out_valid) and the CFA. Callee-saved
 * registers without a rule keep their value; caller-saved ones without a
 * rule become unknown; the caller's pc is the return address column's
 * value, ANDed with ra_mask. Returns 0; -EFAULT when a read fails;
 * -ENODATA when the CFA's register is not known; -EINVAL for rules we
 * cannot evaluate; -ENOENT when the return address is undefined
 * (outermost). */
int arch_apply_row(const struct arch *a, const struct cfi_row *row, const uint64_t *regs,
		   uint64_t valid, cfi_read_fn read, void *arg, uint64_t *out,
		   uint64_t *out_valid, uint64_t *cfa);

/* x86_64.c and aarch64.c: their compile_row and signal_regs. */
void x86_compile_row(const struct cfi_row *row, bool signal, struct urule *out);
int x86_signal_regs(uint64_t sp, cfi_read_fn read, void *arg, uint64_t *regs, uint64_t *valid);
void a64_compile_row(const struct cfi_row *row, bool signal, struct urule *out);
int a64_signal_regs(uint64_t sp, cfi_read_fn read, void *arg, uint64_t *regs, uint64_t *valid);

#endif
