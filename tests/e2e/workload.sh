#!/bin/sh
# workload.sh - the workload is never harmed by stax.
#
# --duration N -- CMD ends CMD the way timeout(1) does (SIGTERM to it and
# its children, SIGKILL 5 s later) and exits with its status; processes
# attached with -p are never signalled; when the recorder dies (SIGKILL)
# or cannot write (a full disk: a small tmpfs, root only), the workload
# runs to its end with its own output and status, and the file reads; so
# when it runs out of memory (its address space capped with prlimit).
# (exit_status.sh: CMD's own status and signals; sigkill.sh: the file
# after the recorder is SIGKILLed.)
#
# spin-fp N prints its pid, then spins for N s in main;spin_loop.
# stax-test: seconds=15
. "$(dirname "$0")/lib.sh"
require_stax

# gone PID: true when PID no longer runs (a zombie counts as gone)
gone() { [ -z "$1" ] || ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# 1. --duration 1 -- a shell whose child sleeps: both end, status 143
cat >"$T/tree.sh" <<'EOS'
echo $$ >"$1"
sleep 60 &
echo $! >"$2"
wait
EOS
duration_tree() {
	label=$1
	shift
	rm -f "$T/sh.pid" "$T/child.pid"
	stax record -q "$@" -o "$T/d.data" --duration 1 -- sh "$T/tree.sh" "$T/sh.pid" "$T/child.pid" \
		>/dev/null 2>"$T/d.err"
	rc=$?
	sp=$(cat "$T/sh.pid" 2>/dev/null)
	cp=$(cat "$T/child.pid" 2>/dev/null)
	[ -n "$cp" ] && bg_add "$cp"
	if [ "$rc" -eq 143 ] && [ -n "$sp" ] && [ -n "$cp" ] && gone "$sp" && gone "$cp" &&
		stax info -i "$T/d.data" 2>/dev/null | grep -q 'exit status: 143'; then
		ok "$label: exits 143, CMD and its child both gone, the file says exit status 143"
	else
		fail "$label: exits 143, CMD and its child gone" \
			"status $rc, sh $sp gone: $(gone "$sp" && echo yes || echo no), child $cp gone: $(gone "$cp" && echo yes || echo no): $(tr '\n' '|' <"$T/d.err" | cut -c1-200)"
	fi
}
duration_tree "--duration 1 -- sh (sleep 60 &)"
if [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ]; then
	duration_tree "-a --duration 1 -- sh (sleep 60 &)" -a
else
	skip "-a --duration -- CMD" "-a needs root or kernel.perf_event_paranoid <= 0"
fi
# sleep 60 itself, its pid known through a shell that execs it
rm -f "$T/sleep.pid"
stax record -q -o "$T/s.data" --duration 1 -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$T/sleep.pid" \
	>/dev/null 2>"$T/s.err"
rc=$?
zp=$(cat "$T/sleep.pid" 2>/dev/null)
[ -n "$zp" ] && bg_add "$zp"
if [ "$rc" -eq 143 ] && [ -n "$zp" ] && gone "$zp"; then
	ok "--duration 1 -- sleep 60: exits 143, sleep is gone"
else
	fail "--duration 1 -- sleep 60: exits 143, sleep is gone" "status $rc, pid $zp: $(first_line "$T/s.err")"
fi

# 2. A CMD that ignores SIGTERM is killed 5 s later (status 137)
cat >"$T/deaf.sh" <<'EOS'
trap '' TERM
echo $$ >"$1"
while :; do sleep 0.1; done
EOS
rm -f "$T/deaf.pid"
stax record -q -o "$T/k.data" --duration 0.5 -- sh "$T/deaf.sh" "$T/deaf.pid" >/dev/null 2>"$T/k.err"
rc=$?
dp=$(cat "$T/deaf.pid" 2>/dev/null)
[ -n "$dp" ] && bg_add "$dp"
if [ "$rc" -eq 137 ] && [ -n "$dp" ] && gone "$dp" && grep -q 'SIGKILL' "$T/k.err" &&
	stax info -i "$T/k.data" 2>/dev/null | grep -q 'exit status: 137'; then
	ok "--duration with a CMD that ignores SIGTERM: SIGKILL after the grace time, status 137, said so"
else
	fail "--duration with a CMD that ignores SIGTERM: killed, status 137" "status $rc, pid $dp: $(tr '\n' '|' <"$T/k.err" | cut -c1-200)"
fi

# 3. -p with --duration: the attached process is never signalled
"$PROG/spin-fp" 30 >"$T/p.pid" 2>/dev/null &
SP=$!
bg_add "$SP"
wait_for "[ -s '$T/p.pid' ]" 10
stax record -q -p "$SP" -o "$T/p.data" --duration 0.5 >/dev/null 2>"$T/p.err"
rc=$?
if [ "$rc" -eq 0 ] && kill -0 "$SP" 2>/dev/null && ! gone "$SP"; then
	ok "-p PID --duration 0.5: exits 0, the process runs on"
else
	fail "-p PID --duration 0.5: exits 0, the process runs on" "status $rc: $(first_line "$T/p.err")"
fi
# ... and when it is SIGKILLed, stax stops and finishes the file
"$STAX" record -q -p "$SP" -o "$T/pk.data" >/dev/null 2>"$T/pk.err" &
ST=$!
bg_add "$ST"
# attached and recording (a slow start, under load or the sanitizers, must
# not find the process gone) before the process is killed
stax wait -i "$T/pk.data" --for-samples 20 --timeout 60 >/dev/null 2>&1
kill -9 "$SP"
wait "$ST"
rc=$?
if [ "$rc" -eq 0 ] && stax info -i "$T/pk.data" 2>/dev/null | grep -q '(finished)' &&
	[ "$(stax top -n 1 -i "$T/pk.data" 2>/dev/null | col_values /dev/stdin FUNCTION | head -n 1)" = spin_loop ]; then
	ok "-p PID, then PID SIGKILLed: stax exits 0, the file is finished, spin_loop first"
else
	fail "-p PID, then PID SIGKILLed: stax exits 0, the file finished" "status $rc: $(first_line "$T/pk.err")"
fi

# 4. The recorder SIGKILLed: the workload runs to its end, with its output
cat >"$T/work.sh" <<'EOS'
echo $$ >"$1"
"$2" 1.5 >/dev/null
echo "finished its work" >"$3"
exit 4
EOS
rm -f "$T/w.pid" "$T/w.out"
"$STAX" record -q -o "$T/w.data" -- sh "$T/work.sh" "$T/w.pid" "$PROG/spin-fp" "$T/w.out" >/dev/null 2>&1 &
ST=$!
bg_add "$ST"
wait_for "[ -s '$T/w.pid' ]" 10
WP=$(cat "$T/w.pid" 2>/dev/null)
[ -n "$WP" ] && bg_add "$WP"
sleep 0.5
kill -9 "$ST"
wait "$ST" 2>/dev/null
wait_for "[ -s '$T/w.out' ]" 20
if [ "$(cat "$T/w.out" 2>/dev/null)" = "finished its work" ] && stax top -n 1 -i "$T/w.data" >/dev/null 2>&1; then
	ok "the recorder SIGKILLed: the workload finishes its work, the file reads"
else
	fail "the recorder SIGKILLed: the workload finishes its work" "output '$(cat "$T/w.out" 2>/dev/null)'"
fi

# 5. Out of memory: once the workload runs, the recorder's address space
# is capped at what it uses (prlimit), so its next allocations fail (the
# new processes of the workload need some). The workload runs to its end
# with its output and status; stax says so once; the file reads.
cat >"$T/execs.sh" <<'EOS'
echo $$ >"$1"
sleep 0.5
for i in 1 2 3 4 5 6 7 8; do "$2" 0; done
echo "the workload says bye"
exit 6
EOS
if [ -n "${STAX_SANITIZER_LOGS:-}" ]; then
	# AddressSanitizer's own mappings fail fatally ("Failed to mmap")
	# under an address-space cap, before stax's handling can run
	skip "out of memory" "not under the sanitizers: an address-space cap aborts AddressSanitizer itself"
elif command -v prlimit >/dev/null 2>&1; then
	rm -f "$T/o.pid"
	"$STAX" record -o "$T/o.data" -- sh "$T/execs.sh" "$T/o.pid" "$PROG/exitcode-fp" >"$T/o.out" 2>"$T/o.err" &
	ST=$!
	bg_add "$ST"
	wait_for "[ -s '$T/o.pid' ]" 20
	vm=$(awk '/^VmSize/ { print $2 }' "/proc/$ST/status" 2>/dev/null)
	prlimit --pid "$ST" --as=$((${vm:-0} * 1024)) 2>"$T/prl.err"
	wait "$ST"
	rc=$?
	n=$(grep -c '^stax: error: out of memory' "$T/o.err")
	if [ -s "$T/prl.err" ] || [ -z "$vm" ]; then
		skip "out of memory" "cannot cap the recorder's address space: $(first_line "$T/prl.err")"
	elif [ "$rc" -eq 6 ] && [ "$n" -eq 1 ] && [ "$(cat "$T/o.out")" = "the workload says bye" ] &&
		! crashed "$T/o.err" 0 && stax top -n 1 -i "$T/o.data" >/dev/null 2>&1; then
		ok "out of memory while recording: one error line, the workload ran to its end (its output, status 6), the file reads"
	else
		fail "out of memory while recording: the workload ran to its end, the file reads" \
			"status $rc, $n out-of-memory lines, output '$(cat "$T/o.out")': $(tr '\n' '|' <"$T/o.err" | cut -c1-200)"
	fi
else
	skip "out of memory" "prlimit (util-linux) is not installed"
fi

# 6. A file size limit (ulimit -f 8, the shell's 1 KiB blocks): writes
# past it fail with EFBIG, as a full disk fails them; no root needed.
rm -f "$T/lim.data"
(ulimit -f 8 && exec "$STAX" record -F 2999 -o "$T/lim.data" -- \
	sh -c "\"$PROG/spin-fp\" 2 >/dev/null; echo 'the workload says bye'; exit 3") >"$T/lim.out" 2>"$T/lim.err"
rc=$?
n=$(grep -c '^stax: error: cannot write' "$T/lim.err")
if [ "$rc" -eq 3 ] && [ "$n" -eq 1 ] && [ "$(cat "$T/lim.out")" = "the workload says bye" ] &&
	[ "$(wc -c <"$T/lim.data")" -le 8192 ] && stax top -n 1 -i "$T/lim.data" >/dev/null 2>&1; then
	ok "a file size limit: one error line, the workload ran to its end (its output, status 3), the file reads"
else
	fail "a file size limit: the workload ran to its end, the file reads" \
		"status $rc, $n error lines, output '$(cat "$T/lim.out")': $(tr '\n' '|' <"$T/lim.err" | cut -c1-200)"
fi

# 7. A full disk: a tmpfs of 8 KiB. The workload finishes with its own
# output and status; stax says so once, exits with CMD's status (1 when
# that is 0), and the file reads.
if [ "$(id -u)" -ne 0 ]; then
	skip "a full disk" "mounting a small tmpfs needs root"
	done_testing
fi
mkdir "$T/full"
if ! mount -t tmpfs -o size=8k,mode=755 stax-test "$T/full" 2>"$T/mount.err"; then
	skip "a full disk" "cannot mount a tmpfs here: $(first_line "$T/mount.err")"
	done_testing
fi
trap 'umount "$T/full" 2>/dev/null; cleanup' EXIT
# full STATUS: record a 2 s workload that exits STATUS into the tmpfs
full() {
	rm -f "$T/full/x.data" "$T/full/x.data.old"
	stax record -F 2999 -o "$T/full/x.data" -- sh -c "\"$PROG/spin-fp\" 2 >/dev/null; echo 'the workload says bye'; exit $1" \
		>"$T/full.out" 2>"$T/full.err"
	rc=$?
}
full 3
n=$(grep -c '^stax: error: cannot write' "$T/full.err")
if [ "$n" -ne 1 ]; then
	fail "a full disk: stax says so once" "$n error lines: $(tr '\n' '|' <"$T/full.err" | cut -c1-300)"
elif [ "$rc" -eq 3 ] && [ "$(cat "$T/full.out")" = "the workload says bye" ] && ! grep -q 'SIGTERM' "$T/full.err"; then
	ok "a full disk: one error line, the workload ran to its end (its output, status 3)"
else
	fail "a full disk: the workload ran to its end (its output, status 3)" "status $rc, output '$(cat "$T/full.out")'"
fi
stax info -i "$T/full/x.data" >"$T/full.info" 2>"$T/full.ierr"
irc=$?
first=$(stax top -i "$T/full/x.data" 2>/dev/null | col_values /dev/stdin FUNCTION | head -n 1)
n=$(sed -n 's/^samples: *\([0-9]*\).*/\1/p' "$T/full.info")
if [ "$irc" -eq 0 ] && [ "${n:-0}" -gt 0 ] && [ "$first" = spin_loop ]; then
	ok "a full disk: the file reads (info: $n samples; top: spin_loop first)"
else
	fail "a full disk: the file reads" "info status $irc ($(first_line "$T/full.ierr")), $n samples, top first '$first'"
fi
full 0
if [ "$rc" -eq 1 ] && [ "$(cat "$T/full.out")" = "the workload says bye" ] &&
	[ "$(grep -c '^stax: error: cannot write' "$T/full.err")" -eq 1 ]; then
	ok "a full disk, CMD exits 0: stax exits 1 (its own failure), the workload's output intact"
else
	fail "a full disk, CMD exits 0: stax exits 1" "status $rc, output '$(cat "$T/full.out")': $(first_line "$T/full.err")"
fi

# finished-file writers on a full disk: the existing output stays whole
rm -f "$T/full/x.data" "$T/full/x.data.old"
stax record -q -o "$T/big.data" -- "$PROG/callgraph-fp" 0.5 >/dev/null 2>&1
echo "an existing output" >"$T/full/out"
head -c 4000 /dev/zero >"$T/full/filler"
for cmd in "flame --svg -i $T/big.data" "export --format speedscope -i $T/big.data" \
	"diff --svg $T/big.data $T/big.data"; do
	# shellcheck disable=SC2086
	stax $cmd -o "$T/full/out" >/dev/null 2>"$T/w.err"
	rc=$?
	left=$(ls -A "$T/full" | grep -c '\.stax-.*\.tmp$')
	if [ "$rc" -ne 0 ] && [ "$(cat "$T/full/out")" = "an existing output" ] && [ "$left" -eq 0 ]; then
		ok "${cmd%% *} -o on a full disk: fails ($(cut -c1-60 "$T/w.err")...), the existing output whole, no temporary file"
	else
		fail "${cmd%% *} -o on a full disk: the existing output whole" "status $rc, $left temporary files, now '$(head -c 40 "$T/full/out")'"
	fi
done
if command -v perf >/dev/null 2>&1 && perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$PROG/callgraph-fp" 0.5 >/dev/null 2>&1; then
	stax import "$T/perf.data" -o "$T/full/out" >/dev/null 2>"$T/w.err"
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$(cat "$T/full/out")" = "an existing output" ]; then
		ok "import -o on a full disk: fails, the existing output whole"
	else
		fail "import -o on a full disk: the existing output whole" "status $rc: $(first_line "$T/w.err")"
	fi
else
	skip "import -o on a full disk" "perf record cannot run here"
fi

done_testing
