/* goproc.c - Go programs told to the in-kernel reader (state: struct
 * ingest_go): on aarch64 it reads, at a sample of a Go thread on its g0
 * stack, the goroutine the thread runs for (unwind.h, struct unwind_go),
 * which needs the runtime's layout (golayout.c).
 */
#include "ingest/golayout.h"
#include "ingest/ingest-private.h"

#include <string.h>

void ingest_go_mapped(struct ingest *g, uint32_t pid, const struct state_mapping *m)
{
	struct state_proc *sp;
	struct moment_goproc gp;
	uint32_t image;

	/* only aarch64's reader reads goroutines (x86-64's switch rule
	 * follows rbp, which Go leaves on the goroutine's stack) */
	if (!g->moment || !g->moment->go || !pid || unwind_arch_host() != UNWIND_ARCH_AARCH64 ||
	    !m->path || m->path[0] != '/' || m->pgoff)
		return;
	sp = state_proc(&g->st, pid);
	/* the first file mapped by an image is its program (an exec maps it
	 * first, /proc/PID/maps lists it first): one look per image */
	if (hmap_get(&g->go.asked, pid, &image) && image == sp->image + 1)
		return;
	hmap_put(&g->go.asked, pid, sp->image + 1);
	if (!golayout_read(m->path, m->build_id, m->build_id_size, &gp))
		return;
	g->go.told++;
	g->moment->go(g->moment->arg, pid, &gp);
}

void ingest_go_exec(struct ingest *g, uint32_t pid)
{
	uint32_t image;
	if (g->moment && g->moment->go && hmap_get(&g->go.asked, pid, &image) && image) {
		hmap_put(&g->go.asked, pid, 0);
		g->moment->go(g->moment->arg, pid, NULL);
	}
}
