/* common.h - shared bits of the test programs.
 *
 * NOINLINE keeps a function a real frame: gcc's noipa also forbids cloning
 * (no "leaf_b.constprop.0" symbols) and interprocedural tricks; clang has no
 * noipa, but does not clone non-static functions at -O2.
 *
 * burn(n) is the unit of work: n dependent multiply-adds that the compiler
 * cannot fold, vectorize or remove (the empty asm makes x opaque). Every
 * test program spends its time in loops of this shape written inline in the
 * function that should own the samples, so the sampled leaf is known.
 */
#ifndef TESTPROG_COMMON_H
#define TESTPROG_COMMON_H

#include <stdlib.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noipa))
#endif

/* A use after a call, so "return f(x);" cannot become a tail call (jmp). */
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

#define BURN_LOOP(x, n) do { \
	unsigned long burn_i_; \
	for (burn_i_ = 0; burn_i_ < (n); burn_i_++) { \
		(x) = (x) * 6364136223846793005UL + 1442695040888963407UL; \
		__asm__ volatile("" : "+r"(x)); \
	} \
} while (0)

/* argv[i] as a positive scale factor, or def. */
static inline double arg_scale(int argc, char **argv, int i, double def)
{
	double s;
	if (argc <= i)
		return def;
	s = strtod(argv[i], NULL);
	return s > 0 ? s : def;
}

#endif
