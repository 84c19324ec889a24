/* splice.h - continue a CFI unwind with the kernel's frame-pointer chain
 * where the stack copy ends (internal to unwind/).
 *
 * The chain holds return addresses only, and recursion repeats them, so
 * the two are aligned by frame address, never by matching addresses:
 * splice_prepare() replays the rbp walk the kernel did, inside the copy,
 * from the sampled rbp. The entries it visits lie inside the copy (the
 * CFI unwinder finds those itself); the first frame record it meets
 * outside the copy, at address F, is where the kernel's chain continues,
 * with entry `next` (= the return address stored at F+8). When the CFI
 * unwinding reaches the frame whose CFA is F+16 (its return address at
 * CFA-8 = F+8 and saved rbp at CFA-16 = F, outside the copy), the frames
 * beyond are chain[next], chain[next+1], ...
 */
#ifndef STAX_UNWIND_SPLICE_H
#define STAX_UNWIND_SPLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/unwind.h"

struct splice {
	bool valid;        /* a continuation exists */
	uint64_t frame;    /* F: first frame record not inside the copy */
	size_t next;       /* chain index that continues after F's frame */
	size_t inside;     /* chain entries (after the pc) found inside the copy */
};

/* Replay the rbp walk. Never fails: s->valid says whether splicing is
 * possible (rbp known, the walk consistent with the chain, entries left). */
void splice_prepare(const struct unwind_input *in, struct splice *s);

/* True when a frame whose CFA is cfa, and whose reads fell beyond the
 * copy, is the frame the chain continues from. */
static inline bool splice_matches(const struct splice *s, uint64_t cfa)
{
	return s->valid && cfa == s->frame + 16;
}

#endif
