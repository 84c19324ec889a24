#!/bin/sh
# perfdata.sh (arm64 guest) - perf.data recorded by perf on aarch64, read
# by stax here; the files stay in build/arm64/out/ with perf's build-id
# cache (perf --buildid-dir) and stax's answer, for
# tests/arm64-host/perfdata.sh to read them on x86-64 and compare.
#   cg-dwarf: perf record --call-graph dwarf of callgraph-nofp: stax
#             unwinds the stack copies (aarch64 rules)
#   cg-g:     perf record -g of callgraph-fp: the kernel's chains as they are
. "$(dirname "$0")/lib.sh"
OUT=$ROOT/build/arm64/out
mkdir -p "$OUT"
export PERF_BUILDID_DIR="$OUT/debug"
if ! command -v perf >/dev/null 2>&1; then
	fail "setup" "perf is missing in the guest (scripts/arm64-guest.sh installs linux-perf)"
	exit 1
fi

# prec NAME PERF_OPTS PROG: perf record into $OUT/NAME.data, then stax's
# folded stacks of it into $OUT/NAME.guest.folded
prec() {
	_n=$1 _o=$2 _p=$3
	rm -f "$OUT/$_n.data" "$OUT/$_n.guest.folded"
	# shellcheck disable=SC2086
	perf --buildid-dir "$PERF_BUILDID_DIR" record -q --buildid-all -e cycles -F 999 $_o -o "$OUT/$_n.data" -- "$PROG/$_p" >/dev/null 2>"$T/$_n.perf.err" &&
		stax flame -i "$OUT/$_n.data" --folded >"$OUT/$_n.guest.folded" 2>"$T/$_n.err"
}

if prec cg-dwarf "--call-graph dwarf" callgraph-nofp; then
	n=$(samples "$OUT/cg-dwarf.guest.folded" ';leaf_[bc]'"$K")
	s=$(pct "$(samples "$OUT/cg-dwarf.guest.folded" "${START}a;(b;leaf_b|c;leaf_c)$K")" "$n")
	if [ "$n" -ge 100 ] && between "$s" 99 100; then
		ok "perf --call-graph dwarf, read by stax: main;a;b|c;leaf in $s% of $n samples"
	else
		fail "perf --call-graph dwarf, read by stax: main;a;b|c;leaf in >= 99%" "$s% of $n; $(first_line "$T/cg-dwarf.err")"
	fi
else
	fail "perf --call-graph dwarf, read by stax" "$(first_line "$T/cg-dwarf.perf.err") $(first_line "$T/cg-dwarf.err")"
fi

if prec cg-g "-g" callgraph-fp; then
	n=$(samples "$OUT/cg-g.guest.folded" ';leaf_[bc]'"$K")
	s=$(pct "$(samples "$OUT/cg-g.guest.folded" ';main;a;(b;leaf_b|c;leaf_c)'"$K")" "$n")
	if [ "$n" -ge 100 ] && between "$s" 99 100; then
		ok "perf -g, read by stax: main;a;b|c;leaf in $s% of $n samples"
	else
		fail "perf -g, read by stax: main;a;b|c;leaf in >= 99%" "$s% of $n; $(first_line "$T/cg-g.err")"
	fi
else
	fail "perf -g, read by stax" "$(first_line "$T/cg-g.perf.err") $(first_line "$T/cg-g.err")"
fi
done_testing
