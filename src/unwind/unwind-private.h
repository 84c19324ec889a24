/* unwind-private.h - what the files of the unwinder share: the unwinder
 * itself (unwind.c: its mapping cache, tables and prefetch thread) and
 * the reading of a sample's stack copy, which the walk (walk.c) does at
 * every frame (inline here: a bounded load from the copy). Not for use
 * outside src/unwind/.
 */
#ifndef STAX_UNWIND_PRIVATE_H
#define STAX_UNWIND_PRIVATE_H

#include "unwind/unwind.h"
#include "unwind/arch.h"
#include "unwind/table.h"
#include "lib/hash.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

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

/* A provisional table (utable_build_quick()) of a large file whose table
 * the prefetch thread compiles meanwhile: the slots of its mappings use it
 * until unw_quick_refresh() finds that table built (their ti is
 * UINT32_MAX: it is not in the unwinder's tables). t NULL: the file has
 * none (its first sample waits for the table, as without). */
struct uquick {
	uint64_t key;               /* file_key() */
	struct module *mod;         /* held while t is (NULL with it) */
	struct utable *t;
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
	uint8_t *xbuf;              /* XREAD_SIZE (64 KiB) bytes: see unw_xread() */
	struct prefetch pf;
	struct uquick *quick;
	size_t nquick, cap_quick, nquick_live; /* live: those with a table */
};

/* Let the provisional tables whose file's table is built go, and the
 * slots that use them (refilled with that table at their next lookup).
 * At the start of a sample, while nquick_live. */
void unw_quick_refresh(struct unwinder *u);

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
	bool hold_words;      /* not those above the copy yet: the kernel's
			       * frame-pointer chain goes on past the copy,
			       * and a splice onto it, where it fits, costs
			       * the reader nothing at the next samples (a
			       * walk that used words past the copy asks for
			       * their slots) */
	bool used_words;      /* the last read beyond the copy came from them */
	bool late;            /* a word was read from the live process after
			       * the sample (x): every frame from there on is
			       * of a later moment (UNWIND_F_LATE) */
	/* the addresses read (unwind_input.slots_out) */
	uint64_t *slots, slots_from;
	size_t nslots, slots_max;
};

static inline bool words_find(const struct unwind_words *w, uint64_t addr, uint64_t *v)
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
	if (c->words && (addr >= c->end ? !c->hold_words : addr < c->base) && words_find(c->words, addr, v)) {
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

/* The mapping containing pc, or NULL (JIT code, unknown) (unwind.c). */
const struct umod *unw_module_for(struct unwinder *u, const struct unwind_input *in, uint64_t pc);

/* The mapping containing addr. Within one sample the address space is
 * fixed, and across samples while its version stays the same: the
 * mappings already found stay valid (a stack goes back and forth between
 * the program and libc). */
static inline const struct umod *seen_module(struct unwinder *u, const struct unwind_input *in,
				      uint64_t addr)
{
	const struct umod *mod;

	for (int i = 0; i < u->nseen; i++)
		if (addr >= u->seen[i]->start && addr < u->seen[i]->end) {
			/* the slots are the unwinder's own: seen only keeps them const */
			((struct umod *)u->seen[i])->stamp = u->epoch;
			return u->seen[i];
		}
	mod = unw_module_for(u, in, addr);
	if (mod && u->nseen < SEEN) {
		u->seen[u->nseen++] = mod;
	} else if (mod) {
		u->seen[u->seen_next] = mod;
		u->seen_next = (u->seen_next + 1) % SEEN;
	}
	return mod;
}

/* Read the live process's stack around addr, a read that missed the copy
 * (unwind.c; see there). 0, or -errno. At most XREAD_MAX a sample. */
#define XREAD_MAX 16
int unw_xread(struct unwinder *u, const struct unwind_input *in, struct copy *c, uint64_t addr, bool deep,
	      uint64_t slot);

/* copy_read() as a cfi_read_fn (arg: the struct copy). */
bool unw_copy_read_cb(void *arg, uint64_t addr, uint64_t *v);

#endif
