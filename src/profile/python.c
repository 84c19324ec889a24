/* python.c - Python frames in a profile: CPython's perf map names
 * (`python -X perf`, `-X perf_jit`) and the py-spy-like view that keeps
 * only them (--python-only). */
#include "profile/profile.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

bool profile_func_is_python(const struct prof_func *fn)
{
	/* CPython names each code object's trampoline "py::QUALNAME:FILE" in
	 * perf-PID.map or jit-PID.dump, and the recorder names the frames it
	 * reads from the interpreter so too (module "[python]"); a C++
	 * namespace "py" in a binary is not a Python frame, so the module
	 * must be one of those. */
	return fn && fn->known && !fn->kernel && !strncmp(fn->name, "py::", 4) && fn->module &&
	       (!strncmp(fn->module, "perf-", 5) || !strncmp(fn->module, "jit-", 4) ||
		!strcmp(fn->module, PYFRAME_MODULE));
}

static bool node_is_python(const struct profile *p, const struct prof_node *nd)
{
	return (nd->flags & 0xff) != NODE_ROOT && profile_func_is_python(profile_func(p, nd->func));
}

/* Nearest node at or above id that is Python or a root (0 for 0), with
 * the answers memoized in up[] (0 = not computed yet). */
static uint32_t python_up(const struct profile *p, uint32_t *up, uint32_t id)
{
	uint32_t walk = id, found = 0, depth = 0;

	while (walk && !up[walk]) {
		const struct prof_node *nd = profile_node(p, walk);
		if (!nd || (nd->flags & 0xff) == NODE_ROOT || node_is_python(p, nd)) {
			found = nd ? walk : 0;
			break;
		}
		if (++depth > p->nnodes) /* a cycle in a damaged file */
			break;
		walk = nd->parent;
	}
	if (walk && up[walk])
		found = up[walk];
	/* fill the path walked with the answer */
	for (depth = 0; id && id != walk && !up[id] && depth <= p->nnodes; depth++) {
		up[id] = found;
		id = profile_node(p, id)->parent;
	}
	if (walk && !up[walk])
		up[walk] = found;
	return found;
}

void profile_python_only(struct profile *p)
{
	uint32_t *up = xcalloc(p->nnodes + 1, sizeof(*up));
	uint32_t *par = xcalloc(p->nnodes + 1, sizeof(*par));
	size_t i;

	for (i = 1; i <= p->nnodes; i++)
		python_up(p, up, (uint32_t)i);
	/* a Python frame's caller becomes the nearest Python frame above */
	for (i = 1; i <= p->nnodes; i++) {
		const struct prof_node *nd = &p->nodes[i - 1];
		par[i] = (nd->flags & 0xff) == NODE_ROOT || !node_is_python(p, nd) ? nd->parent :
			 python_up(p, up, nd->parent);
	}
	for (i = 1; i <= p->nnodes; i++) {
		p->nodes[i - 1].parent = par[i];
		/* a Python frame found by CFI in a jitdump may look inlined
		 * into a C frame that is gone now */
		if (node_is_python(p, &p->nodes[i - 1]))
			p->nodes[i - 1].flags &= ~NODE_F_INLINE;
	}
	for (i = 1; i <= p->nnodes; i++) {
		struct prof_node *nd = &p->nodes[i - 1];
		uint32_t d = 0, a = nd->parent;
		while (a && d <= p->nnodes) {
			d++;
			a = p->nodes[a - 1].parent;
		}
		nd->depth = d;
	}
	for (i = 0; i < p->nsamples; i++)
		p->samples[i].stack = python_up(p, up, p->samples[i].stack);
	for (i = 0; i < p->noffcpu; i++)
		p->offcpu[i].stack = python_up(p, up, p->offcpu[i].stack);
	free(up);
	free(par);
}
