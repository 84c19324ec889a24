/* unwind_lazy_lib.c - 400 functions that call each other through the
 * PLT, for unwind_lazy.c: built -fPIC without -z now, every first call of
 * a PLT slot goes through ld.so's lazy-binding trampoline
 * (_dl_runtime_resolve_xsavec), whose CFI defines the CFA by rbx.
 * lz_all calls lz_f0..lz_f399 (through the PLT), each lz_fN calls lz_gN
 * (through the PLT: both are global with default visibility, so calls
 * between them may be interposed).
 */
#define NOINL __attribute__((noinline))
#define G(n) NOINL int lz_g##n(int x) { return x * (n + 1); }
#define F(n) NOINL int lz_f##n(int x) { return lz_g##n(x) + 1; }
#define C(n) s += lz_f##n(x);
#define X10(M, d) M(d##0) M(d##1) M(d##2) M(d##3) M(d##4) M(d##5) M(d##6) M(d##7) M(d##8) M(d##9)
#define X100(M, d) X10(M, d##0) X10(M, d##1) X10(M, d##2) X10(M, d##3) X10(M, d##4) \
	X10(M, d##5) X10(M, d##6) X10(M, d##7) X10(M, d##8) X10(M, d##9)
#define X400(M) X10(M, ) X10(M, 1) X10(M, 2) X10(M, 3) X10(M, 4) X10(M, 5) X10(M, 6) \
	X10(M, 7) X10(M, 8) X10(M, 9) X100(M, 1) X100(M, 2) X100(M, 3)

X400(G)
X400(F)

int lz_all(int x)
{
	int s = 0;
	X400(C)
	return s;
}
