#!/bin/sh
# manythreads.sh - a thousand threads: the recorder keeps up or says what
# it lost, never crashes, and the threads keep their names.
#
#   manythreads-fp 1000 2   1,000 threads named mt-0 ... mt-999 spin in
#                           thread_main;thread_work for 2 s; exits 0 when
#                           every thread was created
. "$(dirname "$0")/lib.sh"
require_stax

json_num() { grep -o "\"$1\":[0-9.]*" "$2" | head -n 1 | cut -d: -f2; }

stax record -o "$T/t.data" -- "$PROG/manythreads-fp" 1000 2 >/dev/null 2>"$T/rec.err"
rc=$?
if [ "$rc" -eq 0 ] && ! crashed "$T/rec.err" "$rc"; then
	ok "record of 1,000 threads exits 0"
else
	fail "record of 1,000 threads exits 0" "status $rc: $(grep -v '^stax: \(warning\|recorded\)' "$T/rec.err" | head -n 2 | tr '\n' '|' | cut -c1-200)"
fi

stax info --json -i "$T/t.data" >"$T/t.json" 2>"$T/read.err"
irc=$?
stax flame --folded -i "$T/t.data" >"$T/t.folded" 2>>"$T/read.err"
frc=$?
stax threads -i "$T/t.data" >"$T/t.threads" 2>>"$T/read.err"
trc=$?
if [ "$irc" -eq 0 ] && [ "$frc" -eq 0 ] && [ "$trc" -eq 0 ]; then
	ok "the file reads (info, flame, threads)"
else
	fail "the file reads" "info $irc, flame $frc, threads $trc: $(first_line "$T/read.err")"
fi

# losses, when there are any, are reported, and the numbers agree
lost=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$T/rec.err")
ilost=$(json_num lost "$T/t.json")
if [ -n "$lost" ] && [ "$lost" = "$ilost" ] &&
	{ [ "$lost" -eq 0 ] || grep -q "^stax: warning: $lost records were lost .*(raise -m, now .* per cpu, or lower -F" "$T/rec.err" ||
	  grep -q "^stax: warning: [0-9]* samples were dropped by stax" "$T/rec.err"; }; then
	ok "$lost records lost, the same in the summary, its warning and stax info"
else
	fail "losses reported and consistent" "summary '$lost', info '$ilost': $(grep -m1 'lost' "$T/rec.err" | cut -c1-200)"
fi

# The drain thread copies the rings whatever unwinding does: the kernel's
# rings lose nothing; samples the recorder shortened or dropped when it
# fell behind are counted, the same in the summary and stax info.
ring=$(grep -o '"ring":[0-9]*' "$T/t.json" | cut -d: -f2)
queue=$(grep -o '"queue":[0-9]*' "$T/t.json" | cut -d: -f2)
trimmed=$(json_num trimmed "$T/t.json")
strim=$(sed -n 's/^stax: \([0-9]*\) samples\{0,1\} kept only the top .*/\1/p' "$T/rec.err")
sdrop=$(sed -n 's/^stax: warning: \([0-9]*\) samples were dropped by stax.*/\1/p' "$T/rec.err")
if [ "$ring" = 0 ]; then
	ok "the kernel's rings lost no record (queue dropped ${queue:-?}, shortened ${trimmed:-?})"
else
	fail "the kernel's rings lost no record" "lost_by_cause ring '$ring': $(grep -o '"lost_by_cause":{[^}]*}' "$T/t.json")"
fi
if [ -n "$trimmed" ] && [ "$trimmed" = "${strim:-0}" ] && [ "$queue" = "${sdrop:-0}" ]; then
	ok "shortened ($trimmed) and dropped ($queue) samples agree in the summary and stax info"
else
	fail "degraded samples counted alike" "info trimmed '$trimmed' queue '$queue', summary '$strim' '$sdrop'"
fi

# The threads: one process, many threads with samples, and the samples in
# thread_work (after pthread_setname_np) carry the thread's own name.
pids=$(col_values "$T/t.threads" PID | sort -u | wc -l)
tids=$(col_values "$T/t.threads" TID | sort -u | wc -l)
work=$(samples "$T/t.folded" ";thread_main;thread_work$K")
named=$(samples "$T/t.folded" "^mt-[0-9]+;.*;thread_main;thread_work$K")
if [ "$pids" -eq 1 ] && [ "$tids" -ge 50 ]; then
	ok "one process, $tids threads with samples"
else
	fail "one process, at least 50 threads with samples" "$pids processes, $tids threads: $(sed -n 2,3p "$T/t.threads" | tr '\n' '|')"
fi
if [ "$work" -gt 0 ] && [ $((named * 100)) -ge $((work * 95)) ]; then
	ok "$named of $work samples in thread_work are in threads named mt-N"
else
	fail "samples in thread_work carry the thread's name (>= 95%)" "$named of $work: $(grep -v '^mt-' "$T/t.folded" | sort -t' ' -k2 -nr | head -n 2 | tr '\n' '|' | cut -c1-250)"
fi
unk=$(samples "$T/t.folded" '^\[unknown\];')
if [ "$unk" -eq 0 ]; then
	ok "no sample without a name"
else
	fail "no sample without a name" "$unk samples named [unknown]"
fi

done_testing
