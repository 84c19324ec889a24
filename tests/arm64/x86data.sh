#!/bin/sh
# x86data.sh (arm64 guest) - a perf.data recorded by perf on x86-64 (the
# host of make check-arm64: scripts/check-arm64.sh records it before
# booting the guest, into build/arm64/out/ with perf's build-id cache and
# the host stax's answer), read here on aarch64: the header's machine
# decides the unwinding rules, the binaries come from the build-id cache.
# The user stacks (kernel frames left out) must be the host's, sample for
# sample.
. "$(dirname "$0")/lib.sh"
OUT=$ROOT/build/arm64/out
export PERF_BUILDID_DIR="$OUT/x86-debug"
n=x86-cg-dwarf
if [ ! -s "$OUT/$n.data" ] || [ ! -s "$OUT/$n.host.folded" ]; then
	fail "$n: read on aarch64" "$OUT/$n.data or the host's answer is missing (scripts/check-arm64.sh records it first)"
	done_testing
fi
if ! stax flame -i "$OUT/$n.data" --folded >"$T/$n.folded" 2>"$T/$n.err"; then
	fail "$n: read on aarch64" "$(first_line "$T/$n.err")"
	done_testing
fi
user_stacks "$OUT/$n.host.folded" >"$T/$n.h"
user_stacks "$T/$n.folded" >"$T/$n.g"
same=$(awk 'NR == FNR { h[$1] = $2; t += $2; next } ($1 in h) { m += ($2 < h[$1] ? $2 : h[$1]) }
	    END { printf "%d %d\n", m, t }' "$T/$n.h" "$T/$n.g")
m=${same% *} t=${same#* }
p=$(pct "$m" "$t")
top_h=$(sort -k2 -nr "$T/$n.h" | head -n 1 | cut -d' ' -f1)
top_g=$(sort -k2 -nr "$T/$n.g" | head -n 1 | cut -d' ' -f1)
if [ "$t" -ge 100 ] && between "$p" 99 100 && [ "$top_g" = "$top_h" ]; then
	ok "$n: x86-64 perf --call-graph dwarf read on aarch64: $p% of $t samples have the host's user stack; top $top_g"
else
	fail "$n: x86-64 perf --call-graph dwarf read on aarch64: the host's user stacks" "$p% of $t the same; top here '$top_g', on the host '$top_h'; $(first_line "$T/$n.err")"
fi
done_testing
