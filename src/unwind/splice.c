/* splice.c - align the kernel's frame-pointer chain with the stack copy. */
#include "unwind/splice.h"

#include <string.h>

/* The kernel (arch/x86/events/core.c, perf_callchain_user; on aarch64
 * arch/arm64/kernel/perf_callchain.c from x29) stores the sampled ip,
 * then for fp = rbp: the return address at fp+8, fp = *fp, until a read
 * fails or the depth limit. We redo that walk where the
 * bytes are in the copy and check every return address against the
 * chain, so a chain that does not belong to this copy is never spliced. */
void splice_prepare(const struct unwind_input *in, uint64_t ra_mask, struct splice *s)
{
	const uint64_t base = in->regs.r[UNW_RSP];
	const uint64_t end = base + in->stack_size;
	uint64_t fp, ra;
	size_t i = 1;

	memset(s, 0, sizeof(*s));
	if (!in->fp_chain || in->fp_chain_len < 2 || !in->stack ||
	    !(in->regs.valid & (1u << UNW_RBP)) || !(in->regs.valid & (1u << UNW_RSP)))
		return;
	fp = in->regs.r[UNW_RBP];
	while (i < in->fp_chain_len) {
		if (fp < base || fp > end || end - fp < 16)
			break; /* this record is outside the copy */
		memcpy(&ra, in->stack + (fp - base) + 8, 8);
		/* the kernel strips aarch64's signatures (a no-op elsewhere) */
		if ((ra & ra_mask) != in->fp_chain[i])
			return; /* not the chain of this stack: never splice */
		uint64_t next;
		memcpy(&next, in->stack + (fp - base), 8);
		i++;
		fp = next; /* loops and garbage end at the chain's length */
	}
	if (i >= in->fp_chain_len)
		return; /* the chain ended inside the copy */
	s->valid = true;
	s->frame = fp;
	s->next = i;
	s->inside = i - 1;
}
