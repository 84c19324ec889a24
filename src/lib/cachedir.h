/* cachedir.h - the directories of stax's caches (kallsyms, debug info,
 * decompressed DWARF, compiled unwind tables).
 */
#ifndef STAX_LIB_CACHEDIR_H
#define STAX_LIB_CACHEDIR_H

#include <stdbool.h>
#include <stdint.h>

/* Open $XDG_CACHE_HOME/stax (else ~/.cache/stax), or its subdirectory
 * sub when sub is not NULL, under the rules of lib/safefile.h (the
 * user's, closed to others, no symbolic link followed but one the user
 * made above stax/), creating what is missing when create is set.
 * Returns the directory's descriptor, or -1: STAX_NO_CACHE is set (and
 * not "0"), there is no such place, or it is not safe to use (then one
 * warning per process says why). */
int cache_dir_open(const char *sub, bool create);

/* Remove the least recently used entries of the cache directory dfd
 * (and temporary files left by a killed writer an hour ago or more)
 * until its entries hold at most limit bytes. kind(name) says what a
 * name is: 1 an entry, 2 a temporary file, 0 anything else, which is
 * never touched. Only regular files of the user are removed, by
 * unlinkat() on the directory cache_dir_open() checked (the user's,
 * closed to others): a link there is never followed. */
void cache_dir_trim(int dfd, uint64_t limit, int (*kind)(const char *name));

#endif
