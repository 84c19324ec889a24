/* ingest-private.h - what the files of ingest/ share, not for the stages
 * that feed it (ingest.h is theirs).
 *
 * ingest.c holds the record dispatch and the sample path, and calls each
 * concern through the functions below; each concern keeps its state in a
 * struct of its own inside struct ingest (ingest.h).
 */
#ifndef STAX_INGEST_PRIVATE_H
#define STAX_INGEST_PRIVATE_H

#include "ingest/ingest.h"

/* ---- ingest.c ---- */

/* Hand the stack nodes made since the last call to the writer. */
void ingest_put_nodes(struct ingest *g);

/* ---- rotate.c: going on in another file ---- */

/* What the next file keeps of the last: the processes (pid -> 1; 0: not
 * kept), and
 * the old mapping id -> new id table (0: dropped). */
struct ingest_keep {
	struct hmap pids;
	const uint32_t *remap;
	size_t nremap;              /* entries of remap (old ids 0 .. nremap-1) */
	const struct stack_table *old; /* the last file's stack nodes */
};
/* The node in the current stack table of stack id of k->old, its
 * mappings renumbered (0 when id is 0). */
uint32_t ingest_copy_stack(struct ingest *g, const struct ingest_keep *k, uint32_t id);
static inline bool ingest_keeps(const struct ingest_keep *k, uint32_t pid)
{
	uint32_t v;
	return hmap_get(&k->pids, pid, &v) && v;
}

/* ---- offcpu.c: off-CPU intervals and their wakers ---- */

void ingest_offcpu_init(struct ingest_offcpu *o);
void ingest_offcpu_release(struct ingest_offcpu *o);

/* What a sample is to the wakers (ingest_offcpu_wake): no wake-up, a
 * wake-up that needs nothing more (handled, or ending no wait), or one
 * whose waker's stack the caller unwinds like a sample's and hands to
 * ingest_offcpu_woken(). */
enum { OFFCPU_WAKE_NONE = 0, OFFCPU_WAKE_DONE, OFFCPU_WAKE_STACK };
struct offcpu_wake {
	struct offcpu_pending *p;   /* the thread it wakes */
	uint8_t flags;              /* the tracepoint's common_flags */
};
int ingest_offcpu_wake(struct ingest *g, const struct perf_sample *s, struct offcpu_wake *w);
void ingest_offcpu_woken(struct ingest *g, const struct offcpu_wake *w, const struct perf_sample *s,
			 const struct rec_sample *rs);
/* s is the stack sample of a thread switching out (off-CPU recording). */
bool ingest_offcpu_is_switch(const struct ingest *g, const struct perf_sample *s);
/* The switch-out sample s, unwound into rs (uframes[0..nu), kframes[0..nk));
 * extended: its stack was read on from the process (OFFCPU_F_READ). */
void ingest_offcpu_switch_out(struct ingest *g, const struct perf_sample *s, const struct rec_sample *rs,
			      size_t nu, bool unwound, size_t nk, bool extended);
/* The thread tid's interval in progress, NULL when none is known. */
const struct offcpu_pending *ingest_offcpu_find(const struct ingest_offcpu *o, uint32_t tid);
/* Process pid is recorded (its COMM or FORK seen): its wake-ups come
 * with stacks of their own. */
void ingest_offcpu_recorded(struct ingest_offcpu *o, uint32_t pid);
void ingest_offcpu_fork(struct ingest_offcpu *o, uint32_t pid, uint32_t tid);
void ingest_offcpu_exit(struct ingest_offcpu *o, uint32_t pid, uint32_t tid);
/* PERF_RECORD_SWITCH(_CPU_WIDE): ends and starts intervals. */
void ingest_offcpu_on_switch(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h);
/* The file ends at t: the intervals open then are written as open at t,
 * and go on from t (ingest_end_file). */
void ingest_offcpu_end_file(struct ingest *g, uint64_t t);
/* The next file: the threads of the processes kept, their open
 * intervals' stacks interned again; caches by mapping let go. */
void ingest_offcpu_carry(struct ingest *g, const struct ingest_keep *k);

/* ---- jit.c: JIT code ---- */

void ingest_jit_init(struct ingest_jit *j);
void ingest_jit_release(struct ingest_jit *j);
/* The unwinder's callbacks (arg: the ingest): code bytes of anonymous
 * memory (unwind_read_code_fn), and the jitdump's tables
 * (unwind_jit_table_fn; only when a jitdump was mapped: jit.ndumps). */
bool ingest_jit_read_code(void *arg, uint64_t addr, uint8_t *buf, size_t len);
const struct utable *ingest_jit_table(void *arg, uint64_t pc);
/* Mapping m of pid was added: JIT symbol files to read while they exist. */
void ingest_jit_mapped(struct ingest *g, uint32_t pid, const struct state_mapping *m);
/* pid mapped the jitdump at path (its marker mmap). */
void ingest_jit_dump_mapped(struct ingest_jit *j, uint32_t pid, const char *path);
/* A sample at time was written: poll the JIT files when due. */
void ingest_jit_sampled(struct ingest *g, uint64_t time);
/* The next file: the code copies of the mappings kept (renumbered), the
 * files and jitdumps of the processes kept. */
void ingest_jit_carry(struct ingest_jit *j, const struct ingest_keep *k);

/* ---- ustack.c: the user stack, its unwinding and what lies beyond its copy ---- */

void ingest_ustack_init(struct ingest_ustack *u);
void ingest_ustack_release(struct ingest_ustack *u);
/* Unwind the user part of s from its registers and stack copy. Replaces
 * uframes[0..*nu); returns false when the sample has no user registers.
 * switch_out: s is a switch-out, whose stack can be read on (*extended:
 * it was). */
bool ingest_unwind_user(struct ingest *g, const struct perf_sample *s, size_t *nu, struct rec_sample *out,
			bool switch_out, bool *extended);
/* The next file: the tails of the threads recover still names (tid ->
 * index in recover.tasks), their counts zeroed. */
void ingest_ustack_carry(struct ingest_ustack *u, const struct hmap *tids);
/* Thread tid exited: the slots asked of the in-kernel reader for it are
 * forgotten (the reader forgets them too). */
void ingest_ustack_exit(struct ingest *g, uint32_t tid);

/* ---- goproc.c: Go programs told to the in-kernel reader ---- */

/* Mapping m of pid was added: the first of an image, when it is an
 * aarch64 Go program, is told to the reader (g->moment->go). */
void ingest_go_mapped(struct ingest *g, uint32_t pid, const struct state_mapping *m);
/* pid exec'd (or exited): looked at again at its next mapping. */
void ingest_go_exec(struct ingest *g, uint32_t pid);

/* ---- python.c: Python frames ---- */

/* The next file: the interpreters of the processes kept (or, past a cap
 * of names, a reader anew); every frame named again in its data. */
void ingest_python_carry(struct ingest *g, const struct ingest_keep *k);

void ingest_python_release(struct ingest_python *py);
/* Mapping m of pid was added: an interpreter is told to the in-kernel
 * reader (g->moment) as soon as it is mapped. */
void ingest_python_mapped(struct ingest *g, uint32_t pid, const struct state_mapping *m);
/* pid exec'd (or exited): it is no interpreter the reader knows until
 * found again. */
void ingest_python_exec(struct ingest *g, uint32_t pid);
/* Put the Python frames each _PyEval_EvalFrameDefault frame of the
 * sample's user stack (uframes[0..nu), leaf first) was running above it;
 * sets ukind and returns the new count. */
size_t ingest_expand_python(struct ingest *g, const struct perf_sample *s, size_t nu, bool unwound,
			    struct rec_sample *rs);

/* ingest.c: a MAPPING record of the state's mapping m (its id and pid)
 * at time: a seeded one, and every live one again in each new file. */
void ingest_put_state_mapping(struct ingest *g, const struct state_mapping *m, uint64_t time);

#endif
