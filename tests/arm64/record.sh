#!/bin/sh
# record.sh (arm64 guest) - recording on aarch64 beyond one thread's CPU
# samples: threads (their own stacks from thread_main), off-CPU time
# (stax record --off-cpu: the stacks of the sleeps, unwound from the
# copy taken at the switch) and attaching to a running process (-p).
. "$(dirname "$0")/lib.sh"

# threads-nofp: three threads, each ~1/3 in its own work function
rec thr "$PROG/threads-nofp"
for x in a b c; do
	s=$(share "$T/thr.folded" "^worker-$x;.*;thread_main;work_$x$K")
	if between "$s" 20 45; then
		ok "threads-nofp: worker-$x;...;thread_main;work_$x is $s% of the samples"
	else
		fail "threads-nofp: worker-$x;...;thread_main;work_$x ~1/3" "$s%; top: $(sort -k2 -nr -t' ' "$T/thr.folded" | head -n 3 | cut -c1-200 | tr '\n' '|')"
	fi
done
r=$(share "$T/thr.folded" ';start_thread;(.*;)?thread_main;work_[abc]'"$K")
if between "$r" 90 100; then
	ok "threads-nofp: $r% of the samples rooted at start_thread"
else
	fail "threads-nofp: rooted at start_thread" "$r%"
fi

# sleepy-nofp --off-cpu: where the sleeps are (reason sleep), unwound
stax record -q --off-cpu -o "$T/s.data" -- "$PROG/sleepy-nofp" 0.5 >/dev/null 2>"$T/s.err"
stax flame --off-cpu --folded -i "$T/s.data" >"$T/s.off" 2>>"$T/s.err"
grep '[[]off-cpu: sleep[]] [0-9]*$' "$T/s.off" >"$T/s.sleep"
n=$(samples "$T/s.sleep")
k=$(share "$T/s.sleep" "${START}sleep_phase;(.*;)?[^;]*nanosleep[^;]*;.*[[]off-cpu: sleep[]]\$")
if [ "$n" -gt 0 ] && between "$k" 95 100; then
	ok "sleepy --off-cpu: $k% of the sleep time under main;sleep_phase;...nanosleep"
else
	fail "sleepy --off-cpu: the sleeps under main;sleep_phase;...nanosleep" "$k% of $n; $(first_line "$T/s.err") top: $(sort -k2 -nr -t' ' "$T/s.off" | head -n 2 | cut -c1-250 | tr '\n' '|')"
fi

# -p: attach to a running callgraph-nofp for a while
"$PROG/callgraph-nofp" 4 >/dev/null &
pid=$!
bg_add "$pid"
sleep 1
stax record -q -o "$T/p.data" -p "$pid" --duration 2 >/dev/null 2>"$T/p.err"
stax flame -i "$T/p.data" --folded >"$T/p.folded" 2>>"$T/p.err"
kill "$pid" 2>/dev/null
n=$(samples "$T/p.folded" ';leaf_[bc]'"$K")
s=$(pct "$(samples "$T/p.folded" "${START}a;(b;leaf_b|c;leaf_c)$K")" "$n")
if [ "$n" -ge 100 ] && between "$s" 99 100; then
	ok "record -p: main;a;b|c;leaf in $s% of $n samples of a running process"
else
	fail "record -p: main;a;b|c;leaf in >= 99%" "$s% of $n; $(first_line "$T/p.err")"
fi
# the kernel lowers kernel.perf_event_max_sample_rate when its sampling
# interrupts take long (as under qemu's TCG, where this guest keeps it up
# with perf_cpu_time_max_percent=0): without -F, stax samples at the
# limit and warns; -F above it stays an error (the guest is this test's
# alone: tests/arm64 run one at a time)
# (the kernel refuses a new rate while perf_cpu_time_max_percent is 0)
mr=/proc/sys/kernel/perf_event_max_sample_rate
pc=/proc/sys/kernel/perf_cpu_time_max_percent
old=$(cat "$mr") oldpc=$(cat "$pc")
echo 25 >"$pc" && echo 500 >"$mr"
[ "$(cat "$mr")" = 500 ] || fail "setup" "cannot set $mr to 500 (it is $(cat "$mr"))"
stax record -o "$T/r.data" -- "$PROG/callgraph-nofp" 0.3 >/dev/null 2>"$T/r.err"
rc=$?
stax record -F 999 -o "$T/r2.data" -- "$PROG/callgraph-nofp" 0.1 >/dev/null 2>"$T/r2.err"
rc2=$?
echo "$old" >"$mr"
echo "$oldpc" >"$pc"
if [ "$rc" -eq 0 ] && grep -q "warning: sampling at 500 Hz, not 999" "$T/r.err" &&
	stax info -i "$T/r.data" 2>/dev/null | grep -q "requested 500 Hz"; then
	ok "kernel limit 500 Hz: the default rate follows it, with a warning"
else
	fail "kernel limit 500 Hz: the default rate follows it, with a warning" "status $rc: $(first_line "$T/r.err")"
fi
if [ "$rc2" -ne 0 ] && grep -q "perf_event_max_sample_rate is 500 here" "$T/r2.err"; then
	ok "kernel limit 500 Hz: -F 999 is refused with the limit"
else
	fail "kernel limit 500 Hz: -F 999 is refused with the limit" "status $rc2: $(first_line "$T/r2.err")"
fi
done_testing
