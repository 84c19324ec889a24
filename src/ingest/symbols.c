/* symbols.c - the symbols chunk, written when a recording stops.
 *
 * Every distinct (mapping, address, kind, return-address flag) among the
 * stack nodes is resolved once, module by module (the mappings of one
 * binary in every process together) and in address order per mapping,
 * so each module's tables and DWARF are walked in one sweep and released
 * after it: a system-wide recording names thousands of modules, and
 * holding all of their tables at once took 600 MB. Each is written as a
 * REC_SYMBOL (the function) followed, when DWARF knows more, by a
 * REC_SYMBOL_SRC (its source line and inline chain). JIT perf maps of the
 * recorded processes are copied in (REC_PERFMAP), so the file still names
 * JIT code after /tmp is cleaned, and each module's symbol sources are
 * kept as META "symbols:MODULE" for `stax info`.
 */
#include "ingest/ingest.h"
#include "symbol/symbol.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Start a new symbols chunk past this many buffered bytes. */
#define SYMBOLS_CHUNK_BYTES (24u << 20)

struct symkey {
	uint64_t module;  /* hash of the mapping's build-id, else path (0: none) */
	uint64_t addr;
	uint32_t mapping;
	uint32_t flags;   /* node kind | NODE_F_RA */
	uint32_t pid;     /* process of the first node with this key (JIT maps) */
};

static int cmp_symkey(const void *a, const void *b)
{
	const struct symkey *x = a, *y = b;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/* Copy /tmp/perf-PID.map of every recorded process into the file and hand
 * it to the session; jitdump files are found through their mappings. */
static void put_jit(struct ingest *g, struct sym_session *ss)
{
	const struct ingest_jitfile *jf;
	size_t i;

	/* what the files hold now; a file deleted meanwhile keeps what was
	 * read while it existed */
	ingest_poll_jit(g);
	for (i = 0; i < g->st.nprocs; i++) {
		uint32_t pid = g->st.procs[i].pid;
		void *data;
		size_t size;
		if ((jf = ingest_jitfile(g, pid, false, NULL)) && jf->len) {
			sym_jit_set_perfmap(ss, pid, jf->data, jf->len);
			store_put_perfmap(g->w, pid, jf->data, (uint32_t)jf->len);
			continue;
		}
		/* the session marks the map read: its lookups do not read
		 * (and warn about) it again */
		if (!sym_jit_read_perfmap(ss, pid, &data, &size))
			continue;
		store_put_perfmap(g->w, pid, data, (uint32_t)size);
		free(data);
	}
	for (i = 0; i < g->st.nmaps; i++) {
		const struct state_mapping *m = &g->st.maps[i];
		size_t j;
		if (!sym_path_is_jitdump(m->path))
			continue;
		for (j = 0; j < i; j++) /* once per process and file */
			if (g->st.maps[j].pid == m->pid && !strcmp(g->st.maps[j].path, m->path))
				break;
		if (j < i)
			continue;
		if ((jf = ingest_jitfile(g, m->pid, true, m->path)) && jf->len)
			sym_jit_add_dump_data(ss, m->pid, jf->data, jf->len, path_base(m->path));
		else
			sym_jit_add_dump(ss, m->pid, m->path);
	}
}

/* META "symbols:MODULE" = "SOURCE, lines from DWARFSOURCE", once per module. */
static void put_module_source(struct ingest *g, struct sym_session *ss, struct hmap *done,
			      const struct sym_module_ref *ref, const char *module)
{
	uint64_t h = hash_bytes(module, strlen(module));
	uint32_t v;
	char key[300], val[128];
	if (hmap_get(done, h, &v))
		return;
	hmap_put(done, h, 1);
	snprintf(key, sizeof(key), "symbols:%s", module);
	sym_module_sources(ss, ref, val, sizeof(val));
	store_put_meta(g->w, key, val);
}

/* The module a user node's mapping maps, as the symbol session keys it
 * (sym_module_ref: build-id, else path); 0 for other nodes. Equal
 * hashes of two modules only put them in one group. */
static uint64_t module_hash(const struct ingest *g, const struct rec_node *nd)
{
	const struct state_mapping *m;
	if ((nd->flags & 0xff) == NODE_KERNEL || !nd->mapping || !(m = state_mapping(&g->st, nd->mapping)))
		return 0;
	if (m->build_id_size)
		return hash_mix(hash_bytes(m->build_id, m->build_id_size), 'b') | 1;
	return hash_mix(hash_bytes(m->path ? m->path : "", m->path ? strlen(m->path) : 0), 'p') | 1;
}

void ingest_put_symbols(struct ingest *g)
{
	struct sym_session *ss = g->symbols_session ? g->symbols_session : sym_session_new();
	struct symkey *keys = xmalloc((g->stacks.n + 1) * sizeof(*keys));
	uint32_t *pid = xmalloc((g->stacks.n + 1) * sizeof(*pid));
	struct store_inline inl[SYM_MAX_INLINE];
	struct hmap done;
	size_t n = 0, i, k;

	hmap_init(&done);
	/* names are stored as the binaries have them; readers demangle, so
	 * --no-demangle works on finished recordings too */
	sym_set_demangle(ss, false);
	put_jit(g, ss);
	/* the process of a node is its root's (parents come before children) */
	for (i = 0; i < g->stacks.n; i++) {
		const struct rec_node *nd = &g->stacks.nodes[i];
		if ((nd->flags & 0xff) == NODE_ROOT) {
			pid[i] = (uint32_t)nd->addr;
			continue;
		}
		pid[i] = nd->parent && nd->parent <= i ? pid[nd->parent - 1] : 0;
		keys[n].module = module_hash(g, nd);
		keys[n].addr = nd->addr;
		keys[n].mapping = nd->mapping;
		keys[n].flags = nd->flags & (0xff | NODE_F_RA);
		keys[n].pid = pid[i];
		n++;
	}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_symkey);
	/* each key once (a group's last key then ends its module) */
	for (i = k = 0; i < n; i++)
		if (!k || cmp_symkey(&keys[k - 1], &keys[i]))
			keys[k++] = keys[i];
	n = k;
	for (i = 0; i < n; i++) {
		struct sym_result res;
		struct sym_module_ref last = { 0 };
		struct rec_symbol rs;
		uint64_t a = keys[i].addr - ((keys[i].flags & NODE_F_RA) ? 1 : 0);
		const struct state_mapping *m = NULL;
		if (g->w->raw.len > SYMBOLS_CHUNK_BYTES)
			store_flush(g->w, CHUNK_SYMBOLS);
		memset(&res, 0, sizeof(res));
		if ((keys[i].flags & 0xff) == NODE_KERNEL) {
			sym_lookup_kernel(ss, a, &res);
		} else if (!keys[i].mapping && keys[i].addr >= PYFRAME_ADDR_MIN &&
			   keys[i].addr <= PYFRAME_ADDR_MAX && g->py.reader) {
			/* a Python frame read from the interpreter (pyframes.h) */
			res.name = pyframes_name(g->py.reader, (uint32_t)(keys[i].addr - PYFRAME_ADDR_MIN + 1));
			res.module = PYFRAME_MODULE;
		} else {
			struct sym_module_ref ref = { 0 };
			if ((m = state_mapping(&g->st, keys[i].mapping)))
				ref = (struct sym_module_ref){
					m->path, m->build_id_size ? m->build_id : NULL, m->build_id_size,
					m->start, m->end, m->pgoff,
				};
			sym_lookup_user(ss, m ? &ref : NULL, m ? m->pid : 0, keys[i].pid, a, &res);
			if (m && !sym_path_is_anon(m->path) && res.module)
				put_module_source(g, ss, &done, &ref, res.module);
			if (m && keys[i].module && (i + 1 == n || keys[i + 1].module != keys[i].module))
				last = ref; /* its module is done: released below */
		}
		memset(&rs, 0, sizeof(rs));
		rs.addr = keys[i].addr;
		rs.mapping = keys[i].mapping;
		rs.flags = keys[i].flags;
		if (res.name) {
			rs.flags |= SYMBOL_F_KNOWN;
			rs.offset = res.sym_offset;
		} else {
			/* unknown: the ELF address of its function (FDE) or its own */
			rs.offset = res.has_vaddr ? res.func_vaddr : res.file_offset;
		}
		store_put_symbol(g->w, &rs, res.name ? res.name : "", res.module ? res.module : "");
		if (res.file || res.ninlined) {
			struct rec_symbol_src src = { rs.addr, rs.mapping, rs.flags, res.line, 0 };
			for (k = 0; k < res.ninlined && k < SYM_MAX_INLINE; k++)
				inl[k] = (struct store_inline){ res.inlined[k].name, res.inlined[k].file,
								res.inlined[k].line };
			src.ninline = (uint32_t)k;
			store_put_symbol_src(g->w, &src, res.file, inl);
		}
		if (last.path) {
			sym_session_release(ss, &last);
			last.path = NULL;
		}
	}
	hmap_release(&done);
	free(pid);
	free(keys);
	sym_session_free(ss);
	g->symbols_session = NULL;
}
