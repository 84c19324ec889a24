/* elffile.h - the one way stax opens an ELF file (a mapped binary, a
 * separate debug file, a file doctor checks).
 *
 * module/module.c (the one place that opens a mapped binary and its
 * debug files for the pipeline) and lib/debugfile.c (its search) go
 * through these, so that every file is accepted the same way: a regular file only (a FIFO or a device
 * named by a mapping or a debuglink must not hang or disturb stax:
 * O_NONBLOCK, then fstat), opened close-on-exec, read through
 * ELF_C_READ_MMAP guarded by lib/elfguard.h (so every Elf from here ends
 * with elfguard_end()), and of kind ELF_K_ELF.
 */
#ifndef STAX_LIB_ELFFILE_H
#define STAX_LIB_ELFFILE_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
/* Ends e (elfguard_end) and closes fd (when >= 0). */
void elf_file_close(Elf *e, int fd);

/* Reading what every user of a file needs, the same way for all. The
 * file is untrusted: libelf's bounds-checked accessors only. */
/* The section called name, its header in *shdr; NULL when none. */
Elf_Scn *elf_file_section(Elf *e, const char *name, GElf_Shdr *shdr);
/* The GNU build-id from the note sections, else (no section headers)
 * the PT_NOTE segments: its size, copied to out; 0 when there is none
 * or it is longer than max (callers compare and copy size bytes). */
size_t elf_file_build_id(Elf *e, uint8_t *out, size_t max);
/* .gnu_debuglink: a base name (no '/'), NUL, padding to 4 bytes, the
 * CRC32 of the debug file in the file's byte order. 0 with *name
 * pointing into e's data, -ENOENT when there is none (or it has no
 * bytes in the file: SHT_NOBITS), -EINVAL when it is malformed. */
int elf_file_debuglink(Elf *e, const char **name, uint32_t *crc);

#endif
