#!/bin/sh
# debuginfod.sh - debug info fetched from a debuginfod server when
# DEBUGINFOD_URLS is set, and never asked for otherwise.
#
# Fixture: tests/programs/inline.c built with gcc -O2 -g, then stripped of
# everything (no .symtab, no debuglink); its debug file is served by a
# local `debuginfod -F DIR` on a free port, with a private client cache.
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v debuginfod >/dev/null 2>&1; then
	skip "debuginfod" "the debuginfod server is not installed (apt-get install debuginfod)"
	exit 0
fi
mkdir -p "$T/srv"
if ! gcc -O2 -g -I"$ROOT/tests/programs" -o "$T/prog" "$ROOT/tests/programs/inline.c" 2>"$T/cc.err" ||
	! objcopy --only-keep-debug "$T/prog" "$T/srv/prog.debug" || ! strip --strip-all "$T/prog"; then
	fail "build the fixture" "$(first_line "$T/cc.err")"
	done_testing
fi
BID=$(readelf -n "$T/prog" | awk '/Build ID/ {print $3}')
# stax's own caches (kallsyms, the mark of servers that did not answer)
export XDG_CACHE_HOME="$T/xdg"

# without DEBUGINFOD_URLS: no network, no names for the stripped binary
env -u DEBUGINFOD_URLS "$STAX" record -q -o "$T/off.data" -- "$T/prog" 0.3 >/dev/null 2>"$T/off.err"
if env -u DEBUGINFOD_URLS "$STAX" top -n 0 -i "$T/off.data" 2>/dev/null | grep -q "outer_work"; then
	fail "off without DEBUGINFOD_URLS" "outer_work was named without a debug source"
else
	ok "off without DEBUGINFOD_URLS: the stripped binary stays unnamed"
fi

why=$(loopback_why)
if [ -n "$why" ]; then
	skip "debuginfod server" "$why"
	done_testing
fi
PORT=$((20000 + $$ % 20000))
debuginfod -F "$T/srv" -p "$PORT" -d "$T/db.sqlite" >"$T/server.log" 2>&1 &
bg_add $!
export DEBUGINFOD_URLS="http://127.0.0.1:$PORT" DEBUGINFOD_CACHE_PATH="$T/cache"
# probe with a fresh cache each time: the client caches misses
if ! wait_for "rm -rf '$T/probe'; DEBUGINFOD_CACHE_PATH='$T/probe' debuginfod-find debuginfo $BID >/dev/null 2>&1" 60; then
	skip "debuginfod" "the local server did not serve the file in 60 s: $(tail -n 1 "$T/server.log")"
	done_testing
fi
stax record -q -o "$T/on.data" -- "$T/prog" 1 >/dev/null 2>"$T/on.err" || fail "record" "$(first_line "$T/on.err")"
stax flame --folded -i "$T/on.data" >"$T/on.folded" 2>/dev/null
s=$(share "$T/on.folded" ";main;outer_work;mix_step;hot_kernel$K")
if between "$s" 50 95; then
	ok "names and inline frames from debuginfod ($s% in main;outer_work;mix_step;hot_kernel)"
else
	fail "names and inline frames from debuginfod" "$s% in main;outer_work;mix_step;hot_kernel"
fi
stax info -i "$T/on.data" >"$T/on.info" 2>&1
if grep -q " prog .*debuginfod, lines from debuginfod" "$T/on.info"; then
	ok "info: symbols of prog came from debuginfod"
else
	fail "info: symbols of prog came from debuginfod" "$(grep ' prog ' "$T/on.info")"
fi

# a server that does not answer: the query still finishes, unnamed, after
# one try (no retries), says so, and later commands do not ask again
# (the mark in $XDG_CACHE_HOME/stax/debuginfod-down) until it is removed.
# Each try is counted where it arrives (a connection to the server below),
# not by how long it took: the machine may be busy.
# timed NAME: record the stripped program (naming its addresses at stop
# asks the server); sets $rc and $el (seconds, recording included)
timed() {
	start=$(date +%s.%N)
	"$STAX" record -q -o "$T/$1.data" -- "$T/prog" 0.05 >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	el=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
}
# a port nobody listens on: refused at once, the server marked down
export DEBUGINFOD_URLS="http://127.0.0.1:9" DEBUGINFOD_CACHE_PATH="$T/cache2" DEBUGINFOD_TIMEOUT=2
timed dead
if [ "$rc" -eq 0 ] && grep -q "debuginfod: .* did not answer" "$T/dead.err" &&
	! env -u DEBUGINFOD_URLS "$STAX" top -n 0 -i "$T/dead.data" 2>/dev/null | grep -q "outer_work"; then
	ok "an unreachable server: the recording is made, unnamed, with a warning (${el}s)"
else
	fail "an unreachable server: the recording is made, with a warning" "status $rc after ${el}s: $(first_line "$T/dead.err")"
fi
# a server that accepts connections and never answers; it writes a line
# for every connection it accepts
HPORT=$((PORT + 1))
python3 -c "
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $HPORT)); s.listen(64); print('up', flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c); print('connection', flush=True)" >"$T/hang.log" 2>&1 &
bg_add $!
wait_for "grep -q up '$T/hang.log'" 60
conns() { grep -c '^connection' "$T/hang.log"; }
rm -rf "$T/xdg" "$T/cache3"
export DEBUGINFOD_URLS="http://127.0.0.1:$HPORT" DEBUGINFOD_CACHE_PATH="$T/cache3"
timed hang1
c1=$(conns)
# one try that waited out the 2 s timeout (at least that long: more on a
# busy machine), not libdebuginfod's default of 90 s
if [ "$rc" -eq 0 ] && [ "$c1" -eq 1 ] && awk -v e="$el" 'BEGIN { exit !(e >= 1.5 && e < 60) }' &&
	grep -q "debuginfod: .* did not answer" "$T/hang1.err"; then
	ok "a server that never answers: one connection, one timeout of 2 s (${el}s), no retries, and a warning"
else
	fail "a server that never answers: one timeout, no retries, and a warning" "status $rc after ${el}s, $c1 connections: $(first_line "$T/hang1.err")"
fi
timed hang2
c2=$(conns)
if [ "$rc" -eq 0 ] && [ "$c2" -eq "$c1" ] && grep -q "not asking" "$T/hang2.err"; then
	ok "the next command does not ask the silent server again (no connection, ${el}s)"
else
	fail "the next command does not ask the silent server again" "status $rc, $((c2 - c1)) new connections: $(first_line "$T/hang2.err")"
fi
rm -f "$T/xdg/stax/debuginfod-down"
timed hang3
c3=$(conns)
if [ "$c3" -eq $((c2 + 1)) ] && awk -v e="$el" 'BEGIN { exit !(e >= 1.5) }'; then
	ok "with the mark removed it asks again (one connection, ${el}s)"
else
	fail "with the mark removed it asks again" "$((c3 - c2)) new connections, ${el}s: $(first_line "$T/hang3.err")"
fi
done_testing
