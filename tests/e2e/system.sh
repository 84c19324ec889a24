#!/bin/sh
# system.sh - "stax record -a": every process on every cpu, filtered in the
# views with --pid and --comm; processes that existed before the recording
# (named from /proc) and ones that start and exit during it (named from
# their COMM records) both carry the right name.
#
#   spin-fp 8          started before recording: main;spin_loop
#   callgraph-nofp 0.4 started 0.5 s into the recording, exits before its
#                      end: main;a;b;leaf_b 75%, main;a;c;leaf_c 25%
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	skip "record -a" "needs root or kernel.perf_event_paranoid <= 0"
	exit 0
fi

"$PROG/spin-fp" 8 >"$T/spin.pid" 2>/dev/null &
SPIN=$!
bg_add "$SPIN"
wait_for "[ -s '$T/spin.pid' ]" 5

"$STAX" record -a -q --duration 2.5 -o "$T/a.data" >/dev/null 2>"$T/a.err" &
REC=$!
bg_add "$REC"
sleep 0.5
"$PROG/callgraph-nofp" 0.4 >/dev/null 2>&1 &
CG=$!
wait "$CG"
wait "$REC"
rc=$?
kill "$SPIN" 2>/dev/null
if [ "$rc" -eq 0 ] && [ -s "$T/a.data" ]; then
	ok "record -a --duration 2.5 exits 0"
else
	fail "record -a --duration 2.5 exits 0" "status $rc: $(tr '\n' '|' <"$T/a.err" | cut -c1-300)"
fi

stax threads --pid "$CG" -i "$T/a.data" >"$T/cg.threads" 2>&1
name=$(col_values "$T/cg.threads" NAME | sort -u | tr '\n' ' ')
n=$(col_values "$T/cg.threads" SAMPLES | awk '{ t += $1 } END { print t + 0 }')
if [ "$name" = "callgraph-nofp " ] && [ "$n" -gt 100 ]; then
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

# -a with a command: stops when the command exits, with its status
start=$(date +%s)
stax record -a -q -o "$T/cmd.data" -- sh -c 'sleep 0.3; exit 3' >/dev/null 2>"$T/cmd.err"
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -eq 3 ] && [ "$took" -le 5 ]; then
	ok "record -a -- CMD stops when CMD exits, with its status"
else
	fail "record -a -- CMD stops when CMD exits, with its status" "status $rc after $took s: $(first_line "$T/cmd.err")"
fi

# -a with --off-cpu: the sleeps of one program among all the others.
# 20 sleeps of 30 ms: at least 600 ms asleep, more by the time it waits
# for a cpu after each wakeup on a busy machine (counted in the sleep);
# nearly all its off-CPU time that is not preemption is sleep. -F 99
# keeps the CPU samples of every process from filling the rings.
stax record -a -q --off-cpu -F 99 -o "$T/off.data" -- "$PROG/sleepy-fp" 0.5 >/dev/null 2>"$T/off.err"
stax threads --comm sleepy-fp -i "$T/off.data" >"$T/off.threads" 2>&1
sl=$(row_where "$T/off.threads" NAME sleepy-fp SLEEP)
off=$(row_where "$T/off.threads" NAME sleepy-fp OFF_MS)
pre=$(row_where "$T/off.threads" NAME sleepy-fp PREEMPTED)
s=$(awk -v a="${sl:-0}" -v o="${off:-0}" -v p="${pre:-0}" 'BEGIN { if (o - p <= 0) print 0; else printf "%.1f\n", 100 * a / (o - p) }')
if between "${sl:-0}" 550 1500 && between "$s" 90 100; then
	ok "record -a --off-cpu: sleepy-fp asleep $sl ms, $s% of its off-CPU time that is not preemption"
else
	fail "record -a --off-cpu: sleepy-fp asleep 600-1500 ms, >= 90% of its non-preempted off-CPU time" "$sl ms, $s%: $(tr '\n' '|' <"$T/off.threads" | cut -c1-300)"
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
