/* state.h - processes and their executable mappings over time.
 *
 * The recorder feeds it the kernel's FORK/COMM/MMAP2 records in time
 * order (seeded from /proc when attaching) and asks, per frame, which
 * mapping holds an address. Mappings are numbered from 1 in the order
 * they are added; a forked child shares its parent's mapping ids (same
 * file, same addresses). An exec starts a new image: its mappings are
 * cleared and it gets a new image number. Nothing is freed until
 * state_compact(), which a recorder that starts a new file calls: it
 * keeps the processes still alive and the mappings they use, numbered
 * from 1 again (the ids of one recording file).
 */
#ifndef STAX_STATE_STATE_H
#define STAX_STATE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/hash.h"

struct state_mapping {
	uint32_t id;
	uint32_t pid;
	uint64_t start, end, pgoff;
	uint64_t inode;
	uint32_t maj, min;
	uint8_t build_id_size;
	uint8_t build_id[20];
	char *path;
};

struct state_range {   /* a process's view of one mapping */
	uint64_t start, end;
	uint32_t id;
};

struct state_proc {
	uint32_t pid;
	uint32_t image;        /* bumped by exec; 0 before any exec seen */
	uint32_t root;         /* stack root node id for this image, 0 = none yet */
	struct state_range *ranges; /* sorted by start, non-overlapping */
	size_t nranges, cap;
	uint64_t gen;          /* changes whenever ranges change; never the same
				* for two processes or two versions (see state_gen) */
	uint64_t used;         /* time of its last sample (the ingester sets it), 0 none */
	bool exited;           /* its main thread's EXIT was seen (state_exit) */
};

struct state {
	struct state_mapping *maps; /* maps[id - 1] */
	size_t nmaps, mapcap;
	struct state_proc *procs;
	size_t nprocs, proccap;
	struct hmap proc_index;     /* pid -> index in procs */
	uint64_t gens;              /* the last generation handed out */
};

void state_init(struct state *s);
void state_release(struct state *s);

/* The process, created empty when unknown. Pointer valid until the next
 * call that may add a process. */
struct state_proc *state_proc(struct state *s, uint32_t pid);
/* Add an executable mapping to pid (replacing what it overlaps); returns
 * the new mapping (owned by s). path is copied. */
const struct state_mapping *state_add_mapping(struct state *s, uint32_t pid,
		const struct state_mapping *m);
/* A new process ppid -> pid: copies the parent's mappings. */
void state_fork(struct state *s, uint32_t pid, uint32_t ppid);
/* exec in pid: clears its mappings, starts a new image. */
void state_exec(struct state *s, uint32_t pid);
/* Mapping id holding addr in pid, 0 when none. */
uint32_t state_find(struct state *s, uint32_t pid, uint64_t addr);
/* The same, and the part [*start, *end) of the mapping that is still
 * mapped around addr: a later mapping over part of it (arm64's kernel
 * puts the vDSO in the hole of ld.so's first, larger mapping) cuts it. */
uint32_t state_find_part(struct state *s, uint32_t pid, uint64_t addr, uint64_t *start,
			 uint64_t *end);
/* The generation of pid's address space: equal for two calls only when
 * nothing changed its mappings in between (never 0; 0 for an unknown
 * pid). Lets an unwinder keep what it looked up for the last sample. */
uint64_t state_gen(struct state *s, uint32_t pid);
/* Mapping by id, NULL when out of range. */
const struct state_mapping *state_mapping(const struct state *s, uint32_t id);

/* The main thread of pid exited (its EXIT record, tid == pid): the
 * process goes at the next state_compact(). A FORK or exec of the pid
 * later (a pid used again) clears it. */
void state_exit(struct state *s, uint32_t pid);

/* Keep only the processes keep(arg, p) says, and the mappings their
 * ranges use, numbered 1, 2, ... in the order of their old ids (shared
 * ones stay shared). Every process's stack root is cleared and its
 * generation changed (the ids in its ranges are new). Returns the old
 * id -> new id table, remap[0 .. old nmaps] (0: dropped), for the
 * caller to free; *old_n gets the old number of mappings. */
uint32_t *state_compact(struct state *s, bool (*keep)(void *arg, const struct state_proc *p), void *arg,
			size_t *old_n);

#endif
