#!/bin/sh
# json.sh - every query command's --json output is valid JSON, also with
# filters, and agrees with the text output on the totals.
# stax-test: seconds=15
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v python3 >/dev/null 2>&1; then
	skip "--json output parses" "python3 is not installed"
	exit 0
fi

stax record -o "$T/j.data" -- "$PROG/forkexec-fp" "$PROG/callgraph-fp" 0.3 >/dev/null 2>"$T/rec.err" ||
	fail "record forkexec-fp for the JSON checks" "$(first_line "$T/rec.err")"

# check NAME ARGS...: stax ARGS --json parses as JSON
check() {
	name=$1
	shift
	stax "$@" --json -i "$T/j.data" >"$T/out.json" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		fail "$name --json" "status $rc: $(first_line "$T/err")"
	elif python3 -m json.tool "$T/out.json" >/dev/null 2>"$T/perr"; then
		ok "$name --json parses"
	else
		fail "$name --json parses" "$(tail -n 1 "$T/perr"); output starts: $(head -c 150 "$T/out.json" | tr '\n' ' ')"
	fi
}

check "top" top
check "top -n 0 --sort total" top -n 0 --sort total
check "flame" flame
check "flame -d 3 --threshold 5" flame -d 3 --threshold 5
check "threads" threads
check "info" info
check "script" script
# a filter that keeps nothing: no document, one error line naming it, exit 1
nothing() {
	name=$1
	shift
	stax "$@" --json -i "$T/j.data" >"$T/out.json" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ ! -s "$T/out.json" ] && one_line_error "$T/err" && grep -q -- "$want" "$T/err"; then
		ok "$name --json: exit 1, nothing printed, the error names $want"
	else
		fail "$name --json: exit 1 naming $want" "status $rc, $(wc -c <"$T/out.json") bytes out: $(first_line "$T/err")"
	fi
}
for cmd in top flame threads script; do
	want="--comm no-such-name" nothing "$cmd --comm no-such-name (no samples)" $cmd --comm no-such-name
done
check "top --comm callgraph-fp" top --comm callgraph-fp
want="--pid 1" nothing "threads --pid 1 (no samples)" threads --pid 1
check "callers" callers leaf_b
check "callees" callees b
check "flame --inverted" flame --inverted
check "timeline --hottest" timeline --hottest
for by in module thread process; do
	check "top --by $by" top --by $by
done
check "top --time 0%,50% --hide leaf" top --time 0%,50% --hide leaf
check "flame --focus '^a\$' --exclude leaf_c" flame --focus '^a$' --exclude leaf_c

# A comm with a quote, a backslash and a tab must be escaped: each view
# names the program (a thread's name, leaf_b's module, the flame's root,
# a sample's comm), and that string, once parsed, is the name exactly.
odd=$(printf 'q"b\\t\tx')
cp "$PROG/callgraph-fp" "$T/$odd"
stax record -o "$T/odd.data" -- "$T/$odd" 0.2 >/dev/null 2>"$T/odd.err"
for cmd in threads top flame script; do
	stax $cmd --json -i "$T/odd.data" >"$T/odd.json" 2>"$T/err"
	if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
want, cmd = sys.argv[2], sys.argv[3]
if cmd == "threads":
    got = [t["name"] for t in d["threads"]]
elif cmd == "top":
    got = [f["module"] for f in d["functions"] if f["name"] == "leaf_b"]
elif cmd == "flame":
    got = [r["name"] for r in d["roots"]]
else:
    got = [s["comm"] for s in d["samples"]]
assert got and all(g == want for g in got), "got %r, want %r" % (got[:3], want)' "$T/odd.json" "$odd" "$cmd" 2>"$T/perr"; then
		ok "$cmd --json escapes a comm with quote, backslash and tab"
	else
		fail "$cmd --json escapes a comm with quote, backslash and tab" "$(tail -n 1 "$T/perr"): $(head -c 200 "$T/odd.json")"
	fi
done

# JSON and text agree: the threads' samples add up to the folded total.
n=$(stax flame --folded -i "$T/j.data" 2>/dev/null | samples /dev/stdin)
stax threads --json -i "$T/j.data" >"$T/t.json" 2>/dev/null
m=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d.get("threads", d) if isinstance(d, dict) else d
print(sum(int(r.get("samples", 0)) for r in rows))' "$T/t.json" 2>"$T/perr")
if [ -n "$m" ] && [ "$n" -gt 0 ] && [ "$m" -eq "$n" ]; then
	ok "threads --json samples add up to the folded total ($n)"
else
	fail "threads --json samples add up to the folded total" "json '$m', folded $n: $(tail -n 1 "$T/perr")"
fi

done_testing
