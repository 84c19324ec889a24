/* kcore.h - the running kernel's code, read from /proc/kcore (an ELF core
 * file whose PT_LOAD segments map kernel addresses; root only, as perf
 * annotate reads it when there is no vmlinux). What is read is the code
 * as it runs now: alternatives and static keys already patched in.
 */
#ifndef STAX_LIB_KCORE_H
#define STAX_LIB_KCORE_H

#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

/* The file offset of [addr, addr + len) in a kcore file whose first size
 * bytes are hdr (the ELF header and the program headers): 0 with *off,
 * or -EINVAL (not a 64-bit little-endian ELF core, headers past the
 * bytes given: err says where) or -ENOENT (no PT_LOAD segment holds the
 * whole range). Reads nothing outside hdr[0..size). */
int kcore_offset(const uint8_t *hdr, size_t size, uint64_t addr, uint64_t len, uint64_t *off,
		 struct err *err);

/* len bytes of kernel memory at addr into buf, from path (/proc/kcore):
 * 0, or a negative code with err saying why (-EACCES: not root). */
int kcore_read(const char *path, uint64_t addr, void *buf, size_t len, struct err *err);

#endif
