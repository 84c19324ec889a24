/* chunk.h - the symbols chunk: one writer for the recorder and importer
 * (ingest/symbols.c, when a recording stops) and for stax symbolize
 * (profile/resymbolize.c, which names a finished recording again).
 *
 * Each distinct (mapping, address, kind, return-address flag) of the
 * stack nodes is resolved once, module by module (the mappings of one
 * binary in every process together) and in address order per mapping,
 * so each module's tables and DWARF are walked in one sweep and released
 * after it: a system-wide recording names thousands of modules, and
 * holding all of their tables at once took 600 MB. Each is written as a
 * REC_SYMBOL (the function) followed, when DWARF knows more, by a
 * REC_SYMBOL_SRC (its source line and inline chain); each module's
 * symbol sources once as META "symbols:MODULE" for `stax info`.
 */
#ifndef STAX_SYMBOL_CHUNK_H
#define STAX_SYMBOL_CHUNK_H

#include "module/ref.h"
#include "store/writer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_session;

/* One address to name, as a stack node has it. */
struct sym_chunk_key {
	uint64_t addr;
	uint32_t mapping;   /* the mapping's id (0: none: kernel, Python frames) */
	uint32_t flags;     /* node kind | NODE_F_RA (store/format.h) */
	uint32_t pid;       /* the process of a node with this key (its JIT maps) */
	uint64_t module;    /* set by sym_chunk_write(): its grouping */
};

/* What the caller knows of the mappings and frames the keys name. */
struct sym_chunk_source {
	/* the ref of mapping id and the process that maps it; false when
	 * there is no such mapping */
	bool (*mapping)(void *arg, uint32_t id, struct module_ref *ref, uint32_t *pid);
	/* the name of a Python frame (PYFRAME_ADDR_MIN..MAX), NULL when not
	 * known; NULL: the recording has none */
	const char *(*python)(void *arg, uint64_t addr);
	void *arg;
};

struct sym_chunk_stats {
	size_t keys;        /* distinct keys written */
	size_t named;       /* of which named (SYMBOL_F_KNOWN) */
};

/* Sort keys[0..n), drop repeats (keys[0..return value) are the distinct
 * ones after), and write each one's records into w's symbols chunk
 * (flushing a CHUNK_SYMBOLS past 24 MiB; the caller flushes the last),
 * releasing each module of ss after its last key. Names are stored as the
 * binaries have them (the session's demangling is turned off). */
size_t sym_chunk_write(struct sym_session *ss, struct store_writer *w, struct sym_chunk_key *keys, size_t n,
		       const struct sym_chunk_source *src, struct sym_chunk_stats *st);

/* What the symbols chunks of one recording file named, kept for the
 * next file of the same recording (stax agent: a file every few
 * minutes, each with the symbols of its own addresses): an address
 * named before is named the same again without its module's tables
 * (symbol table, DWARF) being opened. Keyed by the module's build-id,
 * the address's offset in the file and its kind (kernel addresses as
 * they are); addresses of files without a build-id and JIT code are
 * never kept. An entry none of the last 16 writes used is let go, and
 * past 16 MiB one the last two did not use. */
struct sym_chunk_cache;
struct sym_chunk_cache *sym_chunk_cache_new(void);
void sym_chunk_cache_free(struct sym_chunk_cache *c);
/* Bytes it holds, and its hits and misses so far. */
size_t sym_chunk_cache_bytes(const struct sym_chunk_cache *c);
void sym_chunk_cache_counts(const struct sym_chunk_cache *c, uint64_t *hits, uint64_t *misses);
/* sym_chunk_write() that takes names from cache and keeps the new ones
 * there (cache NULL: sym_chunk_write()). */
size_t sym_chunk_write_cached(struct sym_session *ss, struct store_writer *w, struct sym_chunk_key *keys,
			      size_t n, const struct sym_chunk_source *src, struct sym_chunk_cache *cache,
			      struct sym_chunk_stats *st);

#endif
