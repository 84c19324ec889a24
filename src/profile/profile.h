/* profile.h - the in-memory model of a recording that every view reads.
 *
 * profile_load_err() reads a recording as it stands (still growing, killed,
 * or finished), checks every record against the bytes it came in, and
 * fills the arrays below. profile_symbolize() then gives every frame
 * node a function: from the file's symbols chunk when the recording
 * finished, else by reading the binaries now (same code as the recorder
 * uses at stop). All strings belong to the profile and live until
 * profile_release().
 */
#ifndef STAX_PROFILE_PROFILE_H
#define STAX_PROFILE_PROFILE_H

#include "module/ref.h"
#include "store/format.h"
#include "store/reader.h"
#include "store/stacks.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Inline frames: profile_symbolize() gives a node whose address lies in
 * inlined code the innermost inlined function, and appends one node per
 * enclosing function (ids above nnodes_loaded), chained through parent up
 * to the node's original caller. So every walk of parents sees inlined
 * functions as frames of their own; those nodes carry NODE_F_INLINE (an
 * in-memory flag, never in a file) and the same addr and mapping as the
 * node they expand. After symbolization a parent's id may be larger than
 * its child's. */
#define NODE_F_INLINE 0x200u
/* A stand-in for a node a damaged chunk defined: a user frame without a
 * caller (parent 0), at address UINT64_MAX in no mapping, that views
 * show as the function "[damaged]"; a stack that ends in one was cut by
 * the damage. In memory only. */
#define NODE_F_LOST 0x400u

struct prof_node {
	uint64_t addr;
	uint32_t parent;     /* caller node id, 0 for roots */
	uint32_t mapping;    /* mapping id (roots: image number) */
	uint32_t flags;      /* node_kind | NODE_F_RA | NODE_F_INLINE */
	uint32_t func;       /* function id after profile_symbolize(), 0 = none */
	uint32_t depth;      /* 0 for roots */
	uint32_t line;       /* source line of this frame, 0 unknown */
	const char *file;    /* source file of this frame (DWARF path), NULL unknown */
};

struct prof_mapping {
	uint32_t id, pid;
	uint64_t time, start, end, pgoff, inode;
	uint8_t build_id[20];
	uint8_t build_id_size;
	const char *path;
};

/* The module ref of m (borrowing its path and build-id, for m's life). */
static inline struct module_ref profile_mapping_ref(const struct prof_mapping *m)
{
	return module_ref_make(m->path, m->build_id, m->build_id_size, m->start, m->end, m->pgoff);
}

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
	/* With prof_sym_opts.lines a function is one per source line: file
	 * and line are set and label is "name (file.c:LINE)"; else file is
	 * NULL and label == name. Views print label. */
	const char *file;
	uint32_t line;
	const char *label;
};

/* A symbol from the file's symbols chunk, with its source line and
 * inline chain (REC_SYMBOL_SRC) when the recorder had DWARF. */
struct prof_inline {
	const char *name, *file;
	uint32_t line;
};
struct prof_sym {
	struct rec_symbol rs;
	const char *name, *module;
	const char *file;     /* NULL unknown */
	uint32_t line;
	uint32_t inl, ninl;   /* p->sym_inl[inl .. inl + ninl), innermost first */
};
struct prof_perfmap {
	uint32_t pid;
	const char *data;     /* a copy of /tmp/perf-PID.map made at stop */
	size_t size;
};

struct prof_sym_opts {
	bool demangle;       /* live symbolization only: the file has names as they were */
	bool no_inline;      /* fold inlined functions into the function holding the code */
	bool lines;          /* one function per (name, file, line) */
};

struct prof_meta {
	const char *key, *value;
};

/* A recording that profile_load_files() considered (merge.c). */
enum prof_source_state {
	PROF_SRC_READ,       /* read: what of it lies in the window is in the profile */
	PROF_SRC_OUTSIDE,    /* its time lies outside the window: not read */
	PROF_SRC_FAILED,     /* could not be read: why */
	PROF_SRC_NO_TIME,    /* no wall-clock start (an import, or before stax wrote
			      * wall_start): cannot be placed in a window, not read */
};
struct prof_source {
	const char *path;
	enum prof_source_state state;
	uint64_t wall_start_ns;  /* Unix ns of its start; 0 unknown */
	uint64_t wall_end_ns;    /* of its end (READ), else its last write (mtime) */
	size_t samples, offcpu;  /* READ: kept from it (in the window) */
	bool partial, live;      /* READ: no end chunk; and still being written */
	uint64_t damaged_chunks; /* READ: chunks skipped as damaged */
	const char *why;         /* FAILED: why (the reader's message); READ, but
				  * not the newest file read: that it is
				  * truncated, as profile_warnings() says it;
				  * else NULL */
};

struct profile {
	const char *path;
	struct prof_meta *meta;
	size_t nmeta, metacap;
	struct prof_node *nodes;        /* nodes[id - 1] */
	size_t nnodes, nodecap;
	struct rec_sample *samples;
	size_t nsamples, samplecap;
	struct rec_offcpu *offcpu;      /* off-CPU intervals (record --off-cpu) */
	size_t noffcpu, offcpucap;
	struct prof_waker {            /* who ended off-CPU intervals */
		struct rec_waker w;
		const char *comm;       /* NULL: none */
	} *wakers;
	size_t nwakers, wakercap;
	struct prof_mapping *maps;      /* maps[id - 1] */
	size_t nmaps, mapcap;
	struct prof_comm *comms;        /* sorted by (tid, time) after load */
	size_t ncomms, commcap;
	struct rec_task *forks;
	size_t nforks, forkcap;
	struct prof_sym *syms;          /* from the symbols chunk */
	size_t nsyms, symcap;
	struct prof_inline *sym_inl;
	size_t nsym_inl, sym_inlcap;
	struct prof_perfmap *perfmaps;
	size_t nperfmaps, perfmapcap;
	size_t nnodes_loaded;           /* nodes from the file; above: inline frames */
	bool symbolized;
	struct prof_func *funcs;        /* funcs[id - 1] */
	size_t nfuncs, funccap;
	struct hmap func_index;
	uint64_t lost_records, lost_samples, throttles, unthrottles, exits;
	uint64_t lost_queue;            /* of lost_samples: dropped by the recorder's
					 * queue (LOST_QUEUE), not the kernel */
	uint64_t throttled_ns;          /* time sampling was throttled, summed over
					 * THROTTLE/UNTHROTTLE pairs (an open one
					 * counts to the last sample) */
	uint64_t first_time, last_time;
	bool partial;                   /* no END chunk: running or killed */
	bool live;                      /* the recorder still holds the file: running */
	uint64_t file_size;             /* bytes of the file as it was read */
	uint64_t tail;                  /* bytes after its last complete chunk */
	uint64_t data_bytes;            /* bytes of the data chunks read */
	/* Chunks skipped as damaged. The nodes and mappings they defined are
	 * stand-ins (a node is a "[damaged]" frame without a caller, see
	 * NODE_F_LOST; a mapping has no file), so the stacks that went
	 * through them end there. */
	struct store_damage damage;
	uint64_t lost_nodes, lost_maps; /* stand-ins */
	bool has_symbols;
	bool no_live_symbols;           /* never open binaries (fuzzing) */
	/* Read from several recordings (profile_load_files(): a directory,
	 * or a wall-clock window): every file considered, by wall-clock
	 * start; none for one file read alone. The window asked for, in
	 * Unix ns (0: open). */
	struct prof_source *sources;
	size_t nsources;
	uint64_t since_ns, until_ns;
	char **strings;                 /* every string we own */
	size_t nstrings, strcap;
};

/* Load path; on failure returns -1 with the message in *e (for the
 * caller to print). A recording that is cut, still growing or damaged
 * loads (what could be read of it): profile_warnings() says what is
 * missing. p needs profile_release() either way. */
int profile_load_err(struct profile *p, const char *path, struct err *e);
/* Load from memory (fuzzing); returns -1 with the message in err. */
int profile_load_mem(struct profile *p, const char *name, const void *data,
		     size_t size, struct err *err);
void profile_release(struct profile *p);

/* A wall-clock window and the limits of a read of several recordings. */
struct prof_window {
	uint64_t since_ns, until_ns; /* [since, until) in Unix ns; 0: open */
	uint64_t deadline_ns;        /* now_ns() past which the read gives up
				      * (between files); 0: none */
};
/* Read the recordings paths[0..n) as ONE profile named name (merge.c):
 * those whose wall-clock span (META wall_start_ns, else wall_start, to
 * their last write) overlaps the window w (NULL: all), each in full,
 * then only their samples and off-CPU intervals (by start) inside it.
 * Mappings, stack nodes, thread names and strings are interned across
 * files (equal ones once); times move to the clock of the earliest file
 * read (a sample's wall time stays wall_start_ns + time - start_ns, from
 * the profile's META), so recordings of several boots line up; META
 * start_ns becomes the window's since when given (else the first file's
 * start), so --time counts from it, and end_ns its until where it cuts
 * the data. A file that cannot be read is a
 * PROF_SRC_FAILED source (p->sources says why), not a failure: the read
 * fails (-1, message in *e) only when no file could be read at all, or
 * the deadline passed. A file still being written, cut or damaged reads
 * as profile_load_err() reads it. p needs profile_release() either way. */
int profile_load_files(struct profile *p, const char *name, const char *const *paths, size_t n,
		       const struct prof_window *w, struct err *e);
/* The same over every recording in directory dir: its regular files
 * (or links to one) named *.data, not hidden, in no subdirectory. A
 * *.data file that is not a stax recording (a perf.data) is a
 * PROF_SRC_FAILED source. -1 with a message when dir cannot be listed or
 * has no *.data file. */
int profile_load_dir(struct profile *p, const char *dir, const struct prof_window *w, struct err *e);
/* Read path: a directory (profile_load_dir()); a recording with a
 * window (w with since or until: profile_load_files() of that one
 * file); else as profile_load_err(). */
int profile_load_path(struct profile *p, const char *path, const struct prof_window *w, struct err *e);
/* Unix ns of time t (a sample's) in p: from META wall_start_ns (else
 * wall_start, to the second) and start_ns; 0 when p has no wall clock. */
uint64_t profile_wall_ns(const struct profile *p, uint64_t t);

/* What every view of p must warn about (warnings.c). */
enum prof_warning_kind {
	PROF_W_LIVE = 1,       /* still being recorded */
	PROF_W_TRUNCATED = 2,  /* no end chunk, and no recorder holds it */
	PROF_W_DAMAGED = 4,    /* damaged chunks were skipped */
	PROF_W_LOST = 8,       /* more than 1% of the samples lost */
	PROF_W_THROTTLED = 16, /* throttling cost more than 1% of the samples (or an unknown share) */
};
#define PROF_WARNINGS_MAX 5
struct prof_warning {
	enum prof_warning_kind kind;
	char text[512];        /* "what: why", for "stax: warning: %s" */
};
/* Fill w (room for PROF_WARNINGS_MAX) with what a reader of p must be
 * told, one entry per problem; returns how many. Never fails. */
size_t profile_warnings(const struct profile *p, struct prof_warning *w);
/* Give every node a function, its source line, and (unless no_inline)
 * nodes for inlined functions. Once per profile; a second call does
 * nothing. profile_symbolize() is the default: inline frames on, no
 * per-line functions. */
void profile_symbolize(struct profile *p, bool demangle);
void profile_symbolize_opts(struct profile *p, const struct prof_sym_opts *o);

const char *profile_meta(const struct profile *p, const char *key);
/* A META value read as a decimal number; 0 when absent or empty. */
uint64_t profile_meta_u64(const struct profile *p, const char *key);
/* A copy of s[0..n) owned by the profile (for its modules). */
const char *profile_own(struct profile *p, const char *s, size_t n);
/* Add a META entry (key and value copied). */
void profile_add_meta(struct profile *p, const char *key, const char *value);
/* Name of thread tid (of process pid) at time t; never NULL: "[unknown]"
 * when no record names it, "[exited]" for pid -1 (a task the kernel had
 * released when it was sampled, at the end of its exit). */
const char *profile_comm(const struct profile *p, uint32_t pid, uint32_t tid, uint64_t t);
static inline const struct prof_node *profile_node(const struct profile *p, uint32_t id)
{
	return id && id <= p->nnodes ? &p->nodes[id - 1] : NULL;
}
static inline const struct prof_func *profile_func(const struct profile *p, uint32_t id)
{
	return id && id <= p->nfuncs ? &p->funcs[id - 1] : NULL;
}
/* python.c: is fn a Python function (a "py::NAME:FILE" entry of CPython's
 * perf map or jitdump, python -X perf / -X perf_jit)? */
bool profile_func_is_python(const struct prof_func *fn);
/* Keep only Python frames (py-spy style, --python-only): every sample's
 * stack becomes its innermost Python frame, whose callers are the Python
 * frames above it; samples without one keep only their root. Call after
 * profile_symbolize(). */
void profile_python_only(struct profile *p);
/* late.c: leave out the late frames (NODE_F_LATE: read after their
 * sample, --no-late-frames): each node's caller becomes its nearest
 * caller that is not late, and a stack whose leaf is late starts at the
 * nearest frame that is not. Call after profile_symbolize(). */
void profile_drop_late(struct profile *p);
/* Keep only the frames keep() says (and the roots): each node's caller
 * becomes its nearest kept caller, each stack (samples, off-CPU, wakers)
 * starts at its nearest kept node. False when every frame was kept
 * (nothing changed). */
typedef bool (*profile_keep_fn)(const struct profile *p, const struct prof_node *nd);
bool profile_keep_frames(struct profile *p, profile_keep_fn keep);
/* Frames of a sample's stack, leaf first, as function ids (roots excluded).
 * Returns the count (at most max). */
size_t profile_stack_funcs(const struct profile *p, uint32_t stack, uint32_t *out, size_t max);

/* One frame of a stack as views need it. */
struct prof_frame {
	uint32_t node;       /* node id */
	uint32_t func;       /* function id */
	const char *file;    /* source file, NULL unknown */
	uint32_t line;       /* 0 unknown */
	bool inlined;        /* inlined into the next frame (its caller) */
	bool kernel;
};
/* Frames of a stack, leaf first (roots excluded); returns the count (at
 * most max). */
size_t profile_stack_frames(const struct profile *p, uint32_t stack, struct prof_frame *out,
			    size_t max);

#endif
