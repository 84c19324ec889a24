/* symbols.c - the symbols chunk, written when a recording stops: every
 * address of the stack nodes named by symbol/chunk.c (the one writer of
 * the chunk), after the JIT perf maps of the recorded processes are
 * copied in (REC_PERFMAP), so the file still names JIT code after /tmp
 * is cleaned.
 */
#include "ingest/ingest.h"
#include "symbol/chunk.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static bool mapping_of(void *arg, uint32_t id, struct module_ref *ref, uint32_t *pid)
{
	const struct ingest *g = arg;
	const struct state_mapping *m = state_mapping(&g->st, id);
	if (!m)
		return false;
	*ref = ingest_mapping_ref(m);
	*pid = m->pid;
	return true;
}

static const char *python_name(void *arg, uint64_t addr)
{
	const struct ingest *g = arg;
	return pyframes_name(g->py.reader, (uint32_t)(addr - PYFRAME_ADDR_MIN + 1));
}

void ingest_put_symbols(struct ingest *g)
{
	struct sym_session *ss = g->symbols_session ? g->symbols_session : sym_session_new();
	struct sym_chunk_key *keys = xmalloc((g->stacks.n + 1) * sizeof(*keys));
	uint32_t *pid = xmalloc((g->stacks.n + 1) * sizeof(*pid));
	struct sym_chunk_source src = { mapping_of, g->py.reader ? python_name : NULL, g };
	struct sym_chunk_stats st;
	size_t n = 0, i;

	if (g->symbol_lock)
		pthread_mutex_lock(g->symbol_lock);

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
		keys[n].addr = nd->addr;
		keys[n].mapping = nd->mapping;
		keys[n].flags = nd->flags & (0xff | NODE_F_RA);
		keys[n].pid = pid[i];
		n++;
	}
	sym_chunk_write_cached(ss, g->w, keys, n, &src, g->symcache, &st);
	free(pid);
	free(keys);
	sym_session_free(ss);
	g->symbols_session = NULL;
	if (g->symbol_lock)
		pthread_mutex_unlock(g->symbol_lock);
}
