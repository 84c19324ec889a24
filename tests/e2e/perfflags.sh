#!/bin/sh
# perfflags.sh - record takes perf record's spellings: -g, --call-graph,
# -c, -t, --pid; perf flags stax lacks say what to use instead; the
# options after CMD are CMD's own.
#
# callgraph: main -> a -> b -> leaf_b (75%), main -> a -> c -> leaf_c (25%);
# threads: worker-a/b/c burn the same loop in work_a/b/c (see the programs).
# stax-test: seconds=10
. "$(dirname "$0")/lib.sh"
require_stax

FULL_B=";main;a;b;leaf_b$K"

# rec NAME ARGS...: record callgraph-nofp (no frame pointers: only DWARF
# gives whole stacks) with ARGS into $T/NAME.data, info in $T/NAME.json
rec() {
	name=$1
	shift
	stax record -q "$@" -o "$T/$name.data" -- "$PROG/callgraph-nofp" "${SCALE:-0.5}" >/dev/null 2>"$T/$name.err"
	rc=$?
	stax info --json -i "$T/$name.data" >"$T/$name.json" 2>/dev/null
	stax flame --folded -i "$T/$name.data" >"$T/$name.folded" 2>/dev/null
	return $rc
}
json_str() { sed -n "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" "$1"; }
json_num() { grep -o "\"$2\":[0-9.]*" "$1" | head -n 1 | cut -d: -f2; }
quality() { sed -n "s/.*\"quality\":{[^}]*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

# -g: perf's "record call graphs", stax's default hybrid unwinding
if rec g -g && [ "$(json_str "$T/g.json" unwind)" = hybrid ]; then
	ok "record -g -- CMD records with hybrid unwinding"
else
	fail "record -g -- CMD records with hybrid unwinding" "status $rc, unwind '$(json_str "$T/g.json" unwind)': $(first_line "$T/g.err")"
fi
s=$(share "$T/g.folded" "$FULL_B")
if between "$s" 55 90; then
	ok "record -g: main;a;b;leaf_b has ~75% of a no-frame-pointer program ($s%)"
else
	fail "record -g: main;a;b;leaf_b has ~75% of a no-frame-pointer program" "$s% ($(samples "$T/g.folded") samples)"
fi

# --call-graph dwarf,16384: --unwind dwarf with 16 KiB copies: whole stacks
if rec d16 --call-graph dwarf,16384 && [ "$(json_str "$T/d16.json" unwind)" = dwarf ]; then
	ok "record --call-graph dwarf,16384 -- CMD records with dwarf unwinding"
else
	fail "record --call-graph dwarf,16384 -- CMD records with dwarf unwinding" "status $rc, unwind '$(json_str "$T/d16.json" unwind)': $(first_line "$T/d16.err")"
fi
n=$(json_num "$T/d16.json" samples)
c=$(quality "$T/d16.json" complete)
if [ -n "$n" ] && [ "$n" -gt 0 ] && between "$c" "$(echo "$n" | awk '{ print $1 * 0.9 }')" "$n"; then
	ok "record --call-graph dwarf,16384: stacks are complete ($c of $n)"
else
	fail "record --call-graph dwarf,16384: stacks are complete" "$c of $n complete"
fi
# the SIZE is the stack copy: 64 bytes cannot hold main's frame (and
# --no-read-stack: the rest is not read from the process; --no-bpf: nor
# at the sample by the in-kernel reader, whose window past the copy and
# reading of a new thread's stack top would hold it)
SCALE=0.2 rec d64 --call-graph dwarf,64 --no-read-stack --no-bpf
n=$(json_num "$T/d64.json" samples)
t=$(quality "$T/d64.json" truncated)
if [ "$rc" -eq 0 ] && [ -n "$n" ] && [ "$n" -gt 0 ] && between "$t" "$(echo "$n" | awk '{ print $1 * 0.9 }')" "$n"; then
	ok "record --call-graph dwarf,64: the 64-byte copy truncates the stacks ($t of $n)"
else
	fail "record --call-graph dwarf,64: the 64-byte copy truncates the stacks" "status $rc, $t of $n truncated: $(first_line "$T/d64.err")"
fi
if rec fp --call-graph fp && [ "$(json_str "$T/fp.json" unwind)" = fp ]; then
	ok "record --call-graph fp is --unwind fp"
else
	fail "record --call-graph fp is --unwind fp" "status $rc, unwind '$(json_str "$T/fp.json" unwind)': $(first_line "$T/fp.err")"
fi

# -c COUNT: a cpu-clock sample every COUNT ns (2 ms: about 500 per s of CPU)
if rec c -c 2000000 && grep -q '"requested_hz":0' "$T/c.json"; then
	ok "record -c 2000000 records with a fixed period"
else
	fail "record -c 2000000 records with a fixed period" "status $rc: $(first_line "$T/c.err") $(cut -c1-200 "$T/c.json")"
fi
hz=$(json_num "$T/c.json" effective_hz)
if between "$hz" 350 650; then
	ok "record -c 2000000: about 500 samples per second of CPU ($hz)"
else
	fail "record -c 2000000: about 500 samples per second of CPU" "$hz Hz"
fi
stax info -i "$T/c.data" >"$T/c.txt" 2>&1
if grep -q "every 2000000 ns" "$T/c.txt"; then
	ok "info shows the period of record -c"
else
	fail "info shows the period of record -c" "$(grep event: "$T/c.txt")"
fi

# -t TID: that thread alone (its process's other threads burn as much CPU)
"$PROG/threads-fp" 20 >/dev/null 2>&1 &
tp=$!
bg_add $tp
tid=""
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	for t in /proc/$tp/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = worker-a ] && tid=${t##*/}
	done
	[ -n "$tid" ] && break
	sleep 0.1
done
if [ -z "$tid" ]; then
	fail "record -t TID" "threads-fp has no worker-a thread"
else
	stax record -q -t "$tid" --duration 1 -o "$T/t.data" >/dev/null 2>"$T/t.err"
	rc=$?
	stax threads -i "$T/t.data" >"$T/t.txt" 2>/dev/null
	stax flame --folded -i "$T/t.data" >"$T/t.folded" 2>/dev/null
	tids=$(col_values "$T/t.txt" TID | sort -u | tr '\n' ' ')
	if [ "$rc" -eq 0 ] && [ "$tids" = "$tid " ]; then
		ok "record -t TID records that thread only"
	else
		fail "record -t TID records that thread only" "status $rc, tids in the recording: '$tids' (want $tid): $(first_line "$T/t.err")"
	fi
	s=$(share "$T/t.folded" ";work_a$K")
	if between "$s" 80 100; then
		ok "record -t TID: its samples are in work_a ($s%)"
	else
		fail "record -t TID: its samples are in work_a" "$s% of $(samples "$T/t.folded")"
	fi
	# --pid is -p: the whole process, every thread
	stax record -q --pid "$tp" --duration 1 -o "$T/p.data" >/dev/null 2>"$T/p.err"
	rc=$?
	stax threads -i "$T/p.data" >"$T/p.txt" 2>/dev/null
	nt=$(col_values "$T/p.txt" TID | sort -u | wc -l)
	if [ "$rc" -eq 0 ] && [ "$nt" -ge 3 ]; then
		ok "record --pid PID records every thread of the process ($nt)"
	else
		fail "record --pid PID records every thread of the process" "status $rc, $nt threads: $(first_line "$T/p.err")"
	fi
	kill "$tp" 2>/dev/null
	wait "$tp" 2>/dev/null
fi

# perf flags stax has not: one error line saying what to use instead
for f in -b "--call-graph lbr" "-C 0" "-u root" "-G x" "-j any" -d; do
	stax record $f -o "$T/none.data" -- true >"$T/pf.out" 2>"$T/pf.err"
	rc=$?
	if [ "$rc" -ne 0 ] && one_line_error "$T/pf.err" && grep -q "use " "$T/pf.err" && [ ! -e "$T/none.data" ]; then
		ok "record $f says what to use instead"
	else
		fail "record $f says what to use instead" "status $rc: $(first_line "$T/pf.err")"
	fi
done

# CMD's options are CMD's, even those record also has (no permutation)
stax record -q -o "$T/sh.data" -- sh -c 'echo "$@"' sh -g -x --call-graph >"$T/sh.out" 2>"$T/sh.err"
if [ "$(cat "$T/sh.out")" = "-g -x --call-graph" ]; then
	ok "record -- CMD leaves CMD's options to CMD"
else
	fail "record -- CMD leaves CMD's options to CMD" "CMD printed '$(cat "$T/sh.out")': $(first_line "$T/sh.err")"
fi
stax record -q -o "$T/sh2.data" sh -c 'echo "$@"' sh -x >"$T/sh.out" 2>"$T/sh.err"
if [ "$(cat "$T/sh.out")" = "-x" ]; then
	ok "record CMD -x (no --) leaves -x to CMD"
else
	fail "record CMD -x (no --) leaves -x to CMD" "CMD printed '$(cat "$T/sh.out")': $(first_line "$T/sh.err")"
fi

# long options are spelled out: a prefix is an unknown option
stax record --call-gr fp -o "$T/none.data" -- true >/dev/null 2>"$T/ab.err"
if [ $? -ne 0 ] && one_line_error "$T/ab.err" && grep -q "unknown option '--call-gr'" "$T/ab.err"; then
	ok "record refuses an abbreviated long option"
else
	fail "record refuses an abbreviated long option" "$(first_line "$T/ab.err")"
fi
stax top --no-dem -i "$T/g.data" >/dev/null 2>"$T/ab.err"
if [ $? -ne 0 ] && one_line_error "$T/ab.err" && grep -q "unknown option '--no-dem'" "$T/ab.err"; then
	ok "top refuses an abbreviated long option"
else
	fail "top refuses an abbreviated long option" "$(first_line "$T/ab.err")"
fi
stax top --json=yes -i "$T/g.data" >/dev/null 2>"$T/ab.err"
if [ $? -ne 0 ] && one_line_error "$T/ab.err" && grep -q "takes no value" "$T/ab.err"; then
	ok "top --json=yes: a flag takes no value"
else
	fail "top --json=yes: a flag takes no value" "$(first_line "$T/ab.err")"
fi

done_testing
