/* elfguard.h - ELF files read through a mapping that survives the file
 * being cut short while it is read.
 *
 * libelf's ELF_C_READ_MMAP maps the whole file. When someone truncates
 * that file while stax reads it (cp over a library during a recording,
 * an editor that rewrites in place), every read of a page past the new
 * end raises SIGBUS, which would kill stax. A file replaced by rename
 * (dpkg, most package managers) is not affected: the old inode lives on.
 *
 * elfguard_begin() opens an Elf with ELF_C_READ_MMAP and records its
 * mapping. The first time, it installs a SIGBUS handler that, for a
 * fault inside a recorded mapping, maps a page of zeros over the
 * faulting page and marks the file as changed, so the read goes on and
 * sees zeros (every parser of stax checks bounds, and is fuzzed against
 * such bytes). A fault anywhere else is passed to the handler that was
 * there before (by default: the process dies of SIGBUS, as before).
 * Callers ask elfguard_changed() once they have read what they wanted
 * and throw it away as "cannot read FILE: it changed while being read".
 *
 * At most ELFGUARD_SLOTS files are guarded at once; past that a file is
 * opened unguarded (as before). Thread-safe; the handler takes no lock.
 */
#ifndef STAX_LIB_ELFGUARD_H
#define STAX_LIB_ELFGUARD_H

#include <libelf.h>
#include <stdbool.h>

#define ELFGUARD_SLOTS 1024

/* elf_begin(fd, ELF_C_READ_MMAP, NULL), guarded. NULL as elf_begin. */
Elf *elfguard_begin(int fd);
/* Whether a read of e's mapping found the file shorter than when it was
 * opened (the bytes read there were zeros). false for an Elf not from
 * elfguard_begin(). */
bool elfguard_changed(Elf *e);
/* Stop guarding e and elf_end() it; returns elfguard_changed(e) as it
 * was. Any Elf may be given (NULL too): one not guarded is just ended.
 * Every Elf from elfguard_begin() must end here, never by elf_end()
 * alone, so no guard outlives its mapping. */
bool elfguard_end(Elf *e);

#endif
