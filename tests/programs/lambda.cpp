/* lambda.cpp - two lambdas inlined into one function template, for the
 * names of inline frames that have no linkage name (GCC gives a lambda's
 * operator() none): each must be its own frame, qualified by its scope,
 *   main::{lambda:LINE}::operator()
 * with LINE the lambda's line below, not a bare "operator()" that would
 * merge them.
 * Expected stacks (root first; the lambda frames are inlined):
 *   main;run_rounds<...>;main::{lambda:33}::operator()   ~75% (3 units a round)
 *   main;run_rounds<...>;main::{lambda:34}::operator()   ~25% (1 unit a round)
 * Build: g++ -O2 -g -o lambda lambda.cpp (tests/e2e/demangle.sh)
 */
#include <chrono>
#include <cstdio>

template <typename F> __attribute__((noinline)) unsigned long run_rounds(F f, int units)
{
	unsigned long s = 0;
	for (int u = 0; u < units; u++)
		s += f(u);
	return s;
}

static unsigned long burn(unsigned long x, int n)
{
	for (int i = 0; i < n; i++) { x = x * 6364136223846793005ul + 1; __asm__ volatile("" : "+r"(x)); }
	return x;
}

int main()
{
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
	unsigned long t = 0;
	auto heavy = [](int u) { return burn((unsigned long)u, 300000); };
	auto light = [](int u) { return burn((unsigned long)u + 7, 300000); };
	while (std::chrono::steady_clock::now() < end) {
		t += run_rounds(heavy, 3);
		t += run_rounds(light, 1);
	}
	std::printf("%lu\n", t & 1);
}
