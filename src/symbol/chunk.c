/* chunk.c - the symbols chunk (chunk.h). */
#include "symbol/chunk.h"
#include "symbol/symbol.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start a new symbols chunk past this many buffered bytes. */
#define SYMBOLS_CHUNK_BYTES (24u << 20)

static int cmp_key(const void *a, const void *b)
{
	const struct sym_chunk_key *x = a, *y = b;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/* ---- the cache of names from one file to the next ---- */

struct cache_ent {
	uint64_t module, off;       /* the module's hash (0: kernel), the offset */
	uint32_t flags;             /* node kind | NODE_F_RA */
	uint32_t used;              /* the cache's gen when last used */
	uint32_t name, modname, source, file; /* string ids (0: NULL) */
	uint64_t sym_offset, func_vaddr, file_offset;
	uint32_t line, inl_first, ninl;
	bool has_vaddr, fde;
};

struct cache_inl {
	uint32_t name, file, line;
	bool inlined;
};

struct cache_mod {
	uint64_t module;
	uint32_t name, sources;     /* META "symbols:NAME" = sources */
	uint32_t used;
};

struct sym_chunk_cache {
	struct cache_ent *ents;
	size_t n, cap;
	struct hmap index;          /* key hash -> index + 1 (hash_next on collision) */
	struct cache_inl *inl;
	size_t ninl, inlcap;
	char **strs;                /* id - 1 -> string */
	size_t nstrs, strcap, strbytes;
	struct hmap str_index;      /* string hash -> id (hash_next on collision) */
	struct cache_mod *mods;
	size_t nmods, modcap;
	struct hmap mod_index;      /* module hash -> index + 1 */
	uint32_t gen;               /* writes so far */
	uint64_t hits, misses;
};

struct sym_chunk_cache *sym_chunk_cache_new(void)
{
	struct sym_chunk_cache *c = xcalloc(1, sizeof(*c));
	hmap_init(&c->index);
	hmap_init(&c->str_index);
	hmap_init(&c->mod_index);
	return c;
}

static void cache_clear(struct sym_chunk_cache *c)
{
	size_t i;
	for (i = 0; i < c->nstrs; i++)
		free(c->strs[i]);
	free(c->strs);
	free(c->ents);
	free(c->inl);
	free(c->mods);
	hmap_release(&c->index);
	hmap_release(&c->str_index);
	hmap_release(&c->mod_index);
}

void sym_chunk_cache_free(struct sym_chunk_cache *c)
{
	if (!c)
		return;
	cache_clear(c);
	free(c);
}

size_t sym_chunk_cache_bytes(const struct sym_chunk_cache *c)
{
	return c->cap * sizeof(*c->ents) + c->inlcap * sizeof(*c->inl) + c->strcap * sizeof(char *) +
	       c->strbytes + c->modcap * sizeof(*c->mods) +
	       (c->index.cap + c->str_index.cap + c->mod_index.cap) * sizeof(struct hmap_slot);
}

void sym_chunk_cache_counts(const struct sym_chunk_cache *c, uint64_t *hits, uint64_t *misses)
{
	*hits = c->hits;
	*misses = c->misses;
}

static uint32_t str_id(struct sym_chunk_cache *c, const char *s)
{
	uint64_t h;
	uint32_t id;
	if (!s)
		return 0;
	for (h = hash_bytes(s, strlen(s)) | 1;; h = hash_next(h)) {
		if (!hmap_get(&c->str_index, h, &id))
			break;
		if (!strcmp(c->strs[id - 1], s))
			return id;
	}
	GROW(c->strs, c->strcap, c->nstrs + 1);
	c->strs[c->nstrs++] = xstrdup(s);
	c->strbytes += strlen(s) + 1 + 16;
	hmap_put(&c->str_index, h, (uint32_t)c->nstrs);
	return (uint32_t)c->nstrs;
}

static const char *str_of(const struct sym_chunk_cache *c, uint32_t id)
{
	return id ? c->strs[id - 1] : NULL;
}

static uint64_t ent_hash(uint64_t module, uint64_t off, uint32_t flags)
{
	return hash_mix(hash_mix(module, off), flags) | 1;
}

static struct cache_ent *cache_find(struct sym_chunk_cache *c, uint64_t module, uint64_t off, uint32_t flags)
{
	uint64_t h;
	uint32_t at;
	for (h = ent_hash(module, off, flags); hmap_get(&c->index, h, &at); h = hash_next(h)) {
		struct cache_ent *e = &c->ents[at - 1];
		if (e->module == module && e->off == off && e->flags == flags)
			return e;
	}
	return NULL;
}

/* The result of e, its strings borrowed from c (inline frames in fr). */
static void cache_result(const struct sym_chunk_cache *c, const struct cache_ent *e, struct sym_result *res,
			 struct sym_frame *fr)
{
	uint32_t i;
	memset(res, 0, sizeof(*res));
	res->name = str_of(c, e->name);
	res->module = str_of(c, e->modname);
	res->source = str_of(c, e->source);
	res->file = str_of(c, e->file);
	res->sym_offset = e->sym_offset;
	res->func_vaddr = e->func_vaddr;
	res->file_offset = e->file_offset;
	res->line = e->line;
	res->has_vaddr = e->has_vaddr;
	res->fde = e->fde;
	for (i = 0; i < e->ninl; i++) {
		const struct cache_inl *in = &c->inl[e->inl_first + i];
		fr[i] = (struct sym_frame){ str_of(c, in->name), str_of(c, in->file), in->line, in->inlined };
	}
	res->inlined = fr;
	res->ninlined = e->ninl;
}

static void cache_put(struct sym_chunk_cache *c, uint64_t module, uint64_t off, uint32_t flags,
		      const struct sym_result *res)
{
	struct cache_ent *e;
	uint64_t h;
	uint32_t at;
	size_t i;

	for (h = ent_hash(module, off, flags); hmap_get(&c->index, h, &at); h = hash_next(h))
		;
	GROW(c->ents, c->cap, c->n + 1);
	e = &c->ents[c->n];
	memset(e, 0, sizeof(*e));
	e->module = module;
	e->off = off;
	e->flags = flags;
	e->used = c->gen;
	e->name = str_id(c, res->name);
	e->modname = str_id(c, res->module);
	e->source = str_id(c, res->source);
	e->file = str_id(c, res->file);
	e->sym_offset = res->sym_offset;
	e->func_vaddr = res->func_vaddr;
	e->file_offset = res->file_offset;
	e->line = res->line;
	e->has_vaddr = res->has_vaddr;
	e->fde = res->fde;
	e->inl_first = (uint32_t)c->ninl;
	for (i = 0; i < res->ninlined && i < SYM_MAX_INLINE; i++) {
		GROW(c->inl, c->inlcap, c->ninl + 1);
		c->inl[c->ninl++] = (struct cache_inl){ str_id(c, res->inlined[i].name), str_id(c, res->inlined[i].file),
							res->inlined[i].line, res->inlined[i].inlined };
	}
	e->ninl = (uint32_t)i;
	hmap_put(&c->index, h, (uint32_t)++c->n);
}

/* Names are kept while one of the last CACHE_WRITES writes used them,
 * and while the cache holds less than CACHE_MAX_BYTES (past it, only
 * what the last two used): an address that comes back every few files
 * (a cron job, a health check) is not looked up again each time, which
 * costs a DWARF unit's index when the binary has DWARF. */
#define CACHE_WRITES 16u
#define CACHE_MAX_BYTES (16u << 20)

/* Let go of what the writes to keep did not use: the cache is made anew
 * from what they did. */
static void cache_prune(struct sym_chunk_cache *c)
{
	struct sym_chunk_cache old = *c;
	struct sym_frame fr[SYM_MAX_INLINE];
	struct sym_result res;
	uint32_t span = sym_chunk_cache_bytes(c) > CACHE_MAX_BYTES ? 1 : CACHE_WRITES - 1;
	size_t i, keep = 0, mkeep = 0;

	for (i = 0; i < old.n; i++)
		keep += old.ents[i].used + span >= old.gen;
	for (i = 0; i < old.nmods; i++)
		mkeep += old.mods[i].used + span >= old.gen;
	if (keep == old.n && mkeep == old.nmods)
		return;
	memset(c, 0, sizeof(*c));
	hmap_init(&c->index);
	hmap_init(&c->str_index);
	hmap_init(&c->mod_index);
	c->gen = old.gen;
	c->hits = old.hits;
	c->misses = old.misses;
	for (i = 0; i < old.n; i++) {
		const struct cache_ent *e = &old.ents[i];
		if (e->used + span < old.gen)
			continue;
		cache_result(&old, e, &res, fr);
		cache_put(c, e->module, e->off, e->flags, &res);
		c->ents[c->n - 1].used = e->used;
	}
	for (i = 0; i < old.nmods; i++) {
		const struct cache_mod *m = &old.mods[i];
		if (m->used + span < old.gen)
			continue;
		GROW(c->mods, c->modcap, c->nmods + 1);
		c->mods[c->nmods] = (struct cache_mod){ m->module, str_id(c, str_of(&old, m->name)),
						      str_id(c, str_of(&old, m->sources)), m->used };
		hmap_put(&c->mod_index, m->module, (uint32_t)++c->nmods);
	}
	cache_clear(&old);
}

/* The module a key's mapping maps, as the symbol session keys it
 * (build-id, else path); 0 for the kernel, Python frames and unknown
 * mappings. Equal hashes of two modules only put them in one group. */
static uint64_t module_hash(const struct sym_chunk_source *src, const struct sym_chunk_key *k)
{
	struct module_ref ref;
	uint32_t pid;
	if ((k->flags & 0xff) == NODE_KERNEL || !k->mapping || !src->mapping(src->arg, k->mapping, &ref, &pid))
		return 0;
	if (ref.build_id_size)
		return hash_mix(hash_bytes(ref.build_id, ref.build_id_size), 'b') | 1;
	return hash_mix(hash_bytes(ref.path ? ref.path : "", ref.path ? strlen(ref.path) : 0), 'p') | 1;
}

/* META "symbols:MODULE" = "SOURCE, lines from DWARFSOURCE", once per
 * module; from the cache when it has the module (mod: its hash). */
static void put_module_source(struct store_writer *w, struct sym_session *ss, struct hmap *done,
			      const struct module_ref *ref, const char *module, struct sym_chunk_cache *c,
			      uint64_t mod)
{
	uint64_t h = hash_bytes(module, strlen(module));
	uint32_t v, at;
	char key[300], val[128];
	if (hmap_get(done, h, &v))
		return;
	hmap_put(done, h, 1);
	snprintf(key, sizeof(key), "symbols:%s", module);
	if (c && mod && hmap_get(&c->mod_index, mod, &at)) {
		c->mods[at - 1].used = c->gen;
		store_put_meta(w, key, str_of(c, c->mods[at - 1].sources));
		return;
	}
	sym_module_sources(ss, ref, val, sizeof(val));
	store_put_meta(w, key, val);
	if (c && mod) {
		GROW(c->mods, c->modcap, c->nmods + 1);
		c->mods[c->nmods] = (struct cache_mod){ mod, str_id(c, module), str_id(c, val), c->gen };
		hmap_put(&c->mod_index, mod, (uint32_t)++c->nmods);
	}
}

/* Whether the names of key may be kept in the cache: a kernel address,
 * or one in a file with a build-id (not JIT code, not a Python frame). */
static bool cacheable(const struct sym_chunk_key *key, const struct module_ref *ref, bool mapped)
{
	if ((key->flags & 0xff) == NODE_KERNEL)
		return true;
	return mapped && key->module && ref->build_id_size && !sym_path_is_anon(ref->path) &&
	       !sym_path_is_jitdump(ref->path);
}

/* The records of one key, named in res. */
static void put_symbol(struct store_writer *w, const struct sym_chunk_key *k, const struct sym_result *res)
{
	struct store_inline inl[SYM_MAX_INLINE];
	struct rec_symbol rs;
	size_t i;

	memset(&rs, 0, sizeof(rs));
	rs.addr = k->addr;
	rs.mapping = k->mapping;
	rs.flags = k->flags;
	if (res->name) {
		rs.flags |= SYMBOL_F_KNOWN;
		rs.offset = res->sym_offset;
	} else {
		/* unknown: the ELF address of its function (FDE) or its own */
		rs.offset = res->has_vaddr ? res->func_vaddr : res->file_offset;
	}
	store_put_symbol(w, &rs, res->name ? res->name : "", res->module ? res->module : "");
	if (!res->file && !res->ninlined)
		return;
	struct rec_symbol_src s = { rs.addr, rs.mapping, rs.flags, res->line, 0 };
	for (i = 0; i < res->ninlined && i < SYM_MAX_INLINE; i++)
		inl[i] = (struct store_inline){ res->inlined[i].name, res->inlined[i].file, res->inlined[i].line };
	s.ninline = (uint32_t)i;
	store_put_symbol_src(w, &s, res->file, inl);
}

size_t sym_chunk_write(struct sym_session *ss, struct store_writer *w, struct sym_chunk_key *keys, size_t n,
		       const struct sym_chunk_source *src, struct sym_chunk_stats *st)
{
	return sym_chunk_write_cached(ss, w, keys, n, src, NULL, st);
}

size_t sym_chunk_write_cached(struct sym_session *ss, struct store_writer *w, struct sym_chunk_key *keys,
			      size_t n, const struct sym_chunk_source *src, struct sym_chunk_cache *cache,
			      struct sym_chunk_stats *st)
{
	struct sym_frame fr[SYM_MAX_INLINE];
	struct hmap done;
	size_t i, k;

	memset(st, 0, sizeof(*st));
	if (cache)
		cache->gen++;
	sym_set_demangle(ss, false);
	for (i = 0; i < n; i++)
		keys[i].module = module_hash(src, &keys[i]);
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_key);
	/* each key once (a group's last key then ends its module) */
	for (i = k = 0; i < n; i++)
		if (!k || cmp_key(&keys[k - 1], &keys[i]))
			keys[k++] = keys[i];
	n = k;
	hmap_init(&done);
	for (i = 0; i < n; i++) {
		const struct sym_chunk_key *key = &keys[i];
		uint64_t a = key->addr - ((key->flags & NODE_F_RA) ? 1 : 0);
		struct module_ref ref;
		struct sym_result res;
		struct cache_ent *ce = NULL;
		uint64_t off = a;
		uint32_t map_pid = 0;
		bool mapped = false, keep = false;

		if (w->raw.len > SYMBOLS_CHUNK_BYTES)
			store_flush(w, CHUNK_SYMBOLS);
		memset(&res, 0, sizeof(res));
		memset(&ref, 0, sizeof(ref));
		if (cache && (key->flags & 0xff) != NODE_KERNEL && key->mapping && key->module)
			mapped = src->mapping(src->arg, key->mapping, &ref, &map_pid);
		if (cache && (keep = cacheable(key, &ref, mapped))) {
			if (mapped)
				off = a - ref.start + ref.pgoff;
			ce = cache_find(cache, mapped ? key->module : 0, off, key->flags);
		}
		if (ce) {
			cache->hits++;
			ce->used = cache->gen;
			cache_result(cache, ce, &res, fr);
			if (mapped && res.module)
				put_module_source(w, ss, &done, &ref, res.module, cache, key->module);
		} else if ((key->flags & 0xff) == NODE_KERNEL) {
			sym_lookup_kernel(ss, a, &res);
		} else if (!key->mapping && key->addr >= PYFRAME_ADDR_MIN && key->addr <= PYFRAME_ADDR_MAX &&
			   src->python) {
			/* a Python frame read from the interpreter (pyframes.h) */
			res.name = src->python(src->arg, key->addr);
			res.module = PYFRAME_MODULE;
		} else {
			mapped = key->mapping && src->mapping(src->arg, key->mapping, &ref, &map_pid);
			sym_lookup_user(ss, mapped ? &ref : NULL, map_pid, key->pid, a, &res);
			if (mapped && !sym_path_is_anon(ref.path) && res.module)
				put_module_source(w, ss, &done, &ref, res.module, keep ? cache : NULL,
						  key->module);
		}
		if (keep && !ce) {
			cache->misses++;
			cache_put(cache, mapped ? key->module : 0, off, key->flags, &res);
		}
		put_symbol(w, key, &res);
		st->named += res.name != NULL;
		/* the last key of its module: release the module's tables */
		if (mapped && key->module && (i + 1 == n || keys[i + 1].module != key->module))
			sym_session_release(ss, &ref);
	}
	hmap_release(&done);
	if (cache)
		cache_prune(cache);
	st->keys = n;
	return n;
}
