/* jitcfi.h - unwind tables for JIT code from a jitdump's
 * JIT_CODE_UNWINDING_INFO records (python -X perf_jit, node
 * --perf-prof --perf-prof-unwinding-info).
 *
 * A jitdump (jit-PID.dump, perf's tools/perf/Documentation/
 * jitdump-specification.txt) is written by the profiled program while it
 * runs: a 40-byte header, then records of a 16-byte header (id, total
 * size, timestamp) and a body. An UNWINDING_INFO record (id 4: u64
 * unwinding_size, u64 eh_frame_hdr_size, u64 mapped_size, then
 * unwinding_size bytes: .eh_frame followed by .eh_frame_hdr) describes
 * the code of the next JIT_CODE_LOAD record (id 0: u32 pid, u32 tid, u64
 * vma, u64 code_addr, u64 code_size, u64 index, name, code). As perf lays
 * them out, the .eh_frame sits at code_addr + ALIGN8(code_size) for its
 * pc-relative pointers; an FDE that does not cover the code there is
 * moved onto it (the code is what the record says it describes).
 *
 * The bytes are untrusted: every read is checked against the end of the
 * buffer; a malformed record stops the parse with a message saying where.
 * Ownership: a jit_cfi owns its tables; pointers from jit_cfi_find() stay
 * valid until jit_cfi_free().
 */
#ifndef STAX_UNWIND_JITCFI_H
#define STAX_UNWIND_JITCFI_H

#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

struct utable;
struct jit_cfi;

struct jit_cfi *jit_cfi_new(void);
void jit_cfi_free(struct jit_cfi *j);

/* Add the code ranges of the jitdump bytes data[0..size) from offset *off
 * (0: start at the header). *off advances past the last whole record, so
 * a file that is still being written is read again from there later.
 * Returns the number of code ranges added, or -EINVAL (bad magic,
 * version, or a record whose size is impossible) with a message in err
 * naming the offset. */
int jit_cfi_add(struct jit_cfi *j, const void *data, size_t size, size_t *off,
		struct err *err);

/* The table whose code covers pc (its addresses are absolute), or NULL. */
const struct utable *jit_cfi_find(struct jit_cfi *j, uint64_t pc);

/* Number of code ranges with unwind tables. */
size_t jit_cfi_count(const struct jit_cfi *j);

#endif
