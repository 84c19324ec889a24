#!/bin/sh
# offcpu.sh - "stax record --off-cpu": where threads wait, and why.
#
# Programs (tests/programs, built without frame pointers: the stacks must
# come from DWARF unwinding of the 4 KiB stack copy at each switch-out):
#   sleepy   main alternates compute_phase (20 ms CPU) and sleep_phase
#            (nanosleep 30 ms): ~40% of wall on the CPU, ~60% asleep
#   contend  two worker threads: take_lock, hold 15 ms, unlock, 5 ms
#            outside: each waits ~1/3 of its wall for the lock (futex)
#   pipewait thread "reader" blocks in reader_main;wait_for_data;read
#            while main computes: nearly all its wall is a pipe read
# stax-test: seconds=15
. "$(dirname "$0")/lib.sh"
require_stax

# off-CPU recording needs kernel sampling
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	skip "off-CPU recording" "needs root or kernel.perf_event_paranoid <= 1"
	exit 0
fi

# col FILE ROWNAME COLUMN: a column of the threads table, row by NAME
col() { row_where "$1" NAME "$2" "$3"; }

# The programs' own numbers are the reference, not the wall-clock split:
# on a busy machine a thread also waits preempted and, after each wakeup,
# for a cpu (that wait is counted with the sleep or lock it follows), so
# the shares of wall time depend on the load. What does not: the CPU
# time each phase burns (measured by the program itself with
# CLOCK_THREAD_CPUTIME_ID), the least time nanosleep sleeps, and which
# thread can be waiting for a lock while the other holds it.
# cmp3 X LO HI: LO <= X <= HI, each an awk expression
cmp3() { awk "BEGIN { exit !(($2) <= ($1) && ($1) <= ($3)) }"; }
# wall_ms FOLDED PATTERN: microseconds of flame --wall --folded lines
# matching PATTERN, in ms
wall_ms() { samples "$1" "$2" | awk '{ printf "%.1f\n", $1 / 1000 }'; }

# --- sleepy: 40 x (20 ms CPU in compute_phase, nanosleep 30 ms) per scale
rec_sleepy() {
	sc=$1
	stax record -q --off-cpu -o "$T/s.data" -- "$PROG/sleepy-nofp" "$sc" >/dev/null 2>"$T/s.err"
	stax threads -i "$T/s.data" >"$T/s.threads" 2>&1
	stax flame --wall --folded -i "$T/s.data" >"$T/s.all" 2>&1
	grep -v '[[]off-cpu: preempted[]] [0-9]*$' "$T/s.all" >"$T/s.wall"
	cpu=$(col "$T/s.threads" sleepy-nofp CPU_MS)
	slms=$(col "$T/s.threads" sleepy-nofp SLEEP)
	off=$(col "$T/s.threads" sleepy-nofp OFF_MS)
	pre=$(col "$T/s.threads" sleepy-nofp PREEMPTED)
	oth=$(col "$T/s.threads" sleepy-nofp OTHER)
	# sleep as a share of the off-CPU time with a reason (not preemption,
	# not other: some preemptions by a timer interrupt come as other, and
	# they grow with the load)
	sl=$(pct "$slms" "$(awk -v o="${off:-0}" -v p="${pre:-0}" -v x="${oth:-0}" 'BEGIN { print o - p - x }')")
	# the wall flame: sleep_phase's sleeps and compute_phase in ms
	fs=$(wall_ms "$T/s.wall" ";main;sleep_phase;.*[[]off-cpu: sleep[]]\$")
	# (on-CPU frames only: on a busy machine some preemptions come as
	# off-CPU time with reason other under compute_phase)
	grep -v '[[]off-cpu: [a-z]*[]] [0-9]*$' "$T/s.wall" >"$T/s.cpu"
	fc=$(wall_ms "$T/s.cpu" ";main;compute_phase(;|\$)")
	want_cpu=$((800 * sc)) want_sl=$((1200 * sc))
	cmp3 "${cpu:-0}" "0.9 * $want_cpu" "1.1 * $want_cpu + 30" && cmp3 "${slms:-0}" "0.99 * $want_sl" 1e12 &&
		between "$sl" 90 100 && cmp3 "$fs" "0.98 * ${slms:-0}" "1.02 * ${slms:-0}" &&
		cmp3 "$fc" "0.9 * ${cpu:-0}" "1.01 * ${cpu:-0}"
}
if ! rec_sleepy 1; then
	echo "# sleepy off (CPU $cpu ms, SLEEP $slms ms = $sl% of off-CPU with a reason, flame $fs/$fc ms): retrying 2x longer"
	rec_sleepy 2
fi
if cmp3 "${cpu:-0}" "0.9 * $want_cpu" "1.1 * $want_cpu + 30" && cmp3 "${slms:-0}" "0.99 * $want_sl" 1e12 && between "$sl" 90 100; then
	ok "sleepy: ${cpu} ms on the CPU (the program's $want_cpu), ${slms} ms asleep (at least its $want_sl ms of nanosleep, $sl% of its off-CPU time with a reason)"
else
	fail "sleepy: CPU time and sleep as the program spent them" "CPU '$cpu' ms (want $want_cpu +-10%), SLEEP '$slms' ms (want >= $want_sl, >= 90% of off-CPU time with a reason: $sl%): $(tr '\n' '|' <"$T/s.threads" | cut -c1-400)"
fi
if cmp3 "$fs" "0.98 * ${slms:-0}" "1.02 * ${slms:-0}" && cmp3 "$fc" "0.9 * ${cpu:-0}" "1.01 * ${cpu:-0}"; then
	ok "sleepy flame --wall (nofp): main;sleep_phase;...[off-cpu: sleep] $fs ms (SLEEP $slms), main;compute_phase $fc ms (CPU $cpu)"
else
	fail "sleepy flame --wall (nofp): main;sleep_phase has the sleep, main;compute_phase the CPU time" "$fs ms (SLEEP $slms) and $fc ms (CPU $cpu): $(sort -t' ' -k2 -nr "$T/s.wall" | head -3 | tr '\n' '|' | cut -c1-400)"
fi
# the thread is the root of the wall flame: "name/tid"
if grep -q '^sleepy-nofp/[0-9]*;' "$T/s.wall"; then
	ok "flame --wall roots are NAME/TID"
else
	fail "flame --wall roots are NAME/TID" "$(first_line "$T/s.wall")"
fi
# the sleeps' stacks as recorded (--kernel-waits): user main;sleep_phase,
# then the kernel's nanosleep (time preempted by other work on a busy
# machine is left out)
stax flame --off-cpu --kernel-waits --folded -i "$T/s.data" >"$T/s.all" 2>&1
grep '[[]off-cpu: sleep[]] [0-9]*$' "$T/s.all" >"$T/s.off"
k=$(share "$T/s.off" ";main;sleep_phase;.*nanosleep[^;]*_[[]k[]];.*[[]off-cpu: sleep[]]\$")
if between "$k" 90 100; then
	ok "sleepy off-CPU stacks (--kernel-waits): user main;sleep_phase, then kernel nanosleep ($k%)"
else
	fail "sleepy off-CPU stacks (--kernel-waits): user main;sleep_phase, then kernel nanosleep" "$k%: $(sort -t' ' -k2 -nr "$T/s.off" | head -2 | tr '\n' '|' | cut -c1-400)"
fi
# by default the kernel's frames (the system call, the scheduler) are
# folded into the wait: [off-cpu: sleep] right below libc's nanosleep,
# and no stack has a kernel frame
stax flame --off-cpu --folded -i "$T/s.data" >"$T/s.fold" 2>&1
grep '[[]off-cpu: sleep[]] [0-9]*$' "$T/s.fold" >"$T/s.foff"
k=$(share "$T/s.foff" ";main;sleep_phase;[^;]*nanosleep[^;]*(;[^;]*nanosleep[^;]*)?;[[]off-cpu: sleep[]]\$")
nk=$(grep -c '_[[]k[]]' "$T/s.fold")
if between "$k" 90 100 && [ "$nk" -eq 0 ]; then
	ok "sleepy off-CPU stacks, kernel folded (default): main;sleep_phase;nanosleep;[off-cpu: sleep] $k%, no kernel frame"
else
	fail "sleepy off-CPU stacks, kernel folded (default)" "$k%, $nk lines with kernel frames: $(sort -t' ' -k2 -nr "$T/s.fold" | head -2 | tr '\n' '|' | cut -c1-400)"
fi
# top --off-cpu: sleep_phase's total is the thread's sleep time, and it
# is the blocking caller: its self time is that too; the table starts
# with the program's own functions (sleep_phase, or compute_phase when a
# busy machine preempts it longer than it sleeps), not the kernel's
# (with --kernel-waits the kernel's schedule leads)
stax top --off-cpu -n 0 -i "$T/s.data" >"$T/s.top" 2>&1
tm=$(awk '$NF == "sleepy-nofp" && $(NF-1) == "sleep_phase" { print $4 }' "$T/s.top")
sm=$(awk '$NF == "sleepy-nofp" && $(NF-1) == "sleep_phase" { print $2 }' "$T/s.top")
t=$(pct "${tm:-0}" "$(col "$T/s.threads" sleepy-nofp SLEEP)")
s=$(pct "${sm:-0}" "$(col "$T/s.threads" sleepy-nofp SLEEP)")
first=$(awk 'NR == 2 { print $NF }' "$T/s.top")
if between "$t" 95 105 && between "$s" 95 105 && [ "$first" = sleepy-nofp ]; then
	ok "top --off-cpu: the program's own function first; sleep_phase self ${sm} ms and total ${tm} ms = $s% and $t% of the thread's SLEEP time"
else
	fail "top --off-cpu: the program's function first, sleep_phase's self and total = the thread's SLEEP time" "first in '$first', self '$sm' ms ($s%), total '$tm' ms ($t%): $(head -4 "$T/s.top" | tr '\n' '|' | cut -c1-300)"
fi
stax top --off-cpu --kernel-waits -n 3 -i "$T/s.data" >"$T/s.ktop" 2>&1
first=$(awk 'NR == 2 { print $(NF-1) }' "$T/s.ktop")
if [ "$first" = schedule ]; then
	ok "top --off-cpu --kernel-waits: the innermost frame as recorded (schedule) first"
else
	fail "top --off-cpu --kernel-waits: schedule first" "'$first': $(head -3 "$T/s.ktop" | tr '\n' '|' | cut -c1-300)"
fi
# flame --svg --off-cpu / --wall: time widths, off-CPU frames in their own
# colour (t="o") and in the legend; the [off-cpu: sleep] frames add up to
# the thread's SLEEP time, the wall graph's total to its WALL_MS
# svg_ms FILE REGEX: milliseconds in the details of frames matching REGEX
svg_ms() {
	svg_frames "$1" | sed -n "s/^$2 (\([0-9.]*\) \(m*s\), [0-9.]*%).*/\1 \2/p" |
		awk '{ t += $2 == "s" ? $1 * 1000 : $1 } END { printf "%.1f\n", t }'
}
if stax flame --svg --off-cpu -i "$T/s.data" -o "$T/s.svg" 2>"$T/svg.err" &&
   stax flame --svg --wall -i "$T/s.data" -o "$T/w.svg" 2>>"$T/svg.err"; then
	sms=$(svg_ms "$T/s.svg" '\[off-cpu: sleep\]')
	t=$(pct "$sms" "$(col "$T/s.threads" sleepy-nofp SLEEP)")
	wms=$(svg_ms "$T/w.svg" 'sleepy-nofp\/[0-9]*')
	w=$(pct "$wms" "$(col "$T/s.threads" sleepy-nofp WALL_MS)")
	if ! command -v xmllint >/dev/null 2>&1; then
		skip "flame --svg --off-cpu/--wall are well-formed" "xmllint is not installed (apt-get install libxml2-utils)"
	elif xmllint --noout "$T/s.svg" "$T/w.svg" 2>"$T/xml.err"; then
		ok "flame --svg --off-cpu and --wall are well-formed XML"
	else
		fail "flame --svg --off-cpu/--wall are well-formed XML" "$(first_line "$T/xml.err")"
	fi
	if between "$t" 95 100.5 && between "$w" 95 100.5 && svg_frames "$T/s.svg" | grep -q '^\[off-cpu: sleep\] (.*[[:space:]]t=o[[:space:]]' &&
	   grep -q '<text x="[0-9]*" y="57">off-CPU</text>' "$T/s.svg" && grep -Eq '[0-9] m?s of wall time, ' "$T/w.svg"; then
		ok "flame --svg --off-cpu: [off-cpu: sleep] frames ${sms} ms = $t% of SLEEP; --wall total ${wms} ms = $w% of WALL_MS; own colour and legend"
	else
		fail "flame --svg --off-cpu/--wall widths are time" "sleep frames '$sms' ms ($t% of SLEEP), wall '$wms' ms ($w%), legend $(grep -c '>off-CPU</text>' "$T/s.svg")"
	fi
else
	fail "flame --svg --off-cpu/--wall" "$(first_line "$T/svg.err")"
fi

# --- contend: two threads, one mutex --------------------------------------
# 50 cycles per scale, each 15 ms of CPU holding the lock and 5 ms outside:
# 1000 ms of CPU per worker and scale. A worker waits for the lock only
# while the other holds it, so its lock wait fits in the other's wall time
# that is not lock wait (on the CPU, preempted, or another wait); and it
# waits at all (a third of its wall time on an idle machine, more when the
# holder is preempted).
rec_contend() {
	sc=$1
	stax record -q --off-cpu -o "$T/c.data" -- "$PROG/contend-nofp" "$sc" >/dev/null 2>"$T/c.err"
	stax threads -i "$T/c.data" >"$T/c.threads" 2>&1
	# the two workers are the threads with samples; main only joins:
	# CPU_MS, LOCK and WALL_MS of each
	lock=$(awk 'NR > 1 && $4 > 100 { printf "%s%s %s %s", sep, $5, $9, $7; sep = " " }' "$T/c.threads")
	stax flame --off-cpu --kernel-waits --folded -i "$T/c.data" >"$T/c.off" 2>&1
	grep ';worker;.*[[]off-cpu: lock[]] [0-9]*$' "$T/c.off" >"$T/c.workers"
	fl=$(share "$T/c.workers" ";worker;take_lock;[^;]*pthread_mutex_lock;.*futex[^;]*_[[]k[]];.*[[]off-cpu: lock[]]\$")
	contend_ok "$sc" $lock && between "$fl" 90 100
}
# contend_ok SCALE CPU_A LOCK_A WALL_A CPU_B LOCK_B WALL_B
contend_ok() {
	[ $# -eq 7 ] || return 1
	w=$((1000 * $1))
	cmp3 "$2" "0.9 * $w" "1.1 * $w + 30" && cmp3 "$5" "0.9 * $w" "1.1 * $w + 30" &&
		cmp3 "$3" "0.1 * $2" "1.02 * ($7 - $6) + 20" && cmp3 "$6" "0.1 * $5" "1.02 * ($4 - $3) + 20"
}
csc=1
if ! rec_contend 1; then
	echo "# contend off (CPU, lock, wall of each worker: '$lock'; flame $fl%): retrying 2x longer"
	csc=2
	rec_contend 2
fi
if contend_ok "$csc" $lock; then
	set -- $lock
	ok "contend: workers on the CPU $1 and $4 ms (the program's $((1000 * csc))), waiting for the lock $2 and $5 ms, each within the other's wall time outside lock waits"
else
	fail "contend: each worker's CPU time as the program spent it, its lock wait while the other holds the lock" "CPU, LOCK, WALL_MS of each: '$lock': $(tr '\n' '|' <"$T/c.threads" | cut -c1-400)"
fi
if between "$fl" 90 100; then
	ok "contend (nofp): $fl% of the workers' lock waits in worker;take_lock;pthread_mutex_lock;...;futex [k]"
else
	fail "contend (nofp): workers' lock waits in worker;take_lock;pthread_mutex_lock;...;futex [k]" "$fl%: $(sort -t' ' -k2 -nr "$T/c.workers" | head -2 | tr '\n' '|' | cut -c1-400)"
fi

# --- idlepool: workers idle on a condition variable are waiting, not locked
# Three workers wait in pthread_cond_wait for items main queues every
# 10 ms of its CPU time; the mutex around the queue is held for a few
# instructions. Their futex waits are "wait" (decided by the user frame
# pthread_cond_wait), not "lock" like contend's pthread_mutex_lock above.
rec_idle() {
	stax record -q --off-cpu -o "$T/i.data" -- "$PROG/idlepool-nofp" "$1" >/dev/null 2>"$T/i.err"
	stax threads -i "$T/i.data" >"$T/i.threads" 2>&1
	# WAIT and LOCK of the three workers, in ms
	iw=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["NAME"] == "worker" { w += $c["WAIT"]; l += $c["LOCK"] } END { printf "%.1f %.1f\n", w, l }' "$T/i.threads")
	set -- $iw
	ws=$(pct "$1" "$(awk -v w="$1" -v l="$2" 'BEGIN { print w + l }')")
	stax flame --off-cpu --kernel-waits --folded --comm worker -i "$T/i.data" >"$T/i.off" 2>&1
	grep -v '[[]off-cpu: preempted[]] [0-9]*$' "$T/i.off" >"$T/i.offw"
	fw=$(share "$T/i.offw" ";worker_main;wait_for_work;[^;]*pthread_cond_wait;.*futex[^;]*_[[]k[]];.*[[]off-cpu: wait[]]\$")
	between "$ws" 90 100 && between "$fw" 85 100 && cmp3 "$1" 1000 1e12
}
if ! rec_idle 1; then
	echo "# idlepool off (wait, lock of the workers: '$iw' ms, $ws% wait; flame $fw%): retrying 2x longer"
	rec_idle 2
fi
if between "$ws" 90 100 && cmp3 "$(echo "$iw" | cut -d' ' -f1)" 1000 1e12; then
	ok "idlepool: workers idle on a condition variable wait $ws% of their futex time as 'wait' (wait, lock: $iw ms)"
else
	fail "idlepool: workers idle in pthread_cond_wait are 'wait', not 'lock'" "wait, lock '$iw' ms ($ws% wait): $(tr '\n' '|' <"$T/i.threads" | cut -c1-500)"
fi
if between "$fw" 85 100; then
	ok "idlepool (nofp): $fw% of the workers' off-CPU time in worker_main;wait_for_work;pthread_cond_wait;...;futex [k];[off-cpu: wait]"
else
	fail "idlepool (nofp): workers wait in worker_main;wait_for_work;pthread_cond_wait;...[off-cpu: wait]" "$fw%: $(sort -t' ' -k2 -nr "$T/i.offw" | head -2 | tr '\n' '|' | cut -c1-400)"
fi
# and the contended mutex of contend is no wait: its workers have no WAIT
cw=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $c["CPU_MS"] > 100 { w += $c["WAIT"] } END { printf "%.1f\n", w }' "$T/c.threads")
if cmp3 "$cw" 0 20; then
	ok "contend: the workers' mutex waits are lock, not wait (WAIT $cw ms)"
else
	fail "contend: the workers' mutex waits are lock, not wait" "WAIT $cw ms: $(tr '\n' '|' <"$T/c.threads" | cut -c1-400)"
fi

# --- pipewait: a reader blocked on a pipe ---------------------------------
rec_pipe() {
	stax record -q --off-cpu -o "$T/p.data" -- "$PROG/pipewait-nofp" "$1" >/dev/null 2>"$T/p.err"
	stax threads -i "$T/p.data" >"$T/p.threads" 2>&1
	rd=$(pct "$(col "$T/p.threads" reader READ)" "$(col "$T/p.threads" reader WALL_MS)")
	stax flame --off-cpu --kernel-waits --folded --comm reader -i "$T/p.data" >"$T/p.off" 2>&1
	fr=$(share "$T/p.off" ";reader_main;wait_for_data;.*pipe_read_[[]k[]];.*[[]off-cpu: read[]]\$")
	between "$rd" 85 100 && between "$fr" 85 100
}
if ! rec_pipe 1; then
	echo "# pipewait off (read $rd%, flame $fr%): retrying 2x longer"
	rec_pipe 2
fi
if between "$rd" 85 100; then
	ok "pipewait: reader spends $rd% of its wall in a read"
else
	fail "pipewait: reader spends >= 85% of its wall in a read" "$rd%: $(tr '\n' '|' <"$T/p.threads" | cut -c1-400)"
fi
if between "$fr" 85 100; then
	ok "pipewait (nofp): reader_main;wait_for_data;...;pipe_read [k];[off-cpu: read] $fr%"
else
	fail "pipewait (nofp): reader waits in reader_main;wait_for_data;...;pipe_read" "$fr%: $(sort -t' ' -k2 -nr "$T/p.off" | head -2 | tr '\n' '|' | cut -c1-400)"
fi
# stax info accounts for the off-CPU stacks: complete without frame pointers
stax info -i "$T/p.data" >"$T/p.info" 2>&1
c=$(sed -n 's/^off-cpu: .*stacks complete \([0-9.]*\)%$/\1/p' "$T/p.info")
if between "${c:-0}" 90 100; then
	ok "info: off-CPU stacks complete $c% (nofp)"
else
	fail "info: off-CPU stacks complete >= 90% (nofp)" "'$c': $(grep off-cpu "$T/p.info" | cut -c1-300)"
fi
# --- deepwait: blocked deep in a call chain, ~17 KiB of frames, no frame
# pointers: the switch-out copies as much stack as a CPU sample, so the
# off-CPU stacks are as complete as the on-CPU ones
rec_deep() {
	stax record -q --off-cpu -o "$T/d.data" -- "$PROG/deepwait-nofp" "$1" >/dev/null 2>"$T/d.err"
	stax info -i "$T/d.data" >"$T/d.info" 2>&1
	dc=$(sed -n 's/^off-cpu: .*stacks complete \([0-9.]*\)%$/\1/p' "$T/d.info")
	don=$(awk '/^  verdict:/ { gsub(/,/, ""); c = $3; t = $3 + $5 + $7 + $11; if (t) printf "%.1f\n", 100 * c / t }' "$T/d.info")
	between "${dc:-0}" 95 100 && awk -v o="${dc:-0}" -v c="${don:-0}" 'BEGIN { exit !(o >= c - 2) }'
}
if ! rec_deep 1; then
	echo "# deepwait off (off-CPU stacks complete '$dc'%, on-CPU '$don'%): retrying"
	rec_deep 1
fi
if between "${dc:-0}" 95 100 && awk -v o="${dc:-0}" -v c="${don:-0}" 'BEGIN { exit !(o >= c - 2) }'; then
	ok "deepwait (nofp, ~17 KiB deep): off-CPU stacks complete $dc%, on-CPU $don%"
else
	fail "deepwait (nofp): off-CPU stacks >= 95% complete and within 2 points of on-CPU" "off '$dc'%, on '$don'%: $(grep -E 'off-cpu|verdict' "$T/d.info" | tr '\n' '|' | cut -c1-300)"
fi
# JSON carries the reasons too
stax threads --json --comm reader -i "$T/p.data" >"$T/p.json" 2>&1
if grep -q '"off_cpu":{"other":[0-9.]*,"lock":[0-9.]*,"read":[1-9]' "$T/p.json"; then
	ok "threads --json: off_cpu by reason"
else
	fail "threads --json: off_cpu by reason" "$(first_line "$T/p.json")"
fi

# --- views on a recording without off-CPU data ------------------------------
stax record -q -o "$T/plain.data" -- "$PROG/callgraph-fp" 0.2 >/dev/null 2>&1
stax top --off-cpu -i "$T/plain.data" >"$T/plain.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'no off-CPU time.*--off-cpu' "$T/plain.out"; then
	ok "top --off-cpu on a plain recording says to record with --off-cpu"
else
	fail "top --off-cpu on a plain recording says to record with --off-cpu" "status $rc: $(first_line "$T/plain.out")"
fi

# --- a switch-heavy program: every switch is timed ---------------------------
# pingpong 5000: each of the two threads blocks in read() once a round
# trip, ~10,000 intervals in a fraction of a second. Their stack samples
# (4 KiB copies) do not all fit the rings; the switch records have rings
# of their own, which hold all of these even if the recorder did not
# drain them before the end, so the count does not depend on how fast
# the recorder (or the machine) is. Whether the recorder keeps up with
# ~33,000 switches a second for longer is a throughput, measured by make
# bench (section 9, lost records).
stax record -q --off-cpu -o "$T/pp.data" -- "$PROG/pingpong-nofp" 5000 >/dev/null 2>"$T/pp.err"
stax info --json -i "$T/pp.data" >"$T/pp.json" 2>>"$T/pp.err"
ivs=$(grep -o '"intervals":[0-9]*' "$T/pp.json" | head -n 1 | cut -d: -f2)
lost=$(grep -o '"lost":[0-9]*' "$T/pp.json" | head -n 1 | cut -d: -f2)
if [ -n "$ivs" ] && [ "$ivs" -ge 9500 ]; then
	ok "pingpong 5000: $ivs off-CPU intervals (>= 9,500: every switch timed; $lost other records lost)"
else
	fail "pingpong 5000: every switch timed (>= 9,500 intervals)" "'$ivs' ($lost records lost): $(first_line "$T/pp.err")"
fi

# --- refusals as an unprivileged user ----------------------------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	mkdir -m 755 "$T/bin"
	mkdir -m 777 "$T/out"
	cp "$STAX" "$PROG/sleepy-fp" "$T/bin/"
	chmod 755 "$T/bin/stax" "$T/bin/sleepy-fp"
	if [ "$paranoid" -gt 1 ]; then
		timeout 60 setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups \
			"$T/bin/stax" record --off-cpu -o "$T/out/n.data" -- "$T/bin/sleepy-fp" 0.1 >/dev/null 2>"$T/n.err"
		rc=$?
		if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/n.err" &&
		   grep -q 'off-CPU.*perf_event_paranoid' "$T/n.err" && [ ! -e "$T/out/n.data" ]; then
			ok "nobody (paranoid $paranoid): --off-cpu refused in one line naming kernel.perf_event_paranoid"
		else
			fail "nobody: --off-cpu refused in one line" "status $rc: $(tr '\n' '|' <"$T/n.err" | cut -c1-300)"
		fi
	else
		skip "nobody refused --off-cpu" "kernel.perf_event_paranoid is $paranoid (<= 1 allows it)"
	fi
else
	skip "nobody refused --off-cpu" "needs root, setpriv and the user nobody"
fi

done_testing
