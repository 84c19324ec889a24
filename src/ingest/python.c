/* python.c - Python frames into a sample's stack (state: struct
 * ingest_python; the interpreter is read by pyframes.c).
 */
#include "ingest/ingest-private.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

static bool keep_pid(void *arg, uint32_t pid)
{
	return ingest_keeps(arg, pid);
}

void ingest_enable_python(struct ingest *g)
{
	if (!g->py.reader) {
		g->py.reader = pyframes_new();
		g->py.x = xmalloc(sizeof(*g->py.x));
		hmap_init(&g->py.registered);
	}
}

/* Write the REC_SYMBOL (and REC_SYMBOL_SRC: file and line) of every
 * Python frame found since the last call: into the data, so that a
 * recording read while it grows (stax live, stax top on the file) names
 * them. The symbols chunk has them again at the end. */
static void put_new_frames(struct ingest *g)
{
	size_t n = pyframes_count(g->py.reader);
	while (g->py.syms_written < n) {
		uint32_t id = (uint32_t)++g->py.syms_written, line;
		const char *name, *file;
		struct rec_symbol rs;
		if (!pyframes_frame(g->py.reader, id, &name, &file, &line))
			continue;
		memset(&rs, 0, sizeof(rs));
		rs.addr = PYFRAME_ADDR_MIN - 1 + id;
		rs.flags = NODE_USER | SYMBOL_F_KNOWN;
		store_put_symbol(g->w, &rs, name, PYFRAME_MODULE);
		if (*file) {
			struct rec_symbol_src src = { rs.addr, 0, rs.flags, line, 0 };
			store_put_symbol_src(g->w, &src, file, NULL);
		}
	}
}

/* Tell the in-kernel reader that process pid runs CPython, once per
 * image (exec), as soon as its interpreter is known. */
static void python_register(struct ingest *g, uint32_t pid)
{
	struct state_proc *sp = state_proc(&g->st, pid);
	struct pyf_layout l;
	uint64_t code_type;
	uint32_t image;

	if (!g->moment || !pid || (hmap_get(&g->py.registered, pid, &image) && image == sp->image + 1))
		return;
	if (!pyframes_interpreter(g->py.reader, &g->st, pid, &l, &code_type))
		return;
	hmap_put(&g->py.registered, pid, sp->image + 1);
	g->moment->python(g->moment->arg, pid, &l, code_type);
}

void ingest_python_mapped(struct ingest *g, uint32_t pid, const struct state_mapping *m)
{
	if (g->py.reader && g->moment && pyframes_is_interpreter_path(m->path))
		python_register(g, pid);
}

void ingest_python_exec(struct ingest *g, uint32_t pid)
{
	uint32_t image;
	if (g->moment && hmap_get(&g->py.registered, pid, &image) && image) {
		hmap_put(&g->py.registered, pid, 0);
		g->moment->python(g->moment->arg, pid, NULL, 0);
	}
}

/* The expansion of the sample at hand from the chain the in-kernel reader
 * read at the sample (g->mo), when it read one: PYF_NONE when not. */
static enum pyf_status from_moment(struct ingest *g, const struct perf_sample *s, size_t nu)
{
	enum pyf_status st;
	if (!g->have_mo || !g->mo.npy || !(g->mo.flags & MOMENT_F_PY_DONE) ||
	    (g->mo.flags & (MOMENT_F_PY_FAULT | MOMENT_F_PY_CUT)))
		return PYF_NONE;
	st = pyframes_expand_moment(g->py.reader, &g->st, s->pid, g->uframes, g->py.ra, nu, g->mo.py, g->mo.npy,
				    g->py.x);
	g->py.moment_unfit += st == PYF_FAILED;
	g->py.moment_gone += st == PYF_EXPANDED && g->py.x->gone;
	return st;
}

/* Put the Python frames each _PyEval_EvalFrameDefault frame of the
 * sample's user stack (uframes[0..nu), leaf first) was running above it:
 * as the in-kernel reader read them at the sample, else read now from
 * the live interpreter (pyframes.h), then late (UKIND_LATE, and the
 * sample SAMPLE_Q_LATE); sets ukind and returns the new count. A sample
 * whose chain cannot be read or does not validate keeps its frames and
 * is marked. */
size_t ingest_expand_python(struct ingest *g, const struct perf_sample *s, size_t nu, bool unwound,
			    struct rec_sample *rs)
{
	bool *ra = g->py.ra, *late = g->py.ulate;
	uint64_t *pcs = g->py.pcs;
	struct pyf_expansion *x = g->py.x;
	struct pyf_sample seen;
	enum pyf_status st;
	size_t i, k, n = 0, ev = 0;
	bool later = false;

	g->ukind_on = false;
	if (!g->py.reader || !nu)
		return nu;
	if (SAMPLE_M_JIT(rs->method) & (UNWIND_JIT_TRAMPOLINE | UNWIND_JIT_CFI)) {
		/* through CPython's perf trampolines (-X perf, -X perf_jit): the
		 * process names its Python frames itself */
		pyframes_has_perf_frames(g->py.reader, s->pid);
		return nu;
	}
	for (i = 0; i < nu; i++) {
		ra[i] = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
		late[i] = unwound && (g->frames[i].flags & UNWIND_F_LATE);
	}
	st = from_moment(g, s, nu);
	if (st != PYF_EXPANDED) {
		seen.regs = s->regs_abi ? s->regs : NULL;
		seen.nregs = s->regs_abi && s->regs ? (size_t)__builtin_popcountll(s->regs_mask) : 0;
		seen.stack = s->stack;
		seen.stack_size = s->stack ? (size_t)s->stack_dyn_size : 0;
		st = pyframes_expand(g->py.reader, &g->st, s->pid, s->tid, g->uframes, ra, nu, &seen, x);
		later = true;
	}
	if (st == PYF_NONE)
		return nu;
	python_register(g, s->pid);
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
				g->ukind[n++] = UKIND_PY | (later ? UKIND_LATE : 0);
			}
			ev++;
		}
		g->uframes[n] = pcs[i];
		g->ukind[n++] = (ra[i] ? UKIND_RA : 0) | (late[i] ? UKIND_LATE : 0);
	}
	g->ukind_on = true;
	rs->method |= SAMPLE_M_PYTHON;
	if (later)
		rs->quality |= SAMPLE_Q_LATE;
	g->py.expanded++;
	g->py.moment += !later;
	g->py.late += later;
	put_new_frames(g);
	return n;
}

void ingest_python_release(struct ingest_python *py)
{
	if (py->reader)
		hmap_release(&py->registered);
	pyframes_free(py->reader);
	free(py->x);
}

/* Python function names kept from one file to the next at most: past
 * it the reader starts anew (the names of waits open across the file
 * boundary then show as unknown in the next file). */
#define PY_NAMES_CAP 65536

void ingest_python_carry(struct ingest *g, const struct ingest_keep *k)
{
	struct ingest_python *py = &g->py;
	struct hmap old;
	size_t i;

	if (!py->reader)
		return;
	py->expanded = py->failed = py->noaccess = py->stale = 0;
	py->moment = py->late = py->moment_unfit = py->moment_gone = 0;
	if (pyframes_count(py->reader) > PY_NAMES_CAP) {
		pyframes_free(py->reader);
		py->reader = pyframes_new();
		hmap_release(&py->registered);
		hmap_init(&py->registered);
	} else {
		pyframes_keep(py->reader, keep_pid, (void *)k);
		old = py->registered;
		hmap_init(&py->registered);
		for (i = 0; i < old.cap; i++)
			if (old.slots[i].used && ingest_keeps(k, (uint32_t)old.slots[i].key))
				hmap_put(&py->registered, old.slots[i].key, old.slots[i].val);
		hmap_release(&old);
	}
	/* the next file's data names every frame again as it is used */
	py->syms_written = 0;
}
