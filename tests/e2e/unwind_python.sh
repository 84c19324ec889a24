#!/bin/sh
# unwind_python.sh - CPython 3.11 (pyenv, built without frame pointers):
# with the default hybrid unwinding, >= 95% of the interpreter's samples
# reach Py_BytesMain (CPython's main tail-calls it, so main has no frame;
# UNWINDING.md trap 12), and --unwind fp fails on the same run (that is
# the point of hybrid). The busy loop is Python code: samples land in
# libpython's eval loop, long, int and range code. Samples taken while
# ld.so is still loading (before main: their root is ld.so's _start) are
# not expected under Py_BytesMain and are left out of the share.
. "$(dirname "$0")/lib.sh"
require_stax

PY=$(command -v python3)
if [ -z "$PY" ]; then
	skip "python" "no python3 on PATH"
	done_testing
fi
# the real interpreter, not pyenv's shim script
REAL=$(pyenv which python3 2>/dev/null || echo "$PY")
ver=$("$REAL" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
cat >"$T/busy.py" <<'PYEOF'
import sys
def work(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
def outer(n):
    return work(n) + 1
outer(int(float(sys.argv[1]) * 12000000))
PYEOF

# rec MODE SCALE: record the interpreter running busy.py; $T/MODE.script
# holds stax script's blocks (one per sample, frames leaf first).
rec() {
	stax record -q --unwind "$1" -o "$T/$1.data" -- "$REAL" "$T/busy.py" "$2" >"$T/$1.out" 2>"$T/$1.err" &&
		stax script -i "$T/$1.data" >"$T/$1.script" 2>>"$T/$1.err"
}

# count MODE ERE: "MATCHING TOTAL" over the interpreter's samples, leaving
# out those taken while ld.so was still loading it (root: ld.so's _start,
# through _dl_start), which are not under Py_BytesMain.
count() {
	PAT=$2 awk 'BEGIN { RS = "" } !/[ \t]_dl_start / { t++; if ($0 ~ ENVIRON["PAT"]) m++ }
	END { print m + 0, t + 0 }' "$T/$1.script"
}
share_of() { count "$1" "$2" | awk '{ printf "%.1f", $2 ? 100 * $1 / $2 : 0 }'; }
nsamples() { count "$1" x | awk '{ print $2 }'; }

rec hybrid 1
n=$(nsamples hybrid)
p=$(share_of hybrid ' Py_BytesMain ')
if [ "$n" -lt 300 ] || ! between "$p" 95 100; then
	rec hybrid 2
	n=$(nsamples hybrid)
	p=$(share_of hybrid ' Py_BytesMain ')
fi
if [ "$n" -ge 300 ] && between "$p" 95 100; then
	ok "python $ver hybrid: $p% of $n samples reach Py_BytesMain"
else
	fail "python $ver hybrid: >= 95% reach Py_BytesMain" "$p% of $n; first not reaching: $(awk 'BEGIN { RS = "" } !/Py_BytesMain|_dl_start/ { print; exit }' "$T/hybrid.script" | head -n 4 | tr '\n\t' '| ' | cut -c1-300)"
fi
ev=$(share_of hybrid ' _PyEval_EvalFrameDefault ')
if between "$ev" 80 100; then
	ok "python $ver hybrid: $ev% of samples inside _PyEval_EvalFrameDefault"
else
	fail "python $ver hybrid: samples inside the eval loop" "$ev%"
fi

rec fp 1
n=$(nsamples fp)
p=$(share_of fp ' Py_BytesMain ')
if [ "$n" -ge 300 ] && between "$p" 0 50; then
	ok "python $ver fp: only $p% of $n samples reach Py_BytesMain (frame pointers missing)"
else
	fail "python $ver fp: fails without frame pointers" "$p% of $n reach Py_BytesMain"
fi
done_testing
