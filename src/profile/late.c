/* late.c - leaving out frames: those read after their sample
 * (--no-late-frames), and any a predicate refuses (python.c's
 * --python-only). */
#include "profile/profile.h"
#include "lib/util.h"

#include <stdlib.h>

static bool not_late(const struct profile *p, const struct prof_node *nd)
{
	(void)p;
	return !(nd->flags & NODE_F_LATE);
}

/* The nearest node at or above id that is kept (a root, or keep() says
 * so; 0 for 0), memoized in up[] (0 = not computed yet). */
static uint32_t kept_up(const struct profile *p, profile_keep_fn keep, uint32_t *up, uint32_t id)
{
	uint32_t walk = id, found = 0, depth = 0;

	while (walk && !up[walk]) {
		const struct prof_node *nd = profile_node(p, walk);
		if (!nd || (nd->flags & 0xff) == NODE_ROOT || keep(p, nd)) {
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

bool profile_keep_frames(struct profile *p, profile_keep_fn keep)
{
	uint32_t *up, *par;
	size_t i;
	bool any = false;

	for (i = 0; i < p->nnodes && !any; i++)
		any = (p->nodes[i].flags & 0xff) != NODE_ROOT && !keep(p, &p->nodes[i]);
	if (!any)
		return false;
	up = xcalloc(p->nnodes + 1, sizeof(*up));
	par = xcalloc(p->nnodes + 1, sizeof(*par));
	/* a node's caller becomes its nearest caller that is kept */
	for (i = 1; i <= p->nnodes; i++)
		par[i] = p->nodes[i - 1].parent ? kept_up(p, keep, up, p->nodes[i - 1].parent) : 0;
	for (i = 1; i <= p->nnodes; i++)
		p->nodes[i - 1].parent = par[i];
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
		p->samples[i].stack = kept_up(p, keep, up, p->samples[i].stack);
	for (i = 0; i < p->noffcpu; i++)
		p->offcpu[i].stack = kept_up(p, keep, up, p->offcpu[i].stack);
	for (i = 0; i < p->nwakers; i++)
		p->wakers[i].w.stack = kept_up(p, keep, up, p->wakers[i].w.stack);
	free(up);
	free(par);
	return true;
}

void profile_drop_late(struct profile *p)
{
	profile_keep_frames(p, not_late);
}
