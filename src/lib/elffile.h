/* elffile.h - the one way stax opens an ELF file (a mapped binary, a
 * separate debug file, a file doctor checks).
 *
 * Every opener in the pipeline (symbol/elf.c, symbol/dwarf.c,
 * symbol/fpcheck.c, unwind/table.c) goes through these, so that they
 * agree on what they accept: a regular file only (a FIFO or a device
 * named by a mapping or a debuglink must not hang or disturb stax:
 * O_NONBLOCK, then fstat), opened close-on-exec, read through
 * ELF_C_READ_MMAP guarded by lib/elfguard.h (so every Elf from here ends
 * with elfguard_end()), and of kind ELF_K_ELF.
 */
#ifndef STAX_LIB_ELFFILE_H
#define STAX_LIB_ELFFILE_H

#include <libelf.h>

/* elf_version(EV_CURRENT), once, from any thread. */
void elf_file_init(void);
/* Open path read-only if it is a regular file: the fd, or -errno
 * (-EINVAL when it is not a regular file). */
int elf_file_fd(const char *path);
/* The ELF of fd (a descriptor from elf_file_fd()), or NULL when it is
 * not an ELF file; fd stays the caller's. */
Elf *elf_file_begin(int fd);
/* Both: the Elf and its descriptor in *fd (the caller elfguard_end()s
 * and closes it), or NULL with *fd = -1 and nothing left open. */
Elf *elf_file_open(const char *path, int *fd);

#endif
