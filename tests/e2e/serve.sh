#!/bin/sh
# serve.sh - stax serve: loopback only, the endpoints answer, the page
# renders in headless chromium with the hot function visible (flamegraph
# label and top table), and a recording that grows is re-read.
#
# callgraph-fp (tests/programs/callgraph.c): leaf_b has 75% of samples.
. "$(dirname "$0")/lib.sh"
require_stax

D=$T/cg.data
stax record -o "$D" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/rec.err" || {
	fail "record callgraph-fp" "$(first_line "$T/rec.err")"
	done_testing
}

# start_server FILE: sets PORT and SPID
start_server() {
	"$STAX" serve -i "$1" --port 0 2>"$T/serve.err" &
	SPID=$!
	bg_add "$SPID"
	PORT=""
	wait_for 'PORT=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/serve.err"); [ -n "$PORT" ]' 10
}
get() { curl -s -m 10 "http://127.0.0.1:$PORT$1"; }

if ! command -v curl >/dev/null 2>&1; then
	skip "stax serve" "curl is not installed (apt-get install curl)"
	done_testing
fi
if ! start_server "$D"; then
	fail "serve starts" "$(first_line "$T/serve.err")"
	done_testing
fi
ok "serve starts on 127.0.0.1:$PORT"

# loopback only: the listening socket is bound to 127.0.0.1
if command -v ss >/dev/null 2>&1; then
	if ss -ltnH "sport = :$PORT" | awk '{ print $4 }' | grep -qx "127.0.0.1:$PORT"; then
		ok "serve listens on 127.0.0.1 only"
	else
		fail "serve listens on 127.0.0.1 only" "$(ss -ltnH "sport = :$PORT" | tr '\n' '|')"
	fi
else
	skip "serve listens on 127.0.0.1 only" "ss is not installed (apt-get install iproute2)"
fi

get /api/top >"$T/top.json"
get /flame.svg >"$T/f.svg"
get "/api/addrs?func=leaf_b" >"$T/a.json"
get / >"$T/page.html"
if grep -q '"name":"leaf_b"' "$T/top.json" && grep -q '<title>leaf_b (' "$T/f.svg" &&
   grep -q '"function":"leaf_b"' "$T/a.json" && grep -q 'id="flame"' "$T/page.html"; then
	ok "serve: /, /flame.svg, /api/top and /api/addrs answer"
else
	fail "serve endpoints" "top $(head -c 80 "$T/top.json") svg $(wc -c <"$T/f.svg") addrs $(head -c 80 "$T/a.json")"
fi
if grep -Eq '(src|href)="?(https?:)?//' "$T/page.html"; then
	fail "serve: the page loads nothing from elsewhere" "$(grep -Eo '(src|href)="?(https?:)?//[^"]*' "$T/page.html" | head -n 1)"
else
	ok "serve: the page loads nothing from elsewhere"
fi

if browser_setup; then
	timeout 60 node "$BROWSER" page "http://127.0.0.1:$PORT/" "$T/page.png" leaf_b >"$T/b.out" 2>&1
	rc=$?
	[ -n "${STAX_SHOT:-}" ] && cp "$T/page.png" "$STAX_SHOT" 2>/dev/null
	if [ "$rc" -eq 0 ]; then
		ok "serve page renders in headless chromium with leaf_b in the flamegraph and table ($(first_line "$T/b.out"))"
	elif [ "$rc" -eq 2 ]; then
		skip "serve page in chromium" "$(first_line "$T/b.out")"
	else
		fail "serve page renders in headless chromium" "$(head -n 3 "$T/b.out" | tr '\n' '|')"
	fi
else
	skip "serve page in chromium" "$BROWSER_WHY"
fi
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null

# a recording that is still being written: the server re-reads it
L=$T/live.data
"$STAX" record -o "$L" -- "$PROG/callgraph-fp" 4 >/dev/null 2>"$T/live.err" &
RPID=$!
bg_add "$RPID"
if wait_for '[ -s "$L" ] && "$STAX" info -i "$L" --json 2>/dev/null | grep -Eq "\"samples\":[1-9]"' 15 && start_server "$L"; then
	n1=$(get /api/info | sed -n 's/.*"samples":\([0-9]*\).*/\1/p')
	sleep 2
	n2=$(get /api/info | sed -n 's/.*"samples":\([0-9]*\).*/\1/p')
	if [ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" -gt "$n1" ]; then
		ok "serve re-reads a running recording ($n1 then $n2 samples)"
	else
		fail "serve re-reads a running recording" "samples '$n1' then '$n2'"
	fi
	kill "$SPID" 2>/dev/null
else
	fail "serve on a running recording" "$(first_line "$T/live.err") $(first_line "$T/serve.err")"
fi
kill "$RPID" 2>/dev/null
wait "$RPID" 2>/dev/null

"$STAX" serve -i "$T/missing.data" --port 0 >/dev/null 2>"$T/m.err"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/m.err"; then
	ok "serve of a missing file: one-line error"
else
	fail "serve of a missing file: one-line error" "status $rc: $(head -n 2 "$T/m.err" | tr '\n' '|')"
fi

done_testing
