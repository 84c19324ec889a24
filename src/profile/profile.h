/* profile.h - the in-memory model of a recording that every view reads.
 *
 * profile_load() reads a recording as it stands (still growing, killed,
 * or finished), checks every record against the bytes it came in, and
 * fills the arrays below. profile_symbolize() then gives every frame
 * node a function: from the file's symbols chunk when the recording
 * finished, else by reading the binaries now (same code as the recorder
 * uses at stop). All strings belong to the profile and live until
 * profile_release().
 */
#ifndef STAX_PROFILE_PROFILE_H
#define STAX_PROFILE_PROFILE_H

#include "store/format.h"
#include "store/stacks.h"
#include "lib/hash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct prof_node {
	uint64_t addr;
	uint32_t parent;     /* caller node id, 0 for roots */
	uint32_t mapping;    /* mapping id (roots: image number) */
	uint32_t flags;      /* node_kind | NODE_F_RA */
	uint32_t func;       /* function id after profile_symbolize(), 0 = none */
	uint32_t depth;      /* 0 for roots */
};

struct prof_mapping {
	uint32_t id, pid;
	uint64_t time, start, end, pgoff, inode;
	uint8_t build_id[20];
	uint8_t build_id_size;
	const char *path;
};

struct prof_comm {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t flags;
	const char *name;
};

struct prof_func {
	const char *name;    /* function, or "module+0xoffset" when unknown */
	const char *module;  /* module base name */
	bool known;          /* name came from a symbol */
	bool kernel;
};

struct prof_meta {
	const char *key, *value;
};

struct profile {
	const char *path;
	struct prof_meta *meta;
	size_t nmeta, metacap;
	struct prof_node *nodes;        /* nodes[id - 1] */
	size_t nnodes, nodecap;
	struct rec_sample *samples;
	size_t nsamples, samplecap;
	struct prof_mapping *maps;      /* maps[id - 1] */
	size_t nmaps, mapcap;
	struct prof_comm *comms;        /* sorted by (tid, time) after load */
	size_t ncomms, commcap;
	struct rec_task *forks;
	size_t nforks, forkcap;
	struct rec_symbol *syms;        /* from the symbols chunk */
	const char **sym_names, **sym_modules;
	size_t nsyms, symcap;
	struct prof_func *funcs;        /* funcs[id - 1] */
	size_t nfuncs, funccap;
	struct hmap func_index;
	uint64_t lost_records, lost_samples, throttles, unthrottles, exits;
	uint64_t first_time, last_time;
	bool partial;                   /* no END chunk: running or killed */
	bool has_symbols;
	bool no_live_symbols;           /* never open binaries (fuzzing) */
	char **strings;                 /* every string we own */
	size_t nstrings, strcap;
};

/* Load path; on failure prints "stax: error: ..." and returns -1. */
int profile_load(struct profile *p, const char *path);
/* Load from memory (fuzzing); returns -1 with the message in err. */
int profile_load_mem(struct profile *p, const char *name, const void *data,
		     size_t size, char *err, size_t errlen);
void profile_release(struct profile *p);
/* Give every node a function. demangle applies to live symbolization. */
void profile_symbolize(struct profile *p, bool demangle);

const char *profile_meta(const struct profile *p, const char *key);
/* Name of thread tid (of process pid) at time t; never NULL. */
const char *profile_comm(const struct profile *p, uint32_t pid, uint32_t tid, uint64_t t);
static inline const struct prof_node *profile_node(const struct profile *p, uint32_t id)
{
	return id && id <= p->nnodes ? &p->nodes[id - 1] : NULL;
}
static inline const struct prof_func *profile_func(const struct profile *p, uint32_t id)
{
	return id && id <= p->nfuncs ? &p->funcs[id - 1] : NULL;
}
/* Sample weight in the unit views show: 1 per sample. */
/* Frames of a sample's stack, leaf first, as function ids (roots excluded).
 * Returns the count (at most max). */
size_t profile_stack_funcs(const struct profile *p, uint32_t stack, uint32_t *out, size_t max);

#endif
