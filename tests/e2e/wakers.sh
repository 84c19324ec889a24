#!/bin/sh
# wakers.sh - "stax record --off-cpu" records who ended each wait;
# "stax wakers" shows them.
#
# Programs (tests/programs, built without frame pointers):
#   handoff  thread "producer" runs produce_item (5 ms CPU) then hand_over
#            write()s a byte into a pipe; two "consumer" threads block in
#            take_item;read: each of their waits is ended by the
#            producer, in producer_main;hand_over;write;...pipe_write
#   sleepy   main sleeps in nanosleep: the timer interrupt wakes it ([irq];
#            [no wake-up seen] where the kernel sends no sample from an idle cpu)
#   cat      fed through a pipe by a shell outside the recording
# stax-test: alone, seconds=15 (it records as the user nobody: the locked ring memory of every such recording counts against one per-user limit)
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ]; then
	skip "wakers" "recording wake-ups needs root or CAP_PERFMON"
	exit 0
fi
# "ok" when two shares add up to 99-100%
pct_sum() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + b >= 99 && a + b <= 100.1) ? "ok" : "no" }'; }

# --- handoff: the consumers' waits end by the producer's hand_over --------
rec_handoff() {
	stax record -q --off-cpu -o "$T/h.data" -- "$PROG/handoff-nofp" "$1" >/dev/null 2>"$T/h.err"
	stax wakers --folded --kernel-waits --comm consumer -i "$T/h.data" >"$T/h.folded" 2>>"$T/h.err"
	stax wakers --comm consumer -n 0 -i "$T/h.data" >"$T/h.txt" 2>>"$T/h.err"
	# microseconds of consumer waits whose waker's stack (after --) has
	# hand_over called by producer_main, the pipe write at its leaf
	fw=$(share "$T/h.folded" "^consumer;.*;take_item;.*pipe_read[^;]*_[[]k[]];.*;--;.*pipe_write[^;]*_[[]k[]];.*;hand_over;producer_main;.*;producer/[0-9]+\$")
	# the producer thread's share in the table, and hand_over's
	tw=$(awk '$NF ~ /^producer\/[0-9]+$/ { print $2 + 0 }' "$T/h.txt")
	th=$(awk '$NF == "hand_over" { print $2 + 0 }' "$T/h.txt")
	between "$fw" 80 100 && between "${tw:-0}" 80 100 && between "${th:-0}" 80 100
}
if ! rec_handoff 1; then
	echo "# handoff off (folded $fw%, producer '$tw'%, hand_over '$th'%): retrying 2x longer"
	rec_handoff 2
fi
if between "$fw" 80 100; then
	ok "handoff: $fw% of the consumers' read waits (by time) were ended by producer_main;hand_over;write;...;pipe_write [k]"
else
	fail "handoff: consumers' waits ended by the producer's hand_over" "$fw%: $(sort -t' ' -k2 -nr "$T/h.folded" | head -2 | tr '\n' '|' | cut -c1-600)"
fi
if between "${tw:-0}" 80 100 && between "${th:-0}" 80 100; then
	ok "wakers: producer/TID woke ${tw}% of the consumers' off-CPU time, hand_over the waking function of ${th}%"
else
	fail "wakers: the producer thread and hand_over lead the tables" "producer '$tw'%, hand_over '$th'%: $(tr '\n' '|' <"$T/h.txt" | cut -c1-500)"
fi
# the waking functions are the program's own: never a thread's root
# (start_thread, clone3, on every stack), libc's write or a kernel frame
roots=$(awk '/^ *OFF_MS .*WAKING FUNCTION/ { f = 1; next } f && NF >= 4 && $4 ~ /^(start_thread|clone3|clone|__GI___libc_write|write|try_to_wake_up)$/ { print $4 }' "$T/h.txt" | tr '\n' ' ')
if [ -z "$roots" ] && grep -q 'WAKING FUNCTION' "$T/h.txt"; then
	ok "wakers: no thread root, libc or kernel function among the waking functions"
else
	fail "wakers: waking functions are the program's own" "'$roots': $(tr '\n' '|' <"$T/h.txt" | cut -c1-500)"
fi
# by default the waiter's kernel frames are folded: its stack ends at
# take_item's read, then --
stax wakers --folded --comm consumer -i "$T/h.data" >"$T/h.ufolded" 2>&1
fu=$(share "$T/h.ufolded" "^consumer;([^;]*;)*take_item;[^;]*read(;[^;]*read)?;--;.*;hand_over;producer_main;.*;producer/[0-9]+\$")
if between "$fu" 80 100 && ! grep -q '_[[]k[]];--;' "$T/h.ufolded"; then
	ok "wakers --folded: the waiter's kernel frames folded by default ($fu% take_item;read;--;...;hand_over)"
else
	fail "wakers --folded: the waiter's kernel frames folded by default" "$fu%: $(head -1 "$T/h.ufolded" | cut -c1-400)"
fi
# folded: waiter root first (the thread name, then its outermost frame),
# "--", then the waker leaf first (the kernel's try_to_wake_up), ending
# in the waker NAME/TID, then microseconds
if grep -q '^consumer;clone3;start_thread;consumer_main;take_item;.*;schedule_[[]k[]];--;try_to_wake_up_[[]k[]];.*;clone3;producer/[0-9]* [0-9][0-9]*$' "$T/h.folded"; then
	ok "wakers --folded: 'waiter root first;--;waker leaf first;NAME/TID MICROSECONDS'"
else
	fail "wakers --folded layout" "$(head -1 "$T/h.folded" | cut -c1-500)"
fi
# the microseconds are the off-CPU time: the consumers' waits ended by a
# wake-up add up to what the table says
us=$(samples "$T/h.folded")
ms=$(sed -n 's/^[0-9]* waits ended by a wake-up, \([0-9.]*\) ms.*/\1/p' "$T/h.txt")
if [ -n "$ms" ] && awk -v u="$us" -v m="$ms" 'BEGIN { exit !(u / 1000 >= 0.99 * m && u / 1000 <= 1.01 * m + 1) }'; then
	ok "wakers --folded adds up to the table's off-CPU time ($us us, $ms ms)"
else
	fail "wakers --folded adds up to the table's off-CPU time" "$us us against '$ms' ms"
fi
stax wakers --json --comm consumer -i "$T/h.data" >"$T/h.json" 2>&1
if grep -q '^{"json_version":3,"wakers_recorded":true,"off_cpu_ms":[0-9.]*,"waits":[1-9][0-9]*,"wakers":\[{"waker":"producer/[0-9]*","kind":"thread","pid":[0-9]*,"tid":[0-9]*,' "$T/h.json" &&
   grep -q '"functions":\[.*{"name":"hand_over","module":"handoff-nofp","kernel":false' "$T/h.json"; then
	ok "wakers --json: the producer thread first, hand_over among the functions"
else
	fail "wakers --json" "$(cut -c1-400 "$T/h.json")"
fi
# the filters keep waits by the waiting thread: the producer itself
# waits for nothing the consumers do, so none of its waits has a
# consumer waker's hand_over
stax wakers --folded --comm producer -i "$T/h.data" >"$T/p.folded" 2>&1
if ! grep -q '^consumer;' "$T/p.folded" && ! grep -q ';hand_over;' "$T/p.folded"; then
	ok "wakers --comm producer keeps the producer's own waits only"
else
	fail "wakers --comm filters by the waiting thread" "$(head -2 "$T/p.folded" | cut -c1-300)"
fi

# --- sleepy: the timer interrupt ends each sleep: [irq], not a thread ------
# On an idle CPU some kernels (this project's VMs among them: perf record
# -e cpu-clock -C 1 gets no samples while cpu 1 idles) send no perf sample
# for the wake-up the timer interrupt makes there; those waits show as
# [no wake-up seen]. With every cpu busy (spinners outside the recording)
# the interrupt always lands on a running cpu: the sleeps are [irq].
ncpu=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
spins=""
i=0
while [ "$i" -lt "$ncpu" ]; do
	sh -c 'while :; do :; done' &
	spins="$spins $!"
	i=$((i + 1))
done
stax record -q --off-cpu -o "$T/s.data" -- "$PROG/sleepy-nofp" 0.3 >/dev/null 2>&1
# shellcheck disable=SC2086
kill $spins 2>/dev/null
wait 2>/dev/null
stax wakers --folded -i "$T/s.data" >"$T/s.folded" 2>&1
grep ';nanosleep_[[]k[]];\|clock_nanosleep' "$T/s.folded" >"$T/s.sleeps"
irq=$(share "$T/s.sleeps" ";--;[[]irq[]]\$")
if between "$irq" 90 100; then
	ok "sleepy, cpus busy: $irq% of the sleeps were ended by [irq] (the timer), charged to no thread"
else
	fail "sleepy, cpus busy: sleeps ended by [irq]" "$irq%: $(sort -t' ' -k2 -nr "$T/s.folded" | head -2 | tr '\n' '|' | cut -c1-400)"
fi
# idle: each sleep is [irq] or [no wake-up seen] (never a thread), and the
# table says how many were not seen
stax record -q --off-cpu -o "$T/s2.data" -- "$PROG/sleepy-nofp" 0.3 >/dev/null 2>&1
stax wakers --folded -i "$T/s2.data" >"$T/s2.folded" 2>&1
stax wakers -i "$T/s2.data" >"$T/s2.txt" 2>&1
grep ';nanosleep_[[]k[]];\|clock_nanosleep' "$T/s2.folded" >"$T/s2.sleeps"
irq=$(share "$T/s2.sleeps" ";--;[[]irq[]]\$")
unseen=$(share "$T/s2.sleeps" ";--;[[]no wake-up seen[]]\$")
said=$(awk '/waits .* ended with no wake-up seen/ { print $1 }' "$T/s2.txt")
if [ -s "$T/s2.sleeps" ] && [ "$(pct_sum "$irq" "$unseen")" = ok ] &&
   { awk -v u="$unseen" 'BEGIN { exit !(u + 0 == 0) }' || [ -n "$said" ]; }; then
	ok "sleepy, idle: sleeps ended by [irq] $irq%, [no wake-up seen] $unseen% (said: ${said:-none}), none charged to a thread"
else
	fail "sleepy, idle: sleeps are [irq] or [no wake-up seen]" "irq $irq% unseen $unseen% said '$said': $(tr '\n' '|' <"$T/s2.txt" | cut -c1-400)"
fi

# --- a waker outside the recording: [not recorded] COMM/PID ---------------
# cat reads a pipe that a shell outside the recording writes after 1.5 s
(sleep 1.5; echo x; sleep 0.3; echo y) | stax record -q --off-cpu -o "$T/c.data" -- cat >/dev/null 2>"$T/c.err"
stax wakers -i "$T/c.data" >"$T/c.txt" 2>&1
nr=$(awk 'NF >= 2 && $(NF-1) == "recorded]" && $NF ~ /^(sh|bash|dash)\/[0-9]+$/ { print $2 + 0 }' "$T/c.txt")
if between "${nr:-0}" 90 100; then
	ok "cat fed by a shell outside the recording: ${nr}% of its waits ended by '[not recorded] SHELL/PID'"
else
	fail "a waker outside the recording is [not recorded] COMM/PID" "'$nr': $(tr '\n' '|' <"$T/c.txt" | cut -c1-400)"
fi

# --- without the privilege: the waits, no wakers, and the recorder says why
if command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 &&
   setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --inh-caps=+perfmon \
	--ambient-caps=+perfmon true 2>/dev/null; then
	mkdir -m 755 "$T/bin"
	mkdir -m 777 "$T/out"
	cp "$STAX" "$PROG/handoff-nofp" "$T/bin/"
	chmod 755 "$T/bin/stax" "$T/bin/handoff-nofp"
	# CAP_PERFMON allows --off-cpu (kernel sampling), and wake-ups too,
	# but the tracepoint's id and format are in tracefs, which is root's
	# (mode 700) here
	timeout 60 setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups \
		--inh-caps=+perfmon --ambient-caps=+perfmon \
		"$T/bin/stax" record -q --off-cpu -o "$T/out/n.data" -- "$T/bin/handoff-nofp" 0.3 >/dev/null 2>"$T/n.err"
	rc=$?
	if [ -r /sys/kernel/tracing/events/sched/sched_waking/id ] &&
	   setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups cat /sys/kernel/tracing/events/sched/sched_waking/id >/dev/null 2>&1; then
		skip "wakers without tracefs" "user nobody can read tracefs here"
	elif [ "$rc" -eq 0 ] && [ "$(grep -c 'wakers' "$T/n.err")" -eq 1 ] &&
	     grep -q '^stax: recording the waits without who ended them.*tracefs' "$T/n.err"; then
		stax wakers -i "$T/out/n.data" >"$T/n.txt" 2>&1
		stax threads -i "$T/out/n.data" >"$T/n.threads" 2>/dev/null
		rd=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["NAME"] == "consumer" { t += $c["OFF_MS"] } END { print t + 0 }' "$T/n.threads")
		if grep -q '^wakers were not recorded: cannot read the sched:sched_waking tracepoint' "$T/n.txt" &&
		   grep -q '  [[]not recorded[]]$' "$T/n.txt" && [ -n "$rd" ] &&
		   awk -v r="$rd" 'BEGIN { exit !(r > 100) }'; then
			ok "nobody with CAP_PERFMON: waits recorded (consumers off the CPU $rd ms), wakers not recorded, said once why"
		else
			fail "nobody: waits recorded, wakers reported as not recorded" "$(tr '\n' '|' <"$T/n.txt" | cut -c1-300) consumers OFF_MS '$rd': $(tr '\n' '|' <"$T/n.threads" | cut -c1-400)"
		fi
	else
		fail "nobody with CAP_PERFMON: records, says once why there are no wakers" "status $rc: $(tr '\n' '|' <"$T/n.err" | cut -c1-400)"
	fi
else
	skip "wakers without the privilege" "needs setpriv with ambient capabilities and the user nobody"
fi

# --- tracefs not mounted (a minimal VM): root mounts it, as perf does ---
# In a mount namespace of its own, so the machine's tracefs stays as it is.
if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	unshare -m sh -c 'umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug 2>/dev/null
		if grep -q " /sys/kernel/tracing tracefs" /proc/mounts; then echo still-mounted; exit 0; fi
		"$1" record --off-cpu -o "$2/t.data" -- "$3/handoff-nofp" 1 >/dev/null 2>"$2/t.err"
		grep " /sys/kernel/tracing tracefs" /proc/mounts' sh "$STAX" "$T" "$PROG" >"$T/t.mounts" 2>&1
	stax wakers --comm consumer -n 0 -i "$T/t.data" >"$T/t.txt" 2>&1
	tw=$(awk '$NF ~ /^producer\/[0-9]+$/ { print $2 + 0 }' "$T/t.txt")
	if grep -q still-mounted "$T/t.mounts"; then
		skip "tracefs not mounted" "tracefs could not be unmounted in a mount namespace"
	elif grep -q tracefs "$T/t.mounts" && grep -q '^stax: mounted tracefs on /sys/kernel/tracing' "$T/t.err" &&
	     between "${tw:-0}" 80 100; then
		ok "tracefs not mounted: stax mounted it, said so, and recorded the wakers (producer $tw%)"
	else
		fail "tracefs not mounted: mounted and wakers recorded" "mounts '$(tr '\n' '|' <"$T/t.mounts")' err '$(tr '\n' '|' <"$T/t.err" | cut -c1-300)' producer '$tw'"
	fi
else
	skip "tracefs not mounted" "unshare -m is not available here"
fi

done_testing
