/* symcache.h - built symbol tables kept on disk by build-id (internal to
 * symbol/; the layout and rules are in symcache.c).
 */
#ifndef STAX_SYMBOL_SYMCACHE_H
#define STAX_SYMBOL_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/cachefile.h"
#include "symbol/symbol-private.h"

/* Files smaller than this are not worth an entry: their tables build in
 * a few milliseconds. */
#define SYMCACHE_MIN_FILE (4u << 20)

/* Fill m's source, opened, segments, FDE ranges and finished table from
 * the entry for k (the names in a mapping m keeps: m->map); false when
 * there is no cache, no entry, or one that does not match or is
 * damaged (m is then as it was). */
bool symcache_load(const struct cache_key *k, struct sym_module *m);
/* Whether m's table is one an entry keeps (built from a full symbol
 * table, not empty). */
bool symcache_wanted(const struct sym_module *m);
/* Write m's table as the entry for k, then trim the directory. 0 or
 * -errno; nothing is printed. */
int symcache_store(const struct cache_key *k, const struct sym_module *m);

/* Exposed for tests and fuzzing. */
/* Append m's payload to b: 0, or -EINVAL (not a table an entry keeps),
 * -EFBIG (names past 4 GiB; b is then as it was). */
int symcache_image(const struct sym_module *m, struct buf *b);
/* Parse a payload into m (zeroed by the caller; its names point into
 * p): 0, or -EINVAL for anything out of bounds or inconsistent, with
 * what was set so far for the caller to free (segs, fdes, the table). */
int symcache_parse(const uint8_t *p, size_t n, struct sym_module *m);
const uint8_t *symcache_check(const uint8_t *data, size_t size, const struct cache_key *k,
			      size_t *payload_size);
/* Set the header of data[0..size) right for its payload and take its key
 * into *k (fuzzing: inputs then reach the parser). */
void symcache_seal(uint8_t *data, size_t size, struct cache_key *k);

#endif
