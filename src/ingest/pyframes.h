/* pyframes.h - Python frames read from a running CPython (3.11-3.13).
 *
 * A CPython thread running Python code has one _PyEval_EvalFrameDefault C
 * frame per entry into the interpreter; the Python functions it runs live
 * in the interpreter's own frame chain (_PyInterpreterFrame), not on the C
 * stack. While recording a live process, the ingester reads that chain
 * from the thread's PyThreadState (found from _PyRuntime, matched to the
 * sampled thread by native_thread_id) with process_vm_readv and expands
 * each _PyEval_EvalFrameDefault into the Python functions it was running,
 * named like CPython's perf map ("py::QUALNAME:FILENAME").
 *
 * Layouts: 3.13 publishes them in _Py_DebugOffsets at the start of
 * _PyRuntime (cookie "xdebugpy"); 3.11 and 3.12 use offsets taken from
 * their headers (Include/internal), checked against pyenv and Debian
 * builds. Every byte read is outside input: pointers are followed only
 * after checks, chains are capped, strings are bounded.
 *
 * A chain is used only when it validates: every frame's code object has
 * the address of PyCode_Type as its type, and the number of interpreter
 * entries walked equals the number of _PyEval_EvalFrameDefault frames of
 * the native stack. The chain is read after the sample (the thread has
 * run on meanwhile); validation catches most chains that changed shape,
 * not all: its frames are late (the caller marks them so).
 *
 * With the in-kernel reader (record/moment.h), the chain is the one it
 * read at the sample (pyframes_expand_moment): code objects and
 * instruction offsets, named here by reading each code object once,
 * cached by its address and the stamp of its fields read at the sample,
 * so a code object freed and another made at its address is never
 * named after the first.
 *
 * A frame is one (function, line): its line from the code object's
 * co_linetable (symbol/pyline.h) and the frame's instruction offset.
 */
#ifndef STAX_INGEST_PYFRAMES_H
#define STAX_INGEST_PYFRAMES_H

#include "state/state.h"

#include "bpf/moment_abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PYF_MAX_FRAMES 2048 /* Python frames of one sample, at most */
#define PYF_MAX_NAME 512    /* bytes of a qualname or file name kept */
#define PYFRAMES_POLL_MS 2  /* the recorder's drain passes while reading them */
/* The name of a frame whose code object was freed before it was named
 * (its address may hold another by then: never named after that one) */
#define PYF_GONE_NAME "py::[code freed before it was named]:"

/* Offsets of one CPython version's structures (bytes). */
struct pyf_layout {
	uint32_t version;          /* PY_VERSION_HEX >> 16: 0x030b, 0x030c, 0x030d */
	uint64_t rt_interp_head;   /* _PyRuntime.interpreters.head */
	uint64_t interp_next, interp_threads_head;
	uint64_t ts_next, ts_native_tid;
	uint64_t ts_cframe;        /* 3.11/3.12: tstate->cframe (then cf_current) */
	uint64_t cf_current;       /* _PyCFrame.current_frame */
	uint64_t ts_current;       /* 3.13: tstate->current_frame */
	uint64_t fr_code, fr_previous, fr_owner;
	int64_t fr_is_entry;       /* 3.11: the entry flag; -1: entries are frames
				    * owned by the C stack (3.12, 3.13) */
	uint8_t owned_by_cstack;   /* 3 in 3.12/3.13 */
	uint64_t co_filename, co_qualname, co_code;  /* co_code: co_code_adaptive */
	/* for reading at the sample (record/moment.h) and lines: the
	 * frame's instruction pointer (3.11/3.12 prev_instr, 3.13
	 * instr_ptr), co_name, co_linetable, co_firstlineno (an int) */
	uint64_t fr_instr, co_name, co_linetable, co_firstlineno;
	uint64_t ob_type;
	uint64_t u_state, u_length, u_ascii_size, u_compact_size;
};

/* Reads len bytes at addr of the target: 0, or -errno (-EPERM, -ESRCH,
 * -EFAULT for unmapped or partly read memory). */
typedef int (*pyf_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* The layout of version (major << 8 | minor) for 3.11 and 3.12; false for
 * any other (3.13 needs its debug offsets). */
bool pyf_layout_builtin(uint32_t version, struct pyf_layout *out);
/* The layout from the first size bytes of a 3.13 _PyRuntime (its
 * _Py_DebugOffsets): -EINVAL when the cookie, version or free-threaded
 * flag is not what this reader knows, or an offset is implausible. */
int pyf_layout_from_debug(const uint8_t *p, size_t size, struct pyf_layout *out);
#define PYF_DEBUG_OFFSETS_SIZE 584
/* PyVarObject.ob_size (the code object's length in 2-byte code units) */
#define PYF_OB_SIZE 16
/* Decode the str object whose first size bytes are p (read from address
 * addr; data past them is read with rd) into out as UTF-8 (at most
 * PYF_MAX_NAME - 1 bytes, NUL-terminated). -EINVAL when it is not a
 * compact str. */
int pyf_unicode(const struct pyf_layout *l, pyf_read_fn rd, void *arg, uint64_t addr,
		char *out, size_t outsize);

/* One process's interpreter, found from its mappings. */
struct pyframes;

struct pyframes *pyframes_new(void);
void pyframes_free(struct pyframes *pf);

enum pyf_status {
	PYF_NONE = 0,      /* no _PyEval_EvalFrameDefault frame: nothing to do */
	PYF_EXPANDED,      /* out filled */
	PYF_FAILED,        /* had interpreter frames; the chain did not validate */
	PYF_NO_ACCESS,     /* had interpreter frames; the process cannot be read */
	PYF_STALE,         /* the chain read is not the sample's: the thread ran on */
};

/* The expansion of one sample: for the k-th _PyEval_EvalFrameDefault
 * frame of pcs (leaf first), count[k] Python frames, innermost first, at
 * ids[first[k] ...] (frame ids: pyframes_frame()). */
struct pyf_expansion {
	size_t neval;
	size_t first[PYF_MAX_FRAMES], count[PYF_MAX_FRAMES];
	uint32_t ids[PYF_MAX_FRAMES];
	size_t nids;
	size_t gone;            /* frames of code objects freed before they were
				 * named (pyframes_expand_moment: PYF_GONE_NAME) */
	bool is_eval_pos[1024]; /* pcs[i] is a _PyEval_EvalFrameDefault frame */
};

/* What the sample saw: its user registers and stack copy (either may be
 * empty). The chain is read after the sample; it is taken only when the
 * innermost Python frame's code is the one the sample was running: a
 * register or stack word points into that code object's bytecode (the
 * interpreter's instruction pointer, held in a register or saved on the
 * stack by the functions it calls). */
struct pyf_sample {
	const uint8_t *regs;   /* nregs u64 values */
	size_t nregs;
	const uint8_t *stack;  /* the copy of the stack from its pointer up */
	size_t stack_size;
};

/* Expand the sample of thread tid of process pid whose user frames are
 * pcs[0..n) (leaf first; ra[i]: pcs[i] is a return address). Reads the
 * live process; st gives its mappings. */
enum pyf_status pyframes_expand(struct pyframes *pf, struct state *st, uint32_t pid, uint32_t tid,
				const uint64_t *pcs, const bool *ra, size_t n, const struct pyf_sample *seen,
				struct pyf_expansion *out);
/* The same from the chain the in-kernel reader read at the sample:
 * f[0..nf) innermost first (moment_abi.h; nf > 0, read to its end).
 * A code object gone from its address by now is not named after what is
 * there (another may be): its frame is PYF_GONE_NAME (out->gone counts
 * them). PYF_FAILED: the chain does not fit the native stack. */
enum pyf_status pyframes_expand_moment(struct pyframes *pf, struct state *st, uint32_t pid, const uint64_t *pcs,
				       const bool *ra, size_t n, const struct moment_pyframe *f, size_t nf,
				       struct pyf_expansion *out);
/* True when a register or stack word of seen lies in [lo, hi). */
bool pyf_seen_points_into(const struct pyf_sample *seen, uint64_t lo, uint64_t hi);
/* The name of Python frame id ("py::QUALNAME:FILE"), borrowed for pf's
 * life; NULL for an unknown id. */
const char *pyframes_name(const struct pyframes *pf, uint32_t id);
/* Frame id's name, file (co_filename) and line (0: not known), borrowed
 * for pf's life; false for an unknown id. Ids run from 1 to
 * pyframes_count(), in the order found. */
bool pyframes_frame(const struct pyframes *pf, uint32_t id, const char **name, const char **file,
		    uint32_t *line);
size_t pyframes_count(const struct pyframes *pf);
/* path may be an interpreter's (libpython3.* or python3*). */
bool pyframes_is_interpreter_path(const char *path);
/* Process pid runs a CPython this reader knows (its mappings in st): its
 * layout and the address of PyCode_Type in it (reads the process once). */
bool pyframes_interpreter(struct pyframes *pf, struct state *st, uint32_t pid, struct pyf_layout *l,
			  uint64_t *code_type);
/* Every thread state of process pid's interpreter (found before by
 * pyframes_interpreter() or an expansion): fn(arg, its native thread
 * id, its address). Returns how many, or -errno. */
int pyframes_each_tstate(struct pyframes *pf, uint32_t pid, void (*fn)(void *arg, uint32_t tid, uint64_t tstate),
			 void *arg);
/* Process pid runs CPython's perf trampolines (-X perf, -X perf_jit):
 * its Python frames are on its stacks already; read none from it (until
 * it execs). */
void pyframes_has_perf_frames(struct pyframes *pf, uint32_t pid);
/* Forget the processes whose pid keep(arg, pid) does not keep (their
 * interpreters, threads and code objects); the names stay. */
void pyframes_keep(struct pyframes *pf, bool (*keep)(void *arg, uint32_t pid), void *arg);
/* True once a process with an interpreter was seen (its samples are the
 * ones read: the recorder then ingests sooner after the samples). */
bool pyframes_found(const struct pyframes *pf);
/* Why the first process that could not be read was not ("" if none). */
const char *pyframes_no_access_why(const struct pyframes *pf);

#endif
