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

/* META "symbols:MODULE" = "SOURCE, lines from DWARFSOURCE", once per module. */
static void put_module_source(struct store_writer *w, struct sym_session *ss, struct hmap *done,
			      const struct module_ref *ref, const char *module)
{
	uint64_t h = hash_bytes(module, strlen(module));
	uint32_t v;
	char key[300], val[128];
	if (hmap_get(done, h, &v))
		return;
	hmap_put(done, h, 1);
	snprintf(key, sizeof(key), "symbols:%s", module);
	sym_module_sources(ss, ref, val, sizeof(val));
	store_put_meta(w, key, val);
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
	struct hmap done;
	size_t i, k;

	memset(st, 0, sizeof(*st));
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
		uint32_t map_pid = 0;
		bool mapped = false;

		if (w->raw.len > SYMBOLS_CHUNK_BYTES)
			store_flush(w, CHUNK_SYMBOLS);
		memset(&res, 0, sizeof(res));
		if ((key->flags & 0xff) == NODE_KERNEL) {
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
				put_module_source(w, ss, &done, &ref, res.module);
		}
		put_symbol(w, key, &res);
		st->named += res.name != NULL;
		/* the last key of its module: release the module's tables */
		if (mapped && key->module && (i + 1 == n || keys[i + 1].module != key->module))
			sym_session_release(ss, &ref);
	}
	hmap_release(&done);
	st->keys = n;
	return n;
}
