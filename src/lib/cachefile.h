/* cachefile.h - entries of the caches kept per module file: what stax
 * derives from a binary at some cost (compiled unwind tables,
 * unwind/tcache.c; symbol tables, symbol/symcache.c), written once and
 * mapped by later recordings.
 *
 * An entry is named by the binary's build-id (in hex), or by a hash of
 * its file's identity when it has none, in a subdirectory of the cache
 * (lib/cachedir.h). Layout (little-endian, x86-64's native layout):
 *
 *   offset size  meaning
 *   0      8     magic: the kind of cache ("STAXUTC1", "STAXSYM1")
 *   8      4     header size (128)
 *   12     4     the kind's version: a stax that derives other contents
 *                writes another number
 *   16     4     build-id size (0..20; 0: the file has none)
 *   20     20    build-id, zero-padded
 *   40     32    the binary's st_dev, st_ino, size, mtime (ns)
 *   72     8     a hash of the identities of the separate debug files
 *                that could be used for it (0 when none is there)
 *   80     8     payload size; 128 + payload size is the file size
 *   88     8     XXH3-64 of the payload
 *   96     32    zero
 *   then the payload, the kind's own (8-aligned in memory when mapped).
 *
 * An entry is used only when it is a regular file of ours that others
 * cannot write, its header matches the binary (build-id, file identity,
 * debug files, version) and the checksum is right; its payload is then
 * still parsed as outside bytes, every count and offset checked. Entries
 * are written to a temporary name and renamed (lib/safefile.c); the
 * least recently used are removed once a directory holds more than the
 * kind's limit. STAX_NO_CACHE=1 turns every cache off.
 */
#ifndef STAX_LIB_CACHEFILE_H
#define STAX_LIB_CACHEFILE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"

#define CACHE_FILE_HEADER 128

/* What an entry must match: the binary's build-id (size 0: none), its
 * file's identity, and the identities of the separate debug files that
 * could be used for it (a hash; 0 when there are none). */
struct cache_key {
	uint8_t build_id[20];
	size_t build_id_size;
	uint64_t dev, ino, size, mtime_ns;
	uint64_t debug_ident;
};

/* One cache: its subdirectory, magic, version and limits. */
struct cache_kind {
	const char *dir;       /* "unwind", "symbols" */
	const char *magic;     /* 8 characters */
	uint32_t version;
	uint64_t max_total;    /* the directory is trimmed to this */
	uint64_t max_file;     /* an entry is at most this */
	uint64_t unswept;      /* (atomic) bytes written since the last trim, +1 */
};

/* The key of elf (the binary at path, open on fd, build-id bid): its
 * identity and that of every file where its separate debug file may be
 * (one installed, removed or changed later makes another key). False
 * when the file cannot be asked for its identity or bid is too long. */
bool cache_key_of(Elf *elf, int fd, const char *path, const uint8_t *bid, size_t bidlen,
		  struct cache_key *k);

/* The entry for k, mapped read-only: its payload (8-aligned) and size,
 * and the mapping for the caller to munmap(*map, *map_size) when done
 * with the payload; NULL when there is no cache, no entry, or one that
 * does not match k or is damaged. populate: read it all in at once (the
 * caller uses all of it). A used entry's time is renewed, so trimming
 * keeps it. */
const uint8_t *cache_file_map(const struct cache_kind *c, const struct cache_key *k,
			      bool populate, void **map, size_t *map_size, size_t *payload_size);

/* Write the entry for k (replacing an older one); trim the directory
 * at a process's first write and after every max_total / 16 bytes
 * written (a trim reads the whole directory: a system-wide recording of
 * a build machine writes an entry for each of thousands of new
 * binaries). b holds CACHE_FILE_HEADER bytes of room (any contents)
 * followed by the payload; the header is written into that room. 0 or
 * -errno; nothing is printed. */
int cache_file_store(struct cache_kind *c, const struct cache_key *k, struct buf *b);

/* The payload of the entry bytes data[0..size) when its header matches
 * k and c and its checksum is right (its size in *payload_size), else
 * NULL. For tests and fuzzing; cache_file_map() uses it. */
const uint8_t *cache_file_check(const struct cache_kind *c, const uint8_t *data, size_t size,
				const struct cache_key *k, size_t *payload_size);
/* Fill the header of an entry into data[0..CACHE_FILE_HEADER) for
 * the payload behind it (size bytes): for fuzz targets, whose inputs
 * then reach the payload's parser. The key is the header's own (*k). */
void cache_file_seal(const struct cache_kind *c, uint8_t *data, size_t size, struct cache_key *k);

#endif
