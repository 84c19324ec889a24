#!/bin/sh
# perfdata.sh (arm64 host side) - the perf.data files perf recorded in the
# arm64 guest (tests/arm64/perfdata.sh left them in build/arm64/out/, with
# perf's build-id cache and stax's answer in the guest), read here on
# x86-64: the header's machine decides the unwinding rules, not this
# one's, and the binaries come from perf's build-id cache
# (PERF_BUILDID_DIR) where they are not at their paths. The user stacks
# (kernel frames left out: this kernel's symbols are not the guest's)
# must be the guest's, sample for sample.
. "$(dirname "$0")/../e2e/lib.sh"
require_stax
OUT=$ROOT/build/arm64/out
export PERF_BUILDID_DIR="$OUT/debug"

for n in cg-dwarf cg-g; do
	if [ ! -s "$OUT/$n.data" ] || [ ! -s "$OUT/$n.guest.folded" ]; then
		fail "$n: read on $(uname -m)" "$OUT/$n.data or its guest answer is missing (make check-arm64 runs the guest first)"
		continue
	fi
	if ! stax flame -i "$OUT/$n.data" --folded >"$T/$n.folded" 2>"$T/$n.err"; then
		fail "$n: read on $(uname -m)" "$(first_line "$T/$n.err")"
		continue
	fi
	user_stacks "$OUT/$n.guest.folded" >"$T/$n.g"
	user_stacks "$T/$n.folded" >"$T/$n.h"
	# samples whose user stack is the same in both
	same=$(awk 'NR == FNR { g[$1] = $2; t += $2; next } ($1 in g) { m += ($2 < g[$1] ? $2 : g[$1]) }
		    END { printf "%d %d\n", m, t }' "$T/$n.g" "$T/$n.h")
	m=${same% *} t=${same#* }
	p=$(pct "$m" "$t")
	top_g=$(sort -k2 -nr "$T/$n.g" | head -n 1 | cut -d' ' -f1)
	top_h=$(sort -k2 -nr "$T/$n.h" | head -n 1 | cut -d' ' -f1)
	if [ "$t" -ge 100 ] && between "$p" 99 100 && [ "$top_g" = "$top_h" ]; then
		ok "$n: read on $(uname -m): $p% of $t samples have the guest's user stack; top $top_h"
	else
		fail "$n: read on $(uname -m): the guest's user stacks" "$p% of $t the same; top here '$top_h', in the guest '$top_g'; $(first_line "$T/$n.err")"
	fi
done
done_testing
