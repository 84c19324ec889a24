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

/* ---- ustack.c: the user stack, its unwinding and what lies beyond its copy ---- */

void ingest_ustack_init(struct ingest_ustack *u);
void ingest_ustack_release(struct ingest_ustack *u);
/* Unwind the user part of s from its registers and stack copy. Replaces
 * uframes[0..*nu); returns false when the sample has no user registers.
 * switch_out: s is a switch-out, whose stack can be read on (*extended:
 * it was). */
bool ingest_unwind_user(struct ingest *g, const struct perf_sample *s, size_t *nu, struct rec_sample *out,
			bool switch_out, bool *extended);
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

#endif
