#!/bin/sh
# system.sh - "stax record -a": every process on every cpu, filtered in the
# views with --pid and --comm; processes that existed before the recording
# (named from /proc) and ones that start and exit during it (named from
# their COMM records) both carry the right name.
#
#   spin-fp 600        started before recording: main;spin_loop (killed
#                      at the end)
#   callgraph-nofp 1   started once the recording has samples, exits
#                      before it is stopped (SIGINT): main;a;b;leaf_b 75%,
#                      main;a;c;leaf_c 25%
# -F 199 --stack-size 4096: every process's stack copies go through the
# rings slowly enough for the recorder to keep up on a busy machine (at
# 999 Hz with 32 KiB copies and both cpus busy the rings overflowed and
# the records naming the new process and mapping its files were lost with
# them: issue 16 item 6, another test's subject; callgraph's stacks fit in
# 4 KiB). Nothing waits for the clock: the recording is stopped once the
# program has exited.
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	skip "record -a" "needs root or kernel.perf_event_paranoid <= 0"
	exit 0
fi

"$PROG/spin-fp" 600 >"$T/spin.pid" 2>/dev/null &
SPIN=$!
bg_add "$SPIN"
wait_for "[ -s '$T/spin.pid' ]" 60

"$STAX" record -a -q -F 199 --stack-size 4096 -o "$T/a.data" >/dev/null 2>"$T/a.err" &
REC=$!
bg_add "$REC"
stax wait -i "$T/a.data" --for-samples 1 --timeout 60 2>"$T/w.err"
"$PROG/callgraph-nofp" 1 >/dev/null 2>&1 &
CG=$!
wait "$CG"
kill -INT "$REC"
wait "$REC"
rc=$?
kill "$SPIN" 2>/dev/null
if [ "$rc" -eq 0 ] && [ -s "$T/a.data" ]; then
	ok "record -a stops on SIGINT, exits 0"
else
	fail "record -a stops on SIGINT, exits 0" "status $rc: $(tr '\n' '|' <"$T/a.err" | cut -c1-300)"
fi
# --duration ends an -a recording by itself
stax record -a -q -F 199 --duration 0.5 -o "$T/d.data" >/dev/null 2>"$T/d.err"
rc=$?
if [ "$rc" -eq 0 ] && stax info -i "$T/d.data" 2>/dev/null | grep -q '(finished)'; then
	ok "record -a --duration 0.5 exits 0 with a finished recording"
else
	fail "record -a --duration 0.5 exits 0 with a finished recording" "status $rc: $(tr '\n' '|' <"$T/d.err" | cut -c1-300)"
fi

stax threads --pid "$CG" -i "$T/a.data" >"$T/cg.threads" 2>&1
name=$(col_values "$T/cg.threads" NAME | sort -u | tr '\n' ' ')
n=$(col_values "$T/cg.threads" SAMPLES | awk '{ t += $1 } END { print t + 0 }')
if [ "$name" = "callgraph-nofp " ] && [ "$n" -gt 130 ]; then
	ok "a process started during the recording: --pid $CG is callgraph-nofp, $n samples"
else
	fail "a process started during the recording is named callgraph-nofp" "names '$name', $n samples: $(tr '\n' '|' <"$T/cg.threads" | cut -c1-300)"
fi
stax threads --pid "$SPIN" -i "$T/a.data" >"$T/spin.threads" 2>&1
name=$(col_values "$T/spin.threads" NAME | sort -u | tr '\n' ' ')
if [ "$name" = "spin-fp " ]; then
	ok "a process that existed before the recording is named spin-fp (from /proc)"
else
	fail "a process that existed before the recording is named spin-fp" "names '$name': $(tr '\n' '|' <"$T/spin.threads" | cut -c1-300)"
fi

stax flame --folded --comm callgraph-nofp -i "$T/a.data" >"$T/cg.folded" 2>"$T/cg.err"
sb=$(share "$T/cg.folded" ";main;a;b;leaf_b$K")
sc=$(share "$T/cg.folded" ";main;a;c;leaf_c$K")
if between "$sb" 60 90 && between "$sc" 10 40; then
	ok "--comm callgraph-nofp: main;a;b;leaf_b $sb%, main;a;c;leaf_c $sc% (nofp, system-wide)"
else
	fail "--comm callgraph-nofp: main;a;b;leaf_b ~75%, main;a;c;leaf_c ~25%" "$sb% and $sc%: $(sort -t' ' -k2 -nr "$T/cg.folded" | head -3 | tr '\n' '|' | cut -c1-300)"
fi
# (before its exec the process was the test shell's fork, named sh)
stax flame --folded --pid "$CG" -i "$T/a.data" >"$T/pid.folded" 2>"$T/pid.err"
other=$(grep -Evc '^(callgraph-nofp|sh);' "$T/pid.folded")
if [ -s "$T/pid.folded" ] && [ "$other" -eq 0 ]; then
	ok "--pid keeps only that process's stacks"
else
	fail "--pid keeps only that process's stacks" "$other other lines: $(grep -Ev '^(callgraph-nofp|sh);' "$T/pid.folded" | head -2 | tr '\n' '|' | cut -c1-200)"
fi

# -a with a command: stops when the command exits, with its status (had
# it gone on, the stax wrapper's hang limit would end it: status 124)
stax record -a -q -F 199 -o "$T/cmd.data" -- sh -c 'sleep 0.3; exit 3' >/dev/null 2>"$T/cmd.err"
rc=$?
if [ "$rc" -eq 3 ]; then
	ok "record -a -- CMD stops when CMD exits, with its status"
else
	fail "record -a -- CMD stops when CMD exits, with its status" "status $rc: $(first_line "$T/cmd.err")"
fi

# -a with --off-cpu: the sleeps of one program among all the others.
# 20 sleeps of 30 ms: 600 ms asleep or more (on a busy machine the wait
# for a cpu after each wakeup is counted in the sleep; a switch record
# lost there drops its interval: at least 80% is wanted), nearly all of
# its waits with a reason are sleep, and the sleeps' stacks are
# main;sleep_phase. (Time preempted, and time "other": before its exec,
# and switches whose reason the stack does not show, grow with the load
# and are left out.) -F 99 keeps the CPU samples of every process from
# filling the rings.
stax record -a -q --off-cpu -F 99 -o "$T/off.data" -- "$PROG/sleepy-fp" 0.5 >/dev/null 2>"$T/off.err"
stax threads --comm sleepy-fp -i "$T/off.data" >"$T/off.threads" 2>&1
sl=$(row_where "$T/off.threads" NAME sleepy-fp SLEEP)
off=$(row_where "$T/off.threads" NAME sleepy-fp OFF_MS)
pre=$(row_where "$T/off.threads" NAME sleepy-fp PREEMPTED)
oth=$(row_where "$T/off.threads" NAME sleepy-fp OTHER)
s=$(awk -v a="${sl:-0}" -v o="${off:-0}" -v p="${pre:-0}" -v x="${oth:-0}" 'BEGIN { if (o - p - x <= 0) print 0; else printf "%.1f\n", 100 * a / (o - p - x) }')
stax flame --off-cpu --folded --comm sleepy-fp -i "$T/off.data" 2>/dev/null | grep '[[]off-cpu: sleep[]] [0-9]*$' >"$T/off.sleep"
k=$(share "$T/off.sleep" ";main;sleep_phase;.*[[]off-cpu: sleep[]]\$")
if between "${sl:-0}" 480 1e12 && between "$s" 90 100 && between "$k" 90 100; then
	ok "record -a --off-cpu: sleepy-fp asleep $sl ms (its 600 less what lost records took), $s% of its waits with a reason, $k% in main;sleep_phase"
else
	fail "record -a --off-cpu: sleepy-fp asleep about 600 ms (>= 480), >= 90% of its waits with a reason, in main;sleep_phase" "$sl ms, $s%, stacks $k%: $(tr '\n' '|' <"$T/off.threads" | cut -c1-300)"
fi

# -a with --off-cpu while threads exit: a thread's last switch-out,
# after its exit, names it tid -1 (the kernel's number for a task no
# longer alive); that is its death, not a wait of a thread 4294967295
stax record -a -q --off-cpu -F 99 -o "$T/ex.data" -- "$PROG/manythreads-fp" 50 0.3 >/dev/null 2>"$T/ex.err"
stax threads -i "$T/ex.data" >"$T/ex.threads" 2>&1
n=$(grep -c '^ *[0-9]' "$T/ex.threads")
bad=$(awk '$1 == 4294967295 || $2 == 4294967295' "$T/ex.threads" | wc -l)
if [ "$n" -gt 50 ] && [ "$bad" -eq 0 ]; then
	ok "record -a --off-cpu while 50 threads exit: no thread or process 4294967295 among $n"
else
	fail "record -a --off-cpu while 50 threads exit: no thread or process 4294967295" "$bad of $n rows: $(awk '$1 == 4294967295 || $2 == 4294967295' "$T/ex.threads" | head -2 | tr '\n' '|')"
fi

# refused without privileges
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 &&
   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	mkdir -m 777 "$T/out"
	cp "$STAX" "$T/out/stax"
	chmod 755 "$T/out/stax"
	timeout 60 setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups \
		"$T/out/stax" record -a --duration 1 -o "$T/out/n.data" >/dev/null 2>"$T/n.err"
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/n.err" && grep -q 'perf_event_paranoid' "$T/n.err"; then
		ok "nobody: record -a refused in one line naming kernel.perf_event_paranoid"
	else
		fail "nobody: record -a refused in one line" "status $rc: $(tr '\n' '|' <"$T/n.err" | cut -c1-300)"
	fi
else
	skip "nobody refused record -a" "needs root, setpriv, the user nobody and kernel.perf_event_paranoid > 0"
fi

done_testing
