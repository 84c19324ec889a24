#!/bin/sh
# timeline.sh - stax timeline on phases (tests/programs/phases.c), whose
# hot function changes half-way: first_half is the hottest function of
# the first buckets, second_half of the last; the counts add up.
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v python3 >/dev/null 2>&1; then
	skip "timeline" "python3 is not installed"
	done_testing
fi
record() { stax record -o "$T/ph.data" -- "$PROG/phases-nofp" "$1" >/dev/null 2>"$T/rec.err"; }
check() {
	stax timeline "$T/ph.data" -b 10 --hottest --json >"$T/t.json" 2>"$T/t.err" &&
	stax top "$T/ph.data" --json >"$T/top.json" 2>/dev/null &&
	python3 -c '
import json, sys
t = json.load(open(sys.argv[1])); top = json.load(open(sys.argv[2]))
rows = [r for r in t["threads"] if r["name"].startswith("phases")]
assert len(rows) == 1, "threads: %r" % [r["name"] for r in t["threads"]]
r = rows[0]
assert t["buckets"] == 10 and len(r["counts"]) == 10 and len(r["hottest"]) == 10
assert sum(r["counts"]) == r["samples"], "counts add up to %d, not %d" % (sum(r["counts"]), r["samples"])
assert sum(x["samples"] for x in t["threads"]) == t["samples"] == top["samples"], "timeline %d, top %d" % (t["samples"], top["samples"])
h = r["hottest"]
assert h[1] == h[2] == "first_half" and h[-2] == h[-3] == "second_half", "hottest: %r" % h
print(" ".join(x or "-" for x in h))
' "$T/t.json" "$T/top.json" >"$T/check.out" 2>&1
}
if ! record 1; then
	fail "record phases-nofp" "$(first_line "$T/rec.err")"
	done_testing
fi
check || { record 2 && check; }
if check; then
	ok "timeline --hottest --json: $(cat "$T/check.out")"
else
	fail "timeline --hottest --json" "$(tail -n 1 "$T/check.out") $(first_line "$T/t.err")"
fi
# text: one row per thread, 10 marks between bars; --time narrows it
stax timeline "$T/ph.data" -b 10 >"$T/t.txt" 2>"$T/t2.err"
marks=$(awk -F'|' '/^phases/ { print length($2) }' "$T/t.txt")
# (the last 30%: clear of the switch between the phases, which moves
# when the machine is busy)
stax timeline "$T/ph.data" --time 70%,100% --hottest --json >"$T/half.json" 2>/dev/null
if [ "$marks" = 10 ] && python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
h = [x for r in t["threads"] if r["name"].startswith("phases") for x in r["hottest"] if x]
assert h and h.count("second_half") >= 0.8 * len(h), h' "$T/half.json" 2>"$T/half.err"; then
	ok "timeline (text): one row of 10 marks; --time 70%,100%: second_half is hottest"
else
	fail "timeline text and --time" "marks '$marks': $(head -n 2 "$T/t.txt" | tr '\n' '|') $(first_line "$T/t2.err") $(tail -n 1 "$T/half.err" 2>/dev/null)"
fi
stax timeline "$T/ph.data" -b 0 >/dev/null 2>"$T/bad.err"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/bad.err"; then
	ok "timeline -b 0: one-line error, exit 1"
else
	fail "timeline -b 0" "status $rc: $(first_line "$T/bad.err")"
fi

done_testing
