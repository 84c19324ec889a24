#!/bin/sh
# python_frames.sh - Python frames read from CPython 3.11, 3.12 and 3.13
# while recording, without -X perf (src/ingest/pyframes.c). pyenv builds
# these without frame pointers; stax unwinds the C frames by CFI and puts
# the Python functions each _PyEval_EvalFrameDefault runs above it.
#
# calls.py has a known call graph: main calls a() and b() in turn; a()
# burns 2/3 of the CPU in spin_a, b() 1/3 in spin_b (each for a slice of
# its thread's CPU time, which it measures and prints as the truth), and
# each slice also calls a C function of its own (zlib.crc32 in a's,
# zlib.adler32 in b's), so a stack whose leaf is in one of them must have
# the right Python callers. thr.py runs two threads, each in its own
# function: each thread's samples must show its own.
# stax-test: seconds=25
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(uname -m)" != x86_64 ]; then
	skip "python frames" "the 3.11/3.12 layouts are those of x86-64 builds"
	done_testing
fi

cat >"$T/calls.py" <<'PYEOF'
import sys, time, zlib
data = bytes(range(256)) * 16
spent = {"a": 0.0, "b": 0.0}
def spin_a(secs):
    end = time.thread_time() + secs
    s = 0
    while time.thread_time() < end:
        for i in range(300):
            s += i * i % 7
        s ^= zlib.crc32(data)
    return s
def spin_b(secs):
    end = time.thread_time() + secs
    s = 0
    while time.thread_time() < end:
        for i in range(300):
            s += i * i % 5
        s ^= zlib.adler32(data)
    return s
def a():
    t = time.thread_time()
    spin_a(0.08)
    spent["a"] += time.thread_time() - t
def b():
    t = time.thread_time()
    spin_b(0.04)
    spent["b"] += time.thread_time() - t
def main(secs):
    end = time.thread_time() + secs
    while time.thread_time() < end:
        a()
        b()
main(float(sys.argv[1]))
print("truth %.1f" % (100 * spent["a"] / (spent["a"] + spent["b"])))
PYEOF

cat >"$T/thr.py" <<'PYEOF'
import sys, threading, time
def spin_x(secs):
    end = time.thread_time() + secs
    s = 0
    while time.thread_time() < end:
        for i in range(1000):
            s += i * i % 7
def spin_y(secs):
    end = time.thread_time() + secs
    s = 0
    while time.thread_time() < end:
        for i in range(1000):
            s += i * i % 5
secs = float(sys.argv[1])
tx = threading.Thread(target=spin_x, args=(secs,))
ty = threading.Thread(target=spin_y, args=(secs,))
tx.start(); ty.start(); tx.join(); ty.join()
PYEOF

# count FOLDED ERE: samples of the folded file whose stack matches ERE
count() {
	PAT=$2 awk 'NF { n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s); if (s ~ ENVIRON["PAT"]) t += n } END { print t + 0 }' "$1"
}
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }

PYA=';py::main:[^;]*;py::a:[^;]*;py::spin_a:[^;]*'
PYB=';py::main:[^;]*;py::b:[^;]*;py::spin_b:[^;]*'

# check_version V PY: record calls.py under PY without -X perf; check the
# share of a() against the truth, the stacks' order, the C leaves' callers
check_version() {
	v=$1 py=$2 d=$T/py$1
	for secs in 3 6; do
		stax record -q -o "$d.data" -- "$py" "$T/calls.py" $secs >"$d.out" 2>"$d.err" ||
			{ fail "python $v: record" "$(first_line "$d.err")"; return; }
		truth=$(awk '/^truth/ { print $2 }' "$d.out")
		stax flame --folded -i "$d.data" >"$d.folded" 2>>"$d.err"
		na=$(count "$d.folded" "$PYA") nb=$(count "$d.folded" "$PYB")
		share=$(pct "$na" $((na + nb)))
		[ $((na + nb)) -ge 1000 ] && near "$share" "${truth:-0}" 3 && break
	done
	if [ $((na + nb)) -ge 1000 ] && near "$share" "${truth:-0}" 3; then
		ok "python $v: a() has $share% of $((na + nb)) samples in a() or b() (truth $truth%, within 3 points)"
	else
		fail "python $v: a() within 3 points of the truth" "$share% of $((na + nb)) samples, truth ${truth:-none}"
	fi
	# ordered: main, then the interpreter's frames, then Python, then C
	all=$(count "$d.folded" ';py::spin_a:')
	# (functions inlined into _PyEval_EvalFrameDefault at the sampled pc
	# show between it and the Python frames: names without a colon)
	good=$(count "$d.folded" '^[^;]*;_start;(.*;)?Py_BytesMain;(.*;)?_PyEval_EvalFrameDefault;([^;:]*;)*py::<module>:[^;]*'"$PYA"'(;|$)')
	p=$(pct "$good" "$all")
	if [ "$all" -ge 300 ] && between "$p" 97 100; then
		ok "python $v: $p% of $all samples in spin_a read _start, Py_BytesMain, _PyEval_EvalFrameDefault, <module>, main, a, spin_a"
	else
		fail "python $v: samples in spin_a are ordered main -> Python" \
			"$p% of $all; first other: $(grep 'py::spin_a' "$d.folded" | grep -v 'Py_BytesMain;.*_PyEval_EvalFrameDefault;py::<module>.*py::main.*py::a:.*py::spin_a' | head -n 1 | cut -c1-300)"
	fi
	# C leaves under the right Python caller (never the other function's)
	ca=$(count "$d.folded" 'crc32[^;]*$') cab=$(count "$d.folded" "$PYA"';(.*;)?[^;]*crc32[^;]*$')
	cbad=$(count "$d.folded" "$PYB"';(.*;)?[^;]*crc32[^;]*$')
	da=$(count "$d.folded" 'adler32[^;]*$') dab=$(count "$d.folded" "$PYB"';(.*;)?[^;]*adler32[^;]*$')
	dbad=$(count "$d.folded" "$PYA"';(.*;)?[^;]*adler32[^;]*$')
	if [ "$cab" -ge 20 ] && [ "$dab" -ge 10 ] && [ $((cbad * 50)) -le "$cab" ] && [ $((dbad * 50)) -le "$dab" ]; then
		ok "python $v: zlib leaves under their callers: crc32 $cab under spin_a ($cbad under spin_b), adler32 $dab under spin_b ($dbad under spin_a)"
	else
		fail "python $v: zlib leaves under their callers" \
			"crc32: $ca, $cab under spin_a, $cbad under spin_b; adler32: $da, $dab under spin_b, $dbad under spin_a"
	fi
	# info: how many were expanded, and why others were not
	stax info -i "$d.data" >"$d.info" 2>&1
	ex=$(sed -n 's/^  python: *\([0-9]*\) (\([0-9.]*\)%) with Python frames.*/\2/p' "$d.info")
	if [ -n "$ex" ] && between "$ex" 75 100; then
		ok "python $v: info: $ex% of samples with Python frames read from the interpreter"
	else
		fail "python $v: info reports >= 75% expanded" "$(grep 'python:' "$d.info" || echo 'no python line')"
	fi
	if stax info --json -i "$d.data" 2>/dev/null | grep -q '"python":{"read":true,"expanded":[1-9][0-9]*,"failed":[0-9]*,"stale":[0-9]*,"invalid":[0-9]*'; then
		ok "python $v: info --json counts expanded and failed samples"
	else
		fail "python $v: info --json counts expanded and failed samples" "$(stax info --json -i "$d.data" 2>&1 | grep -o '"python":{[^}]*}')"
	fi
	SHARE=$share TRUTH=$truth
}

pyroot=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
PY12=
for v in 3.11 3.12 3.13; do
	py=$(ls -d "$pyroot"/versions/$v.*/bin/python$v 2>/dev/null | grep -v 't/bin' | tail -n 1)
	if [ -z "$py" ] || ! "$py" -c pass 2>/dev/null; then
		skip "python $v" "no CPython $v under $pyroot/versions"
		continue
	fi
	check_version "$v" "$py"
	if [ "$v" = 3.12 ]; then
		PY12=$py SHARE12=$SHARE
	fi
done

# Debian's own python3 (3.11, a static interpreter in the executable)
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
	stax record -q -o "$T/deb.data" -- /usr/bin/python3 "$T/calls.py" 2 >/dev/null 2>"$T/deb.err"
	stax flame --folded -i "$T/deb.data" >"$T/deb.folded" 2>/dev/null
	n=$(count "$T/deb.folded" "$PYA")
	if [ "$n" -ge 300 ]; then
		ok "Debian python3: $n samples under main, a, spin_a"
	else
		fail "Debian python3: Python frames read" "$n samples under main, a, spin_a; $(first_line "$T/deb.err")"
	fi
else
	skip "Debian python3" "/usr/bin/python3 is not CPython 3.11"
fi

# without ptrace access (root without CAP_SYS_PTRACE, -p of another
# user's process: perf events are allowed, reading its memory is not),
# samples stay unexpanded, and info and doctor say why
if [ "$(id -u)" != 0 ] || ! command -v capsh >/dev/null 2>&1 || ! command -v setpriv >/dev/null 2>&1; then
	skip "no ptrace access" "needs root, capsh and setpriv"
elif ! [ -x /usr/bin/python3 ]; then
	skip "no ptrace access" "no /usr/bin/python3 that another user can run"
else
	cp "$T/calls.py" "$T/calls_nobody.py"
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 "$T/calls_nobody.py" 4 >/dev/null 2>&1 &
	nb=$!
	bg_add $nb
	sleep 0.5
	capsh --drop=cap_sys_ptrace -- -c "exec timeout 60 '$STAX' record -q -p $nb --duration 1.5 -o '$T/na.data'" 2>"$T/na.err"
	kill $nb 2>/dev/null
	wait $nb 2>/dev/null
	stax info -i "$T/na.data" >"$T/na.info" 2>&1
	if grep -q '^  python: .* [1-9][0-9]* unreadable)' "$T/na.info" &&
		grep -q '^  python:    not read: cannot read the memory of process [0-9]*: .*ptrace access' "$T/na.info" &&
		! stax script -i "$T/na.data" 2>/dev/null | grep -q '(\[python\])'; then
		ok "no ptrace access: frames left unexpanded, info says why: $(grep 'not read' "$T/na.info" | cut -c1-120)"
	else
		fail "no ptrace access: info says why" "$(grep 'python' "$T/na.info" | tr '\n' '|' | cut -c1-300); $(first_line "$T/na.err")"
	fi
fi

if [ -z "$PY12" ]; then
	skip "python 3.12: --python-only, -X perf, threads" "no CPython 3.12 under $pyroot/versions"
	done_testing
fi
d=$T/py3.12

# --python-only keeps only the Python frames, in order
stax flame --folded --python-only -i "$d.data" >"$d.pyonly" 2>/dev/null
other=$(awk '{ s = $0; sub(/[ \t]+[0-9]+$/, "", s); n = split(s, f, ";"); for (i = 2; i <= n; i++) if (f[i] !~ /^py::/) { print f[i]; exit } }' "$d.pyonly")
all=$(count "$d.pyonly" ';py::spin_a:')
good=$(count "$d.pyonly" '^[^;]*;py::<module>:[^;]*'"$PYA"'$')
p=$(pct "$good" "$all")
if [ -z "$other" ] && [ "$all" -ge 300 ] && between "$p" 97 100; then
	ok "--python-only: $p% of $all samples in spin_a are exactly <module>;main;a;spin_a"
else
	fail "--python-only keeps just the Python frames" "$p% of $all; non-Python frame: ${other:-none}"
fi
if stax top --json --python-only -n 3 -i "$d.data" 2>/dev/null | grep -q '"name":"py::spin_a:[^"]*","module":"\[python\]","python":true'; then
	ok "--python-only --json marks the frames read \"python\": true"
else
	fail "--python-only --json marks the frames read" "$(stax top --json --python-only -n 1 -i "$d.data" 2>&1 | cut -c1-200)"
fi

# -X perf and this method agree on the same program (same names too)
if "$PY12" -X perf -c pass 2>/dev/null; then
	stax record -q --no-python-frames -o "$T/xperf.data" -- "$PY12" -X perf "$T/calls.py" 3 >"$T/xperf.out" 2>"$T/xperf.err"
	# (-X perf puts C frames between Python frames: count them alone)
	stax flame --folded --python-only -i "$T/xperf.data" >"$T/xperf.folded" 2>/dev/null
	for p in $(stax script -i "$T/xperf.data" 2>/dev/null | awk '/^[^ \t]/ { split($2, a, "/"); print a[1] }' | sort -u); do
		rm -f "/tmp/perf-$p.map"
	done
	na=$(count "$T/xperf.folded" "$PYA") nb=$(count "$T/xperf.folded" "$PYB")
	px=$(pct "$na" $((na + nb)))
	SHARE12=$(pct "$(count "$d.pyonly" "$PYA")" $(($(count "$d.pyonly" "$PYA") + $(count "$d.pyonly" "$PYB"))))
	if [ $((na + nb)) -ge 1000 ] && near "$px" "$SHARE12" 4; then
		ok "-X perf agrees: a() $px% there, $SHARE12% read from the interpreter"
	else
		fail "-X perf and the interpreter's frames agree within 4 points" "-X perf $px% of $((na + nb)), read $SHARE12%"
	fi
	if stax script -i "$T/xperf.data" 2>/dev/null | grep -q '(\[python\])'; then
		fail "--no-python-frames reads none" "frames of [python] in the recording"
	else
		ok "--no-python-frames: no frame read from the interpreter"
	fi
else
	skip "-X perf agreement" "$PY12 has no perf support"
fi

# two threads: each thread's samples show its own function
stax record -q -o "$T/thr.data" -- "$PY12" "$T/thr.py" 1.5 >/dev/null 2>"$T/thr.err" ||
	fail "threads: record" "$(first_line "$T/thr.err")"
stax script -i "$T/thr.data" 2>/dev/null | awk '
	/^[^ \t]/ { split($2, a, "/"); tid = a[2]; next }
	/py::spin_x:/ { x[tid]++ } /py::spin_y:/ { y[tid]++ }
	END { for (t in x) print t, x[t], y[t] + 0; for (t in y) if (!(t in x)) print t, 0, y[t] }' >"$T/thr.tids"
res=$(awk '
	$2 >= 200 && $3 * 50 <= $2 { xs++ } $3 >= 200 && $2 * 50 <= $3 { ys++ }
	END { print (xs == 1 && ys == 1) ? "ok" : "no" }' "$T/thr.tids")
if [ "$res" = ok ]; then
	ok "threads: one thread in spin_x, the other in spin_y, each with its own frames ($(tr '\n' ' ' <"$T/thr.tids"))"
else
	fail "threads: each thread's samples show its own function" "tid spin_x spin_y: $(tr '\n' ' ' <"$T/thr.tids")"
fi
done_testing
