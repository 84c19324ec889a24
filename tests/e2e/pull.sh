#!/bin/sh
# pull.sh - the pprof pull endpoint (serve/pull.c) as Parca's and
# Pyroscope's scrapers use it, with go tool pprof as the client:
# stax serve --pprof DIR serves GET /debug/pprof/profile?seconds=N over
# the recordings in DIR while stax record writes one there; the program
# recorded is spin (tests/programs/spin.c: main;spin_loop, nearly all
# samples in spin_loop). Also pid= and comm=, the index, the Host check,
# bad requests, a non-loopback address only when asked, SIGTERM.
# stax-test: seconds=8
. "$(dirname "$0")/lib.sh"
require_stax

why=$(loopback_why)
if [ -n "$why" ]; then
	skip "pull endpoint" "$why"
	done_testing
fi
if ! command -v go >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
	skip "pull endpoint" "go (the client: go tool pprof) or curl is not installed"
	done_testing
fi
# go tool pprof in a sandbox: no network, nothing written outside $T
G=$T/go
mkdir -p "$G"
gopprof() {
	HOME=$G GOCACHE=$G/cache GOPATH=$G/path GOFLAGS=-mod=mod GOPROXY=off PPROF_TMPDIR=$G \
		timeout 60 go tool pprof "$@"
}

D=$T/d
mkdir -p "$D"
"$STAX" serve --pprof "$D" --listen 127.0.0.1:0 2>"$T/srv.err" &
srv=$!
bg_add "$srv"
if ! wait_for "grep -q 'debug/pprof/ ' '$T/srv.err'" 20; then
	fail "serve --pprof starts" "$(first_line "$T/srv.err")"
	done_testing
fi
port=$(sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/debug/pprof/ .*|\1|p' "$T/srv.err" | head -n 1)
U=http://127.0.0.1:$port/debug/pprof

# the agent's way: a recording named stax-YYYYMMDD-HHMMSS.data, still
# being written while the profile is taken
rec=$D/stax-$(date -u +%Y%m%d-%H%M%S).data
stax record -o "$rec" -- "$PROG/spin-fp" 14 >"$T/spin.out" 2>"$T/rec.err" &
rp=$!
bg_add "$rp"
wait_for "[ -s '$T/spin.out' ] && stax top -i '$rec' 2>/dev/null | grep -q spin_loop" 30
spid=$(head -n 1 "$T/spin.out")

# five requests at once (each waits its seconds)
gopprof -top "$U/profile?seconds=3" >"$T/top.txt" 2>"$T/top.err" &
g=$!
curl -s -o "$T/pid.pb.gz" -w '%{http_code} %{content_type}' "$U/profile?seconds=2&pid=$spid" >"$T/pid.code" &
c1=$!
curl -s -o "$T/pid1.pb.gz" -w '%{http_code}' "$U/profile?seconds=2&pid=1" >"$T/pid1.code" &
c2=$!
curl -s -o "$T/comm.pb.gz" -w '%{http_code}' "$U/profile?seconds=2&comm=spin-fp" >"$T/comm.code" &
c3=$!
curl -s -o "$T/commx.pb.gz" -w '%{http_code}' "$U/profile?seconds=2&comm=no-such-thread" >"$T/commx.code" &
c4=$!
wait $g $c1 $c2 $c3 $c4

flat=$(awk '$NF == "spin_loop" { print $2; exit }' "$T/top.txt" | tr -d '%')
if between "${flat:-0}" 80 100 && grep -q '^Duration: 3' "$T/top.txt"; then
	ok "go tool pprof -top $U/profile?seconds=3: spin_loop flat ${flat}%, $(grep '^Duration' "$T/top.txt" | cut -c1-60)"
else
	fail "go tool pprof -top names spin_loop" "flat '$flat': $(head -n 12 "$T/top.txt" | tr '\n' '|' | cut -c1-500) $(first_line "$T/top.err")"
fi
# the answers of the filters, read by the same client offline
for f in pid pid1 comm commx; do
	gopprof -top "$T/$f.pb.gz" >"$T/$f.txt" 2>"$T/$f.err"
done
if [ "$(cat "$T/pid.code")" = "200 application/octet-stream" ] && grep -q 'spin_loop$' "$T/pid.txt" &&
   [ "$(cat "$T/pid1.code")" = 200 ] && ! grep -q 'spin_loop$' "$T/pid1.txt" &&
   [ "$(cat "$T/comm.code")" = 200 ] && grep -q 'spin_loop$' "$T/comm.txt" &&
   [ "$(cat "$T/commx.code")" = 200 ] && ! grep -q 'spin_loop$' "$T/commx.txt"; then
	ok "pid=$spid and comm=spin-fp keep spin_loop; pid=1 and comm=no-such-thread keep none of it"
else
	fail "pid= and comm= filters" "$(cat "$T/pid.code") $(grep -c spin_loop "$T/pid.txt"), pid=1: $(grep -c spin_loop "$T/pid1.txt"), comm: $(grep -c spin_loop "$T/comm.txt"), commx: $(grep -c spin_loop "$T/commx.txt") $(first_line "$T/pid.err")"
fi

# what is refused: another Host (DNS rebinding), bad seconds, other
# profiles, other methods
code() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
h=$(code -H "Host: evil.example:$port" "$U/profile?seconds=1")
hb=$(cat "$T/body")
s1=$(code "$U/profile?seconds=abc")
sb=$(cat "$T/body")
s2=$(code "$U/profile?seconds=0")
s3=$(code "$U/profile?seconds=3601")
p1=$(code "$U/profile?seconds=1&pid=x")
hp=$(code "$U/heap")
po=$(code -X POST "$U/profile?seconds=1")
ix=$(code "$U/")
if [ "$h" = 403 ] && [ "$s1" = 400 ] && [ "$s2" = 400 ] && [ "$s3" = 400 ] && [ "$p1" = 400 ] &&
   [ "$hp" = 404 ] && [ "$po" = 405 ] && [ "$ix" = 200 ] && grep -q "$(basename "$rec")" "$T/body" &&
   echo "$sb" | grep -q 'from 1 to 3600'; then
	ok "Host evil.example: 403; seconds=abc, 0, 3601, pid=x: 400 ($sb); /heap 404; POST 405; the index lists $(basename "$rec")"
else
	fail "refusals" "host $h ($hb), seconds $s1 $s2 $s3, pid $p1, heap $hp, POST $po, index $ix"
fi

# beyond loopback only when asked, with a warning; then address
# literals are hosts it answers, other names still are not
"$STAX" serve --pprof "$D" --listen 0.0.0.0:0 >/dev/null 2>"$T/any.err" &
ap=$!
bg_add "$ap"
wait "$ap"
arc=$?
"$STAX" serve --pprof "$D" --listen 0.0.0.0:0 --allow-remote 2>"$T/remote.err" &
rs=$!
bg_add "$rs"
wait_for "grep -q 'debug/pprof/ ' '$T/remote.err'" 20
rport=$(sed -n 's|.*serving the CPU profiles of .* at http://0\.0\.0\.0:\([0-9]*\)/.*|\1|p' "$T/remote.err" | head -n 1)
r1=$(code -H "Host: 192.0.2.7:$rport" "http://127.0.0.1:$rport/debug/pprof/")
r2=$(code -H "Host: evil.example:$rport" "http://127.0.0.1:$rport/debug/pprof/")
if [ "$arc" -eq 1 ] && one_line_error "$T/any.err" && grep -q 'not a loopback address' "$T/any.err" &&
   grep -q 'warning: serving profiles at .* beyond this machine' "$T/remote.err" &&
   [ "$r1" = 200 ] && [ "$r2" = 403 ]; then
	ok "--listen 0.0.0.0: refused without --allow-remote; with it a warning, Host 192.0.2.7 answered, evil.example 403"
else
	fail "a non-loopback address" "status $arc: $(first_line "$T/any.err"); $(grep -c warning "$T/remote.err") warnings, $r1 $r2"
fi

# SIGTERM stops both servers: status 0
kill -TERM "$srv" "$rs"
wait "$srv"
s_rc=$?
wait "$rs"
r_rc=$?
if [ "$s_rc" -eq 0 ] && [ "$r_rc" -eq 0 ]; then
	ok "SIGTERM: serve --pprof exits 0"
else
	fail "SIGTERM" "status $s_rc and $r_rc"
fi
kill "$spid" 2>/dev/null
wait "$rp" 2>/dev/null
done_testing
