/* demangle_cpp.cpp - a hot member function of a class template in a
 * namespace, for the demangler: the symbol is
 * _ZNK6shapes4GridIlE11hot_cpp_sumEi, shown as
 * shapes::Grid<long>::hot_cpp_sum(int) const.
 * Expected stacks: main;shapes::Grid<long>::hot_cpp_sum(int) const (nearly all).
 * Build: g++ -O2 -g -o demangle_cpp demangle_cpp.cpp (tests/e2e/demangle.sh)
 */
#include <chrono>
#include <cstdio>
#include <vector>
namespace shapes {
template <typename T> struct Grid {
	std::vector<T> cells;
	__attribute__((noinline)) T hot_cpp_sum(int rounds) const {
		T s = 0;
		for (int r = 0; r < rounds; r++)
			for (const T &c : cells) { s = s * 3 + c; __asm__ volatile("" : "+r"(s)); }
		return s;
	}
};
}
int main() {
	shapes::Grid<long> g{std::vector<long>(1000, 7)};
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
	long t = 0;
	while (std::chrono::steady_clock::now() < end) t += g.hot_cpp_sum(100);
	std::printf("%ld\n", t & 1);
}
