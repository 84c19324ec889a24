#!/bin/sh
# arm64.sh - make bench's arm64 section (13), inside the arm64 guest
# (bench/run.sh runs it there through scripts/arm64-guest.sh): stax
# against perf -g and perf --call-graph dwarf on the same programs, in
# the same guest, in the same run.
#
# usage: sh bench/arm64.sh STAX PROGDIR WORKDIR SCALE
# For each workload, records it with
#   stax     stax record (defaults: hybrid unwinding, cpu-clock 999 Hz)
#   perf-g   perf record -g (cpu-clock 999 Hz): the kernel's frame chains
#   perf-dw  perf record --call-graph dwarf (8 KiB copies; the cycles
#            event, as perf 6.1 asks for the SVE VG register, which
#            software events refuse on this cpu)
# and reads the stacks back: stax's with stax flame --folded, perf's with
# perf script (perf's own unwinding: libdw for dwarf) and, for perf-dw,
# also with stax (stax-on-dw: stax unwinding perf's stack copies). Prints
# one line per (workload, tool), tab-separated:
#   R WORKLOAD TOOL GOOD_PCT SAMPLES BYTES_PER_SAMPLE
# GOOD_PCT: of the samples in the workload's hot leaves, those whose stack
# is the known one, root to leaf (callgraph: main;a;b;leaf_b or
# main;a;c;leaf_c under _start; twopaths: main;path_X;deep x97;leaf_X;
# recurse: main;recurse x71;leaf, 71 KiB deep, more than any copy).
set -u
S=$1 P=$2 W=$3 SC=$4
mkdir -p "$W" || exit 1

# perf script -> folded stacks (comm;root;...;leaf COUNT), user frames only
pfold() {
	perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk '
	function emit(   s, i) { if (!n) return; s = comm; for (i = n; i >= 1; i--) s = s ";" f[i]; c[s]++; n = 0 }
	/^[^\t]/ { emit(); comm = $1; next }
	/^\t/ { if ($1 ~ /^ffff[0-9a-f]{12}$/) next   # a kernel address
		sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); f[++n] = sym; next }
	END { emit(); for (s in c) print s, c[s] }'
}

# share FOLDED ERE: percent of the hot-leaf samples matching ERE
share() {
	PAT=$2 HOT=$3 awk '{ n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s)
		gsub(/;[^;]*_\[k\]/, "", s)
		if (s ~ ENVIRON["HOT"]) { t += n; if (s ~ ENVIRON["PAT"]) m += n } }
		END { printf "%.1f %d\n", t ? 100 * m / t : 0, t }' "$1"
}

rep() { _r=; _i=0; while [ $_i -lt "$2" ]; do _r="$_r$1;"; _i=$((_i + 1)); done; echo "$_r"; }
CG_GOOD=';_start;(.*;)?main;a;(b;leaf_b|c;leaf_c)$'
CG_HOT=';leaf_[bc]$'
TW_GOOD=";_start;(.*;)?main;(path_a;$(rep deep 97)leaf_a|path_b;$(rep deep 97)leaf_b)\$"
TW_HOT=';leaf_[ab]$'

size() { wc -c <"$1" | tr -d ' '; }
row() { # WORKLOAD TOOL FOLDED DATA GOOD HOT
	set -- "$1" "$2" "$3" "$4" "$5" "$6" $(share "$3" "$5" "$6")
	awk -v w="$1" -v t="$2" -v g="$7" -v n="$8" -v b="$(size "$4")" \
		'BEGIN { printf "R\t%s\t%s\t%s\t%d\t%.0f\n", w, t, g, n, n ? b / n : 0 }'
}

for wl in callgraph-nofp callgraph-cc callgraph-pac unwind_twopaths-cc unwind_recurse-nofp; do
	case $wl in
	unwind_twopaths*) good=$TW_GOOD hot=$TW_HOT ;;
	unwind_recurse*) good=";_start;(.*;)?main;$(rep recurse 71)leaf\$" hot=';leaf$' ;;
	*) good=$CG_GOOD hot=$CG_HOT ;;
	esac
	"$S" record -q -o "$W/$wl.stax.data" -- "$P/$wl" "$SC" >/dev/null 2>"$W/$wl.stax.err" ||
		echo "arm64.sh: stax record $wl: $(tail -n 1 "$W/$wl.stax.err")" >&2
	"$S" flame -i "$W/$wl.stax.data" --folded >"$W/$wl.stax.folded" 2>>"$W/$wl.stax.err"
	row "$wl" stax "$W/$wl.stax.folded" "$W/$wl.stax.data" "$good" "$hot"
	perf record -q -e cpu-clock -F 999 -g -o "$W/$wl.g.data" -- "$P/$wl" "$SC" >/dev/null 2>&1
	pfold "$W/$wl.g.data" >"$W/$wl.g.folded"
	row "$wl" perf-g "$W/$wl.g.folded" "$W/$wl.g.data" "$good" "$hot"
	perf record -q -e cycles -F 999 --call-graph dwarf -o "$W/$wl.dw.data" -- "$P/$wl" "$SC" >/dev/null 2>&1
	pfold "$W/$wl.dw.data" >"$W/$wl.dw.folded"
	row "$wl" perf-dw "$W/$wl.dw.folded" "$W/$wl.dw.data" "$good" "$hot"
	"$S" flame -i "$W/$wl.dw.data" --folded >"$W/$wl.sdw.folded" 2>/dev/null
	row "$wl" stax-on-dw "$W/$wl.sdw.folded" "$W/$wl.dw.data" "$good" "$hot"
	rm -f "$W/$wl".*.data
done
