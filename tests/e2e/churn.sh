#!/bin/sh
# churn.sh - "stax record -a" while programs start and exit: the short-lived
# ones keep their names and symbols, also when their records were lost.
#
#   callgraph-fp 0.05   main;a;b;leaf_b 75%, main;a;c;leaf_c 25%, ~75 ms
#   callgraph-fp 1      the same, ~1.5 s
#   manythreads-fp 3 S  three threads spinning for S seconds (both cpus busy)
# The machine is shared: other processes are recorded too; the checks
# look at the processes this test starts, by pid.
# stax-test: seconds=8
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	skip "record -a while programs start and exit" "needs root or kernel.perf_event_paranoid <= 0"
	exit 0
fi

json_num() { grep -o "\"$1\":[0-9.]*" "$2" | head -n 1 | cut -d: -f2; }

# --- short programs started during a system-wide recording ------------------
"$STAX" record -a --duration 4 -o "$T/a.data" >/dev/null 2>"$T/a.err" &
REC=$!
bg_add "$REC"
sleep 0.5
: >"$T/pids"
i=0
while [ $i -lt 12 ]; do
	"$PROG/callgraph-fp" 0.05 >/dev/null 2>&1 &
	echo $! >>"$T/pids"
	wait $!
	i=$((i + 1))
done
wait "$REC"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "record -a --duration 4 while 12 programs start and exit: exits 0"
else
	fail "record -a while programs start and exit: exits 0" "status $rc: $(first_line "$T/a.err")"
fi
stax info --json -i "$T/a.data" >"$T/a.json" 2>/dev/null
# Each program with samples is named callgraph-fp (before its exec it was
# this shell's fork, sh), and no address in callgraph-fp is without a name
# (samples inside execve have the old program's pc, [unknown], as they
# always had); over all of them (a program has a few dozen samples, some
# in its start in ld.so), most samples are in main;a;b;leaf_b or
# main;a;c;leaf_c.
named=0 with=0 bad="" tc=0 tl=0
for p in $(cat "$T/pids"); do
	stax flame --folded --pid "$p" -i "$T/a.data" >"$T/p.folded" 2>/dev/null
	n=$(samples "$T/p.folded")
	[ "$n" -gt 0 ] || continue
	with=$((with + 1))
	c=$(samples "$T/p.folded" '^callgraph-fp;')
	l=$(samples "$T/p.folded" '^callgraph-fp;.*;main;a;(b;leaf_b|c;leaf_c)')
	u=$(samples "$T/p.folded" '^callgraph-fp;(.*;)?callgraph-fp\+0x')
	tc=$((tc + c))
	tl=$((tl + l))
	if [ "$c" -gt 0 ] && [ $((c * 2)) -ge "$n" ] && [ "$u" -eq 0 ]; then
		named=$((named + 1))
	else
		bad="$bad pid $p: $c of $n named, $u unnamed frames;"
	fi
done
unrec=$(json_num unrecovered_samples "$T/a.json")
if [ "$with" -ge 6 ] && [ -z "$bad" ] && [ $((tl * 100)) -ge $((tc * 70)) ]; then
	ok "$named of the 12 programs have samples, all named callgraph-fp; $tl of their $tc samples in main;a;b;leaf_b or main;a;c;leaf_c"
elif [ "$with" -ge 6 ] && [ "${unrec:-0}" -gt 0 ] && [ $((tl * 100)) -ge $((tc * 70)) ]; then
	ok "$named of $with programs with samples named and symbolized; the others are among the ${unrec} samples stax reported unrecovered"
else
	fail "short programs started during -a are named and symbolized" "$with with samples, $tl of $tc in the leaves:$bad $(grep -m1 'lost' "$T/a.err" | cut -c1-150)"
fi
unk=$(stax flame --folded -i "$T/a.data" 2>/dev/null | samples /dev/stdin '^\[unknown\];')
if [ -n "$unrec" ] && [ "$unk" -le "$unrec" ]; then
	ok "$unk samples without a process name, <= the $unrec stax reported unrecovered"
else
	fail "every sample without a name is reported" "$unk [unknown] samples, '$unrec' reported"
fi
# Tasks sampled after the kernel released them (the end of an exit; pid
# -1, more of them when other programs start and exit too) are named
# [exited], counted by info, and are in the kernel's exit path.
stax flame --folded -i "$T/a.data" 2>/dev/null >"$T/a.folded"
exi=$(samples "$T/a.folded" '^\[exited\];')
exk=$(samples "$T/a.folded" '^\[exited\];.*;do_exit_\[k\]')
rel=$(json_num released_samples "$T/a.json")
if [ -n "$rel" ] && [ "$exi" -eq "$rel" ] && [ $((exk * 10)) -ge $((exi * 9)) ]; then
	ok "$exi samples named [exited], as many as info's released_samples; $exk of them in do_exit"
else
	fail "samples of released tasks are named [exited] and counted" "$exi [exited], '$rel' released, $exk in do_exit"
fi

# --- a program whose records were lost ----------------------------------------
# Both cpus busy, 16 KiB rings, and the recorder stopped for a second: the
# rings are full when callgraph-fp starts, so its FORK, COMM and MMAP
# records are lost. When the recorder runs again, the program's samples
# come from a process no record named: its name and mappings are read from
# /proc, and its stacks are whole.
"$PROG/manythreads-fp" 3 8 >/dev/null 2>&1 &
SPIN=$!
bg_add "$SPIN"
"$STAX" record -a -m 4 --unwind fp --duration 5 -o "$T/l.data" >/dev/null 2>"$T/l.err" &
REC=$!
bg_add "$REC"
# recording (not still reading /proc at its start) before it is stopped
stax wait -i "$T/l.data" --for-samples 100 --timeout 60 >/dev/null 2>&1
kill -STOP "$REC"
sleep 0.5
"$PROG/callgraph-fp" 1 >/dev/null 2>&1 &
CG=$!
bg_add "$CG"
sleep 0.5
kill -CONT "$REC"
wait "$CG"
wait "$REC"
rc=$?
kill "$SPIN" 2>/dev/null
stax info --json -i "$T/l.data" >"$T/l.json" 2>/dev/null
lost=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$T/l.err")
rec=$(grep -o '"recovered":{"processes":[0-9]*' "$T/l.json" | grep -o '[0-9]*$')
if [ "$rc" -eq 0 ] && [ "${lost:-0}" -gt 0 ] && [ "${rec:-0}" -ge 1 ] &&
	grep -q '^stax: read the names and mappings of [0-9]* process' "$T/l.err"; then
	ok "a stopped recorder: $lost records lost, $rec processes named from /proc (summary and info)"
else
	fail "a stopped recorder: losses, processes named from /proc" "status $rc, lost '$lost', recovered '$rec': $(grep -m1 'read the names\|error' "$T/l.err" | cut -c1-200)"
fi
stax threads --pid "$CG" -i "$T/l.data" >"$T/cg.threads" 2>&1
name=$(col_values "$T/cg.threads" NAME | sort -u | tr '\n' ' ')
stax flame --folded --pid "$CG" -i "$T/l.data" >"$T/cg.folded" 2>/dev/null
sb=$(share "$T/cg.folded" "^callgraph-fp;.*;main;a;b;leaf_b$K")
sc=$(share "$T/cg.folded" "^callgraph-fp;.*;main;a;c;leaf_c$K")
if [ "$name" = "callgraph-fp " ] && between "$sb" 55 95 && between "$sc" 5 45; then
	ok "its records lost, callgraph-fp (pid $CG) is named and symbolized: main;a;b;leaf_b $sb%, main;a;c;leaf_c $sc%"
else
	fail "its records lost, callgraph-fp is named and symbolized" "names '$name', leaf_b $sb%, leaf_c $sc%: $(sort -t' ' -k2 -nr "$T/cg.folded" | head -n 2 | tr '\n' '|' | cut -c1-250)"
fi
unk=$(stax flame --folded -i "$T/l.data" 2>/dev/null | samples /dev/stdin '^\[unknown\];')
unrec=$(json_num unrecovered_samples "$T/l.json")
if [ -n "$unrec" ] && [ "$unk" -le "$unrec" ]; then
	ok "$unk samples without a process name, <= the $unrec stax reported unrecovered"
else
	fail "every sample without a name is reported" "$unk [unknown] samples, '$unrec' reported"
fi
stax info -i "$T/l.data" >"$T/l.info" 2>&1
if grep -q '^recovered:   from /proc, for records the kernel lost: names and mappings of [1-9][0-9]* process' "$T/l.info"; then
	ok "stax info: $(grep '^recovered:' "$T/l.info" | cut -c14-140)"
else
	fail "stax info has a recovered: line" "$(grep -v '^ ' "$T/l.info" | head -n 8 | tr '\n' '|' | cut -c1-300)"
fi

done_testing
