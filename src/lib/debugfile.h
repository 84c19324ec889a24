/* debugfile.h - where a binary's separate debug file is, and whether a
 * file found there belongs to it.
 *
 * The one search the pipeline makes (module/module.c's, once per module,
 * for the unwinder's tables and the symbolizer's symbols and DWARF), so
 * that both accept the same file: by build-id under
 * /usr/lib/debug/.build-id, then by .gnu_debuglink next to the binary,
 * in its .debug/ and under /usr/lib/debug/DIR. A candidate is used only
 * when it provably belongs to the binary: the same build-id when both
 * have one, else (found by debuglink) the CRC32 the debuglink records.
 * Rules or symbols of another build would be silently wrong. Every file
 * is opened with lib/elffile.h; release with elf_file_close().
 */
#ifndef STAX_LIB_DEBUGFILE_H
#define STAX_LIB_DEBUGFILE_H

#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

/* The debug file of build-id bid (2 to 64 bytes), or NULL. *found, when
 * found is not NULL, gets its malloc'd path. */
Elf *debug_file_by_build_id(const uint8_t *bid, size_t len, int *fd, char **found);
/* The file e's .gnu_debuglink names (e is the binary at path, whose
 * build-id is bid, bidlen 0 for none), or NULL. The debuglink may name
 * the binary itself: that is skipped. */
Elf *debug_file_by_link(Elf *e, const char *path, const uint8_t *bid, size_t bidlen,
			int *fd, char **found);
/* Every path debug_file_find() looks at, in order (malloc'd, for the
 * caller to free): a cache keyed by the binary is stale when one of
 * them appears, changes or goes. Returns the count. */
#define DEBUG_FILE_MAX_CANDIDATES 4
size_t debug_file_candidates(Elf *e, const char *path, const uint8_t *bid, size_t bidlen,
			     char *cand[DEBUG_FILE_MAX_CANDIDATES]);
/* Both, in that order. */
Elf *debug_file_find(Elf *e, const char *path, const uint8_t *bid, size_t bidlen,
		     int *fd, char **found);

#endif
