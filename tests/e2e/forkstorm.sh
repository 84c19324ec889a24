#!/bin/sh
# forkstorm.sh - 2,000 short-lived children: the recorder keeps up or says
# what it lost, never crashes, and the file reads.
#
#   forkstorm-fp 2000   forks 2,000 children (32 at a time), each burns
#                       ~1 ms in main;storm;child_work and exits; exits 0
#                       when every child did
. "$(dirname "$0")/lib.sh"
require_stax

# json_num KEY FILE: the first number after "KEY": in FILE
json_num() { grep -o "\"$1\":[0-9.]*" "$2" | head -n 1 | cut -d: -f2; }

# check NAME DATA ERR RC FRAMES: the checks every storm recording must
# pass; FRAMES (an ERE) must end at least 30% of the stacks
check() {
	n=$1 d=$2 e=$3 rc=$4 fr=$5
	if [ "$rc" -eq 0 ] && ! crashed "$e" "$rc"; then
		ok "$n: record exits 0 (the storm's status)"
	else
		fail "$n: record exits 0" "status $rc: $(grep -v '^stax: \(warning\|recorded\)' "$e" | head -n 2 | tr '\n' '|' | cut -c1-200)"
	fi
	stax info --json -i "$d" >"$T/$n.json" 2>"$T/$n.ierr"
	irc=$?
	stax flame --folded -i "$d" >"$T/$n.folded" 2>>"$T/$n.ierr"
	frc=$?
	stax threads --comm forkstorm-fp -i "$d" >"$T/$n.threads" 2>>"$T/$n.ierr"
	if [ "$irc" -eq 0 ] && [ "$frc" -eq 0 ] && ! grep -q 'error' "$T/$n.ierr"; then
		ok "$n: the file reads (info, flame, threads)"
	else
		fail "$n: the file reads" "info $irc, flame $frc: $(first_line "$T/$n.ierr")"
	fi
	# losses, when there are any, are reported, and the numbers agree
	lost=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$e")
	ilost=$(json_num lost "$T/$n.json")
	if [ -n "$lost" ] && [ "$lost" = "$ilost" ] &&
		{ [ "$lost" -eq 0 ] || grep -q "^stax: warning: $lost records were lost .*(raise -m, now .* per cpu, or lower -F" "$e"; }; then
		ok "$n: $lost records lost, the same in the summary, its warning and stax info"
	else
		fail "$n: losses reported and consistent" "summary '$lost', info '$ilost': $(grep -m1 'lost' "$e" | cut -c1-200)"
	fi
	# the children are there under their own pids, named and symbolized
	kids=$(col_values "$T/$n.threads" PID | sort -u | wc -l)
	cw=$(share "$T/$n.folded" "^forkstorm-fp;.*;$fr(;|$)")
	if [ "$kids" -ge 300 ] && between "$cw" 30 100; then
		ok "$n: $kids processes named forkstorm-fp have samples; $fr has $cw%"
	else
		fail "$n: the children are named and symbolized" "$kids processes, child_work $cw%: $(sort -t' ' -k2 -nr "$T/$n.folded" | head -n 2 | tr '\n' '|' | cut -c1-250)"
	fi
	# a sample without a process name is one stax counted as unrecovered
	unk=$(samples "$T/$n.folded" '^\[unknown\];')
	unrec=$(grep -o '"unrecovered_samples":[0-9]*' "$T/$n.json" | cut -d: -f2)
	if [ -n "$unrec" ] && [ "$unk" -le "$unrec" ]; then
		ok "$n: $unk samples without a process name, <= the $unrec stax reported unrecovered"
	else
		fail "$n: every sample without a name is reported" "$unk [unknown] samples, '$unrec' reported"
	fi
}

# The storm at the default settings.
stax record -o "$T/s.data" -- "$PROG/forkstorm-fp" 2000 >/dev/null 2>"$T/s.err"
check storm "$T/s.data" "$T/s.err" $? "main;storm;child_work"

# The same with small rings and the recorder stopped for a second while
# the storm runs: records are lost (FORKs and EXITs of children among
# them) and the recording still holds together. The command stops the
# recorder itself before the storm begins (its parent is stax), so the
# storm always runs into a stopped recorder, however fast the machine;
# 6,000 children so that most of the storm comes after the second.
"$STAX" record -m 4 --unwind fp -o "$T/l.data" -- \
	sh -c 'kill -STOP $PPID; exec "$1" 6000' sh "$PROG/forkstorm-fp" >/dev/null 2>"$T/l.err" &
REC=$!
bg_add "$REC"
# wait until it is stopped, then give the storm a second
i=0
while [ "$(ps -o stat= -p "$REC" 2>/dev/null | cut -c1)" != T ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1
kill -CONT "$REC" 2>/dev/null
wait "$REC"
rc=$?
# (frame pointers only: libc's clock_gettime hides child_work)
check lossy "$T/l.data" "$T/l.err" "$rc" "main;storm"
lost=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$T/l.err")
if [ "${lost:-0}" -gt 0 ]; then
	ok "lossy: the stopped recorder lost $lost records"
else
	fail "lossy: the stopped recorder lost records" "'$lost': $(first_line "$T/l.err")"
fi

done_testing
