/* unwind.c - the unwinder: module tables, caches and the per-frame loop.
 *
 * Warm path per frame: a range check for the current module, a table
 * lookup (utable_find), and two or three bounded loads from the stack
 * copy. Module changes call the caller's find callback and a small
 * set-associative cache of mappings; a table is built once per distinct
 * file (keyed by build-id, else by path, size and mtime) on first use.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/unwind.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/hash.h"
#include "lib/util.h"
#include "module/module.h"
#include "unwind/arch.h"
#include "unwind/roots.h"
#include "unwind/splice.h"
#include "unwind/table.h"

/* Mappings cached: MOD_SETS sets of MOD_WAYS, the least recently found
 * way replaced. Direct-mapped, two mappings a program moves between in
 * every sample (its executable and libc) that hash to one slot would
 * replace each other twice per sample, each time hashing the file's key
 * (a stat() without build-id) and copying its path: a 1 in 64 chance per
 * pair of mappings that cost xz 100 ns/frame instead of 15 in
 * bench/bench_replay.c. */
#define MOD_SETS 16
#define MOD_WAYS 4
#define MOD_SLOTS (MOD_SETS * MOD_WAYS)
#define ENTRY_WINDOW 64    /* bytes after e_entry that count as entry code */
#define RULE_CACHE 1024   /* direct-mapped pc -> rule cache entries */
/* The walk reads the stack copy from the bottom up, a line or two per
 * frame, and each read is needed before the next frame's rule can be
 * looked up; the copy is rarely in the cache (the kernel or a file wrote
 * it). Asking for its first bytes at once overlaps those misses (about
 * 2 ns/frame of 15 on recorded xz and CPython stacks, bench_replay). */
#define STACK_PREFETCH 1024

/* A mapping seen recently, with its table and load bias. */
struct umod {
	uint64_t start, end, pgoff, bias;
	const struct utable *t;     /* NULL when the bias is unknown */
	uint64_t gen;               /* generation, in bits 48..63 of cache keys */
	char *path;
	uint8_t bid[20];
	size_t bid_size;
	uint64_t found;             /* u->finds when last found (0: never used) */
	uint32_t ti;                /* index of t's table in the unwinder's tables */
	uint32_t stamp;             /* the unwinder's epoch when last used */
	bool used;
	/* the context start function (ROOT_K_CONTEXT) of the table, as ELF
	 * addresses [ctx_lo, ctx_hi); 0, 0 when it has none: checked at
	 * every step, so not by a scan of the roots */
	uint64_t ctx_lo, ctx_hi;
};

/* Real profiles revisit the same return addresses all the time, so a
 * small direct-mapped cache in front of the table search pays (framehop
 * measured ~80% hits). The key is the looked-up pc (user addresses fit
 * 48 bits) with the mapping's generation on top, so a mapping slot that is
 * reused for another file never returns stale rules. */
struct rule_slot {
	uint64_t key;
	struct urule rule;   /* a copy: one dependent load less per frame */
};

#define SEEN 8   /* mappings of the current address space kept at hand */

/* Tables compiled ahead of their first sample (unwind_prefetch()): one
 * helper thread, started on the first request, takes paths off a list
 * and holds each module's table until unwinder_free(). */
#define PREFETCH_MIN_BYTES (16u << 20) /* smaller files compile in a few ms */
#define PREFETCH_MAX 64                /* requests kept at once */

struct prefetch {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, stop;
	struct { char *path; uint8_t bid[20]; size_t bid_size; } want[PREFETCH_MAX];
	size_t nwant;
	struct hmap asked;          /* hash of path and build-id -> 1: asked for once */
	struct module **held;
	uint32_t *held_epoch;       /* the unwinder's epoch when compiled */
	size_t nheld, cap_held, cap_held_epoch;
	uint32_t epoch;             /* the unwinder's, for held_epoch */
};

struct unwinder {
	struct rule_slot cache[RULE_CACHE];
	const struct arch *arch;    /* the machine of the samples */
	/* The mappings the last samples of address space `space` went
	 * through (unwind_input.space): slots of the cache below. A slot
	 * may be refilled meanwhile, but only with a mapping of the same
	 * space, so each entry is a mapping of that space. */
	uint64_t space;
	const struct umod *seen[SEEN];
	int nseen, seen_next;
	uint64_t next_gen;
	uint64_t finds;             /* mappings looked up */
	struct umod slots[MOD_SLOTS];
	struct hmap by_key;         /* file key -> index in tables */
	const struct utable **tables; /* each its module's MODULE_UNWIND part */
	struct module **mods;         /* held until unwind_trim() or unwinder_free() */
	uint64_t *keys;               /* each one's file key (by_key) */
	size_t ntables, cap_tables, cap_mods, cap_keys;
	uint32_t epoch;               /* unwind_trim() calls */
	uint64_t released;            /* tables let go by unwind_trim() */
	struct unwind_stats stats;
	uint8_t *xbuf;              /* XREAD_SIZE bytes: see xread() */
	struct prefetch pf;
};

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

void unwind_prefetch(struct unwinder *u, const char *path, const uint8_t *bid, size_t bid_size)
{
	struct prefetch *pf = &u->pf;
	struct stat st;
	uint32_t one;
	uint64_t key;

	if (!path || path[0] != '/' || bid_size > sizeof(pf->want[0].bid))
		return;
	/* each file once (every process that maps it says so again) */
	key = hash_mix(hash_bytes(path, strlen(path)), bid ? hash_bytes(bid, bid_size) : 0);
	pthread_mutex_lock(&pf->lock);
	if (hmap_get(&pf->asked, key, &one) || pf->nwant == PREFETCH_MAX)
		goto out;
	hmap_put(&pf->asked, key, 1);
	if (stat(path, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < PREFETCH_MIN_BYTES)
		goto out;
	if (!pf->started) {
		if (pthread_create(&pf->thread, NULL, prefetch_main, pf))
			goto out; /* built on first use, as without it */
		pf->started = true;
	}
	pf->want[pf->nwant].path = xstrdup(path);
	memcpy(pf->want[pf->nwant].bid, bid ? bid : (const uint8_t *)"", bid ? bid_size : 0);
	pf->want[pf->nwant].bid_size = bid ? bid_size : 0;
	pf->nwant++;
	pthread_cond_signal(&pf->cv);
out:
	pthread_mutex_unlock(&pf->lock);
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

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	prefetch_stop(&u->pf);
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
	const struct utable *t = module_part(mod, MODULE_UNWIND, table_build, table_free, NULL);
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
static const struct umod *module_for(struct unwinder *u, const struct unwind_input *in,
				     uint64_t pc)
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

/* ---- reading the stack copy ---- */

enum { FAULT_NONE = 0, FAULT_BEYOND, FAULT_BAD };

struct copy {
	const uint8_t *stack;
	uint64_t base, end;   /* [base, end) */
	int fault;
	uint64_t fault_addr;
	/* stack memory read from the live process (unwind_input.read_stack):
	 * [xbase, xend) in the unwinder's buffer */
	const uint8_t *x;
	uint64_t xbase, xend;
	/* words read at the sample beyond the copy (unwind_input.words) */
	const struct unwind_words *words;
	bool used_words;      /* the last read beyond the copy came from them */
	bool late;            /* a word was read from the live process after
			       * the sample (x): every frame from there on is
			       * of a later moment (UNWIND_F_LATE) */
	/* the addresses read (unwind_input.slots_out) */
	uint64_t *slots, slots_from;
	size_t nslots, slots_max;
};

static bool words_find(const struct unwind_words *w, uint64_t addr, uint64_t *v)
{
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->addr[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->n && w->addr[lo] == addr) {
		*v = w->val[lo];
		return true;
	}
	return false;
}

/* addr is a slot to ask the in-kernel reader for (unwind_input.slots_out):
 * at or above slots_from, or below the copy (another stack) */
static inline void note_slot(struct copy *c, uint64_t addr)
{
	if (c->slots && (addr >= c->slots_from || addr < c->base) && c->nslots < c->slots_max)
		c->slots[c->nslots++] = addr;
}

static inline bool copy_read(struct copy *c, uint64_t addr, uint64_t *v)
{
	if (addr >= c->base && addr <= c->end - 8 && c->end - c->base >= 8) {
		memcpy(v, c->stack + (addr - c->base), 8);
		if (c->slots && addr >= c->slots_from)
			note_slot(c, addr);
		return true;
	}
	if (c->words && (addr >= c->end || addr < c->base) && words_find(c->words, addr, v)) {
		c->used_words = true;
		note_slot(c, addr);
		return true;
	}
	if (c->x && addr >= c->xbase && addr <= c->xend - 8 && c->xend - c->xbase >= 8) {
		memcpy(v, c->x + (addr - c->xbase), 8);
		c->used_words = false;
		c->late = true;
		note_slot(c, addr);
		return true;
	}
	/* Above the copy is where the stack goes on: truncated. Below it
	 * (or wrapped) cannot be a caller's frame: broken. */
	c->fault = addr >= c->base && addr < UINT64_MAX - 8 ? FAULT_BEYOND : FAULT_BAD;
	c->fault_addr = addr;
	return false;
}

#define XREAD_SIZE (64u << 10)   /* bytes read from the process at a time */
#define XREAD_MAX 16             /* reads per sample */
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
static int xread(struct unwinder *u, const struct unwind_input *in, struct copy *c,
		 uint64_t addr, bool deep, uint64_t slot)
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

static bool copy_read_cb(void *arg, uint64_t addr, uint64_t *v)
{
	return copy_read(arg, addr, v);
}

/* ---- frame-pointer only ---- */

static void fp_only(const struct unwind_input *in, struct unwind_frame *frames,
		    size_t max, struct unwind_result *res)
{
	size_t n = MIN(MIN(in->fp_chain_len, max), (size_t)UNWIND_MAX_DEPTH);
	for (size_t i = 0; i < n; i++) {
		frames[i].pc = in->fp_chain[i];
		frames[i].flags = i ? UNWIND_F_RA : 0;
	}
	res->n = n;
	res->quality = UNWIND_Q_UNKNOWN;
	res->method = UNWIND_M_FP;
}

/* ---- frames in code without CFI ---- */

struct walker;
static void fp_context_end(struct walker *w, struct unwind_result *res);

/* The CPython 3.12/3.13 perf trampoline for x86-64 (Python/asm_trampoline.S,
 * copied into anonymous executable memory once per code object, 11 bytes,
 * optionally after an endbr64):
 *    0: 48 83 ec 08   sub  $8,%rsp       CFA = rsp + 8
 *    4: ff d1         call *%rcx         CFA = rsp + 16
 *    6: 48 83 c4 08   add  $8,%rsp       CFA = rsp + 16 (the return address)
 *   10: c3            ret                CFA = rsp + 8
 * It pushes no frame pointer; the return address is at CFA - 8. */
static const uint8_t py_tramp[11] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				      0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* CFA offset from rsp when pc is in a CPython trampoline, 0 when its code
 * is something else, -1 when the code bytes are unknown. */
static int tramp_cfa(const struct unwind_input *in, uint64_t pc, bool exact)
{
	static const struct { uint8_t at, cfa; } insn[] = { { 0, 8 }, { 4, 16 }, { 6, 16 }, { 10, 8 } };
	uint8_t b[sizeof(py_tramp) + sizeof(endbr64)];
	bool known = false;

	if (!in->read_code)
		return -1;
	if (!exact) /* a return address: right after the call */
		return !in->read_code(in->find_arg, pc - 6, b, sizeof(py_tramp)) ? -1 :
		       memcmp(b, py_tramp, sizeof(py_tramp)) == 0 ? 16 : 0;
	for (size_t i = 0; i < ARRAY_SIZE(insn); i++) {
		if (!in->read_code(in->find_arg, pc - insn[i].at, b, sizeof(py_tramp)))
			continue;
		known = true;
		if (memcmp(b, py_tramp, sizeof(py_tramp)) == 0)
			return insn[i].cfa;
	}
	if (in->read_code(in->find_arg, pc, b, sizeof(b))) {
		known = true;
		if (!memcmp(b, endbr64, 4) && !memcmp(b + 4, py_tramp, sizeof(py_tramp)))
			return 8;
	}
	return known ? 0 : -1;
}

/* Is ra a plausible return address: in a mapped module whose CFI covers
 * it (the code a trampoline returns to is the interpreter's)? */
static bool ra_in_cfi(struct unwinder *u, const struct unwind_input *in, uint64_t ra)
{
	const struct umod *m = ra > 4096 ? module_for(u, in, ra - 1) : NULL;
	return m && m->t && utable_find(m->t, ra - 1 - m->bias)->kind != UR_FP;
}

enum { NOCFI_BROKEN = 0, NOCFI_TRAMPOLINE, NOCFI_FP, NOCFI_FAULT };

/* One frame at pc where no CFI says how to unwind (JIT code, stripped
 * code). First known generated code by its bytes (the CPython trampoline);
 * else the frame pointer when it is plausible: at or above the stack
 * pointer (a frame record sits above the frame's own slots) and read from
 * the copy. When the code bytes cannot be read (a perf.data file, or the
 * process is gone), the trampoline rule comes first where the frame is
 * consistent with it: the return address it gives is in code that has
 * CFI (a frame-pointer frame of JIT code rarely holds one right above its
 * lowest slot, and the frame pointer may be consistent by chance in
 * callers built with frame pointers, where it skips a caller). That guess
 * is made only in anonymous memory (anon), where the trampolines live; in
 * a file's code without CFI the frame pointer is the only rule.
 * Sets *cfa (0 when unknown), *ra and *nrbp. */
static int nocfi_frame(struct unwinder *u, const struct unwind_input *in, struct copy *c,
		       uint64_t pc, uint64_t sp, uint64_t rbp, uint64_t valid, bool exact,
		       bool anon, uint64_t *cfa, uint64_t *ra, uint64_t *nrbp)
{
	/* the trampoline is x86-64 code */
	int k = u->arch->id == UNWIND_ARCH_X86_64 ? tramp_cfa(in, pc, exact) : 0;
	bool fp_ok = (valid & (1u << UNW_FP)) && rbp >= sp && rbp < UINT64_MAX - 16;

	*cfa = 0;
	*nrbp = rbp;
	if (k > 0) {
		*cfa = sp + (uint64_t)k;
		return copy_read(c, *cfa - 8, ra) ? NOCFI_TRAMPOLINE : NOCFI_FAULT;
	}
	if (k < 0 && !exact && anon) {
		uint64_t tra = 0;
		if (copy_read(c, sp + 8, &tra) && ra_in_cfi(u, in, tra)) {
			*cfa = sp + 16;
			*ra = tra;
			return NOCFI_TRAMPOLINE;
		}
		c->fault = FAULT_NONE;
	}
	if (!fp_ok)
		return NOCFI_BROKEN;
	/* a frame record: the caller's frame pointer, then the return
	 * address (on aarch64 the caller's stack pointer is at or above
	 * CFA: rbp + 16 is its lowest possible value) */
	*cfa = rbp + 16;
	if (!copy_read(c, rbp + 8, ra) || !copy_read(c, rbp, nrbp))
		return NOCFI_FAULT;
	*ra &= u->arch->ra_mask;
	return NOCFI_FP;
}

/* Whether ra (a "return address" in module m) is in a context's start
 * function (ROOT_K_CONTEXT: glibc's __start_context), which makecontext()
 * makes a context's function return into at its first byte. Above it
 * lies the context's link, not a caller: a chain that reaches it ends. */
static bool context_at(const struct umod *m, uint64_t ra)
{
	return m && m->ctx_hi && ra - m->bias >= m->ctx_lo && ra - m->bias < m->ctx_hi;
}

/* Is ra (a return address, the last of the kernel's chain) in an
 * outermost frame? Either its row has an undefined return address, or it
 * is in the function that called main or a thread's start routine: the
 * frame pointer convention zeroes rbp there (_start, clone3), so the
 * kernel's chain ends exactly at that frame. */
static bool is_root(struct unwinder *u, const struct unwind_input *in, uint64_t ra)
{
	const struct umod *m = module_for(u, in, ra - 1);
	return m && m->t && (utable_find(m->t, ra - 1 - m->bias)->kind == UR_STOP ||
			     utable_in_root_caller(m->t, ra - 1 - m->bias));
}

/* The mapping containing addr. Within one sample the address space is
 * fixed, and across samples while its version stays the same: the
 * mappings already found stay valid (a stack goes back and forth between
 * the program and libc). */
static const struct umod *seen_module(struct unwinder *u, const struct unwind_input *in,
				      uint64_t addr)
{
	const struct umod *mod;

	for (int i = 0; i < u->nseen; i++)
		if (addr >= u->seen[i]->start && addr < u->seen[i]->end) {
			/* the slots are the unwinder's own: seen only keeps them const */
			((struct umod *)u->seen[i])->stamp = u->epoch;
			return u->seen[i];
		}
	mod = module_for(u, in, addr);
	if (mod && u->nseen < SEEN) {
		u->seen[u->nseen++] = mod;
	} else if (mod) {
		u->seen[u->seen_next] = mod;
		u->seen_next = (u->seen_next + 1) % SEEN;
	}
	return mod;
}

/* The frame pointer at a stack switch frame whose stack pointer is sp:
 * the callee on the new stack saved it in its frame record at sp - 16
 * (Go's frames keep rbp there, and Go's CFI does not say so, so the rules
 * leave rbp as sampled). The record counts only when the frame-pointer
 * walk from the sampled rbp reaches it inside the copy. Else rbp where a
 * rule restored it (valid has UNW_RBP), else 0. */
static uint64_t switch_rbp(const struct unwind_input *in, struct copy *c, uint64_t sp,
			   uint64_t rbp, uint64_t valid)
{
	uint64_t fp = in->regs.r[UNW_RBP], next;

	if (in->regs.valid & (1u << UNW_RBP))
		for (int i = 0; i < UNWIND_MAX_DEPTH && fp >= c->base && fp < c->end; i++) {
			if (!copy_read(c, fp, &next))
				break;
			if (fp == sp - 16)
				return next;
			if (next <= fp)
				break;
			fp = next;
		}
	c->fault = FAULT_NONE;
	return (valid & (1u << UNW_RBP)) ? rbp : 0;
}

/* ---- the walk ---- */

/* One walk of a sample: the frame reached (pc, sp, rbp, which registers
 * are known) and what the steps so far found out. */
struct walker {
	struct unwinder *u;
	const struct arch *arch;  /* the unwinder's */
	const struct unwind_input *in;
	struct unwind_frame *frames;
	struct unwind_result *res;
	size_t n, limit;
	bool track_rbx;           /* carry rbx too (see walk()) */
	/* walk()'s locals, apart: their addresses go to functions of other
	 * files, and the walker's own fields then stay in registers */
	uint64_t *regs;           /* UNW_NREGS */
	struct copy *c;
	struct splice *sp_info;
	uint64_t *cfas;           /* cfas[i]: the CFA that gave frame i */
	uint64_t valid;           /* bit i: slot i of regs is known (UNW_FP, UNW_SP
				   * and UNW_PC: rbp, sp and pc below) */
	uint64_t pc, sp, rbp;     /* rbp: the frame pointer (aarch64's x29) */
	uint64_t ra_mask;         /* the arch's */
	const struct umod *mod;   /* the module pc was last found in */
	bool exact;               /* look up pc itself, not pc-1 */
	bool rbp_by_rule;         /* rbp was restored by a rule (else it is the
				   * sampled one: Go's CFI does not say where
				   * frames save it) */
	bool offstack;            /* a stack switch or a signal frame led to
				   * a stack outside the copy */
	bool back;                /* a step moved the CFA down (a signal frame or
				   * a stack switch): loops become possible */
	int xreads;               /* reads of the live process's stack */
	int xerr;                 /* why the last one failed */
	int first_kind;           /* the rule kind of the step from the sampled frame */
};

/* One step, from the frame at (pc, sp, rbp) to its caller's. */
struct step {
	uint64_t lookup;          /* pc when exact, else pc - 1 */
	const struct urule *r;    /* the rule at lookup (NULL: none) */
	const struct utable *rt;  /* its table and that table's bias */
	uint64_t rbias;
	bool jit_cfi;             /* r is from a jitdump's CFI */
	int kind;                 /* how to step: r's kind, or -1 (done by
				   * the stack-switch rule) */
	/* the caller's frame */
	uint64_t cfa, ra, nsp, nrbp;
	uint64_t nvalid;
	const struct umod *nmod;  /* the module of ra */
	bool cfa_known, signal, switched;
	bool ra_lr;               /* ra is the link register's (aarch64): the
				   * frame stored nothing, its CFA may be sp */
	bool injected;            /* pc is in a function the runtime made
				   * look called (ROOT_K_INJECTED): ra is the
				   * exact pc it interrupted */
	bool context;             /* ra is in a context's start function
				   * (ROOT_K_CONTEXT), made to be returned
				   * into at its first byte */
};

/* How a step ended. */
enum step_end {
	STEP_NEXT,   /* go on (the caller's registers are in the step) */
	STEP_FAULT,  /* a read missed the copy: w->c->fault says how */
	STEP_STOP,   /* res->quality and res->stop are set; stop at pc */
	STEP_DONE,   /* the outermost frame: res->quality is set */
};

static enum step_end step_stop(struct walker *w, enum unwind_quality q, enum unwind_stop why)
{
	w->res->quality = q;
	w->res->stop = why;
	return STEP_STOP;
}

/* Set up the walk of in; false when it ended already (res is final). */
static bool walk_start(struct walker *w, enum unwind_mode mode)
{
	const struct unwind_input *in = w->in;
	struct unwind_result *res = w->res;
	struct copy *c = w->c;

	memset(res, 0, sizeof(*res));
	res->method = UNWIND_M_DWARF;
	if (!in->space || in->space != w->u->space) {
		w->u->space = in->space;
		w->u->nseen = 0;
	}
	if (!w->limit) {
		res->quality = UNWIND_Q_TRUNCATED;
		res->stop = UNWIND_STOP_DEPTH;
		return false;
	}
	if (mode == UNWIND_MODE_FP) {
		fp_only(in, w->frames, w->limit, res);
		fp_context_end(w, res);
		return false;
	}
	if ((w->valid & ((1u << UNW_RIP) | (1u << UNW_RSP))) != ((1u << UNW_RIP) | (1u << UNW_RSP))) {
		/* No user registers (e.g. a kernel thread): nothing to unwind. */
		if (mode == UNWIND_MODE_HYBRID && in->fp_chain_len) {
			fp_only(in, w->frames, w->limit, res);
			fp_context_end(w, res);
			return false;
		}
		res->quality = UNWIND_Q_BROKEN;
		res->stop = UNWIND_STOP_NO_REGS;
		return false;
	}
	/* x86-64 has 17 slots, aarch64 33: two fixed-size copies */
	if (w->arch->nregs <= UNW_NREGS_X86)
		memcpy(w->regs, in->regs.r, UNW_NREGS_X86 * sizeof(*w->regs));
	else
		memcpy(w->regs, in->regs.r, UNW_NREGS * sizeof(*w->regs));
	c->stack = in->stack;
	c->base = w->regs[UNW_RSP];
	c->end = in->stack ? c->base + in->stack_size : c->base;
	if (c->end < c->base)
		c->end = UINT64_MAX;
	c->fault = FAULT_NONE;
	c->x = NULL;
	c->xbase = c->xend = 0;
	c->words = in->words && in->words->n ? in->words : NULL;
	c->used_words = c->late = false;
	c->slots = in->slots_out;
	c->slots_max = in->slots_out ? in->slots_max : 0;
	c->slots_from = in->slots_from;
	c->nslots = 0;
	if (in->stack)
		for (size_t o = 0; o < MIN(in->stack_size, (size_t)STACK_PREFETCH); o += 64)
			__builtin_prefetch(in->stack + o);
	if (mode == UNWIND_MODE_HYBRID)
		splice_prepare(in, w->ra_mask, w->sp_info);
	else
		w->sp_info->valid = false;

	w->pc = w->regs[UNW_RIP];
	w->sp = w->regs[UNW_RSP];
	w->rbp = w->regs[UNW_RBP];
	w->frames[0].pc = w->pc;
	w->frames[0].flags = 0;
	w->n = 1;
	return true;
}

/* The rule for pc: its module's compiled table (through the rule
 * cache), else a jitdump's CFI, else none (kind UR_FP). */
static void step_rule(struct walker *w, struct step *s)
{
	struct unwinder *u = w->u;
	const struct umod *mod;

	s->lookup = w->exact ? w->pc : w->pc - 1;
	if (!w->mod || s->lookup < w->mod->start || s->lookup >= w->mod->end)
		w->mod = seen_module(u, w->in, s->lookup);
	mod = w->mod;
	if (mod && mod->t) {
		uint64_t key = (s->lookup & 0xffffffffffffull) | mod->gen;
		struct rule_slot *rs = &u->cache[(key * 0x9e3779b97f4a7c15ull) >> 54];
		if (rs->key != key) {
			rs->rule = *utable_find(mod->t, s->lookup - mod->bias);
			rs->key = key;
		}
		s->r = &rs->rule;
	} else {
		s->r = NULL;
	}
	s->rt = mod ? mod->t : NULL;
	s->rbias = mod ? mod->bias : 0;
	s->jit_cfi = false;
	if ((!s->r || s->r->kind == UR_FP) && w->in->jit_table) {
		/* JIT code that came with CFI in a jitdump */
		const struct utable *jt = w->in->jit_table(w->in->find_arg, s->lookup);
		const struct urule *jr = jt ? utable_find(jt, s->lookup) : NULL;
		if (jr && jr->kind != UR_FP) {
			s->r = jr;
			s->rt = jt;
			s->rbias = 0;
			s->jit_cfi = true;
		}
	}

	s->kind = s->r ? s->r->kind : UR_FP;
	if (s->kind == UR_FP && w->n == 1 && mod && mod->t &&
	    utable_find(mod->t, s->lookup - 1 - mod->bias)->kind == UR_SIGNAL) {
		/* Sampled in rt_sigreturn's syscall: the pc is the byte
		 * after `syscall`, one past the trampoline's FDE (which
		 * starts a byte early for RA-1 lookups instead). */
		s->kind = UR_SIGNAL;
	}
}

/* Functions that run their callee on another stack (roots.h): a step
 * out of one follows the frame pointer to the old stack (kind -1) or
 * marks the step as switching; else the step is left to the rule. */
static enum step_end step_switch(struct walker *w, struct step *s)
{
	const struct umod *mod = w->mod;
	int rk = mod && mod->t && mod->t->nroots ? utable_root_kind(mod->t, s->lookup - mod->bias) : 0;

	s->injected = rk == ROOT_K_INJECTED;
	if (rk == ROOT_K_CONTEXT && w->exact && w->n > 1) {
		/* the outermost frame of a makecontext() context's stack:
		 * what lies above it is the context's link, not a caller */
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	if (rk == ROOT_K_SWITCH_CFI && !w->exact)
		s->switched = w->offstack = true; /* its CFI goes to the other stack */
	if (rk == ROOT_K_SWITCH && w->arch->record_at_cfa && (!w->exact || w->n == 1) &&
	    !(w->n <= 2 && w->rbp > w->sp && w->rbp - w->sp <= 4096)) {
		/* pc returns into a function that ran its callee on
		 * another stack (Go's systemstack, mcall, morestack):
		 * the rules of its frame would read the new stack, where
		 * its caller is not. It left rbp pointing at its caller's
		 * frame record on the old stack; the kernel's chain
		 * followed it there. (Its caller's own return address is
		 * not in that record: the caller is skipped, as
		 * frame-pointer unwinders do, never invented.) Seen as the
		 * second frame with rbp just above the stack pointer, it
		 * is systemstack still on the old stack (in
		 * gosave_systemstack_switch): its CFI is right. Sampled
		 * in the function itself (the first frame), the same
		 * test tells whether it switched yet. */
		s->switched = w->offstack = true;
		if (w->n > 1)
			w->rbp = switch_rbp(w->in, w->c, w->sp, w->rbp, w->rbp_by_rule ? w->valid : 0);
		else if (!(w->valid & (1u << UNW_RBP)))
			w->rbp = 0;
		if (w->rbp < 4096 || w->rbp > UINT64_MAX - 16)
			return step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
		s->cfa = w->rbp + 16;
		s->cfa_known = true;
		if (!copy_read(w->c, w->rbp + 8, &s->ra) || !copy_read(w->c, w->rbp, &s->nrbp))
			return STEP_FAULT;
		s->nvalid = (1u << UNW_RSP) | (1u << UNW_RBP) | (1u << UNW_RIP);
		s->nsp = s->cfa;
		s->kind = -1;
	}
	return STEP_NEXT;
}

/* How step_rule_cfi() takes the return address: from the slot at
 * CFA + ra_off (UR_NORMAL, UR_PLT), from the link register (UR_LEAF), or
 * from the slot and signed (UR_PAC). */
enum ra_how { RA_SLOT, RA_LR, RA_SIGNED };

/* A compiled rule (UR_NORMAL, UR_PLT; aarch64's UR_LEAF, UR_PAC): the
 * CFA from sp or the frame pointer, the return address (a slot at it, or
 * the link register) and rbp (and rbx with track_rbx) from slots at it.
 * Inlined once per kind, so that x86-64's rules run no aarch64 test. */
static inline __attribute__((always_inline)) enum step_end
step_rule_cfi(struct walker *w, struct step *s, enum ra_how how)
{
	const struct urule *r = s->r;
	uint64_t sp = w->sp, rbp = w->rbp;

	if (r->kind == UR_PLT) {
		s->cfa = sp + (uint64_t)(int64_t)r->cfa_off + ((w->pc & 15) >= r->plt_thresh ? 8 : 0);
	} else if (r->cfa_reg == UNW_RSP) {
		s->cfa = sp + (uint64_t)(int64_t)r->cfa_off;
	} else {
		if (!(w->valid & (1u << UNW_RBP)))
			return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_REG);
		s->cfa = rbp + (uint64_t)(int64_t)r->cfa_off;
	}
	s->cfa_known = true;
	if (how == RA_LR) {
		/* aarch64: the return address is still in the link
		 * register, known in the sampled frame and in one a signal
		 * interrupted only; maybe signed */
		if (!(w->valid & (1ull << UNW_LR)))
			return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_REG);
		s->ra = w->regs[UNW_LR] & w->ra_mask;
		s->ra_lr = true;
	} else if (!copy_read(w->c, s->cfa + (uint64_t)(int64_t)r->ra_off, &s->ra)) {
		return STEP_FAULT;
	}
	/* where the CFI says it is signed (negate_ra_state): pointer
	 * authentication's signature off */
	if (how == RA_SIGNED)
		s->ra &= w->ra_mask;
	if (r->rbp == URBP_CFA) {
		uint64_t slot = s->cfa + (uint64_t)(int64_t)r->rbp_off;
		/* In an epilogue gcc's CFI still says "saved at
		 * CFA-k" after the pop: a slot below the stack
		 * pointer was popped already, and rbp holds the
		 * caller's value again (the copy starts at rsp,
		 * so the stale slot is not even in it). */
		if (slot < sp) {
			s->nrbp = rbp;
		} else {
			if (!copy_read(w->c, slot, &s->nrbp))
				return STEP_FAULT;
			s->nvalid |= 1u << UNW_RBP;
		}
	} else if (r->rbp == URBP_UNDEF) {
		s->nvalid &= ~(1u << UNW_RBP);
	}
	s->nsp = s->cfa;
	/* Only rsp, rbp and rip are tracked by compiled rules
	 * (and rbx on request); the others are unknown in the
	 * caller. */
	s->nvalid &= (1u << UNW_RSP) | (1u << UNW_RBP) | (1u << UNW_RIP) |
		     (w->track_rbx ? 1u << UNW_RBX : 0);
	if (w->track_rbx && r->rbx == URBP_CFA) {
		uint64_t slot = s->cfa + (uint64_t)(int64_t)r->rbx_off;
		if (slot >= sp) {
			if (!copy_read(w->c, slot, &w->regs[UNW_RBX]))
				return STEP_FAULT;
			s->nvalid |= 1u << UNW_RBX;
		}
	} else if (w->track_rbx && r->rbx == URBP_UNDEF) {
		s->nvalid &= ~(1u << UNW_RBX);
	}
	return STEP_NEXT;
}

static enum step_end step_cfi(struct walker *w, struct step *s)
{
	return step_rule_cfi(w, s, RA_SLOT);
}

/* aarch64's two (not inlined into the walk: x86-64's loop stays as it
 * was, measured with callgrind on a recorded xz) */
static __attribute__((noinline)) enum step_end step_leaf(struct walker *w, struct step *s)
{
	return step_rule_cfi(w, s, RA_LR);
}

static __attribute__((noinline)) enum step_end step_pac(struct walker *w, struct step *s)
{
	return step_rule_cfi(w, s, RA_SIGNED);
}

/* A signal frame: every register from the saved context. */
static enum step_end step_signal(struct walker *w, struct step *s)
{
	uint64_t nr[UNW_NREGS];
	if (w->arch->signal_regs(w->sp, copy_read_cb, w->c, nr, &s->nvalid) < 0) {
		s->cfa_known = false;
		return STEP_FAULT;
	}
	memcpy(w->regs, nr, sizeof(nr));
	s->ra = nr[UNW_RIP];
	s->nsp = nr[UNW_RSP];
	s->nrbp = nr[UNW_RBP];
	s->signal = true;
	/* handled on an alternate stack (sigaltstack) */
	w->offstack |= s->nsp < w->c->base || s->nsp >= w->c->end;
	/* The trampoline is symbolized at its exact pc. */
	if (w->n > 1)
		w->frames[w->n - 1].flags = (w->frames[w->n - 1].flags & ~UNWIND_F_RA) | UNWIND_F_SIGTRAMP;
	return STEP_NEXT;
}

/* A row the compiled rules cannot hold (UR_SLOW): interpret the CFI row. */
static enum step_end step_slow(struct walker *w, struct step *s)
{
	struct cfi_row row;
	struct cfi_cie cie;
	uint64_t nr[UNW_NREGS];
	int e, k;

	w->regs[UNW_RIP] = w->pc;
	w->regs[UNW_RSP] = w->sp;
	w->regs[UNW_RBP] = w->rbp;
	if (utable_slow_row(s->rt, s->lookup - s->rbias, &row, &cie) < 0)
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_BAD_CFI);
	s->cfa = 0;
	e = arch_apply_row(w->arch, &row, w->regs, w->valid, copy_read_cb, w->c, nr, &s->nvalid,
			   &s->cfa);
	if (e == -ENODATA && w->n == 2 && (w->first_kind == UR_NORMAL || w->first_kind == UR_PLT)) {
		/* OpenSSL's assembly (aesni_gcm_encrypt) defines its CFA by a
		 * caller-saved register (rax) across calls to its own code
		 * that leaves it alone, whose CFI says nothing of it: the
		 * caller's value is the sampled one, as unwinders that read
		 * an unspecified register as the same value find it. Only
		 * one frame up from the sample, and only through a compiled
		 * rule, which restores none of these registers. */
		uint64_t cs = w->arch->caller_saved & w->in->regs.valid & ~w->valid;
		for (int i = 0; i < UNW_NREGS; i++)
			if (cs & (1ull << i))
				w->regs[i] = w->in->regs.r[i];
		if (cs)
			e = arch_apply_row(w->arch, &row, w->regs, w->valid | cs, copy_read_cb, w->c,
					   nr, &s->nvalid, &s->cfa);
	}
	s->cfa_known = s->cfa != 0;
	if (e == -ENOENT) {
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	if (e == -EFAULT && w->c->fault != FAULT_NONE)
		return STEP_FAULT;
	if (e < 0)
		/* a register the caller's rules do not recover
		 * (rbx through ld.so's lazy-binding trampoline) */
		return step_stop(w, UNWIND_Q_BROKEN, e == -ENODATA ? UNWIND_STOP_REG : UNWIND_STOP_BAD_CFI);
	memcpy(w->regs, nr, sizeof(nr));
	s->ra = nr[UNW_RIP];
	/* aarch64: a row that leaves the return address in the link
	 * register stored nothing (the CFA may be sp) */
	k = row.reg[w->arch->ra_col].kind;
	s->ra_lr = !w->arch->record_at_cfa && (k == CFI_R_UNSPEC || k == CFI_R_SAME);
	s->nsp = (s->nvalid & (1u << UNW_RSP)) ? nr[UNW_RSP] : s->cfa;
	s->nvalid |= 1u << UNW_RSP;
	s->nrbp = nr[UNW_RBP];
	return STEP_NEXT;
}

/* No CFI here (JIT code, stripped code): the entry code's outermost
 * frame, a known trampoline, or the frame pointer for this one frame,
 * if it is plausible (nocfi_frame()). */
static enum step_end step_nocfi(struct walker *w, struct step *s)
{
	const struct umod *mod = w->mod;
	struct unwind_result *res = w->res;

	if (mod && mod->t && mod->t->entry && (w->valid & (1u << UNW_RBP)) &&
	    w->rbp == 0 && s->lookup - mod->bias - mod->t->entry < ENTRY_WINDOW) {
		/* Entry code without CFI (ld.so's _start calls
		 * _dl_start and _dl_init) with the zero frame
		 * pointer the kernel starts a process with: the
		 * outermost frame. */
		res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	/* Neither rule knows more than rsp, rbp and rip in the
	 * caller; the trampoline leaves rbp alone. */
	s->nvalid = (1u << UNW_RSP) | (w->valid & (1u << UNW_RBP)) | (1u << UNW_RIP);
	switch (nocfi_frame(w->u, w->in, w->c, w->pc, w->sp, w->rbp, w->valid, w->exact,
			    !mod || !mod->t, &s->cfa, &s->ra, &s->nrbp)) {
	case NOCFI_TRAMPOLINE:
		res->jit |= UNWIND_JIT_TRAMPOLINE;
		res->jit_frames++;
		break;
	case NOCFI_FP:
		s->nvalid |= 1u << UNW_RBP;
		if (!mod || !mod->t) {
			/* anonymous memory: JIT code */
			res->jit |= UNWIND_JIT_FP;
			res->jit_frames++;
		}
		break;
	case NOCFI_FAULT:
		s->cfa_known = s->cfa != 0;
		return STEP_FAULT;
	default:
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_NO_CFI);
	}
	s->cfa_known = true;
	s->nsp = s->cfa;
	return STEP_NEXT;
}

/* The caller's frame as the step's rule says it. */
static enum step_end step_by_rule(struct walker *w, struct step *s)
{
	switch (s->kind) {
	case -1:
		return STEP_NEXT;
	case UR_NORMAL:
	case UR_PLT:
		return step_cfi(w, s);
	case UR_LEAF:
		return step_leaf(w, s);
	case UR_PAC:
		return step_pac(w, s);
	case UR_STOP:
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	case UR_SIGNAL:
		return step_signal(w, s);
	case UR_SLOW:
		return step_slow(w, s);
	case UR_FP:
	default:
		return step_nocfi(w, s);
	}
}

/* Is the caller's frame a real one? */
static enum step_end step_check(struct walker *w, struct step *s)
{
	if (!s->signal && !s->switched && s->nsp <= w->sp && !(s->ra_lr && s->nsp == w->sp))
		/* The stack pointer must move towards the caller (but
		 * for a frame that stored nothing: its return address was
		 * in the link register, which no later frame has). */
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_SP);
	if (s->ra == 0) {
		/* A zero return address ends a chain by convention. */
		if (s->signal)
			return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_SIGNAL);
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	/* Never an invented frame: the caller's pc must be in
	 * executable code the process has mapped... */
	s->nmod = seen_module(w->u, w->in, s->signal || s->injected ? s->ra : s->ra - 1);
	if (!s->nmod && w->in->find)
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_NOT_CODE);
	/* makecontext() makes a context's function return into the first
	 * byte of its trampoline: that address, not the one before it,
	 * is the frame's */
	s->context = !s->signal && !s->injected && context_at(s->nmod, s->ra);
	/* ...and, once a step went down (where the CFA no longer
	 * rises at every step), no (CFA, return address) pair may come
	 * again. */
	w->back |= s->signal || s->switched;
	if (w->back)
		for (size_t j = 1; j < w->n; j++)
			if (w->cfas[j] == s->nsp && w->frames[j].pc == s->ra)
				return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_LOOP);
	return STEP_NEXT;
}

/* Move to the caller's frame. */
static void step_advance(struct walker *w, const struct step *s)
{
	if (s->nmod)
		w->mod = s->nmod;
	if (w->n == 1)
		w->first_kind = s->kind;
	w->exact = s->signal || s->injected || s->context;
	w->rbp_by_rule |= s->nrbp != w->rbp || (s->nvalid & ~w->valid & (1u << UNW_RBP)) ||
			  (s->kind >= UR_NORMAL && s->r->rbp == URBP_CFA) || s->kind == UR_SLOW;
	w->pc = s->ra;
	w->sp = s->nsp;
	w->rbp = s->nrbp;
	w->valid = s->nvalid | (1u << UNW_RIP) | (1u << UNW_RSP);
	w->frames[w->n].pc = w->pc;
	w->frames[w->n].flags = (s->signal ? UNWIND_F_SIGNAL : s->injected || s->context ? 0 : UNWIND_F_RA) |
				(w->c->late ? UNWIND_F_LATE : 0);
	w->cfas[w->n] = s->nsp;
	w->n++;
	if (!(s->nsp - 8 >= w->c->base && s->nsp <= w->c->end)) {
		/* beyond the copy: its return address came from the words
		 * read at the sample, or from a later read */
		if (w->c->words && w->c->used_words)
			w->res->word_frames++;
		else if (w->c->x)
			w->res->read_frames++;
	}
}

enum fault_end {
	FAULT_AGAIN,    /* the stack was read from the process: step again */
	FAULT_SPLICED,  /* the kernel's chain ends the walk: res is final */
	FAULT_STOP,     /* res->quality and res->stop are set; stop at pc */
};

/* Whether at (in module m) is in a function the runtime made look
 * called (ROOT_K_INJECTED: Go's asyncPreempt, sigpanic), whose "return
 * address" is the exact pc it interrupted. */
static bool injected_at(const struct umod *m, uint64_t at)
{
	return m && m->t && m->t->nroots && utable_root_kind(m->t, at - m->bias) == ROOT_K_INJECTED;
}

/* The kernel's chain alone (fp_only()) ends at a context's start: the
 * rbp chain above it is whatever the context began with (getcontext()'s
 * caller's frame), not its callers. */
static void fp_context_end(struct walker *w, struct unwind_result *res)
{
	for (size_t i = 1; w->in->find && i < res->n; i++) {
		const struct umod *m = seen_module(w->u, w->in, w->frames[i].pc - 1);
		if (!m)
			return;
		if (context_at(m, w->frames[i].pc)) {
			w->frames[i].flags = 0;
			res->n = i + 1;
			return;
		}
	}
}

/* Where the kernel's chain goes on from this frame, append it (the
 * splice rule, docs/UNWINDING.md). False when it does not match here, or
 * when it did not reach a root from another stack that can be read from
 * the process instead (the splice is undone then). */
static bool walk_splice(struct walker *w, const struct step *s)
{
	const struct unwind_input *in = w->in;
	struct unwind_result *res = w->res;
	const struct unwind_frame *last;
	uint64_t at;
	size_t i;
	bool not_code = false, exact;

	if (!(((w->c->fault == FAULT_BEYOND || s->switched || w->back) && s->cfa_known &&
	       (w->arch->record_at_cfa ? splice_matches(w->sp_info, s->cfa)
				       : w->c->fault == FAULT_BEYOND &&
					 splice_matches_ra(w->sp_info, w->c->fault_addr))) ||
	      (w->back && w->exact && w->n > 1 && (w->valid & (1u << UNW_RBP)) && w->sp_info->valid &&
	       w->rbp == w->sp_info->frame)))
		return false;
	/* A stack switch (or a signal handled on another
	 * stack) goes to another stack, above or below the
	 * copy: the kernel's chain followed its frame pointer
	 * there. A frame interrupted by a signal before it made
	 * its own frame record (a leaf, a prologue) has its
	 * caller's in rbp: the chain goes on from the caller's
	 * caller (the caller is skipped, never invented). */
	res->dwarf_frames = w->n;
	last = &w->frames[w->n - 1];
	at = (last->flags & UNWIND_F_RA) ? last->pc - 1 : last->pc;
	exact = in->find && injected_at(seen_module(w->u, in, at), at);
	for (i = w->sp_info->next; i < in->fp_chain_len && w->n < w->limit; i++) {
		/* The chain is the kernel's rbp walk, which follows
		 * whatever rbp held in code that does not keep frame
		 * pointers: a return address outside executable
		 * code ends it there. After a function the runtime
		 * made look called (Go's asyncPreempt), the entry is
		 * the exact pc it interrupted (exact), not a return
		 * address. */
		const struct umod *m;
		at = in->fp_chain[i] - (exact ? 0 : 1);
		m = in->find ? seen_module(w->u, in, at) : NULL;
		if (in->find && !m) {
			not_code = true;
			break;
		}
		w->frames[w->n].pc = in->fp_chain[i];
		/* after frames read later, where the chain joins was found
		 * by them: no better than they are */
		w->frames[w->n].flags = (exact ? 0 : UNWIND_F_RA) | (w->c->late ? UNWIND_F_LATE : 0);
		w->n++;
		if (!exact && context_at(m, in->fp_chain[i])) {
			/* rbp above it is whatever the context began with */
			w->frames[w->n - 1].flags &= UNWIND_F_LATE;
			i = in->fp_chain_len;
			break;
		}
		exact = injected_at(m, at);
	}
	res->method = UNWIND_M_SPLICED;
	w->u->stats.spliced++;
	if (not_code) {
		res->quality = UNWIND_Q_BROKEN;
		res->stop = UNWIND_STOP_NOT_CODE;
		res->stop_pc = w->frames[w->n - 1].pc;
	} else if (i < in->fp_chain_len) {
		res->quality = UNWIND_Q_TRUNCATED;
		res->stop = UNWIND_STOP_DEPTH;
		res->stop_pc = w->frames[w->n - 1].pc;
	} else if (w->n > res->dwarf_frames && (is_root(w->u, in, w->frames[w->n - 1].pc) ||
						   !w->frames[w->n - 1].flags)) {
		/* a root, or a context's start (context_at()) */
		res->quality = UNWIND_Q_COMPLETE;
	} else {
		res->quality = UNWIND_Q_TRUNCATED;
		res->stop = UNWIND_STOP_CHAIN;
		res->stop_pc = w->frames[w->n - 1].pc;
	}
	if (res->quality == UNWIND_Q_COMPLETE || !w->offstack ||
	    !in->read_stack || w->xreads >= XREAD_MAX || w->xerr == -EPERM) {
		res->n = w->n;
		return true;
	}
	/* The chain did not reach a root from the other stack
	 * (code there keeps no frame pointers): read that stack
	 * instead (walk_fault()). */
	w->n = res->dwarf_frames;
	res->dwarf_frames = 0;
	res->method = UNWIND_M_DWARF;
	res->quality = UNWIND_Q_UNKNOWN;
	res->stop = UNWIND_STOP_NONE;
	res->stop_pc = 0;
	w->u->stats.spliced--;
	if (w->c->fault == FAULT_NONE)
		w->c->fault = FAULT_BEYOND;
	return false;
}

/* A step could not read what it needed from the copy (or went to
 * another stack): splice the kernel's chain, read the stack from the
 * process, or stop with the verdict the fault gives. */
static enum fault_end walk_fault(struct walker *w, const struct step *s)
{
	struct copy *c = w->c;

	if (walk_splice(w, s))
		return FAULT_SPLICED;
	if (w->in->read_stack && w->xreads < XREAD_MAX && c->fault != FAULT_NONE &&
	    (w->offstack || (w->in->read_deep && c->fault == FAULT_BEYOND)) &&
	    w->xerr != -EPERM) {
		/* The stack a switch came from is not in the copy (or
		 * the stack is deeper than the copy), and the kernel's
		 * chain does not go on from here: read it from the
		 * process and unwind this frame again. */
		int fault = c->fault;
		uint64_t addr = c->fault_addr, slot = 0, v;
		w->xreads++;
		if (w->n >= 2 && (w->frames[w->n - 1].flags & UNWIND_F_RA) &&
		    copy_read(c, w->cfas[w->n - 1] - 8, &v) && v == w->frames[w->n - 1].pc)
			slot = w->cfas[w->n - 1] - 8;
		w->xerr = xread(w->u, w->in, c, addr, !w->offstack, slot);
		if (!w->offstack && w->res->deep != 1) {
			if (!w->xerr)
				w->res->deep = 1;
			else if (w->xerr == -ESTALE)
				w->res->deep = 2;
			else if (w->xerr == -ESRCH)
				w->res->deep = 3;
		}
		c->fault = FAULT_NONE;
		if (!w->xerr)
			return FAULT_AGAIN;
		c->fault = fault;
	}
	if (w->xerr == -EPERM && w->offstack) {
		step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_NO_ACCESS);
		return FAULT_STOP;
	}
	if (w->offstack && (s->switched || c->fault == FAULT_BEYOND)) {
		/* the other stack is not in the copy, and the kernel's
		 * chain does not reach it (or is not this stack's),
		 * nor could it be read from the process */
		step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
		return FAULT_STOP;
	}
	if (c->fault == FAULT_BEYOND)
		step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_COPY);
	else
		step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_BAD_ADDR);
	return FAULT_STOP;
}

/* One walk of a sample: a step per frame (step_rule() finds the rule,
 * step_switch() and step_by_rule() give the caller's registers,
 * step_check() judges them, step_advance() moves there), and
 * walk_fault() where the copy ends. With track_rbx, rbx is carried from
 * frame to frame by the compiled rules too (where each frame saved it),
 * which only the rare rule that defines its CFA by rbx needs. */
static void walk(struct unwinder *u, enum unwind_mode mode,
		 const struct unwind_input *in,
		 struct unwind_frame *frames, size_t max,
		 struct unwind_result *res, bool track_rbx)
{
	struct walker w = { 0 }; /* walk_start() sets what it reads */
	uint64_t regs[UNW_NREGS], cfas[UNWIND_MAX_DEPTH];
	struct copy c;
	struct splice sp_info;

	w.u = u;
	w.arch = u->arch;
	w.ra_mask = u->arch->ra_mask;
	w.regs = regs;
	w.cfas = cfas;
	w.c = &c;
	w.sp_info = &sp_info;
	w.in = in;
	w.frames = frames;
	w.res = res;
	w.limit = MIN(max, (size_t)UNWIND_MAX_DEPTH);
	w.track_rbx = track_rbx;
	w.valid = in->regs.valid;
	w.mod = NULL;
	w.exact = true;
	w.rbp_by_rule = w.offstack = w.back = false;
	w.xreads = w.xerr = 0;
	w.first_kind = -1;
	w.n = 0;
	if (!walk_start(&w, mode))
		return;

	for (;;) {
		struct step s;
		enum step_end e;

		if (w.n >= w.limit) {
			step_stop(&w, UNWIND_Q_TRUNCATED, UNWIND_STOP_DEPTH);
			goto stop;
		}
		s.cfa = 0;
		s.nrbp = w.rbp;
		s.nvalid = w.valid;
		s.nmod = NULL;
		s.cfa_known = s.signal = s.switched = s.ra_lr = s.injected = s.context = false;
		step_rule(&w, &s);
		if ((e = step_switch(&w, &s)) != STEP_NEXT || (e = step_by_rule(&w, &s)) != STEP_NEXT)
			goto end;
		if (s.jit_cfi) {
			res->jit |= UNWIND_JIT_CFI;
			res->jit_frames++;
		}
		if ((e = step_check(&w, &s)) == STEP_NEXT) {
			step_advance(&w, &s);
			continue;
		}
	end:
		if (e == STEP_DONE)
			goto done;
		if (e == STEP_STOP)
			goto stop;
		switch (walk_fault(&w, &s)) {
		case FAULT_AGAIN:
			continue;
		case FAULT_SPLICED:
			res->nslots = c.nslots;
			return;
		case FAULT_STOP:
			goto stop;
		}
	}
stop:
	res->stop_pc = w.pc;
done:
	res->n = w.n;
	res->nslots = c.nslots;
	res->depth = w.n > 1 ? cfas[w.n - 1] - in->regs.r[UNW_RSP] : 0;
	if (res->method != UNWIND_M_SPLICED)
		res->dwarf_frames = w.n;
}

void unwind_sample(struct unwinder *u, enum unwind_mode mode,
		   const struct unwind_input *in,
		   struct unwind_frame *frames, size_t max,
		   struct unwind_result *res)
{
	u->stats.samples++;
	walk(u, mode, in, frames, max, res, false);
	if (res->stop == UNWIND_STOP_REG) {
		/* A rule needed a register the fast walk drops: walk again
		 * keeping rbx (the frames found so far are the same). */
		walk(u, mode, in, frames, max, res, true);
	}
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
