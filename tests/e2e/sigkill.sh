#!/bin/sh
# sigkill.sh - the recording file is readable while it grows, and after the
# recorder was killed with SIGKILL (up to its last complete chunk).
#
# spin-fp 600 prints its pid, then spins in main;spin_loop (it is killed
# at the end). How often chunks are written, in time, and how much a
# SIGKILL loses are timings: make bench measures them (section 10). Here
# the file must grow chunk by chunk while the program runs, whatever the
# machine's load.
. "$(dirname "$0")/lib.sh"
require_stax

f=$T/k.data
"$STAX" record -o "$f" -- "$PROG/spin-fp" 600 >"$T/spin.pid" 2>"$T/rec.err" &
st=$!
bg_add "$st"
wait_for "[ -s '$T/spin.pid' ]" 60
spin=$(cat "$T/spin.pid" 2>/dev/null)
[ -n "$spin" ] && bg_add "$spin"

# The file grows in steps, one complete chunk per write(): count the
# steps while the program runs (60 s only stops a hang).
grows() {
	prev=$(stat -c %s "$f" 2>/dev/null || echo 0)
	n=0 i=0
	while [ "$n" -lt 6 ] && [ "$i" -lt 6000 ]; do
		s=$(stat -c %s "$f" 2>/dev/null || echo 0)
		[ "$s" != "$prev" ] && n=$((n + 1))
		prev=$s
		i=$((i + 1))
		sleep 0.01
	done
	echo "$n"
}
n=$(grows)
if [ "$n" -ge 6 ] && kill -0 "$st" 2>/dev/null; then
	ok "the file grows chunk by chunk while recording ($n writes seen)"
else
	fail "the file grows chunk by chunk while recording" "$n writes seen in 60 s: $(first_line "$T/rec.err")"
fi

# count: samples in $f now, through flame --folded
count() { stax flame --folded -i "$f" 2>"$T/q.err" | samples /dev/stdin; }

# While recording: samples appear, and their number grows.
# (the waits are only hang limits: each ends as soon as it is met)
n1=0
wait_for '[ "$(count)" -gt 0 ]' 60
n1=$(count)
if [ "$n1" -gt 0 ]; then
	ok "query while recording: $n1 samples"
else
	fail "query while recording gives samples" "0 samples after 60 s: $(first_line "$T/q.err")"
fi
n2=$n1
wait_for '[ "$(count)" -gt "$n1" ]' 60
n2=$(count)
if [ "$n2" -gt "$n1" ] && kill -0 "$st" 2>/dev/null; then
	ok "the recording grows while it runs ($n1 -> $n2 samples)"
else
	fail "the recording grows while it runs" "still $n2 samples 60 s later"
fi
stax info -i "$f" >"$T/info1.txt" 2>"$T/info1.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "info while recording: status 0"
else
	fail "info while recording: status 0" "status $rc: $(first_line "$T/info1.err")"
fi

# SIGKILL the recorder, then the program it was recording.
kill -9 "$st" 2>/dev/null
wait "$st" 2>/dev/null
[ -n "$spin" ] && kill -9 "$spin" 2>/dev/null
size=$(wc -c <"$f" 2>/dev/null || echo 0)

stax top -i "$f" >"$T/top.txt" 2>"$T/top.err"
rc=$?
first=$(col_values "$T/top.txt" FUNCTION | sed -n 1p)
if [ "$rc" -eq 0 ] && [ "$first" = spin_loop ]; then
	ok "top after SIGKILL: status 0, spin_loop first"
else
	fail "top after SIGKILL: status 0, spin_loop first" "status $rc, first '$first' ($size bytes): $(first_line "$T/top.err")"
fi
stax info -i "$f" >"$T/info.txt" 2>"$T/info.err"
rc=$?
if [ "$rc" -eq 0 ] && ! crashed "$T/info.err" "$rc"; then
	ok "info after SIGKILL: status 0"
else
	fail "info after SIGKILL: status 0" "status $rc: $(first_line "$T/info.err")"
fi
n3=$(count)
s=$(stax flame --folded -i "$f" 2>/dev/null | share /dev/stdin ";main;spin_loop$K")
if [ "$n3" -ge "$n2" ] && between "$s" 95 100; then
	ok "after SIGKILL: $n3 samples (>= $n2 seen while running), $s% main;spin_loop"
else
	fail "after SIGKILL: samples kept, in main;spin_loop" "$n3 samples (had $n2), $s%"
fi
for cmd in threads script "flame"; do
	stax $cmd -i "$f" >/dev/null 2>"$T/c.err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$cmd after SIGKILL: status 0"
	else
		fail "$cmd after SIGKILL: status 0" "status $rc: $(first_line "$T/c.err")"
	fi
done

done_testing
