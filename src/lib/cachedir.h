/* cachedir.h - the directories of stax's caches (kallsyms, debug info,
 * decompressed DWARF, compiled unwind tables).
 */
#ifndef STAX_LIB_CACHEDIR_H
#define STAX_LIB_CACHEDIR_H

#include <stdbool.h>

/* Open $XDG_CACHE_HOME/stax (else ~/.cache/stax), or its subdirectory
 * sub when sub is not NULL, under the rules of lib/safefile.h (the
 * user's, closed to others, no symbolic link followed but one the user
 * made above stax/), creating what is missing when create is set.
 * Returns the directory's descriptor, or -1: STAX_NO_CACHE is set (and
 * not "0"), there is no such place, or it is not safe to use (then one
 * warning per process says why). */
int cache_dir_open(const char *sub, bool create);

#endif
