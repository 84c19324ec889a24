/* late.c - leaving out the frames read after their sample (--no-late-frames). */
#include "profile/profile.h"
#include "lib/util.h"

#include <stdlib.h>

static bool kept(const struct prof_node *nd)
{
	return (nd->flags & 0xff) == NODE_ROOT || !(nd->flags & NODE_F_LATE);
}

/* The nearest node at or above id that is kept (0 for 0), memoized in
 * up[] (0 = not computed yet). */
static uint32_t kept_up(const struct profile *p, uint32_t *up, uint32_t id)
{
	uint32_t walk = id, found = 0, depth = 0;

	while (walk && !up[walk]) {
		const struct prof_node *nd = profile_node(p, walk);
		if (!nd || kept(nd)) {
			found = nd ? walk : 0;
			break;
		}
		if (++depth > p->nnodes) /* a cycle in a damaged file */
			break;
		walk = nd->parent;
	}
	if (walk && up[walk])
		found = up[walk];
	for (depth = 0; id && id != walk && !up[id] && depth <= p->nnodes; depth++) {
		up[id] = found;
		id = profile_node(p, id)->parent;
	}
	if (walk && !up[walk])
		up[walk] = found;
	return found;
}

void profile_drop_late(struct profile *p)
{
	uint32_t *up = xcalloc(p->nnodes + 1, sizeof(*up));
	uint32_t *par = xcalloc(p->nnodes + 1, sizeof(*par));
	size_t i;
	bool any = false;

	for (i = 0; i < p->nnodes && !any; i++)
		any = !kept(&p->nodes[i]);
	if (!any)
		goto out;
	/* a node's caller becomes its nearest caller that is not late */
	for (i = 1; i <= p->nnodes; i++)
		par[i] = p->nodes[i - 1].parent ? kept_up(p, up, p->nodes[i - 1].parent) : 0;
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
		p->samples[i].stack = kept_up(p, up, p->samples[i].stack);
	for (i = 0; i < p->noffcpu; i++)
		p->offcpu[i].stack = kept_up(p, up, p->offcpu[i].stack);
	for (i = 0; i < p->nwakers; i++)
		p->wakers[i].w.stack = kept_up(p, up, p->wakers[i].w.stack);
out:
	free(up);
	free(par);
}
