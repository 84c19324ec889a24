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

void profile_python_only(struct profile *p)
{
	size_t i;

	if (!profile_keep_frames(p, node_is_python))
		return;
	/* a Python frame found by CFI in a jitdump may look inlined into a
	 * C frame that is gone now */
	for (i = 0; i < p->nnodes; i++)
		if (node_is_python(p, &p->nodes[i]))
			p->nodes[i].flags &= ~NODE_F_INLINE;
}
