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

# The comparison, leaf first, up to main; prints a summary, the
# disagreement classes with an example each, and "PCT n.nn" last.
cat >"$T/compare.py" <<'EOF'
import collections, json, re, sys

def norm(name):
    name = re.sub(r"@@?[A-Za-z0-9_.]+$", "", name)       # symbol versions
    if re.match(r"^\S+\+0x[0-9a-f]+$", name):            # stax's module+offset
        return "[unknown]"
    return name

stax = {}
for s in json.load(open(sys.argv[1]))["samples"]:
    stax[(s["tid"] & 0xffffffff, s["time"])] = [norm(f["name"]) for f in s["frames"]]
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
        f = line.split(None, 1)
        cur.append(norm(f[1] if len(f) > 1 else "[unknown]"))

def upto_main(fr):
    return fr[:fr.index("main") + 1] if "main" in fr else fr

reached = same = full = 0
classes, example = collections.Counter(), {}
for k, pf in perf.items():
    if "main" not in pf:
        continue
    reached += 1
    sf = stax.get(k)
    if sf is None:
        c = "sample missing in stax"
    elif upto_main(sf) == upto_main(pf):
        same += 1
        if sf == pf:
            full += 1
            continue
        c = "same up to main, differ above it"
    else:
        a, b = upto_main(pf), upto_main(sf)
        if b[:len(a)] == a:
            c = "stax has extra frames"
        elif a[:len(b)] == b:
            c = "stax stops early"
        else:
            i = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
            c = "differ at %s frame" % ("the leaf" if i == 0 else "a caller")
    classes[c] += 1
    example.setdefault(c, (k, pf, sf or []))
pct = 100.0 * same / reached if reached else 0.0
print("perf %d samples, stax %d; %d reach main in perf; identical up to main %d (%.2f%%),"
      " whole stack %d" % (len(perf), len(stax), reached, same, pct, full))
for c, n in classes.most_common():
    k, pf, sf = example[c]
    print("  %d x %s, e.g. tid %d time %d\n    perf: %s\n    stax: %s"
          % (n, c, k[0], k[1], ";".join(pf[:14]), ";".join(sf[:14])))
print("PCT %.2f" % pct)
EOF

# compare NAME PERFDATA: run both tools, check >= 99% agreement.
compare() {
	if [ -z "$PY" ]; then
		skip "$1: same stacks as perf script" "python3 is missing"
		return
	fi
	if ! stax script -i "$2" --json >"$T/$1.json" 2>"$T/$1.err"; then
		fail "$1: stax script reads it" "$(first_line "$T/$1.err")"
		return
	fi
	perf script --no-inline --ns -F comm,tid,time,ip,sym -i "$2" >"$T/$1.perf" 2>/dev/null
	"$PY" "$T/compare.py" "$T/$1.json" "$T/$1.perf" >"$T/$1.cmp" 2>&1
	pct=$(sed -n 's/^PCT //p' "$T/$1.cmp")
	reached=$(sed -n 's/.*; \([0-9]*\) reach main.*/\1/p' "$T/$1.cmp")
	sed '$d' "$T/$1.cmp" | sed 's/^/# /'
	if [ -z "$pct" ] || [ "${reached:-0}" -lt 500 ]; then
		fail "$1: same stacks as perf script" "too few samples to compare ($(first_line "$T/$1.cmp"))"
	elif between "$pct" 99 100; then
		ok "$1: same stacks as perf script ($pct% of $reached)"
	else
		fail "$1: same stacks as perf script" "only $pct% of $reached agree up to main"
	fi
}

# precord NAME ARGS...: perf record into $T/NAME.data (retry once longer)
precord() {
	name=$1
	shift
	perf record -q -o "$T/$name.data" "$@" >/dev/null 2>"$T/$name.perr"
}

# 1. frame pointers (-g), file format
if precord fp -e cpu-clock -g -- "$PROG/callgraph-fp"; then
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
if precord dwarf -e cpu-clock --call-graph dwarf,65528 -- "$PROG/callgraph-nofp"; then
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

# 3. the pipe format, as a file and from standard input
if perf record -q -e cpu-clock -g -o - -- "$PROG/callgraph-fp" >"$T/pipe.data" 2>"$T/pipe.perr"; then
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
if perf record -q -e cpu-clock --call-graph dwarf,16384 -o - -- "$PROG/callgraph-nofp" \
	>"$T/pipedw.data" 2>"$T/pipedw.perr"; then
	compare "pipe-dwarf" "$T/pipedw.data"
else
	fail "pipe-dwarf: perf record -o -" "$(first_line "$T/pipedw.perr")"
fi

# 4. stax import, then the query commands on the recording
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

# 5. truncated and corrupted files: an error line or a prefix, never a crash
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
