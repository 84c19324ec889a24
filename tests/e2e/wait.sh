#!/bin/sh
# wait.sh - "stax wait" against a live recording, and queries of a file
# that is still growing.
#
#   sleepy-fp 4   160 cycles of compute_phase 20 ms CPU + sleep 30 ms: 8 s
#                 or more, ~3200 samples at 999 Hz (main;compute_phase);
#                 stopped with SIGINT once the live checks are done
# Nothing here depends on how fast the machine is: "before the program
# ends" is checked by the recorder still running, not by the clock.
. "$(dirname "$0")/lib.sh"
require_stax

F=$T/w.data
"$STAX" record -q -o "$F" -- "$PROG/sleepy-fp" 4 >/dev/null 2>"$T/rec.err" &
REC=$!
bg_add "$REC"

stax wait -i "$F" --for-samples 200 --timeout 60 2>"$T/w1.err"
rc=$?
if [ "$rc" -eq 0 ] && kill -0 "$REC" 2>/dev/null; then
	ok "wait --for-samples 200 returns 0 while the program still runs"
else
	fail "wait --for-samples 200 returns 0 before the program ends" "status $rc, recorder running: $(kill -0 "$REC" 2>/dev/null && echo yes || echo no): $(first_line "$T/w1.err")"
fi
# the growing file answers as of now: at least the 200 samples, fewer
# than the finished file will have (checked at the end)
stax top -i "$F" --json >"$T/top.json" 2>"$T/top.err"
rc=$?
n=$(sed -n 's/^{"json_version":[0-9]*,"samples":\([0-9]*\).*/\1/p' "$T/top.json")
if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 200 ] && kill -0 "$REC" 2>/dev/null && grep -q '"compute_phase"' "$T/top.json"; then
	ok "top on the growing file: $n samples so far, compute_phase among them"
else
	fail "top on the growing file answers as of now" "status $rc, samples '${n:-}': $(first_line "$T/top.err")"
fi
stax flame --folded -i "$F" >"$T/g.folded" 2>"$T/g.err" && stax threads -i "$F" >"$T/g.threads" 2>>"$T/g.err"
rc=$?
if [ "$rc" -eq 0 ] && [ "$(samples "$T/g.folded")" -ge 200 ] && grep -q sleepy-fp "$T/g.threads"; then
	ok "flame and threads on the growing file"
else
	fail "flame and threads on the growing file" "status $rc: $(first_line "$T/g.err")"
fi

stax wait -i "$F" --for-seconds 1.5 --timeout 60 2>"$T/w2.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait --for-seconds 1.5 returns 0"
else
	fail "wait --for-seconds 1.5 returns 0" "status $rc: $(first_line "$T/w2.err")"
fi
stax wait -i "$F" --until-symbol compute_phase --timeout 60 2>"$T/w3.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait --until-symbol compute_phase returns 0"
else
	fail "wait --until-symbol compute_phase returns 0" "status $rc: $(first_line "$T/w3.err")"
fi
# a condition never met: exit 1 once the timeout (1 s) has passed, at
# least that long (a busy machine only makes it longer), while the
# recording still runs
t0=$(date +%s%N)
stax wait -i "$F" --until-symbol no_such_function --timeout 1 2>"$T/w4.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$rc" -eq 1 ] && [ "$ms" -ge 900 ] && kill -0 "$REC" 2>/dev/null && grep -q 'timed out' "$T/w4.err"; then
	ok "wait --until-symbol never met: exit 1 after the 1 s timeout ($ms ms), the recording still running"
else
	fail "wait --until-symbol never met: exit 1 after the timeout" "status $rc after $ms ms: $(first_line "$T/w4.err")"
fi

kill -INT "$REC"
wait "$REC"
nf=$(stax top -i "$F" --json 2>/dev/null | sed -n 's/^{"json_version":[0-9]*,"samples":\([0-9]*\).*/\1/p')
if [ "${nf:-0}" -gt "${n:-0}" ] && stax info -i "$F" 2>/dev/null | grep -q '(finished)'; then
	ok "the finished recording has more samples ($nf) than top saw while it grew ($n)"
else
	fail "the finished recording has more samples than top saw while it grew" "finished '${nf:-}', while growing '${n:-}'"
fi
# a finished recording that cannot meet the condition: exit 1, no hang
# (the 120 s limit of the stax wrapper is only a hang limit)
stax wait -i "$F" --for-samples 100000000 2>"$T/w5.err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'finished without' "$T/w5.err"; then
	ok "wait on a finished recording that falls short: exit 1"
else
	fail "wait on a finished recording that falls short: exit 1" "status $rc: $(first_line "$T/w5.err")"
fi
stax wait -i "$F" --for-samples 100 2>"$T/w6.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait on a finished recording that meets the condition: exit 0"
else
	fail "wait on a finished recording that meets the condition: exit 0" "status $rc: $(first_line "$T/w6.err")"
fi

# a file that does not exist yet is waited for
"$STAX" wait -i "$T/later.data" --for-samples 50 --timeout 60 2>"$T/w7.err" &
W=$!
bg_add "$W"
sleep 0.3
stax record -q -o "$T/later.data" -- "$PROG/callgraph-fp" 0.3 >/dev/null 2>&1
wait "$W"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait on a file that does not exist yet returns 0 once it has the samples"
else
	fail "wait on a file that does not exist yet" "status $rc: $(first_line "$T/w7.err")"
fi

stax wait -i "$F" >/dev/null 2>"$T/w8.err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/w8.err"; then
	ok "wait without a condition: one error line"
else
	fail "wait without a condition: one error line" "status $rc: $(first_line "$T/w8.err")"
fi

# off-CPU on a growing file: a thread blocked right now (sleep 600, in
# nanosleep the whole time, killed at the end) is in the views as of now,
# not only once its wait ends: its SLEEP is nearly all of its wall time so
# far and grows from one query to the next while it stays blocked; and
# after the recorder is killed, as of its last chunk
O=$T/live.data
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	skip "off-CPU on a growing file" "--off-cpu needs root or kernel.perf_event_paranoid <= 1"
	done_testing
fi
"$STAX" record -q --off-cpu -o "$O" -- sleep 600 >/dev/null 2>"$T/live.err" &
LREC=$!
bg_add "$LREC"
# col_of FILE COLUMN: the sleep thread's COLUMN in a threads table
col_of() { row_where "$1" NAME sleep "$2"; }
# asleep FILE: SLEEP as a percentage of the thread's wall time neither on
# the CPU nor preempted
asleep() {
	awk -v s="$(col_of "$1" SLEEP)" -v w="$(col_of "$1" WALL_MS)" -v c="$(col_of "$1" CPU_MS)" -v p="$(col_of "$1" PREEMPTED)" \
		'BEGIN { if (w - c - p <= 0) print 0; else printf "%.1f\n", 100 * s / (w - c - p) }'
}
wait_for 'stax threads -i "$O" >"$T/live1.threads" 2>&1; between "$(col_of "$T/live1.threads" SLEEP)" 100 1e12' 60
s1=$(col_of "$T/live1.threads" SLEEP)
# gt A B: A > B (decimals)
gt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && b != "" && a + 0 > b + 0) }'; }
wait_for 'stax threads -i "$O" >"$T/live2.threads" 2>&1; gt "$(col_of "$T/live2.threads" SLEEP)" "$s1"' 60
s2=$(col_of "$T/live2.threads" SLEEP)
a2=$(asleep "$T/live2.threads")
if gt "$s2" "$s1" && between "$a2" 90 100 && kill -0 "$LREC" 2>/dev/null; then
	ok "threads on a growing --off-cpu file: sleep has ${s1} then ${s2} ms of SLEEP ($a2% of its wall off the CPU) while still blocked"
else
	fail "threads on a growing --off-cpu file shows the thread blocked now" "SLEEP '${s1:-}' then '${s2:-}' ($a2%): $(tr '\n' '|' <"$T/live2.threads" | cut -c1-300)"
fi
kill -9 "$LREC" 2>/dev/null
wait "$LREC" 2>/dev/null
stax threads -i "$O" >"$T/killed.threads" 2>&1
sk=$(col_of "$T/killed.threads" SLEEP)
ak=$(asleep "$T/killed.threads")
if [ -n "$sk" ] && between "$sk" "$s2" 1e12 && between "$ak" 90 100; then
	ok "after SIGKILL of the recorder: sleep still shows ${sk} ms of SLEEP (>= $s2 seen before, $ak% of its wall), as of the last chunk"
else
	fail "after SIGKILL of the recorder the blocked thread is still shown" "SLEEP '${sk:-}' (had $s2, $ak%): $(tr '\n' '|' <"$T/killed.threads" | cut -c1-300)"
fi

done_testing
