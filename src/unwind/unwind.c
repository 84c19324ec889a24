/* unwind.c - the unwinder: module tables, caches, the prefetch thread,
 * and reads of the live process's stack past the copy. The walk of a
 * sample is walk.c's.
 *
 * Warm path per frame (walk.c): a range check for the current module, a
 * table lookup (utable_find), and two or three bounded loads from the
 * stack copy. Module changes call the caller's find callback and a small
 * set-associative cache of mappings (unw_module_for() here); a table is
 * built once per distinct file (keyed by build-id, else by path, size
 * and mtime) on first use.
 */
#include "unwind/unwind-private.h"
#include "unwind/roots.h"
#include "lib/util.h"
#include "module/module.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct unwinder *unwinder_new(void)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));
	u->arch = arch_of(UNWIND_ARCH_NONE);
	hmap_init(&u->by_key);
	pthread_mutex_init(&u->pf.lock, NULL);
	pthread_cond_init(&u->pf.cv, NULL);
	hmap_init(&u->pf.asked);
	return u;
}

void unwinder_set_arch(struct unwinder *u, enum unwind_arch a)
{
	u->arch = arch_of(a);
}

enum unwind_arch unwinder_arch(const struct unwinder *u)
{
	return u->arch->id;
}

static void *table_build(struct module *m, void *arg);
static void table_free(void *t);

static void *prefetch_main(void *arg)
{
	struct prefetch *pf = arg;

	pthread_mutex_lock(&pf->lock);
	for (;;) {
		while (!pf->stop && !pf->nwant)
			pthread_cond_wait(&pf->cv, &pf->lock);
		if (pf->stop)
			break;
		char *path = pf->want[0].path;
		uint8_t bid[20];
		size_t bid_size = pf->want[0].bid_size;
		memcpy(bid, pf->want[0].bid, sizeof(bid));
		memmove(&pf->want[0], &pf->want[1], (pf->nwant - 1) * sizeof(pf->want[0]));
		pf->nwant--;
		pthread_mutex_unlock(&pf->lock);
		/* built once for the process: table_get() of the unwinder
		 * finds it, or waits for it to be done */
		struct module *m = module_get(path, bid, bid_size);
		module_part(m, MODULE_UNWIND, table_build, table_free, NULL);
		free(path);
		pthread_mutex_lock(&pf->lock);
		GROW(pf->held, pf->cap_held, pf->nheld + 1);
		GROW(pf->held_epoch, pf->cap_held_epoch, pf->nheld + 1);
		pf->held_epoch[pf->nheld] = pf->epoch;
		pf->held[pf->nheld++] = m;
	}
	pthread_mutex_unlock(&pf->lock);
	return NULL;
}

bool unwind_prefetch(struct unwinder *u, const char *path, const uint8_t *bid, size_t bid_size)
{
	struct prefetch *pf = &u->pf;
	struct stat st;
	uint32_t asked;
	uint64_t key;
	bool will = false;

	if (!path || path[0] != '/' || bid_size > sizeof(pf->want[0].bid))
		return false;
	/* each file once (every process that maps it says so again):
	 * asked 1, queued; 2, not for the thread (small, or not a file) */
	key = hash_mix(hash_bytes(path, strlen(path)), bid ? hash_bytes(bid, bid_size) : 0);
	pthread_mutex_lock(&pf->lock);
	if (hmap_get(&pf->asked, key, &asked)) {
		will = asked == 1;
		goto out;
	}
	if (pf->nwant == PREFETCH_MAX)
		goto out;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < PREFETCH_MIN_BYTES) {
		hmap_put(&pf->asked, key, 2);
		goto out;
	}
	if (!pf->started) {
		if (pthread_create(&pf->thread, NULL, prefetch_main, pf))
			goto out; /* built on first use, as without it */
		pf->started = true;
	}
	hmap_put(&pf->asked, key, 1);
	will = true;
	pf->want[pf->nwant].path = xstrdup(path);
	memcpy(pf->want[pf->nwant].bid, bid ? bid : (const uint8_t *)"", bid ? bid_size : 0);
	pf->want[pf->nwant].bid_size = bid ? bid_size : 0;
	pf->nwant++;
	pthread_cond_signal(&pf->cv);
out:
	pthread_mutex_unlock(&pf->lock);
	return will;
}

static void prefetch_stop(struct prefetch *pf)
{
	pthread_mutex_lock(&pf->lock);
	pf->stop = true;
	pthread_cond_signal(&pf->cv);
	pthread_mutex_unlock(&pf->lock);
	if (pf->started)
		pthread_join(pf->thread, NULL);
	for (size_t i = 0; i < pf->nwant; i++)
		free(pf->want[i].path);
	for (size_t i = 0; i < pf->nheld; i++) {
		module_part_put(pf->held[i], MODULE_UNWIND);
		module_put(pf->held[i]);
	}
	free(pf->held);
	free(pf->held_epoch);
	hmap_release(&pf->asked);
	pthread_cond_destroy(&pf->cv);
	pthread_mutex_destroy(&pf->lock);
}

/* Every provisional table let go (no slot uses them any more). */
static void quick_free(struct unwinder *u)
{
	for (size_t i = 0; i < u->nquick; i++) {
		utable_free(u->quick[i].t);
		module_put(u->quick[i].mod);
	}
	u->nquick = u->nquick_live = 0;
}

void unw_quick_refresh(struct unwinder *u)
{
	size_t i, n = 0, live = 0;
	bool gone = false;

	for (i = 0; i < u->nquick; i++) {
		struct uquick *q = &u->quick[i];
		if (q->t && module_part_ready(q->mod, MODULE_UNWIND)) {
			for (int k = 0; k < MOD_SLOTS; k++) {
				if (!u->slots[k].used || u->slots[k].t != q->t)
					continue;
				free(u->slots[k].path);
				memset(&u->slots[k], 0, sizeof(u->slots[k]));
			}
			utable_free(q->t);
			module_put(q->mod);
			gone = true;
			continue;
		}
		live += q->t != NULL;
		u->quick[n++] = *q;
	}
	u->nquick = n;
	u->nquick_live = live;
	if (gone) {
		/* seen[] may hold the slots emptied */
		u->nseen = 0;
		u->space = 0;
	}
}

/* The provisional table of the file of m (mod, key), made on first need
 * (holding a reference of its own to the module); NULL when it has none. */
static const struct utable *quick_get(struct unwinder *u, uint64_t key, const struct module_ref *m,
				      struct module *mod)
{
	struct uquick *q;
	for (size_t i = 0; i < u->nquick; i++)
		if (u->quick[i].key == key)
			return u->quick[i].t;
	GROW(u->quick, u->cap_quick, u->nquick + 1);
	q = &u->quick[u->nquick++];
	q->key = key;
	q->mod = NULL;
	q->t = utable_build_quick(mod);
	if (q->t) {
		q->mod = module_get(m->path, m->build_id, m->build_id ? m->build_id_size : 0);
		u->nquick_live++;
		u->stats.quick++;
		u->stats.build_ns += q->t->build_ns;
	}
	return q->t;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	prefetch_stop(&u->pf);
	quick_free(u);
	free(u->quick);
	for (int i = 0; i < MOD_SLOTS; i++)
		free(u->slots[i].path);
	for (size_t i = 0; i < u->ntables; i++) {
		module_part_put(u->mods[i], MODULE_UNWIND);
		module_put(u->mods[i]);
	}
	free(u->tables);
	free(u->mods);
	free(u->keys);
	free(u->xbuf);
	hmap_release(&u->by_key);
	free(u);
}

void unwind_get_stats(const struct unwinder *u, struct unwind_stats *st)
{
	*st = u->stats;
	st->held = u->ntables;
	st->released = u->released;
}

/* The prefetch thread's holds older than one trim: a table a sample
 * uses is held by the unwinder itself (table_get), so these only kept
 * the ones no sample came to. */
static void prefetch_trim(struct prefetch *pf, uint32_t epoch)
{
	size_t i, n = 0;
	pthread_mutex_lock(&pf->lock);
	for (i = 0; i < pf->nheld; i++) {
		if (pf->held_epoch[i] + 1 < epoch) {
			module_part_put(pf->held[i], MODULE_UNWIND);
			module_put(pf->held[i]);
			continue;
		}
		pf->held[n] = pf->held[i];
		pf->held_epoch[n++] = pf->held_epoch[i];
	}
	pf->nheld = n;
	pf->epoch = epoch;
	/* a file mapped again may be prefetched again */
	hmap_release(&pf->asked);
	hmap_init(&pf->asked);
	pthread_mutex_unlock(&pf->lock);
}

size_t unwind_trim(struct unwinder *u)
{
	uint32_t *to = xcalloc(u->ntables + 1, sizeof(*to));
	size_t i, n = 0, released = 0, old = u->ntables;

	/* the tables of the slots used since the last trim stay */
	for (i = 0; i < MOD_SLOTS; i++)
		if (u->slots[i].used && u->slots[i].stamp == u->epoch && u->slots[i].ti < u->ntables)
			to[u->slots[i].ti] = 1;
	hmap_release(&u->by_key);
	hmap_init(&u->by_key);
	for (i = 0; i < u->ntables; i++) {
		if (!to[i]) {
			module_part_put(u->mods[i], MODULE_UNWIND);
			module_put(u->mods[i]);
			released++;
			to[i] = UINT32_MAX;
			continue;
		}
		u->tables[n] = u->tables[i];
		u->mods[n] = u->mods[i];
		u->keys[n] = u->keys[i];
		hmap_put(&u->by_key, u->keys[n], (uint32_t)n);
		to[i] = (uint32_t)n++;
	}
	u->ntables = n;
	/* a slot of a table let go is empty again; the others point anew */
	for (i = 0; i < MOD_SLOTS; i++) {
		struct umod *s = &u->slots[i];
		if (!s->used)
			continue;
		if (s->ti >= old || to[s->ti] == UINT32_MAX) {
			free(s->path);
			memset(s, 0, sizeof(*s));
			continue;
		}
		s->ti = to[s->ti];
	}
	free(to);
	u->nseen = 0;
	u->space = 0;
	u->released += released;
	u->epoch++;
	quick_free(u); /* their slots were emptied above (ti UINT32_MAX) */
	prefetch_trim(&u->pf, u->epoch);
	return released;
}

static uint64_t file_key(const struct module_ref *m)
{
	uint64_t h = 0x57a4;
	struct stat st;

	if (m->build_id && m->build_id_size)
		return hash_mix(h, hash_bytes(m->build_id, m->build_id_size));
	h = hash_mix(h + 1, hash_bytes(m->path, strlen(m->path)));
	if (m->path[0] != '[' && stat(m->path, &st) == 0) {
		h = hash_mix(h, (uint64_t)st.st_size);
		h = hash_mix(h, (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
			     (uint64_t)st.st_mtim.tv_nsec);
		h = hash_mix(h, (uint64_t)st.st_ino);
	}
	return h;
}

static void *table_build(struct module *m, void *arg)
{
	return utable_build(m);
}

static void table_free(void *t)
{
	utable_free(t);
}

/* The table of m's file: its module's (module/module.h), built once
 * for every unwinder of the process, held until unwind_trim() finds it
 * unused or unwinder_free(); *ti gets its index in u->tables. */
static const struct utable *table_get(struct unwinder *u, const struct module_ref *m, uint32_t *ti)
{
	uint64_t key = file_key(m);
	uint32_t idx;

	if (hmap_get(&u->by_key, key, &idx)) {
		*ti = idx;
		return u->tables[idx];
	}
	struct module *mod = module_get(m->path, m->build_id, m->build_id ? m->build_id_size : 0);
	const struct utable *t = NULL;

	/* a large file whose table the prefetch thread compiles (or is
	 * about to): the provisional table until it is done */
	if (unwind_prefetch(u, m->path, m->build_id, m->build_id ? m->build_id_size : 0) &&
	    !(t = module_part_try(mod, MODULE_UNWIND))) {
		const struct utable *q = quick_get(u, key, m, mod);
		if (q) {
			module_put(mod);
			*ti = UINT32_MAX;
			return q;
		}
	}
	if (!t)
		t = module_part(mod, MODULE_UNWIND, table_build, table_free, NULL);
	GROW(u->tables, u->cap_tables, u->ntables + 1);
	GROW(u->mods, u->cap_mods, u->ntables + 1);
	GROW(u->keys, u->cap_keys, u->ntables + 1);
	u->mods[u->ntables] = mod;
	u->tables[u->ntables] = t;
	u->keys[u->ntables] = key;
	hmap_put(&u->by_key, key, (uint32_t)u->ntables);
	*ti = (uint32_t)u->ntables;
	u->ntables++;
	u->stats.modules++;
	if (!t->nrows)
		u->stats.modules_no_cfi++;
	u->stats.build_ns += t->build_ns;
	u->stats.rows += t->nrows;
	u->stats.slow_rows += t->nslow_rows;
	return t;
}

static bool slot_matches(const struct umod *s, const struct module_ref *m)
{
	if (!s->used || s->start != m->start || s->end != m->end || s->pgoff != m->pgoff)
		return false;
	if (m->build_id && m->build_id_size)
		return s->bid_size == m->build_id_size &&
		       memcmp(s->bid, m->build_id, m->build_id_size) == 0;
	return s->bid_size == 0 && strcmp(s->path, m->path) == 0;
}

/* The mapping containing pc, or NULL (JIT code, unknown). */
const struct umod *unw_module_for(struct unwinder *u, const struct unwind_input *in, uint64_t pc)
{
	struct module_ref m;

	memset(&m, 0, sizeof(m));
	if (!in->find || !in->find(in->find_arg, pc, &m) || !m.path ||
	    pc < m.start || pc >= m.end)
		return NULL;
	struct umod *set = &u->slots[(hash_mix(m.start, m.pgoff) & (MOD_SETS - 1)) * MOD_WAYS];
	struct umod *s = set;
	u->finds++;
	for (int i = 0; i < MOD_WAYS; i++) {
		if (slot_matches(&set[i], &m)) {
			set[i].found = u->finds;
			set[i].stamp = u->epoch;
			return &set[i];
		}
		if (set[i].found < s->found)
			s = &set[i];
	}
	u->stats.mappings++;
	s->found = u->finds;
	free(s->path);
	s->used = true;
	s->start = m.start;
	s->end = m.end;
	s->pgoff = m.pgoff;
	s->path = xstrdup(m.path);
	s->bid_size = 0;
	if (m.build_id && m.build_id_size && m.build_id_size <= sizeof(s->bid)) {
		memcpy(s->bid, m.build_id, m.build_id_size);
		s->bid_size = m.build_id_size;
	}
	s->stamp = u->epoch;
	s->t = table_get(u, &m, &s->ti);
	/* a table of another machine's file says nothing of these samples
	 * (the host's vDSO read for a recording of another machine) */
	if (s->t->nrows && s->t->arch != u->arch->id)
		s->t = NULL;
	else if (!utable_bias(s->t, m.start, m.pgoff, &s->bias))
		s->t = NULL;
	s->ctx_lo = s->ctx_hi = 0;
	for (int i = 0; s->t && i < s->t->nroots; i++)
		if (s->t->roots[i].kind == ROOT_K_CONTEXT) {
			s->ctx_lo = s->t->roots[i].start;
			s->ctx_hi = s->t->roots[i].end;
		}
	if (++u->next_gen >= 0xffff) {
		memset(u->cache, 0, sizeof(u->cache));
		u->next_gen = 1;
	}
	s->gen = u->next_gen << 48;
	return s;
}

#define XREAD_SIZE (64u << 10)   /* bytes read from the process at a time */
#define XREAD_CHECK 256          /* bytes of the copy's end read again */

/* Read the stack around addr (a read that missed the copy) from the live
 * process into the unwinder's buffer. The read starts inside what is
 * known, and the bytes both have must be equal: else the thread's stack
 * moved on since the sample, and nothing is read. Next to the copy,
 * that is its last XREAD_CHECK bytes; next to an earlier read, that
 * read's last bytes. slot (deep reads of a running thread's stack; 0
 * if none): the copy's slot of the outermost return address unwound,
 * which is checked instead: the frames of a running thread move under
 * the copy's end (a callee writes its results into its caller's
 * frame), but while that return address is in place, the frames above
 * it are the sample's, however far above (a frame with a large array, a
 * stack segment rustc's stacker switched from): a read far from the slot
 * checks it before and after. A deep read that cannot be checked is
 * refused. Returns 0, or -errno (-EPERM: no ptrace access; -ESTALE: the
 * stack changed, or could not be checked). */
int unw_xread(struct unwinder *u, const struct unwind_input *in, struct copy *c, uint64_t addr, bool deep,
	      uint64_t slot)
{
	uint64_t from = addr & ~7ull;
	uint8_t prev[XREAD_CHECK];
	const uint8_t *want = NULL;
	uint64_t slot_val = 0, v;
	bool by_slot = false;
	size_t check = XREAD_CHECK;
	long got;

	if (!u->xbuf)
		u->xbuf = xmalloc(XREAD_SIZE);
	/* the slot's value as the sample had it: in the copy, or in an
	 * earlier read checked the same way (the buffer is about to be
	 * overwritten, so a copy of it) */
	if (in->read_unchecked) {
		/* (slots only: see unwind_input.read_unchecked) */
		from = (addr & ~7ull) - MIN(addr & ~7ull, (uint64_t)XREAD_CHECK);
		got = in->read_stack(in->find_arg, from, u->xbuf, XREAD_SIZE);
		if (got < 0)
			return (int)got;
		if (got < 16)
			return -EFAULT;
		c->x = u->xbuf;
		c->xbase = from;
		c->xend = from + (uint64_t)got;
		return 0;
	}
	if (deep && slot && !(slot & 7) && addr >= slot) {
		if (slot >= c->base && slot + 8 <= c->end) {
			memcpy(&slot_val, c->stack + (slot - c->base), 8);
			by_slot = true;
		} else if (c->x && slot >= c->xbase && slot + 8 <= c->xend) {
			memcpy(&slot_val, c->x + (slot - c->xbase), 8);
			by_slot = true;
		} else if (c->words && words_find(c->words, slot, &slot_val)) {
			/* read by the in-kernel reader at the sample, as
			 * good as the copy */
			by_slot = true;
		}
	}
	if (c->x && addr >= c->xend && addr - c->xend < XREAD_SIZE / 2 &&
	    c->xend - c->xbase >= XREAD_CHECK) {
		from = c->xend - XREAD_CHECK;
		memcpy(prev, c->x + (from - c->xbase), XREAD_CHECK);
		want = prev;
	} else if (by_slot) {
		if (addr - slot < XREAD_SIZE / 2) {
			from = slot;
			want = (const uint8_t *)&slot_val;
			check = 8;
		} else {
			/* far: from a little below addr, as a frame's saved
			 * registers lie below the slot read first */
			from = (addr & ~7ull) - MIN(addr & ~7ull, (uint64_t)XREAD_CHECK);
		}
	} else if (addr >= c->end && addr - c->end < XREAD_SIZE / 2 &&
		   c->end - c->base >= XREAD_CHECK) {
		from = c->end - XREAD_CHECK;
		want = c->stack + (from - c->base);
	} else if (deep) {
		return -ESTALE;
	}
	if (from > UINT64_MAX - XREAD_SIZE)
		return -EFAULT;
	if (by_slot && want != prev) {
		/* most deep reads of a busy thread find the frame gone:
		 * look at the slot alone before reading the rest */
		got = in->read_stack(in->find_arg, slot, (uint8_t *)&v, 8);
		if (got < 0)
			return (int)got;
		if (got < 8 || v != slot_val)
			return got < 8 ? -EFAULT : -ESTALE;
	}
	got = in->read_stack(in->find_arg, from, u->xbuf, XREAD_SIZE);
	if (got < 0)
		return (int)got;
	if ((size_t)got < (want ? check : 0) + 16)
		return -EFAULT;
	if (want && memcmp(u->xbuf, want, check) != 0)
		return -ESTALE;
	if (by_slot && !want &&
	    (in->read_stack(in->find_arg, slot, (uint8_t *)&v, 8) != 8 || v != slot_val))
		return -ESTALE; /* gone while the far bytes were read */
	c->x = u->xbuf;
	c->xbase = from;
	c->xend = from + (uint64_t)got;
	return 0;
}

bool unw_copy_read_cb(void *arg, uint64_t addr, uint64_t *v)
{
	return copy_read(arg, addr, v);
}

const char *unwind_quality_name(enum unwind_quality q)
{
	switch (q) {
	case UNWIND_Q_UNKNOWN: return "unknown";
	case UNWIND_Q_COMPLETE: return "complete";
	case UNWIND_Q_TRUNCATED: return "truncated";
	case UNWIND_Q_BROKEN: return "broken";
	case UNWIND_Q_LATE: return "late";
	}
	return "?";
}

const char *unwind_stop_name(enum unwind_stop s)
{
	switch (s) {
	case UNWIND_STOP_NONE: return "none";
	case UNWIND_STOP_COPY: return "the stack copy ended";
	case UNWIND_STOP_DEPTH: return "the depth limit";
	case UNWIND_STOP_CHAIN: return "the frame-pointer chain ended";
	case UNWIND_STOP_NO_CFI: return "no unwind information and no usable frame pointer";
	case UNWIND_STOP_BAD_ADDR: return "a read below the stack pointer";
	case UNWIND_STOP_SP: return "the stack pointer did not move";
	case UNWIND_STOP_REG: return "a register the unwind rules need was not recovered";
	case UNWIND_STOP_BAD_CFI: return "unwind information that could not be used";
	case UNWIND_STOP_NO_REGS: return "no user registers";
	case UNWIND_STOP_SIGNAL: return "a signal frame with no return address";
	case UNWIND_STOP_NOT_CODE: return "a return address outside executable code";
	case UNWIND_STOP_LOOP: return "the unwinding went round in a loop";
	case UNWIND_STOP_SWITCH: return "a stack switch that could not be followed";
	case UNWIND_STOP_NO_ACCESS: return "no access to the process's stack beyond the copy";
	case UNWIND_NSTOPS: break;
	}
	return "?";
}

const char *unwind_method_name(enum unwind_method m)
{
	switch (m) {
	case UNWIND_M_FP: return "fp";
	case UNWIND_M_DWARF: return "dwarf";
	case UNWIND_M_SPLICED: return "spliced";
	}
	return "?";
}
