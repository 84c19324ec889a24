#!/bin/sh
# python_perf.sh - mixed Python and C stacks through CPython's perf
# trampolines (python -X perf, -X perf_jit), on pyenv's CPython 3.12 and
# 3.13 built without frame pointers, and JavaScript stacks of node
# --perf-basic-prof. The script below has two nested hot functions: outer
# calls inner in a loop, inner does arithmetic. Every sample in inner
# must show, root first, Py_BytesMain, py::outer, py::inner: the C frames
# are unwound by CFI, each trampoline (anonymous memory, no CFI, no frame
# pointer) by its known bytes. perf's own unwinders get no such stacks on
# these builds (see the issue): this is what the check guards.
# stax-test: seconds=8
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(uname -m)" != x86_64 ]; then
	skip "python -X perf" "the trampoline rule is for x86-64"
	done_testing
fi

cat >"$T/nest.py" <<'PYEOF'
import sys
def inner(n):
    s = 0
    for i in range(n):
        s += i * i % 7
    return s
def outer(k):
    t = 0
    for j in range(k):
        t += inner(20000)
    return t
if len(sys.argv) > 2:
    # -X perf_jit buffers its jitdump: make it write out inner's and
    # outer's records (with their unwind info) before the hot part
    outer(1)
    for i in range(400):
        exec("def f%d(): pass\nf%d()" % (i, i))
outer(int(float(sys.argv[1]) * 600))
PYEOF

# rm_maps DATA: remove the JIT files of the recorded processes
rm_maps() {
	for p in $(stax script -i "$1" 2>/dev/null | awk '/^[^ \t]/ { split($2, a, "/"); print a[1] }' | sort -u); do
		rm -f "/tmp/perf-$p.map" "/tmp/jit-$p.dump"
	done
}

# ordered FOLDED LEAF ERE: "MATCHING TOTAL": of the samples with a frame
# matching LEAF, those whose stack matches ERE
ordered() {
	L=$2 PAT=$3 awk '
	NF { n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s); if (s ~ ENVIRON["L"]) { t += n; if (s ~ ENVIRON["PAT"]) m += n } }
	END { print m + 0, t + 0 }' "$1"
}

INNER=';py::inner:[^;]*'
WHOLE=';Py_BytesMain;(.*;)?py::outer:[^;]*;(.*;)?py::inner:[^;]*'

# check_py LABEL PY MODE RULE [warm]: record nest.py under PY -X MODE and
# check; stax info must count frames unwound by RULE
check_py() {
	label=$1 py=$2 mode=$3 rule=$4 d=$T/$1 warm=${5:-}
	for scale in 1 2; do
		stax record -q -o "$d.data" -- "$py" -X "$mode" "$T/nest.py" "$scale" $warm >"$d.out" 2>"$d.err" ||
			{ fail "$label: record" "$(first_line "$d.err")"; return; }
		stax flame --folded -i "$d.data" >"$d.folded" 2>>"$d.err"
		set -- $(ordered "$d.folded" "$INNER" "$WHOLE")
		m=$1 n=$2
		[ "$n" -ge 300 ] && between "$(pct "$m" "$n")" 95 100 && break
	done
	p=$(pct "$m" "$n")
	if [ "$n" -ge 300 ] && between "$p" 95 100; then
		ok "$label: $p% of $n samples in inner show Py_BytesMain, py::outer, py::inner"
	else
		fail "$label: >= 95% of samples in inner show Py_BytesMain, py::outer, py::inner" \
			"$p% of $n; first other: $(awk '/py::inner/ && !/Py_BytesMain.*py::outer.*py::inner/' "$d.folded" | head -n 1 | cut -c1-400)"
	fi
	stax info -i "$d.data" >"$d.info" 2>&1
	if grep -q "jit: .*$rule [1-9]" "$d.info"; then
		ok "$label: stax info counts frames unwound by $rule"
	else
		fail "$label: stax info counts frames unwound by $rule" "$(grep -i jit: "$d.info" || echo 'no jit line')"
	fi
	rm_maps "$d.data"
}

# check_python_only LABEL: --python-only shows just the Python frames
check_python_only() {
	label=$1 d=$T/$1
	stax flame --folded --python-only -i "$d.data" >"$d.pyonly" 2>>"$d.err"
	# every frame after the command name is a py:: frame
	other=$(awk '{ s = $0; sub(/[ \t]+[0-9]+$/, "", s); n = split(s, f, ";"); for (i = 2; i <= n; i++) if (f[i] !~ /^py::/) { print f[i]; exit } }' "$d.pyonly")
	set -- $(ordered "$d.pyonly" "$INNER" "^[^;]*;py::<module>:[^;]*;py::outer:[^;]*;py::inner:[^;]*$")
	p=$(pct "$1" "$2")
	if [ -z "$other" ] && [ "$2" -ge 300 ] && between "$p" 95 100; then
		ok "$label: --python-only: $p% of $2 samples in inner are exactly <module>;outer;inner"
	else
		fail "$label: --python-only keeps just the Python frames" "$p% of $2; non-Python frame: ${other:-none}"
	fi
	if stax top --json --python-only -n 3 -i "$d.data" 2>/dev/null |
		grep -q '"name":"py::inner:[^"]*","module":"perf-[0-9]*.map","python":true'; then
		ok "$label: --json marks Python frames \"python\": true"
	else
		fail "$label: --json marks Python frames" "$(stax top --json --python-only -n 1 -i "$d.data" 2>&1 | cut -c1-200)"
	fi
}

pyroot=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
for v in 3.12 3.13; do
	py=$(ls -d "$pyroot"/versions/$v.*/bin/python$v 2>/dev/null | tail -n 1)
	if [ -z "$py" ] || ! "$py" -X perf -c pass 2>/dev/null; then
		skip "python $v -X perf" "no CPython $v with perf support under $pyroot/versions"
		continue
	fi
	check_py "python$v -X perf" "$py" perf "CPython trampoline"
	[ "$v" = 3.12 ] && check_python_only "python$v -X perf"
	if [ "$v" = 3.13 ]; then
		# perf_jit: names and CFI (UNWINDING_INFO) from the jitdump it
		# writes and maps
		check_py "python$v -X perf_jit" "$py" perf_jit "jitdump CFI" warm
	fi
	PYV=$py
done

# perf.data from perf record --call-graph dwarf: the process is gone when
# stax reads it, so the trampolines' bytes are unknown; the rule applies
# where the frame is consistent with it (its return address is in code
# with CFI). perf itself stops at the first trampoline on this file.
if [ -n "${PYV:-}" ] && command -v perf >/dev/null 2>&1; then
	if perf record -q -F 999 -e cpu-clock --call-graph dwarf -o "$T/perf.data" -- "$PYV" -X perf "$T/nest.py" 1 \
		>/dev/null 2>"$T/perf.err"; then
		stax flame --folded -i "$T/perf.data" >"$T/perf.folded" 2>>"$T/perf.err"
		rm_maps "$T/perf.data"
		set -- $(ordered "$T/perf.folded" "$INNER" "$WHOLE")
		p=$(pct "$1" "$2")
		if [ "$2" -ge 300 ] && between "$p" 95 100; then
			ok "perf record --call-graph dwarf file: $p% of $2 samples in inner show Py_BytesMain, py::outer, py::inner"
		else
			fail "perf record --call-graph dwarf file: whole Python stacks" "$p% of $2: $(grep -v "^\[" "$T/perf.err" | head -n 2 | tr "\n" "|")"
		fi
	else
		skip "perf record --call-graph dwarf file" "perf record failed: $(first_line "$T/perf.err")"
	fi
fi

# stax doctor tells a Python user which mode to use
if [ -n "${PYV:-}" ]; then
	# (without --no-python-frames, stax reads the Python frames itself:
	# python_frames.sh)
	stax record -q --no-python-frames -o "$T/plain.data" -- "$PYV" "$T/nest.py" 0.3 >/dev/null 2>"$T/plain.err"
	if stax doctor -i "$T/plain.data" 2>&1 | grep -q "runs Python 3\.1[0-9]* without a perf map.* -X perf"; then
		ok "doctor: a Python process without a perf map is told to use -X perf"
	else
		fail "doctor: a Python process without a perf map is told to use -X perf" "$(stax doctor -i "$T/plain.data" 2>&1 | head -n 3 | tr '\n' '|')"
	fi
fi

# Node.js: JavaScript frames with their callers, through V8's frame
# pointers in anonymous memory. --interpreted-frames-native-stack gives
# functions still run by the interpreter (outerJs) a named frame of
# their own; without it they all are Builtins_InterpreterEntryTrampoline.
if ! command -v node >/dev/null 2>&1; then
	skip "node --perf-basic-prof" "node is not installed"
	done_testing
fi
cat >"$T/nest.js" <<'EOF'
function innerJs(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) % 1000003; } return s; }
function cpuMs() { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
function outerJs(ms) { const end = cpuMs() + ms; let t = 0; while (cpuMs() < end) t += innerJs(200000); return t; }
console.log(outerJs(+process.argv[2] || 1000) > 0);
EOF
# (outerJs runs for ms of the process's CPU time, so a busy machine makes
# it longer, not shorter; a run with too few samples is retried 3x longer)
for ms in 1200 3600; do
	(cd "$T" && stax record -q -o "$T/n.data" -- node --perf-basic-prof --interpreted-frames-native-stack "$T/nest.js" $ms \
		>/dev/null 2>"$T/n.err") || fail "record node" "$(first_line "$T/n.err")"
	stax flame --folded -i "$T/n.data" >"$T/n.folded" 2>/dev/null
	rm_maps "$T/n.data"
	set -- $(ordered "$T/n.folded" ';JS:[^;]*innerJs[^;]*' '^node;_start;(.*;)?node::Start[^;]*;(.*;)?JS:[^;]*outerJs[^;]*;JS:[^;]*innerJs[^;]*')
	[ "$2" -ge 300 ] && break
done
p=$(pct "$1" "$2")
if [ "$2" -ge 300 ] && between "$p" 95 100; then
	ok "node --perf-basic-prof: $p% of $2 samples in innerJs show _start, node::Start, outerJs, innerJs"
else
	fail "node --perf-basic-prof: samples in innerJs show their callers" \
		"$p% of $2; first other: $(awk '/innerJs/ && !/outerJs.*innerJs/' "$T/n.folded" | head -n 1 | cut -c1-300)"
fi
# without --interpreted-frames-native-stack the callers run by the
# interpreter are all Builtins_InterpreterEntryTrampoline: doctor says so
stax doctor -i "$T/n.data" >"$T/n.doctor" 2>&1
(cd "$T" && stax record -q -o "$T/n0.data" -- node --perf-basic-prof "$T/nest.js" 800 >/dev/null 2>"$T/n0.err") ||
	fail "record node without --interpreted-frames-native-stack" "$(first_line "$T/n0.err")"
stax doctor -i "$T/n0.data" >"$T/n0.doctor" 2>&1
rm_maps "$T/n0.data"
if grep -q -- "--interpreted-frames-native-stack" "$T/n0.doctor" && ! grep -q -- "--interpreted-frames-native-stack" "$T/n.doctor"; then
	ok "doctor: node without --interpreted-frames-native-stack is told to add it (and not with it)"
else
	fail "doctor: node without --interpreted-frames-native-stack is told to add it" "without: $(grep -c interpreted "$T/n0.doctor"), with: $(grep -c interpreted "$T/n.doctor")"
fi
done_testing
