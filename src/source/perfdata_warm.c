/* perfdata_warm.c - symbols opened on a second thread while a perf.data
 * file is read (perfdata-private.h: pd_warm_*).
 */
#include "source/perfdata-private.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- symbols on a second thread ----
 *
 * At the end, every sampled address is symbolized (ingest_put_symbols),
 * and opening a module's symbol table and DWARF is most of that time
 * (libc's debug file alone inflates ~20 MB of compressed sections). So
 * while records are read, each module that appears in a stack is posted,
 * with one of its sampled addresses, to a thread that looks it up in a
 * session of its own; finish() joins the thread and hands the session,
 * modules opened, to ingest_put_symbols. File format only: there every
 * build-id is known before the mappings arrive, so a module's key in the
 * session (build-id, else path) is the one the final lookup uses. */
struct warm_item {
	char *path;
	uint8_t id[20], size;
	uint64_t start, end, pgoff, addr;
};

struct warm {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct warm_item *items;
	size_t n, cap, next;
	bool done;
	struct sym_session *ss;
	struct hmap posted;            /* mapping id -> 1 */
	size_t scanned;                /* stack nodes looked at */
};

static void *warm_main(void *arg)
{
	struct warm *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		struct warm_item it;
		struct sym_result res;
		while (w->next == w->n && !w->done)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->next == w->n)
			break;
		it = w->items[w->next++];
		pthread_mutex_unlock(&w->mu);
		{
			struct module_ref ref = { it.path, it.id, it.size, it.start, it.end, it.pgoff };
			sym_lookup(w->ss, &ref, it.addr, &res);
		}
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

void pd_warm_start(struct pd *pd)
{
	struct warm *w;
	if (pd->pipe || pd->o->no_binaries || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	w = xcalloc(1, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	hmap_init(&w->posted);
	w->ss = sym_session_new();
	sym_set_demangle(w->ss, false); /* as ingest_put_symbols */
	if (pthread_create(&w->thread, NULL, warm_main, w)) {
		sym_session_free(w->ss);
		hmap_release(&w->posted);
		free(w);
		return;
	}
	pd->warm = w;
}

/* Post the modules of stack nodes interned since the last call. */
void pd_warm_scan(struct pd *pd)
{
	struct warm *w = pd->warm;
	const struct stack_table *t = &pd->g->stacks;
	bool posted = false;
	uint32_t one;
	for (; w->scanned < t->n; w->scanned++) {
		const struct rec_node *nd = &t->nodes[w->scanned];
		const struct state_mapping *m;
		struct warm_item it;
		if ((nd->flags & 0xff) != NODE_USER || !nd->mapping ||
		    hmap_get(&w->posted, nd->mapping, &one))
			continue;
		hmap_put(&w->posted, nd->mapping, 1);
		m = state_mapping(&pd->g->st, nd->mapping);
		if (!m || !m->path || sym_path_is_anon(m->path))
			continue;
		memset(&it, 0, sizeof(it));
		it.path = xstrdup(m->path);
		memcpy(it.id, m->build_id, sizeof(it.id));
		it.size = m->build_id_size;
		it.start = m->start;
		it.end = m->end;
		it.pgoff = m->pgoff;
		it.addr = nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0);
		pthread_mutex_lock(&w->mu);
		GROW(w->items, w->cap, w->n + 1);
		w->items[w->n++] = it;
		pthread_mutex_unlock(&w->mu);
		posted = true;
	}
	if (posted)
		pthread_cond_signal(&w->cv);
}

/* Stop the thread; the session it filled, or NULL. */
struct sym_session *pd_warm_finish(struct pd *pd)
{
	struct warm *w = pd->warm;
	struct sym_session *ss;
	size_t i;
	if (!w)
		return NULL;
	pthread_mutex_lock(&w->mu);
	w->done = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	ss = w->ss;
	for (i = 0; i < w->n; i++)
		free(w->items[i].path);
	free(w->items);
	hmap_release(&w->posted);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	pd->warm = NULL;
	return ss;
}
