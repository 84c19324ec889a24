#!/bin/sh
# runtimes.sh (arm64 guest) - the stacks of runtimes on aarch64, as
# tests/e2e/moment.sh, jit.sh and runtime_go.sh check them on x86-64:
#   Python: Debian's CPython 3.11 (the guest's python3, no frame
#      pointers, pointer authentication) runs work.py, whose heavy() and
#      light() call work(200) and work(100), whose loop calls into C in
#      short calls (json.dumps, re.findall: lines 8 and 9); it prints
#      heavy's share of the two as it measured it in CPU time (the
#      truth). With the in-kernel reader, no -X perf (3.11 has none: the
#      perf trampoline came with 3.12): >= 98% of the samples in the
#      interpreter (a _PyEval_EvalFrameDefault frame) carry Python frames,
#      and >= 90% of all samples (the rest is the interpreter starting
#      and finishing, which runs no Python code: here without .pyc files,
#      the guest's root being read-only, 6% of a 4 s run); heavy's share
#      within 0.04 of the truth; work's frames carry lines 8 and 9.
#   JIT: jitmap (tests/programs/jitmap.c) runs two leaf loops of aarch64
#      code in anonymous memory, named by a perf map and a jitdump: each
#      ~1/2 of the samples, and >= 99% of each loop's samples under
#      main;run_jitted (the caller is in the link register only: trap
#      A9), built without and with frame pointers.
. "$(dirname "$0")/lib.sh"

# count FOLDED ERE: samples of the folded file whose stack matches ERE
count() { samples "$@"; }
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }
frac() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "0.0000"; else printf "%.4f\n", a / b }'; }

# --- Python ----------------------------------------------------------------
cp "$ROOT/tests/python/work.py" "$T/work.py"

HEAVY=';py::heavy:[^;]*;py::work:'
LIGHT=';py::light:[^;]*;py::work:'
py=/usr/bin/python3
if ! "$py" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
	fail "python" "$py is not CPython 3.11 (scripts/arm64-guest.sh puts Debian's python3.11 in the guest)"
else
	d=$T/py
	stax record -q -o "$d.data" -- "$py" "$T/work.py" 4 >"$d.out" 2>"$d.err" ||
		fail "python: record" "$(first_line "$d.err")"
	truth=$(awk '/^truth/ { print $2 }' "$d.out")
	stax flame --folded -i "$d.data" >"$d.folded" 2>>"$d.err"
	all=$(samples "$d.folded") withpy=$(count "$d.folded" ';py::')
	ineval=$(count "$d.folded" ';_PyEval_EvalFrameDefault(;|$)') evalpy=$(count "$d.folded" ';_PyEval_EvalFrameDefault;(.*;)?py::')
	p=$(pct "$evalpy" "$ineval") pa=$(pct "$withpy" "$all")
	if [ "$ineval" -ge 2000 ] && between "$p" 98 100 && between "$pa" 90 100; then
		ok "python 3.11, no -X perf: $p% of $ineval samples in the interpreter carry Python frames ($pa% of all $all)"
	else
		fail "python 3.11, no -X perf: >= 98% of the samples in the interpreter carry Python frames" "$p% of $ineval ($pa% of all $all); $(stax info -i "$d.data" 2>&1 | grep -E 'python:|moment:' | tr '\n' '|')"
	fi
	nh=$(count "$d.folded" "$HEAVY") nl=$(count "$d.folded" "$LIGHT")
	share=$(frac "$nh" $((nh + nl)))
	if [ $((nh + nl)) -ge 1000 ] && near "$share" "${truth:-0}" 0.04; then
		ok "python 3.11: heavy's share $share of $((nh + nl)) samples (truth ${truth})"
	else
		fail "python 3.11: heavy's share within 0.04 of the truth" "$share of $((nh + nl)), truth ${truth:-none}"
	fi
	stax flame --folded --lines -i "$d.data" >"$d.lines" 2>/dev/null
	l8=$(count "$d.lines" ';py::work \(work\.py:8\)') l9=$(count "$d.lines" ';py::work \(work\.py:9\)')
	lw=$(count "$d.lines" ';py::work \(')
	if [ "$l8" -ge 100 ] && [ "$l9" -ge 100 ] && [ $((l8 + l9)) -ge $((lw * 98 / 100)) ]; then
		ok "python 3.11: py::work (work.py:8) $l8, (work.py:9) $l9 of $lw samples in work"
	else
		fail "python 3.11: Python frames show their line" "work.py:8 $l8, :9 $l9 of $lw; $(grep -o 'py::work ([^)]*)' "$d.lines" | sort | uniq -c | tr '\n' ' ' | cut -c1-200)"
	fi
fi

# --- JIT code named by a perf map and a jitdump ---------------------------
# jit_cleanup DATA: the recorded process's JIT files are removed
jit_cleanup() {
	p=$(stax script -i "$1" 2>/dev/null | awk 'NR == 1 { split($2, a, "/"); print a[1] }')
	[ -n "$p" ] && rm -f "/tmp/perf-$p.map" "/tmp/jit-$p.dump"
}
for b in nofp fp; do
	if [ ! -x "$PROG/jitmap-$b" ]; then
		fail "jitmap-$b" "$PROG/jitmap-$b is missing (make check-arm64 builds it)"
		continue
	fi
	for sc in 1 2; do
		rec "jit-$b" "$PROG/jitmap-$b" $sc
		jit_cleanup "$T/jit-$b.data"
		[ "$(samples "$T/jit-$b.folded" ';jit_(map|dump)_loop'"$K")" -ge 400 ] && break
	done
	for l in map dump; do
		s=$(share "$T/jit-$b.folded" ";jit_${l}_loop$K")
		if between "$s" 25 75; then
			ok "jitmap-$b: jit_${l}_loop named ($s% of the samples)"
		else
			fail "jitmap-$b: jit_${l}_loop named, ~50% of the samples" "$s%"
		fi
		MIN=150 leaf_check "jit-$b" ";jit_${l}_loop" "${START}run_jitted;jit_${l}_loop" \
			"jitmap-$b: main;run_jitted;jit_${l}_loop" ||
			fail "jitmap-$b: >= 99% of jit_${l}_loop's samples under main;run_jitted" "$_pct% of $_tot; top: $(sort -k2 -nr -t' ' "$T/jit-$b.folded" | head -n 2 | cut -c1-200 | tr '\n' '|')"
	done
done
done_testing
