/* python.c - Python frames into a sample's stack (state: struct
 * ingest_python; the interpreter is read by pyframes.c).
 */
#include "ingest/ingest-private.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

void ingest_enable_python(struct ingest *g)
{
	if (!g->py.reader) {
		g->py.reader = pyframes_new();
		g->py.x = xmalloc(sizeof(*g->py.x));
	}
}

/* Put the Python frames each _PyEval_EvalFrameDefault frame of the
 * sample's user stack (uframes[0..nu), leaf first) was running above it,
 * read from the live interpreter (pyframes.h); sets ukind and returns the
 * new count. A sample whose chain cannot be read or does not validate
 * keeps its frames and is marked. */
size_t ingest_expand_python(struct ingest *g, const struct perf_sample *s, size_t nu, bool unwound,
			    struct rec_sample *rs)
{
	bool *ra = g->py.ra;
	uint64_t *pcs = g->py.pcs;
	struct pyf_expansion *x = g->py.x;
	struct pyf_sample seen;
	enum pyf_status st;
	size_t i, k, n = 0, ev = 0;

	g->ukind_on = false;
	if (!g->py.reader || !nu)
		return nu;
	if (SAMPLE_M_JIT(rs->method) & (UNWIND_JIT_TRAMPOLINE | UNWIND_JIT_CFI)) {
		/* through CPython's perf trampolines (-X perf, -X perf_jit): the
		 * process names its Python frames itself */
		pyframes_has_perf_frames(g->py.reader, s->pid);
		return nu;
	}
	for (i = 0; i < nu; i++)
		ra[i] = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
	seen.regs = s->regs_abi ? s->regs : NULL;
	seen.nregs = s->regs_abi && s->regs ? (size_t)__builtin_popcountll(s->regs_mask) : 0;
	seen.stack = s->stack;
	seen.stack_size = s->stack ? (size_t)s->stack_dyn_size : 0;
	st = pyframes_expand(g->py.reader, &g->st, s->pid, s->tid, g->uframes, ra, nu, &seen, x);
	if (st == PYF_NONE)
		return nu;
	if (st != PYF_EXPANDED || nu + x->nids > INGEST_MAX_FRAMES) {
		rs->method |= SAMPLE_M_PYTHON_FAILED;
		if (st == PYF_NO_ACCESS)
			g->py.noaccess++;
		else if (st == PYF_STALE)
			g->py.stale++;
		else
			g->py.failed++;
		return nu;
	}
	memcpy(pcs, g->uframes, nu * sizeof(*pcs));
	for (i = 0; i < nu; i++) {
		if (x->is_eval_pos[i] && ev < x->neval) {
			/* the Python frames it runs are its callees: leafward */
			for (k = 0; k < x->count[ev]; k++) {
				g->uframes[n] = PYFRAME_ADDR_MIN - 1 + x->ids[x->first[ev] + k];
				g->ukind[n++] = UKIND_PY;
			}
			ev++;
		}
		g->uframes[n] = pcs[i];
		g->ukind[n++] = ra[i] ? UKIND_RA : 0;
	}
	g->ukind_on = true;
	rs->method |= SAMPLE_M_PYTHON;
	g->py.expanded++;
	return n;
}

void ingest_python_release(struct ingest_python *py)
{
	pyframes_free(py->reader);
	free(py->x);
}
