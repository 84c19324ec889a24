#!/bin/sh
# perfdata.sh - stax reads perf.data: the same stacks as perf script.
#
# Records tests/programs/build/callgraph-fp with `perf record -g` and
# callgraph-nofp with `--call-graph dwarf,65528` (stax unwinds those
# itself), in the file and the pipe format, then compares every sample's
# stack from `stax script -i perf.data --json` with
# `perf script --no-inline -F comm,tid,time,ip,sym` on the same file,
# matched by (tid, time). The check: at least 99% of the samples whose
# perf stack reaches main have the same functions, leaf first, up to main
# (kernel frames included). Frames above main (libc start-up) are only
# reported: perf and stax name aliases differently there
# (__libc_start_main_impl vs __libc_start_main), which says nothing about
# unwinding. Also: stax import, then stax top and info on the result; the
# pipe format from standard input; truncated and corrupted files.
# stax-test: seconds=45
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v perf >/dev/null 2>&1; then
	skip "all" "perf is not installed (apt-get install linux-perf)"
	done_testing
fi
if ! perf record -q -e cpu-clock -o "$T/probe.data" -- true >/dev/null 2>"$T/probe.err"; then
	skip "all" "perf record cannot sample here: $(first_line "$T/probe.err")"
	done_testing
fi
PY=$(command -v python3 || true)

# The comparison (compare.py STAX.json PERF.txt): samples matched by
# (tid, time), function names leaf first, kernel frames included, up to
# the first main or start_thread (a thread's start). Frames above that
# (libc start-up) are not compared. Two frames also count as the same when
# they are the same code address under another name (aliases such as
# __GI___qsort_r / qsort_r); the tally lists them as their own class.
# Samples whose perf stack stops before main are checked the other way:
# stax's stack must begin with perf's (less perf's trailing [unknown]
# entries, which are junk words of a broken chain). Prints the classes
# with an example each, then REACHED n, PCT p, PREFIX total agreeing.
# Every class seen is explained in docs/PERFDATA.md.
cat >"$T/compare.py" <<'EOF'
import collections, json, re, sys

ANCHORS = ("main", "start_thread")

def norm(name):
    name = re.sub(r" \(inlined\)$", "", name)
    name = re.sub(r"@@?[A-Za-z0-9_.]+$", "", name)       # symbol versions
    if re.match(r"^\S+\+0x[0-9a-f]+$", name):            # stax's module+offset
        return "[unknown]"
    return name

stax = {}
for s in json.load(open(sys.argv[1]))["samples"]:
    stax[(s["tid"] & 0xffffffff, int(s["time_ns"]))] = (s["pid"], [
        (norm(f["name"]), int(f["addr"], 16), f.get("module") or "") for f in s["frames"]])
perf, cur = {}, None
for line in open(sys.argv[2], errors="replace"):
    line = line.rstrip("\n")
    if not line.strip():
        cur = None
    elif not line[0].isspace():
        parts = line.split()
        sec, ns = parts[-1].rstrip(":").split(".")
        cur = perf.setdefault((int(parts[-2]) & 0xffffffff, int(sec) * 10**9 + int(ns)), [])
    elif cur is not None:
        m = re.match(r"\s*([0-9a-f]+)\s+(.*?)\s*(?:\(([^()]*)\))?$", line)
        if m:
            cur.append((norm(m.group(2) or "[unknown]"), int(m.group(1), 16),
                        (m.group(3) or "").rsplit("/", 1)[-1]))

def names(fr):
    return [f[0] for f in fr]

def anchor(fr):
    return next((i for i, f in enumerate(fr) if f[0] in ANCHORS), -1)

def upto(fr):
    i = anchor(fr)
    return fr[:i + 1] if i >= 0 else fr

# perf prints user addresses relative to the module's load address (and
# DWARF-unwound return addresses minus one): learn each (pid, module)
# load address from the frames whose names agree, within one byte.
bases = collections.defaultdict(collections.Counter)
for k, pf in perf.items():
    if k in stax:
        pid, sf = stax[k]
        for p, s in zip(pf, sf):
            if p[0] == s[0] and p[0] != "[unknown]":
                bases[(pid, s[2])][s[1] - p[1]] += 1
base = {m: c.most_common(1)[0][0] for m, c in bases.items()}

def same_frame(pid, p, s):
    """0: same name; 1: same code address, another name; -1: differ."""
    if p[0] == s[0]:
        return 0
    b = base.get((pid, s[2]))
    return 1 if b is not None and abs(s[1] - b - p[1]) <= 1 else -1

reached = same = unreached = prefix = 0
classes, example = collections.Counter(), {}
def note(c, k, pf, sf):
    classes[c] += 1
    example.setdefault(c, (k, pf, sf))
for k, pf in sorted(perf.items()):
    pid, sf = stax.get(k, (0, None))
    if sf is None:
        note("sample missing in stax", k, pf, [])
        continue
    if anchor(pf) < 0:
        unreached += 1
        while pf and pf[-1][0] == "[unknown]":
            pf = pf[:-1]
        if len(sf) >= len(pf) and all(same_frame(pid, p, s) >= 0 for p, s in zip(pf, sf)):
            prefix += 1
        else:
            note("perf stopped before main; stax differs within perf's frames", k, pf, sf)
        continue
    reached += 1
    a, b = upto(pf), upto(sf)
    r = [same_frame(pid, p, s) for p, s in zip(a, b)]
    if len(a) == len(b) and min(r) >= 0:
        same += 1
        if max(r) > 0:
            i = r.index(1)
            note("same address, other name: perf %s, stax %s" % (a[i][0], b[i][0]), k, pf, sf)
        continue
    if min(r + [0]) >= 0:
        c = "stax has extra frames" if len(b) > len(a) else "stax stops early"
    else:
        c = "differ at %s frame" % ("the leaf" if r.index(-1) == 0 else "a caller")
    note(c, k, pf, sf)
pct = 100.0 * same / reached if reached else 0.0
print("perf %d samples, stax %d; %d reach main or start_thread in perf: identical %d (%.2f%%);"
      " %d stop earlier in perf: stax begins with perf's frames in %d"
      % (len(perf), len(stax), reached, same, pct, unreached, prefix))
for c, n in classes.most_common():
    k, pf, sf = example[c]
    print("  %d x %s, e.g. tid %d time %d\n    perf: %s\n    stax: %s"
          % (n, c, k[0], k[1], ";".join(names(pf)[:16]), ";".join(names(sf)[:16])))
print("REACHED %d" % reached)
print("PCT %.2f" % pct)
print("PREFIX %d %d" % (unreached, prefix))
EOF

# compare NAME PERFDATA [inline]: run both tools, check >= 99% agreement
# (with inline frames on both sides when asked, else --no-inline on both).
compare() {
	if [ -z "$PY" ]; then
		skip "$1: same stacks as perf script" "python3 is missing"
		return
	fi
	if [ "${3:-}" = inline ]; then inl=""; else inl="--no-inline"; fi
	if ! stax script $inl -i "$2" --json >"$T/$1.json" 2>"$T/$1.err"; then
		fail "$1: stax script reads it" "$(first_line "$T/$1.err")"
		return
	fi
	perf script $inl --ns -F comm,tid,time,ip,sym,dso -i "$2" >"$T/$1.perf" 2>/dev/null
	"$PY" "$T/compare.py" "$T/$1.json" "$T/$1.perf" >"$T/$1.cmp" 2>&1
	pct=$(sed -n 's/^PCT //p' "$T/$1.cmp")
	reached=$(sed -n 's/^REACHED //p' "$T/$1.cmp")
	set -- "$1" $(sed -n 's/^PREFIX //p' "$T/$1.cmp")
	grep -v '^[A-Z][A-Z]* ' "$T/$1.cmp" | sed 's/^/# /'
	if [ -z "$pct" ]; then
		fail "$1: same stacks as perf script" "$(first_line "$T/$1.cmp")"
		return
	fi
	# One line either way: how many samples reach main in perf's stacks
	# and how many stop early moves with the load, so neither decides
	# how many checks are printed. At least 300 samples to compare; of
	# those reaching main, when there are 300 or more, 99% the same up to
	# main; of those where perf stops early, when there are 300 or more,
	# stax begins with perf's frames in 99% (fewer are only reported: the
	# junk words of perf's broken chains make a few differ, PERFDATA.md).
	unr=${2:-0} pre=${3:-0}
	why=""
	if [ $((${reached:-0} + unr)) -lt 300 ]; then
		why="too few samples to compare"
	elif [ "${reached:-0}" -ge 300 ] && ! between "$pct" 99 100; then
		why="only $pct% of $reached agree up to main"
	elif [ "$unr" -ge 300 ] && [ $((pre * 100)) -lt $((unr * 99)) ]; then
		why="where perf stops early, stax begins with perf's frames in only $pre of $unr"
	fi
	if [ -z "$why" ]; then
		ok "$1: same stacks as perf script ($pct% of $reached up to main; where perf stops early, stax begins with perf's frames in $pre of $unr)"
	else
		fail "$1: same stacks as perf script" "$why ($(first_line "$T/$1.cmp"))"
	fi
}

# precord NAME ARGS...: perf record into $T/NAME.data
precord() {
	name=$1
	shift
	perf record -q -o "$T/$name.data" "$@" >/dev/null 2>"$T/$name.perr"
}

# pcase NAME MODE PROGRAM ARGS...: record with -g (MODE g) or DWARF with
# the kernel's largest stack copy (MODE dwarf), then compare.
pcase() {
	name=$1 mode=$2
	shift 2
	if [ "$mode" = g ]; then
		set -- -g -- "$@"
	else
		set -- -F 2000 --call-graph dwarf,65528 -- "$@"
	fi
	if precord "$name" -e cpu-clock "$@"; then
		compare "$name" "$T/$name.data"
	else
		fail "$name: perf record" "$(first_line "$T/$name.perr")"
	fi
}

# 1. frame pointers (-g), file format
if precord fp -e cpu-clock -g -- "$PROG/callgraph-fp" 0.5; then
	compare "fp" "$T/fp.data"
	stax info -i "$T/fp.data" >"$T/fp.info" 2>&1
	if grep -q '^event: *cpu-clock' "$T/fp.info" && grep -q 'perf record' "$T/fp.info" &&
	   grep -q '^unwinding: *fp' "$T/fp.info"; then
		ok "fp: stax info shows perf's command, event and fp unwinding"
	else
		fail "fp: stax info shows perf's command, event and fp unwinding" "$(first_line "$T/fp.info")"
	fi
else
	fail "fp: perf record -g" "$(first_line "$T/fp.perr")"
fi

# 2. DWARF (--call-graph dwarf) of a program without frame pointers
if precord dwarf -e cpu-clock --call-graph dwarf,65528 -- "$PROG/callgraph-nofp" 0.5; then
	compare "dwarf" "$T/dwarf.data"
	stax info -i "$T/dwarf.data" >"$T/dwarf.info" 2>&1
	if grep -q '^unwinding: *hybrid' "$T/dwarf.info"; then
		ok "dwarf: unwound by stax (hybrid)"
	else
		fail "dwarf: unwound by stax (hybrid)" "$(grep unwinding "$T/dwarf.info")"
	fi
else
	fail "dwarf: perf record --call-graph dwarf" "$(first_line "$T/dwarf.perr")"
fi

# 2b. the DWARF cache (~/.cache/stax/dwarf/BUILDID, symbol/dwcache.c), with
# HOME in a temp dir. libc's debug file (libc6-dbg) has compressed
# sections, so the first query of the recording above makes an entry; the
# answer (names, inline frames, lines) must be the same from the entry,
# from a corrupted or truncated one (which is then rewritten), and with
# STAX_NO_CACHE=1 (which neither reads nor writes one).
if [ -s "$T/dwarf.data" ]; then
	H=$T/home
	D=$H/.cache/stax/dwarf
	mkdir -p "$H"
	# dq NAME [VAR=VALUE...]: stax top --lines -n 0 into $T/dc.NAME
	dq() {
		n=$1
		shift
		env -u XDG_CACHE_HOME -u STAX_NO_CACHE HOME="$H" "$@" timeout 120 "$STAX" top --lines -n 0 \
			-i "$T/dwarf.data" >"$T/dc.$n" 2>"$T/dc.$n.err" || fail "dwarf cache: $n" "$(first_line "$T/dc.$n.err")"
	}
	# same NAME LABEL: $T/dc.NAME is the answer without the cache
	same() {
		if cmp -s "$T/dc.ref" "$T/dc.$1"; then
			ok "dwarf cache: $2"
		else
			fail "dwarf cache: $2" "differs from STAX_NO_CACHE=1: $(diff "$T/dc.ref" "$T/dc.$1" | sed -n 2p)"
		fi
	}
	dq ref STAX_NO_CACHE=1
	if [ -n "$(ls "$D" 2>/dev/null)" ]; then
		fail "dwarf cache: STAX_NO_CACHE=1 writes no entry" "$(ls "$D" | head -n 1)"
	fi
	dq first
	E=$(ls -d "$D"/* 2>/dev/null | head -n 1)
	if [ ! -s "$T/dc.ref" ]; then
		fail "dwarf cache" "no answer without the cache"
	elif [ -z "$E" ]; then
		skip "dwarf cache" "no module of the recording has compressed debug sections (install libc6-dbg)"
	else
		same first "the query that makes the entry answers as without it"
		dq cached
		same cached "an answer from the entry"
		size=$(wc -c <"$E")
		head -c 4096 /dev/urandom | dd of="$E" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
		cp "$E" "$T/dc.bad"
		dq corrupt
		same corrupt "a corrupted entry gives the same answer"
		if cmp -s "$E" "$T/dc.bad"; then
			fail "dwarf cache: a corrupted entry is rewritten" "it is unchanged"
		else
			ok "dwarf cache: a corrupted entry is rewritten"
		fi
		head -c $((size / 3)) "$E" >"$T/dc.cut" && cat "$T/dc.cut" >"$E"
		dq truncated
		same truncated "a truncated entry gives the same answer"
		if [ "$(wc -c <"$E")" -eq "$size" ]; then
			ok "dwarf cache: a truncated entry is rewritten"
		else
			fail "dwarf cache: a truncated entry is rewritten" "$(wc -c <"$E") bytes, was $size"
		fi
		rm -f "$E"
		dq nocache STAX_NO_CACHE=1
		same nocache "STAX_NO_CACHE=1 after an entry existed"
		if [ -e "$E" ]; then
			fail "dwarf cache: STAX_NO_CACHE=1 writes no entry" "$E exists"
		else
			ok "dwarf cache: STAX_NO_CACHE=1 writes no entry"
		fi
	fi
fi

# 3. the other test programs: threads (stacks end at start_thread), the
# unwinding traps (qsort in libc, a signal handler, recursion deeper than
# perf's 127 frames, spliced), inlined functions, fork and exec.
pcase threads-fp g "$PROG/threads-fp" 0.4
pcase threads-nofp-g g "$PROG/threads-nofp" 0.3
pcase threads-nofp dwarf "$PROG/threads-nofp" 0.4
pcase qsort dwarf "$PROG/unwind_qsort-nofp" 0.5
pcase signal dwarf "$PROG/unwind_signal-nofp" 0.5
pcase deep-g g "$PROG/unwind_deep" 0.2
pcase deep dwarf "$PROG/unwind_deep" 0.3
pcase forkexec-g g "$PROG/forkexec-fp" "$PROG/callgraph-fp" 0.3
pcase forkexec dwarf "$PROG/forkexec-nofp" "$PROG/callgraph-nofp" 0.3
# inline.c built as tests/e2e/symbols.sh builds it (gcc -O2 -g -no-pie)
if gcc -O2 -g -no-pie -I"$ROOT/tests/programs" -o "$T/inline" "$ROOT/tests/programs/inline.c" 2>"$T/cc.err"; then
	if precord inline -e cpu-clock --call-graph dwarf,65528 -- "$T/inline" 0.8; then
		compare "inline" "$T/inline.data"
		compare "inline-frames" "$T/inline.data" inline
	else
		fail "inline: perf record" "$(first_line "$T/inline.perr")"
	fi
else
	skip "inline: same stacks as perf script" "gcc cannot build inline.c: $(first_line "$T/cc.err")"
fi

# 4. the pipe format, as a file and from standard input
if perf record -q -e cpu-clock -g -o - -- "$PROG/callgraph-fp" 0.5 >"$T/pipe.data" 2>"$T/pipe.perr"; then
	compare "pipe" "$T/pipe.data"
	if cat "$T/pipe.data" | stax top -i - -n 5 >"$T/pipe.top" 2>"$T/pipe.err" &&
	   grep -q 'leaf_b' "$T/pipe.top"; then
		ok "pipe: stax top -i - reads perf record -o - from standard input"
	else
		fail "pipe: stax top -i - reads perf record -o - from standard input" "$(first_line "$T/pipe.err")"
	fi
else
	fail "pipe: perf record -o -" "$(first_line "$T/pipe.perr")"
fi
if perf record -q -e cpu-clock --call-graph dwarf,16384 -o - -- "$PROG/callgraph-nofp" 0.5 \
	>"$T/pipedw.data" 2>"$T/pipedw.perr"; then
	compare "pipe-dwarf" "$T/pipedw.data"
else
	fail "pipe-dwarf: perf record -o -" "$(first_line "$T/pipedw.perr")"
fi

# 5. the same workload recorded by stax record and by perf record -g
# (two runs, 4000 Hz each): per-function self shares and per-stack shares
# (folded, from main or start_thread down) agree within 3 points. perf's
# side comes from perf script, not from our reader, so this checks the
# recorder. User-space stacks only (kernel frames removed): interrupts
# from whatever else the machine does (disk completions, reschedules)
# land in either run at random and moved leaf shares by up to 7 points.
cat >"$T/fold.py" <<'EOF'
import collections, re, sys
def strip(f):
    return re.sub(r"@@?[A-Za-z0-9_.]+$", "", f)
def shares(stacks):
    tot = sum(stacks.values()) or 1
    selfc, stk = collections.Counter(), collections.Counter()
    for fr, n in stacks.items():            # fr: root first
        selfc[fr[-1]] += n
        i = next((i for i, f in enumerate(fr) if f in ("main", "start_thread")), 0)
        stk[";".join(fr[i:])] += n
    return ({k: 100.0 * v / tot for k, v in selfc.items()},
            {k: 100.0 * v / tot for k, v in stk.items()}, tot)
st = collections.Counter()
for line in open(sys.argv[1]):
    path, n = line.rsplit(" ", 1)
    fr = tuple(strip(f) for f in path.split(";")[1:] if not f.endswith("_[k]"))
    st[fr or ("[kernel]",)] += int(n)
pf, cur = collections.Counter(), None
for line in open(sys.argv[2], errors="replace"):
    if not line.strip():
        if cur is not None:
            pf[tuple(reversed(cur)) or ("[kernel]",)] += 1
        cur = None
    elif not line[0].isspace():
        cur = []
    elif cur is not None:
        f = line.split(None, 1)
        if int(f[0], 16) < 0xffff800000000000:
            cur.append(strip(f[1].strip() if len(f) > 1 else "[unknown]"))
if cur is not None:
    pf[tuple(reversed(cur)) or ("[kernel]",)] += 1
(s1, s2, sn), (p1, p2, pn) = shares(st), shares(pf)
worst = []
for what, a, b in (("self", s1, p1), ("stack", s2, p2)):
    d, k = max((abs(a.get(k, 0) - b.get(k, 0)), k) for k in set(a) | set(b))
    worst.append(d)
    print("# %s: largest difference %.2f points at %s (stax %.2f%%, perf %.2f%%)"
          % (what, d, k, a.get(k, 0), b.get(k, 0)))
print("# stax %d samples, perf %d" % (sn, pn))
print("WORST %.2f" % max(worst))
EOF
fold_check() {
	fc=$1 prog=$2 scale=$3 worst=""
	for try in 1 2; do
		set -- "$prog" "$scale"
		stax record -q -F 4000 -o "$T/$fc.stax" -- "$@" >/dev/null 2>"$T/$fc.serr" &&
		stax export --format folded -i "$T/$fc.stax" >"$T/$fc.folded" 2>>"$T/$fc.serr" &&
		precord "$fc-pg" -e cpu-clock -F 4000 -g -- "$@" &&
		perf script -F comm,tid,time,ip,sym -i "$T/$fc-pg.data" >"$T/$fc-pg.perf" 2>/dev/null &&
		"$PY" "$T/fold.py" "$T/$fc.folded" "$T/$fc-pg.perf" >"$T/$fc.fold" 2>&1 || break
		worst=$(sed -n 's/^WORST //p' "$T/$fc.fold")
		between "${worst:-99}" 0 3 && break
		scale=$((scale * 2))   # once more, longer
	done
	grep '^#' "$T/$fc.fold" 2>/dev/null
	if [ -z "${worst:-}" ]; then
		fail "$fc: stax record and perf record agree" "$(first_line "$T/$fc.serr") $(first_line "$T/$fc-pg.perr")"
	elif between "$worst" 0 3; then
		ok "$fc: stax record and perf record -g agree within $worst points per function and per stack"
	else
		fail "$fc: stax record and perf record -g agree within 3 points" "$worst points apart"
	fi
}
if [ -n "$PY" ]; then
	fold_check fold-callgraph "$PROG/callgraph-fp" 1
	fold_check fold-threads "$PROG/threads-fp" 1
else
	skip "fold: stax record and perf record agree" "python3 is missing"
fi

# 6. stax import, then the query commands on the recording
if [ -f "$T/fp.data" ]; then
	if stax import "$T/fp.data" -o "$T/fp.stax" 2>"$T/import.err"; then
		ok "import: converts perf.data"
		stax top -i "$T/fp.stax" -n 0 >"$T/top.txt" 2>&1
		lb=$(row_where "$T/top.txt" FUNCTION leaf_b TOTAL%)
		lc=$(row_where "$T/top.txt" FUNCTION leaf_c TOTAL%)
		lb=${lb%\%}
		lc=${lc%\%}
		if between "${lb:-0}" 65 85 && between "${lc:-0}" 15 35; then
			ok "import: stax top shows leaf_b ${lb}% and leaf_c ${lc}% (expected 75/25)"
		else
			fail "import: stax top shows leaf_b 75% and leaf_c 25%" "got '${lb:-}' and '${lc:-}'"
		fi
		stax info -i "$T/fp.stax" >"$T/import.info" 2>&1
		if grep -q '(finished)' "$T/import.info"; then
			ok "import: the recording is finished (symbols appended)"
		else
			fail "import: the recording is finished" "$(first_line "$T/import.info")"
		fi
	else
		fail "import: converts perf.data" "$(first_line "$T/import.err")"
	fi
	printf 'not perf\n' >"$T/junk.data"
	stax import "$T/junk.data" -o "$T/junk.stax" 2>"$T/junk.err"
	st=$?
	if [ "$st" -ne 0 ] && one_line_error "$T/junk.err"; then
		ok "import: a file that is not perf.data gives one error line"
	else
		fail "import: a file that is not perf.data gives one error line" "status $st: $(first_line "$T/junk.err")"
	fi
fi

# 7. truncated and corrupted files: an error line or a prefix, never a crash
if [ -f "$T/fp.data" ]; then
	size=$(wc -c <"$T/fp.data")
	bad=""
	for cut in 8 16 100 104 200 300 1000 5000 20000 $((size / 2)) $((size - 100)) $((size - 1)); do
		[ "$cut" -lt "$size" ] || continue
		head -c "$cut" "$T/fp.data" >"$T/cut.data"
		stax top -i "$T/cut.data" >/dev/null 2>"$T/cut.err"
		st=$?
		if crashed "$T/cut.err" "$st" || { [ "$st" -ne 0 ] && ! one_line_error "$T/cut.err"; }; then
			bad="$bad cut@$cut($st: $(first_line "$T/cut.err"))"
		fi
	done
	for off in 0 12 30 50 110 300 400 2000 9000; do
		cp "$T/fp.data" "$T/flip.data"
		printf '\377\377\377\177' | dd of="$T/flip.data" bs=1 seek="$off" conv=notrunc 2>/dev/null
		stax top -i "$T/flip.data" >/dev/null 2>"$T/flip.err"
		st=$?
		if crashed "$T/flip.err" "$st" || { [ "$st" -ne 0 ] && ! one_line_error "$T/flip.err"; }; then
			bad="$bad flip@$off($st: $(first_line "$T/flip.err"))"
		fi
	done
	if [ -z "$bad" ]; then
		ok "damaged: truncated and flipped files give an error line or a prefix"
	else
		fail "damaged: truncated and flipped files give an error line or a prefix" "$bad"
	fi
fi

done_testing
