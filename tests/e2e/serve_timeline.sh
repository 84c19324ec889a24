#!/bin/sh
# serve_timeline.sh - stax serve's timeline and its one selection, on
# phases (tests/programs/phases.c: first_half runs the first half,
# second_half the second): a time range, a thread and a focused function
# change every panel and clear from the bar; the icicle; and a recording
# of 1,000 threads (manythreads) whose every thread the timeline and the
# threads table reach. The API answers with curl; the page is checked in
# headless chromium.
# stax-test: seconds=30
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v curl >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	skip "serve timeline" "curl or python3 is not installed"
	done_testing
fi
why=$(loopback_why)
if [ -n "$why" ]; then
	skip "serve timeline" "$why"
	done_testing
fi
if ! stax record -o "$T/ph.data" -- "$PROG/phases-nofp" >/dev/null 2>"$T/rec.err"; then
	fail "record phases-nofp" "$(first_line "$T/rec.err")"
	done_testing
fi
"$STAX" serve -i "$T/ph.data" --port 0 2>"$T/serve.err" &
SPID=$!
bg_add "$SPID"
PORT=""
wait_for 'PORT=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/serve.err"); [ -n "$PORT" ]' 60
get() { curl -s -m 30 "http://127.0.0.1:$PORT$1"; }
if [ -z "$PORT" ]; then
	fail "serve starts" "$(first_line "$T/serve.err")"
	done_testing
fi
get "/api/timeline?buckets=10" >"$T/tl.json"
if python3 - "$T/tl.json" >"$T/tl.out" 2>&1 <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
r = [x for x in t["threads"] if x["name"].startswith("phases")][0]
assert t["buckets"] == 10 and sum(r["counts"]) == r["samples"] > 0
h = r["hottest"]
assert h[1] == "first_half" and h[-2] == "second_half", h
start, w = t["start_ns"], t["bucket_s"] * 1e9
# Each phase is a number of iterations, not of seconds: on a busy
# machine one takes more of the run's wall time than the other. So the
# windows are the buckets the timeline itself shows each phase hottest
# in, one bucket clear of the switch: from the start to the bucket
# before the last first_half one, and from the bucket after the first
# second_half one to the end.
last_first = max(i for i, f in enumerate(h) if f == "first_half")
first_second = min(i for i, f in enumerate(h) if f == "second_half")
a1 = max(1, last_first)
b0 = min(9, first_second + 1)
print("%d %d %d %d" % (start, start + a1 * w, start + b0 * w, start + 10 * w))
PY
then
	ok "/api/timeline: counts per bucket, first_half then second_half hottest"
	set -- $(cat "$T/tl.out")
	get "/api/top?t0=$1&t1=$2" >"$T/a.json"
	get "/api/top?t0=$3&t1=$4" >"$T/b.json"
	if python3 - "$T/a.json" "$T/b.json" <<'PY' 2>"$T/sel.err"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["functions"][0]["name"] == "first_half" and b["functions"][0]["name"] == "second_half", (a["functions"][0], b["functions"][0])
assert a["functions"][0]["self_pct"] > 80 and b["functions"][0]["self_pct"] > 80, (a["functions"][0], b["functions"][0])
PY
	then
		ok "/api/top with t0,t1: first_half tops the buckets before the switch, second_half those after"
	else
		fail "/api/top with a time range" "$(tail -n 1 "$T/sel.err")"
	fi
else
	fail "/api/timeline" "$(tail -n 1 "$T/tl.out")"
fi
get "/api/callers?func=second_half" >"$T/c.json"
get "/api/callees?func=main" >"$T/e.json"
if grep -q '"callers":\[{"name":"main"' "$T/c.json" && grep -q '"name":"second_half"' "$T/e.json"; then
	ok "/api/callers and /api/callees"
else
	fail "/api/callers and /api/callees" "$(head -c 200 "$T/c.json") $(head -c 200 "$T/e.json")"
fi
# icicle: the root frame (the first drawn) is the top row (y = 64); in
# the flame graph it is the bottom one
first_y() { awk '/^<g class="f"/ && match($0, /y="[0-9]+"/) { print substr($0, RSTART + 3, RLENGTH - 4) + 0; exit }'; }
ytop=$(get "/flame.svg?view=icicle" | first_y)
yflame=$(get "/flame.svg" | first_y)
if [ "$ytop" = 64 ] && [ -n "$yflame" ] && [ "$yflame" -gt 64 ]; then
	ok "flame.svg?view=icicle: the root at the top (y $ytop; in the flame graph at y $yflame)"
else
	fail "flame.svg?view=icicle" "icicle top y '$ytop', flame '$yflame'"
fi

if browser_setup; then
	browser_check "serve page in chromium: a time range, a thread, a focused function change every panel and clear from the bar; icicle" \
		"$T/b.out" select "http://127.0.0.1:$PORT/" "$T/tl.png" first_half second_half
else
	skip "serve timeline in chromium" "$BROWSER_WHY"
fi
kill "$SPID" 2>/dev/null
wait "$SPID" 2>/dev/null

# 1,000 threads: a track each (those without samples in a folded group),
# the last reached by scrolling and picked, the threads table complete
if ! stax record -o "$T/mt.data" -- "$PROG/manythreads-fp" 1000 2 >/dev/null 2>"$T/mt.err"; then
	fail "record manythreads-fp 1000" "$(first_line "$T/mt.err")"
elif browser_setup; then
	"$STAX" serve -i "$T/mt.data" --port 0 2>"$T/serve2.err" &
	SPID=$!
	bg_add "$SPID"
	PORT=""
	wait_for 'PORT=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/serve2.err"); [ -n "$PORT" ]' 60
	browser_check "serve page of 1,000 threads: every thread has a track and a table row, the last one reached and picked" \
		"$T/big.out" big "http://127.0.0.1:$PORT/" "$T/big.png" 1000
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
else
	skip "serve page of 1,000 threads" "$BROWSER_WHY"
fi
done_testing
