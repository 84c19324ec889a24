/* tcache.h - compiled unwind tables kept on disk by build-id (internal
 * to unwind/; the layout and rules are in tcache.c).
 */
#ifndef STAX_UNWIND_TCACHE_H
#define STAX_UNWIND_TCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "lib/cachefile.h"
#include "unwind/table.h"

/* The entry for k, parsed into a new table (t->cached set), or NULL: no
 * cache, no entry, or one that does not match or is damaged. */
struct utable *tcache_load(const struct cache_key *k);
/* Write t as the entry for k (replacing an older one), then trim the
 * directory. 0 or -errno; nothing is printed. */
int tcache_store(const struct utable *t, const struct cache_key *k);

/* Exposed for tests and fuzzing. */
/* Append t's payload to b. */
void tcache_image(const struct utable *t, struct buf *b);
/* Parse a payload into t (zeroed by the caller, freed by the caller
 * with utable_free() whatever the result): 0, or -EINVAL for anything
 * out of bounds or inconsistent. */
int tcache_parse(const uint8_t *p, size_t n, struct utable *t);
/* The payload of the cache file data[0..size) when its header matches k
 * and its checksum is right (size of it in *payload_size), else NULL. */
const uint8_t *tcache_check(const uint8_t *data, size_t size, const struct cache_key *k,
			    size_t *payload_size);
/* Set the header of data[0..size) right for its payload and take its
 * key into *k (fuzzing: inputs then reach the parser). */
void tcache_seal(uint8_t *data, size_t size, struct cache_key *k);

#endif
