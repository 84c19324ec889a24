#!/bin/sh
# demangle.sh - C++ and Rust (legacy and v0) names are demangled, and
# --no-demangle shows them as the binary has them. Fixtures built here
# from tests/programs/demangle_cpp.cpp and demangle_rust.rs.
. "$(dirname "$0")/lib.sh"
require_stax

# check LABEL BIN DEMANGLED MANGLED_PREFIX
check() {
	stax record -q -o "$T/$1.data" -- "$2" >/dev/null 2>"$T/$1.err" || { fail "$1: record" "$(first_line "$T/$1.err")"; return; }
	stax top --sort total -n 0 -i "$T/$1.data" >"$T/$1.top" 2>&1
	stax top --sort total -n 0 --no-demangle -i "$T/$1.data" >"$T/$1.raw" 2>&1
	tot=$(grep -F "  $3 " "$T/$1.top" | awk '{print $3}' | head -n 1)
	if [ -n "$tot" ] && between "${tot%\%}" 80 100; then
		ok "$1: $3 on ${tot} of the stacks"
	else
		fail "$1: demangled name" "no '$3' with most samples: $(sed -n 2p "$T/$1.top")"
	fi
	if grep -q "  $4" "$T/$1.raw" && ! grep -qF "  $3 " "$T/$1.raw"; then
		ok "$1: --no-demangle shows the symbol as the binary has it ($4...)"
	else
		fail "$1: --no-demangle" "no '$4...' row: $(sed -n 2p "$T/$1.raw")"
	fi
}

if g++ -O2 -g -o "$T/cpp" "$ROOT/tests/programs/demangle_cpp.cpp" 2>"$T/cc.err"; then
	check "C++" "$T/cpp" "shapes::Grid<long>::hot_cpp_sum(int) const" "_ZNK6shapes4GridIlE11hot_cpp_sumEi"
else
	skip "C++" "g++ cannot build the fixture: $(first_line "$T/cc.err")"
fi
# inlined lambdas: GCC gives their operator() no linkage name; each is
# named by its scope and line (main::{lambda:33} and :34, 3:1 by work)
if g++ -O2 -g -o "$T/lambda" "$ROOT/tests/programs/lambda.cpp" 2>"$T/cc.err"; then
	stax record -q -o "$T/lambda.data" -- "$T/lambda" >/dev/null 2>"$T/lambda.err"
	stax flame --folded -i "$T/lambda.data" >"$T/lambda.folded" 2>>"$T/lambda.err"
	heavy=$(share "$T/lambda.folded" ';main;[^;]*run_rounds[^;]*;main::[{]lambda:33[}]::operator[(][)];burn')
	light=$(share "$T/lambda.folded" ';main;[^;]*run_rounds[^;]*;main::[{]lambda:34[}]::operator[(][)];burn')
	if between "$heavy" 65 85 && between "$light" 17 33; then
		ok "C++ lambdas inlined: main::{lambda:33}::operator() $heavy%, main::{lambda:34}::operator() $light% (3:1)"
	else
		fail "C++ lambdas inlined, each its own qualified frame" "{lambda:33} $heavy%, {lambda:34} $light% (want ~75/25): $(grep -o '[^;]*operator()[^;]*' "$T/lambda.folded" | sort | uniq -c | head -n 3 | tr '\n' '|')"
	fi
else
	skip "C++ lambdas" "g++ cannot build the fixture: $(first_line "$T/cc.err")"
fi
RUSTC=$(command -v rustc || { [ -x "$HOME/.cargo/bin/rustc" ] && echo "$HOME/.cargo/bin/rustc"; })
if [ -z "$RUSTC" ]; then
	skip "Rust" "rustc is not installed"
	done_testing
fi
if "$RUSTC" -O -g -o "$T/rs_legacy" "$ROOT/tests/programs/demangle_rust.rs" 2>"$T/rs.err"; then
	check "Rust legacy" "$T/rs_legacy" "demangle_rust::work::hot_rust_loop" "_ZN13demangle_rust4work13hot_rust_loop17h"
else
	fail "Rust legacy: build" "$(first_line "$T/rs.err")"
fi
if "$RUSTC" -O -g -C symbol-mangling-version=v0 -o "$T/rs_v0" "$ROOT/tests/programs/demangle_rust.rs" 2>"$T/rs.err"; then
	check "Rust v0" "$T/rs_v0" "demangle_rust::work::hot_rust_loop" "_RNvNtCs"
else
	skip "Rust v0" "this rustc cannot build with -C symbol-mangling-version=v0: $(first_line "$T/rs.err")"
fi
done_testing
