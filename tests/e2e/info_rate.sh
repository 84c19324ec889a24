#!/bin/sh
# info_rate.sh - the effective sample rate stax info gives.
#
# With -a every recorded cpu is sampled all the time (idle ones too), so
# the rate is samples per second of the recording per recorded cpu, and
# -F 500 gives about 500 Hz however little CPU the command used (it used
# to divide by CMD's own CPU time: "sleep 1" with -a showed 100,000s of
# Hz). Without -a it is samples per second of the command's CPU time.
# Bounds: at most 15% above the request (the timer never samples faster),
# and at least a quarter of it (samples lost on a busy 2-core machine).
# stax-test: seconds=12
. "$(dirname "$0")/lib.sh"
require_stax

# rate FILE: the effective rate (Hz) and its unit, from stax info
rate() { stax info "$1" 2>/dev/null | sed -n 's/^event:.*effective \([0-9.]*\) Hz\(.*\)$/\1\2/p'; }

check() {
	r=$(rate "$2")
	hz=${r%% *}
	if between "${hz:-0}" $(($3 / 4)) $(($3 * 115 / 100)) && printf '%s' "$r" | grep -q "$4"; then
		ok "$1: effective $r for -F $3"
	else
		fail "$1: effective about $3 Hz ($4)" "got '$r'"
	fi
}

stax record -q -F 500 -o "$T/cmd.data" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/err" ||
	fail "record callgraph-fp" "$(first_line "$T/err")"
check "record -- CMD" "$T/cmd.data" 500 "per second of CPU time"

if ! "$STAX" record -a -q -F 500 -o "$T/probe.data" -- true >/dev/null 2>"$T/err"; then
	skip "record -a -- CMD: effective rate" "needs root or kernel.perf_event_paranoid <= 0: $(first_line "$T/err")"
	done_testing
fi
stax record -a -q -F 500 -o "$T/sleep.data" -- sleep 1 >/dev/null 2>"$T/err" ||
	fail "record -a -- sleep 1" "$(first_line "$T/err")"
check "record -a -- sleep 1" "$T/sleep.data" 500 "per second per recorded CPU"
stax record -a -q -F 500 -o "$T/busy.data" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/err" ||
	fail "record -a -- callgraph-fp 1" "$(first_line "$T/err")"
check "record -a -- a busy CMD" "$T/busy.data" 500 "per second per recorded CPU"
stax record -a -q -F 500 --duration 1 -o "$T/dur.data" >/dev/null 2>"$T/err" ||
	fail "record -a --duration 1" "$(first_line "$T/err")"
check "record -a --duration 1" "$T/dur.data" 500 "per second per recorded CPU"
n=$(stax info --json "$T/sleep.data" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["effective_hz"])' 2>/dev/null)
if between "${n:-0}" 125 575; then
	ok "info --json: effective_hz $n for record -a -F 500 -- sleep 1"
else
	fail "info --json: effective_hz about 500 for record -a -F 500 -- sleep 1" "got '$n'"
fi
done_testing
