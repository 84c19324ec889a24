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
 *
 * aarch64 is the same with x29 for rbp (the kernel's walk is the same
 * and strips return addresses of their pointer-authentication
 * signature), but a frame record is not at a fixed place from the CFA
 * (gcc puts it at the bottom of the frame, clang at the top): the frame
 * of record F is the one whose return address is read from F+8.
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

/* Replay the rbp walk (ra_mask: the machine's return address bits). Never
 * fails: s->valid says whether splicing is possible (rbp known, the walk
 * consistent with the chain, entries left). */
void splice_prepare(const struct unwind_input *in, uint64_t ra_mask, struct splice *s);

/* True when a frame whose CFA is cfa, and whose reads fell beyond the
 * copy, is the frame the chain continues from (x86-64). */
static inline bool splice_matches(const struct splice *s, uint64_t cfa)
{
	return s->valid && cfa == s->frame + 16;
}

/* The same for a frame whose return address was to be read from ra_at,
 * beyond the copy (aarch64: the walk's first read of a frame is its
 * return address, so the address of the read that fell beyond the copy
 * is that; a frame's saved x29 is below its return address). */
static inline bool splice_matches_ra(const struct splice *s, uint64_t ra_at)
{
	return s->valid && ra_at && ra_at == s->frame + 8;
}

#endif
