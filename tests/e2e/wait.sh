#!/bin/sh
# wait.sh - "stax wait" against a live recording, and queries of a file
# that is still growing.
#
#   sleepy-fp 2   80 cycles of compute_phase 20 ms CPU + sleep 30 ms: 4 s,
#                 ~1600 samples at 999 Hz (main;compute_phase)
. "$(dirname "$0")/lib.sh"
require_stax

F=$T/w.data
"$STAX" record -q -o "$F" -- "$PROG/sleepy-fp" 2 >/dev/null 2>"$T/rec.err" &
REC=$!
bg_add "$REC"

t0=$(date +%s%N)
stax wait -i "$F" --for-samples 200 --timeout 20 2>"$T/w1.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$rc" -eq 0 ] && [ "$ms" -lt 3500 ]; then
	ok "wait --for-samples 200 returns 0 after $ms ms, before the program ends"
else
	fail "wait --for-samples 200 returns 0 before the program ends" "status $rc after $ms ms: $(first_line "$T/w1.err")"
fi
# the growing file answers as of now
stax top -i "$F" --json >"$T/top.json" 2>"$T/top.err"
rc=$?
n=$(sed -n 's/^{"json_version":[0-9]*,"samples":\([0-9]*\).*/\1/p' "$T/top.json")
if [ "$rc" -eq 0 ] && [ "${n:-0}" -ge 200 ] && [ "${n:-0}" -lt 1500 ] && grep -q '"compute_phase"' "$T/top.json"; then
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

stax wait -i "$F" --for-seconds 1.5 --timeout 20 2>"$T/w2.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait --for-seconds 1.5 returns 0"
else
	fail "wait --for-seconds 1.5 returns 0" "status $rc: $(first_line "$T/w2.err")"
fi
stax wait -i "$F" --until-symbol compute_phase --timeout 20 2>"$T/w3.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait --until-symbol compute_phase returns 0"
else
	fail "wait --until-symbol compute_phase returns 0" "status $rc: $(first_line "$T/w3.err")"
fi
t0=$(date +%s%N)
stax wait -i "$F" --until-symbol no_such_function --timeout 1 2>"$T/w4.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$rc" -eq 1 ] && [ "$ms" -ge 900 ] && [ "$ms" -lt 5000 ] && grep -q 'timed out' "$T/w4.err"; then
	ok "wait --until-symbol never met: exit 1 after the 1 s timeout ($ms ms)"
else
	fail "wait --until-symbol never met: exit 1 after the timeout" "status $rc after $ms ms: $(first_line "$T/w4.err")"
fi

wait "$REC"
# a finished recording that cannot meet the condition: exit 1, no hang
t0=$(date +%s%N)
stax wait -i "$F" --for-samples 100000000 2>"$T/w5.err"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$rc" -eq 1 ] && [ "$ms" -lt 5000 ] && grep -q 'finished without' "$T/w5.err"; then
	ok "wait on a finished recording that falls short: exit 1 after $ms ms"
else
	fail "wait on a finished recording that falls short: exit 1" "status $rc after $ms ms: $(first_line "$T/w5.err")"
fi
stax wait -i "$F" --for-samples 100 2>"$T/w6.err"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "wait on a finished recording that meets the condition: exit 0"
else
	fail "wait on a finished recording that meets the condition: exit 0" "status $rc: $(first_line "$T/w6.err")"
fi

# a file that does not exist yet is waited for
"$STAX" wait -i "$T/later.data" --for-samples 50 --timeout 20 2>"$T/w7.err" &
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

# off-CPU on a growing file: a thread blocked right now (sleep 4, in
# nanosleep the whole time) is in the views as of now, not only once its
# wait ends; and after the recorder is killed, as of its last chunk
O=$T/live.data
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	skip "off-CPU on a growing file" "--off-cpu needs root or kernel.perf_event_paranoid <= 1"
	done_testing
fi
"$STAX" record -q --off-cpu -o "$O" -- sleep 4 >/dev/null 2>"$T/live.err" &
LREC=$!
bg_add "$LREC"
sleep 2
stax threads -i "$O" >"$T/live.threads" 2>&1
# columns: TID PID NAME SAMPLES CPU_MS OFF_MS WALL_MS ONCPU% LOCK READ WRITE SLEEP
sl=$(awk '$3 == "sleep" { print $12 }' "$T/live.threads")
if [ -n "$sl" ] && between "$sl" 1000 3000; then
	ok "threads on a growing --off-cpu file: sleep has ${sl} ms of SLEEP while still blocked"
else
	fail "threads on a growing --off-cpu file shows the thread blocked now" "SLEEP '${sl:-}': $(tr '\n' '|' <"$T/live.threads" | cut -c1-300)"
fi
kill -9 "$LREC" 2>/dev/null
wait "$LREC" 2>/dev/null
stax threads -i "$O" >"$T/killed.threads" 2>&1
sk=$(awk '$3 == "sleep" { print $12 }' "$T/killed.threads")
if [ -n "$sk" ] && between "$sk" 1000 4100; then
	ok "after SIGKILL of the recorder: sleep still shows ${sk} ms of SLEEP, as of the last chunk"
else
	fail "after SIGKILL of the recorder the blocked thread is still shown" "SLEEP '${sk:-}': $(tr '\n' '|' <"$T/killed.threads" | cut -c1-300)"
fi

done_testing
