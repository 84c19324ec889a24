#!/bin/sh
# attach.sh - "stax record -p PID": stop on SIGINT/SIGTERM to stax or when
# the targets exit; the targets keep running after stax detaches.
#
# spin [SECONDS] prints its pid, then spins in main;spin_loop.
# The recorders are stopped once their file holds enough samples (stax
# wait), not after a fixed time: on a busy machine the targets get less
# CPU in a second. The 120 s limits only stop a hang.
# stax-test: seconds=7
. "$(dirname "$0")/lib.sh"
require_stax

# start_spin NAME [SECONDS]: start spin-fp in the background; sets SPIN
start_spin() {
	"$PROG/spin-fp" ${2:-} >"$T/$1.pid" 2>/dev/null &
	SPIN=$!
	bg_add "$SPIN"
	wait_for "[ -s '$T/$1.pid' ]" 60
}

# Background recorders run "$STAX" directly (not the stax() wrapper with
# its timeout), so $! is stax itself and signals reach it.

# stop_stax PID SIGNAL: send SIGNAL, wait up to 120 s; sets rc (124: hung)
stop_stax() {
	kill "-$2" "$1" 2>/dev/null
	if wait_for "! kill -0 $1 2>/dev/null" 120; then
		wait "$1"
		rc=$?
	else
		kill -9 "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		rc=124
	fi
}

# --- SIGINT ---------------------------------------------------------------
start_spin s1
"$STAX" record -p "$SPIN" -o "$T/int.data" >/dev/null 2>"$T/int.err" &
st=$!
bg_add "$st"
stax wait -i "$T/int.data" --for-samples 300 --timeout 120 2>/dev/null
stop_stax "$st" INT
if [ "$rc" -eq 0 ]; then
	ok "-p PID, SIGINT to stax: exits 0"
else
	fail "-p PID, SIGINT to stax: exits 0" "status $rc (124: still running 120 s after SIGINT): $(first_line "$T/int.err")"
fi
if kill -0 "$SPIN" 2>/dev/null; then
	ok "the attached process survives stax's SIGINT"
else
	fail "the attached process survives stax's SIGINT" "spin $SPIN is gone"
fi
stax flame --folded -i "$T/int.data" >"$T/int.folded" 2>"$T/int.ferr"
n=$(samples "$T/int.folded")
s=$(share "$T/int.folded" "^spin-fp;.*;main;spin_loop$K")
if [ "$n" -gt 100 ] && between "$s" 95 100; then
	ok "-p PID recorded $n samples, $s% in main;spin_loop"
else
	fail "-p PID recorded samples in main;spin_loop" "$n samples, $s%: $(first_line "$T/int.folded") $(first_line "$T/int.ferr")"
fi
kill -9 "$SPIN" 2>/dev/null

# --- SIGTERM, and two pids ------------------------------------------------
start_spin s2
p1=$SPIN
start_spin s3
p2=$SPIN
"$STAX" record -p "$p1,$p2" -o "$T/term.data" >/dev/null 2>"$T/term.err" &
st=$!
bg_add "$st"
stax wait -i "$T/term.data" --for-samples 600 --timeout 120 2>/dev/null
stop_stax "$st" TERM
if [ "$rc" -ne 124 ]; then
	ok "-p PID,PID, SIGTERM to stax: stops (status $rc)"
else
	fail "-p PID,PID, SIGTERM to stax: stops" "still running 120 s after SIGTERM"
fi
stax threads -i "$T/term.data" >"$T/term.threads" 2>"$T/term.terr"
n1=$(row_where "$T/term.threads" PID "$p1" SAMPLES)
n2=$(row_where "$T/term.threads" PID "$p2" SAMPLES)
if [ "${n1:-0}" -gt 50 ] && [ "${n2:-0}" -gt 50 ]; then
	ok "-p PID,PID records both ($n1 and $n2 samples)"
else
	fail "-p PID,PID records both" "pid $p1: '${n1:-}' samples, pid $p2: '${n2:-}'; $(first_line "$T/term.terr")"
fi
kill -9 "$p1" "$p2" 2>/dev/null

# --- the target exits: stax stops by itself -------------------------------
# (callgraph-fp 1: a fixed amount of work, ~1.3 s of CPU, then it exits)
"$PROG/callgraph-fp" 1 >/dev/null 2>&1 &
SPIN=$!
bg_add "$SPIN"
"$STAX" record -p "$SPIN" -o "$T/exit.data" >/dev/null 2>"$T/exit.err" &
st=$!
bg_add "$st"
if wait_for "! kill -0 $st 2>/dev/null" 120; then
	wait "$st"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "-p PID stops when the target exits, status 0"
	else
		fail "-p PID stops when the target exits, status 0" "status $rc: $(first_line "$T/exit.err")"
	fi
else
	fail "-p PID stops when the target exits" "still running 120 s later"
	kill -9 "$st" 2>/dev/null
fi
n=$(stax flame --folded -i "$T/exit.data" 2>/dev/null | samples /dev/stdin)
if [ "$n" -gt 100 ]; then
	ok "-p PID until exit recorded $n samples"
else
	fail "-p PID until exit recorded samples" "$n samples"
fi

# --- attach to threads that already run: names come from /proc ------------
"$PROG/threads-fp" 3 >/dev/null 2>&1 &
tp=$!
bg_add "$tp"
wait_for "[ \$(ls /proc/$tp/task 2>/dev/null | wc -l) -ge 4 ]" 60
"$STAX" record -p "$tp" -o "$T/thr.data" >/dev/null 2>"$T/thr.err" &
st=$!
bg_add "$st"
stax wait -i "$T/thr.data" --for-samples 300 --timeout 120 2>/dev/null
stop_stax "$st" INT
stax threads -i "$T/thr.data" >"$T/thr.txt" 2>/dev/null
missing=""
for w in worker-a worker-b worker-c; do
	n=$(row_where "$T/thr.txt" NAME "$w" SAMPLES)
	[ "${n:-0}" -gt 0 ] || missing="$missing $w"
done
if [ -z "$missing" ]; then
	ok "-p PID of a running multi-threaded process: all worker threads, named"
else
	fail "-p PID of a running multi-threaded process: all worker threads, named" \
		"missing:$missing; table: $(tr '\n' '|' <"$T/thr.txt" | cut -c1-300)"
fi
kill -9 "$tp" 2>/dev/null

# --- a pid that does not exist: one-line error ------------------------------
stax record -p 999999999 -o "$T/bad.data" >/dev/null 2>"$T/bad.err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/bad.err"; then
	ok "-p of a pid that does not exist: one error line"
else
	fail "-p of a pid that does not exist: one error line" "status $rc, stderr: $(tr '\n' '|' <"$T/bad.err" | cut -c1-300)"
fi

# the recording names the attached processes' command lines
"$PROG/spin-fp" 2 >"$T/cl.pid" 2>/dev/null &
CL=$!
bg_add "$CL"
sleep 0.3
stax record -q -o "$T/cl.data" -p "$CL" --duration 0.3 >/dev/null 2>&1
cmd=$(stax info -i "$T/cl.data" 2>/dev/null | sed -n 's/^command: *//p')
case $cmd in
"-p $CL ($PROG/spin-fp 2)") ok "info: -p names the process's command line: $cmd" ;;
*) fail "info: -p names the process's command line" "got: $cmd" ;;
esac
kill "$CL" 2>/dev/null

done_testing
