#!/bin/sh
# moment.sh - the moment of a sample (issue 30), through stax record.
#
# Two parts of a stack lie outside the kernel's sample: the CPython frame
# chain and the outer frames of a stack deeper than its copy. The
# in-kernel reader (src/bpf/moment.bpf.c) reads them at the sample; read
# later they may be another moment's, and such stacks must never be
# called complete.
#
# work.py: heavy() and light() call work(200) and work(100), whose loop
# calls into C in short calls (json.dumps, re.findall; lines 8 and 9):
# heavy does 2/3 of the work. It runs for CPU seconds (time.thread_time)
# so a busy machine does not shrink its sample count, and prints heavy's
# share of the two as it measured it (the truth).
#   - with the reader, CPython 3.11, 3.12, 3.13 (pyenv, no frame
#     pointers), without -X perf: >= 98% of its samples carry Python
#     frames; heavy's share within 0.04 of the same program under -X perf
#     (3.12, 3.13) and of the truth; Python frames show their line with
#     flame --folded --lines (work's are lines 8 and 9), and annotate of
#     work counts its samples on those lines.
# tests/programs/moment_deep-nofp (no frame pointers) alternates two call
# paths ~100 KiB deep whose frames look alike, every 300 us, and logs
# which ran when:
#   - with the reader: <= 1% of the samples in leaf() under the path that
#     was not running, >= 99% rooted under their own path.
# stax live on work.py names the Python frames in its rows.
# Without the reader (--no-bpf, and as the user nobody, who may not load
# it): no stack of leaf() and no stack with a Python frame is counted
# complete (they are late), info and doctor say why, and --no-late-frames
# leaves those frames out.
# stax-test: alone (it records as the user nobody: the locked ring memory of every such recording counts against one per-user limit), seconds=120
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(uname -m)" != x86_64 ]; then
	skip "moment" "the Python layouts and the deep program are x86-64's"
	done_testing
fi
if [ "$(id -u)" -ne 0 ]; then
	skip "moment" "needs root (the in-kernel reader, and setpriv for the user nobody)"
	done_testing
fi
DEEP=$PROG/moment_deep-nofp

cp "$ROOT/tests/python/work.py" "$T/work.py"
# a recursion 800 deep (Python's default limit is 1000), its leaf calling
# into C in short calls: every frame of it read at the sample
cat >"$T/deep.py" <<'PYEOF'
import json, sys, time
data = {"a": [1, 2, 3], "b": "x" * 50}
def leaf():
    for _ in range(300):
        json.dumps(data)
def rec(n):
    if n == 0:
        return leaf()
    return rec(n - 1)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    rec(800)
PYEOF

# count FOLDED ERE: samples of the folded file whose stack matches ERE
count() {
	PAT=$2 awk 'NF { n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s); if (s ~ ENVIRON["PAT"]) t += n } END { print t + 0 }' "$1"
}
near() { awk -v a="$1" -v b="$2" -v d="$3" 'BEGIN { x = a - b; if (x < 0) x = -x; exit !(x <= d) }'; }
frac() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "0.0000"; else printf "%.4f\n", a / b }'; }
# json_get FILE EXPR: a value of stax's JSON (python3: present, make test-deps)
json_get() { python3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1" 2>/dev/null; }

HEAVY=';py::heavy:[^;]*;py::work:'
LIGHT=';py::light:[^;]*;py::work:'

# --- Python, with the reader --------------------------------------------
# python_check V PY: record work.py under PY (with the reader), then the
# same under -X perf where PY has it
python_check() {
	v=$1 py=$2 d=$T/py$1
	stax record -q -o "$d.data" -- "$py" "$T/work.py" 4 >"$d.out" 2>"$d.err" ||
		{ fail "python $v: record" "$(first_line "$d.err")"; return; }
	truth=$(awk '/^truth/ { print $2 }' "$d.out")
	stax flame --folded -i "$d.data" >"$d.folded" 2>>"$d.err"
	all=$(samples "$d.folded") withpy=$(count "$d.folded" ';py::')
	p=$(pct "$withpy" "$all")
	if [ "$all" -ge 2000 ] && between "$p" 98 100; then
		ok "python $v, no -X perf: $p% of $all samples carry Python frames (read at the sample)"
	else
		fail "python $v, no -X perf: >= 98% of the samples carry Python frames" "$p% of $all; $(stax info -i "$d.data" 2>&1 | grep -E 'python:|moment:' | tr '\n' '|')"
	fi
	nh=$(count "$d.folded" "$HEAVY") nl=$(count "$d.folded" "$LIGHT")
	share=$(frac "$nh" $((nh + nl)))
	if [ $((nh + nl)) -ge 1000 ] && near "$share" "${truth:-0}" 0.04; then
		ok "python $v: heavy's share $share of $((nh + nl)) samples (truth ${truth})"
	else
		fail "python $v: heavy's share within 0.04 of the truth" "$share of $((nh + nl)), truth ${truth:-none}"
	fi
	if "$py" -X perf -c pass 2>/dev/null && [ "$v" != 3.11 ]; then
		stax record -q --no-python-frames -o "$d.xp.data" -- "$py" -X perf "$T/work.py" 4 >"$d.xp.out" 2>"$d.xp.err"
		stax flame --folded --python-only -i "$d.xp.data" >"$d.xp.folded" 2>/dev/null
		for q in $(stax script -i "$d.xp.data" 2>/dev/null | awk '/^[^ \t]/ { split($2, a, "/"); print a[1] }' | sort -u); do
			rm -f "/tmp/perf-$q.map"
		done
		xh=$(count "$d.xp.folded" "$HEAVY") xl=$(count "$d.xp.folded" "$LIGHT")
		xshare=$(frac "$xh" $((xh + xl)))
		if [ $((xh + xl)) -ge 1000 ] && near "$share" "$xshare" 0.04; then
			ok "python $v: heavy's share $share within 0.04 of -X perf's $xshare"
		else
			fail "python $v: heavy's share within 0.04 of -X perf's" "$share, -X perf $xshare of $((xh + xl))"
		fi
	fi
	# every Python frame carries its line: work's are 8 (json.dumps) and 9
	stax flame --folded --lines -i "$d.data" >"$d.lines" 2>/dev/null
	l8=$(count "$d.lines" ';py::work \(work\.py:8\)') l9=$(count "$d.lines" ';py::work \(work\.py:9\)')
	lw=$(count "$d.lines" ';py::work \(')
	if [ "$l8" -ge 100 ] && [ "$l9" -ge 100 ] && [ $((l8 + l9)) -ge $((lw * 98 / 100)) ]; then
		ok "python $v: flame --folded --lines: py::work (work.py:8) $l8, (work.py:9) $l9 of $lw samples in work"
	else
		fail "python $v: Python frames show their line" "work.py:8 $l8, :9 $l9 of $lw; $(grep -o 'py::work ([^)]*)' "$d.lines" | sort | uniq -c | tr '\n' ' ' | cut -c1-200)"
	fi
	# the full depth: 801 frames of rec under each sample in leaf
	stax record -q -o "$d.deep.data" -- "$py" "$T/deep.py" 3 >/dev/null 2>"$d.deep.err"
	stax flame --folded -i "$d.deep.data" >"$d.deep.folded" 2>/dev/null
	inleaf=$(count "$d.deep.folded" ';py::leaf:')
	full=$(awk '/;py::leaf:/ { n = gsub(/;py::rec:/, "&"); if (n >= 801) t += $NF } END { print t + 0 }' "$d.deep.folded")
	if [ "$inleaf" -ge 500 ] && between "$(pct "$full" "$inleaf")" 98 100; then
		ok "python $v, a recursion 800 deep: $full of $inleaf samples in leaf have its 801 frames of rec"
	else
		fail "python $v, a recursion 800 deep: >= 98% of the samples in leaf with all its frames" "$full of $inleaf; $(stax info -i "$d.deep.data" 2>&1 | grep -E 'python:|moment:' | tr '\n' '|')"
	fi
	if [ "$v" = 3.12 ]; then
		stax annotate -i "$d.data" "py::work:$T/work.py" >"$d.ann" 2>&1
		if grep -q '^ *[0-9.]*% *[0-9][0-9]* *[0-9]* *work.py:8 .*json.dumps' "$d.ann" &&
			grep -q '^ *[0-9.]*% *[0-9][0-9]* *[0-9]* *work.py:9 .*pat.findall' "$d.ann"; then
			ok "python $v: annotate py::work shows its samples on lines 8 and 9, with their text"
		else
			fail "python $v: annotate of a Python function, per line" "$(tr '\n' '|' <"$d.ann" | cut -c1-300)"
		fi
	fi
}

pyroot=$(pyenv root 2>/dev/null || echo "${PYENV_ROOT:-$HOME/.pyenv}")
for v in 3.11 3.12 3.13; do
	py=$(ls -d "$pyroot"/versions/$v.*/bin/python$v 2>/dev/null | grep -v 't/bin' | tail -n 1)
	if [ -z "$py" ] || ! "$py" -c pass 2>/dev/null; then
		skip "python $v" "no CPython $v under $pyroot/versions"
		continue
	fi
	python_check "$v" "$py"
done

# --- stax live names the Python frames it shows (issue 30) ---------------
py12=$(ls -d "$pyroot"/versions/3.12.*/bin/python3.12 2>/dev/null | tail -n 1)
if [ -n "$py12" ]; then
	timeout 120 "$STAX" live --count 2 --interval 1 -n 0 -- "$py12" "$T/work.py" 3 >"$T/live.out" 2>"$T/live.err"
	unnamed=$(grep -c '0x7079' "$T/live.out")
	if grep -q 'py::work:' "$T/live.out" && grep -q 'py::heavy:' "$T/live.out" && [ "$unnamed" = 0 ]; then
		ok "stax live: the Python frames are named (py::work, py::heavy), none [unknown]+0x7079..."
	else
		fail "stax live names the Python frames" "$unnamed unnamed rows; $(grep -m 2 -E 'py::|0x7079' "$T/live.out" | tr '\n' '|' | cut -c1-200); $(first_line "$T/live.err")"
	fi
fi

# --- deep look-alike paths, with the reader -----------------------------
# deep_paths DATA LOG: "right wrong other total" for the samples in leaf
# (not within 20 us of a switch of path): under the path the log says
# ran then, the other one, or neither (not rooted at a path)
deep_paths() {
	stax script -i "$1" 2>/dev/null | LOG=$2 awk '
	BEGIN { while ((getline l < ENVIRON["LOG"]) > 0) { split(l, f, " "); n++; ts[n] = f[1]; ps[n] = f[2] } }
	function judge(    lo, hi, mid, want, got, i) {
		if (!have || fr[1] != "leaf") return
		lo = 1; hi = n
		if (n == 0 || t < ts[1]) return
		while (lo < hi) { mid = int((lo + hi + 1) / 2); if (ts[mid] <= t) lo = mid; else hi = mid - 1 }
		if (t - ts[lo] < 20000) return
		want = ps[lo]; got = ""
		for (i = 2; i <= nf; i++) {
			if (fr[i] == "down") continue
			if (fr[i] == "path_a") got = "a"; else if (fr[i] == "path_b") got = "b"
			break
		}
		if (got == "" || fr[i + 1] != "main") other++
		else if (got == want) right++
		else wrong++
		total++
	}
	/^[^ \t]/ { judge(); have = 1; nf = 0; t = $4; sub(/:$/, "", t); t = sprintf("%.0f", t * 1e9); next }
	NF >= 2 { fr[++nf] = $2 }
	END { judge(); printf "%d %d %d %d\n", right, wrong, other, total }'
}

if [ ! -x "$DEEP" ]; then
	fail "deep paths" "$DEEP is missing (make programs)"
else
	for secs in 3 6; do
		stax record -q -o "$T/deep.data" -- "$DEEP" $secs "$T/deep.log" >/dev/null 2>"$T/deep.err"
		read -r right wrong other total <<EOF
$(deep_paths "$T/deep.data" "$T/deep.log")
EOF
		[ "$total" -ge 1000 ] && break
	done
	if [ "$total" -ge 500 ] && [ $((wrong * 100)) -le "$total" ]; then
		ok "deep look-alike paths: $wrong of $total samples in leaf under the path that was not running (at most 1%)"
	else
		fail "deep look-alike paths: at most 1% under the wrong path" "$wrong of $total wrong ($right right, $other other); $(first_line "$T/deep.err")"
	fi
	if [ "$total" -ge 500 ] && [ $((right * 100)) -ge $((total * 99)) ]; then
		ok "deep look-alike paths: $right of $total rooted under their own path (at least 99%)"
	else
		fail "deep look-alike paths: at least 99% rooted under their own path" "$right of $total ($wrong wrong, $other other)"
	fi
	# 400 frames of 1 KiB: the slots past the copy are more ranges than
	# the 256 a record held (the reader then read none of them usefully
	# and the stacks were cut; the later read of the rest was refused)
	for secs in 3 6; do
		stax record -q -o "$T/deep4.data" -- "$DEEP" $secs "$T/deep4.log" 400 >/dev/null 2>"$T/deep4.err"
		read -r right wrong other total <<EOF
$(deep_paths "$T/deep4.data" "$T/deep4.log")
EOF
		[ "$total" -ge 1000 ] && break
	done
	if [ "$total" -ge 500 ] && [ $((wrong * 100)) -le "$total" ] && [ $((right * 100)) -ge $((total * 99)) ]; then
		ok "deep look-alike paths 400 KiB deep: $right of $total rooted under their own path, $wrong under the other"
	else
		fail "deep look-alike paths 400 KiB deep: >= 99% under their own path, <= 1% under the other" \
			"$right right, $wrong wrong, $other other of $total; $(first_line "$T/deep4.err")"
	fi
fi

# --- without the reader --------------------------------------------------
# no_complete DATA REGEX WHAT: no sample through a frame matching REGEX is
# counted complete, and some are late
no_complete() {
	stax info --json --focus "$2" -i "$1" >"$1.focus.json" 2>/dev/null
	c=$(json_get "$1.focus.json" 'd["quality"]["complete"]')
	l=$(json_get "$1.focus.json" 'd["quality"]["late"]')
	n=$(json_get "$1.focus.json" 'd["samples"]')
	if [ -n "$n" ] && [ "$n" -ge 200 ] && [ "$c" = 0 ] && [ "$l" -ge $((n * 9 / 10)) ]; then
		ok "$3: none of the $n stacks through $2 counted complete ($l late)"
	else
		fail "$3: no stack through $2 counted complete" "complete ${c:-?}, late ${l:-?} of ${n:-?}"
	fi
}

if [ -x "$DEEP" ]; then
	stax record -q --no-bpf -o "$T/nodeep.data" -- "$DEEP" 3 "$T/nodeep.log" >/dev/null 2>"$T/nodeep.err"
	no_complete "$T/nodeep.data" '^leaf$' "--no-bpf, deep paths"
	stax info -i "$T/nodeep.data" >"$T/nodeep.info" 2>&1
	if grep -q '^  moment:    read after the sample, not by the in-kernel reader (--no-bpf): [1-9][0-9]* stacks late' "$T/nodeep.info"; then
		ok "--no-bpf: info says the recording read them after the sample, and why"
	else
		fail "--no-bpf: info says which way" "$(grep -E 'moment:|verdict' "$T/nodeep.info" | tr '\n' '|')"
	fi
	if stax doctor -i "$T/nodeep.data" 2>/dev/null | grep -q 'frames read after their sample (late).*(--no-bpf)'; then
		ok "--no-bpf: doctor explains the late stacks"
	else
		fail "--no-bpf: doctor explains the late stacks" "$(stax doctor -i "$T/nodeep.data" 2>&1 | head -n 4 | tr '\n' '|' | cut -c1-300)"
	fi
	stax flame --folded --no-late-frames -i "$T/nodeep.data" >"$T/nodeep.kept" 2>/dev/null
	inleaf=$(count "$T/nodeep.kept" ';leaf(;|$)') pathed=$(count "$T/nodeep.kept" ';path_[ab];(.*;)?leaf(;|$)')
	if [ "$inleaf" -ge 200 ] && [ "$pathed" = 0 ]; then
		ok "--no-late-frames: $inleaf stacks in leaf keep the frames of their copy, no path read later"
	else
		fail "--no-late-frames leaves the late frames out" "$inleaf in leaf, $pathed through a path"
	fi
fi
if [ -n "$py12" ]; then
	stax record -q --no-bpf -o "$T/nopy.data" -- "$py12" "$T/work.py" 2 >/dev/null 2>"$T/nopy.err"
	no_complete "$T/nopy.data" '^py::' "--no-bpf, Python"
	stax flame --folded --no-late-frames -i "$T/nopy.data" >"$T/nopy.kept" 2>/dev/null
	if [ "$(count "$T/nopy.kept" ';py::')" = 0 ] && [ "$(samples "$T/nopy.kept")" -ge 500 ]; then
		ok "--no-bpf, Python: --no-late-frames leaves every Python frame read later out"
	else
		fail "--no-bpf, Python: --no-late-frames leaves the late Python frames out" "$(count "$T/nopy.kept" ';py::') samples still have one"
	fi
fi

# as the user nobody: no CAP_BPF, no CAP_PERFMON, so no reader
group=$(id -gn nobody 2>/dev/null)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
if ! command -v setpriv >/dev/null 2>&1 || [ -z "$group" ]; then
	skip "as nobody" "needs setpriv and the user nobody"
elif [ "$paranoid" -gt 2 ]; then
	skip "as nobody" "kernel.perf_event_paranoid is $paranoid: a user may not record at all"
else
	mkdir -m 755 "$T/bin"
	mkdir -m 777 "$T/out"
	cp "$STAX" "$DEEP" "$T/bin/"
	chmod 755 "$T/bin/stax" "$T/bin/moment_deep-nofp"
	as_nobody() { timeout 120 setpriv --reuid=nobody --regid="$group" --clear-groups "$@"; }
	as_nobody "$T/bin/stax" record -q -o "$T/out/deep.data" -- "$T/bin/moment_deep-nofp" 3 "$T/out/deep.log" \
		>/dev/null 2>"$T/nobody.err"
	no_complete "$T/out/deep.data" '^leaf$' "as nobody, deep paths"
	if grep -q 'cannot load the in-kernel reader: it needs root, or CAP_BPF and CAP_PERFMON' "$T/nobody.err" &&
		stax info -i "$T/out/deep.data" 2>/dev/null | grep -q 'moment:    read after the sample, not by the in-kernel reader (cannot load the in-kernel reader: it needs root'; then
		ok "as nobody: record and info say the reader was not there, and why"
	else
		fail "as nobody: record and info say why there was no reader" "$(first_line "$T/nobody.err")"
	fi
	if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
		as_nobody "$T/bin/stax" record -q -o "$T/out/py.data" -- /usr/bin/python3 "$T/work.py" 2 >/dev/null 2>"$T/nopy2.err"
		no_complete "$T/out/py.data" '^py::' "as nobody, Python 3.11 (Debian)"
	else
		skip "as nobody, Python" "/usr/bin/python3 is not CPython 3.11"
	fi
fi
done_testing
