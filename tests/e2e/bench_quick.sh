#!/bin/sh
# bench_quick.sh - make bench QUICK=1 still runs and reports every row.
#
# Runs bench/run.sh in quick mode (tiny workloads, one repetition) into a
# private directory and checks the report, not the targets: report.md and
# report.json exist, every section and every row is there, and every
# numeric cell is a number (null only in a row marked "waiting on issue N"
# or "n/a"), so the benchmark cannot rot unnoticed.
# stax-test: alone, no-sanitize, seconds=90 (it runs perf and stax side by side on both cpus and times them; the sanitizer build times nothing)
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v perf >/dev/null 2>&1; then
	skip "quick bench" "perf is not installed (sh scripts/deps.sh --bench)"
	done_testing
fi
if ! perf record -q -e cpu-clock -o "$T/probe.data" -- true >/dev/null 2>&1; then
	skip "quick bench" "perf record cannot sample here (perf_event_paranoid or permissions)"
	done_testing
fi
if ! command -v xz >/dev/null 2>&1 || ! command -v cc >/dev/null 2>&1; then
	skip "quick bench" "xz or cc is missing (sh scripts/deps.sh --bench)"
	done_testing
fi

# (how long it takes is not checked: that depends on the machine and
# how busy it is; the timeout only stops a hang)
start=$(date +%s)
(cd "$ROOT" && QUICK=1 BENCH_STAX="$STAX" BENCH_WORK="$T/work" BENCH_OUT="$T" timeout 1200 sh bench/run.sh) >"$T/out" 2>"$T/err"
rc=$?
took=$(($(date +%s) - start))
if [ "$rc" -eq 0 ]; then
	ok "quick bench exits 0 (${took} s)"
else
	fail "quick bench exits 0" "status $rc after $took s: $(grep -v '^# ' "$T/err" | tail -n 1 | cut -c1-200)"
fi

for f in report.md report.json; do
	[ -s "$T/$f" ] && ok "$f written" || fail "$f written" "$T/$f is missing or empty"
done
[ -s "$T/report.md" ] && [ -s "$T/report.json" ] || done_testing

grep -q '^## 1\. Recording overhead' "$T/out" && ok "tables printed" || fail "tables printed" "stdout has no section 1"

# Sections in the markdown, each with a target line and a table.
for s in "1. Recording overhead" "2. File size" "3. Stack quality" "4. Start-up" \
	"5. Answer time" "5b. Reading perf.data" "6. Memory" "7. Unwinder" \
	"8. Symbolization" "9. Switch recording" "10. Long recording" "11. Crash safety" \
	"12. Real programs" "12b. Unwind table of a big library" "13. The page" "14. The in-kernel reader" \
	"16. stax agent under process churn" "16b. stax agent: the targets"; do
	S=$s awk 'index($0, "## " ENVIRON["S"]) == 1 { in_s = 1; next }
	in_s && /^## / { exit }
	in_s && /^Target: .* Status: \*\*(met|not met|n\/a)/ { t = 1 }
	in_s && /^\| / && !/^\|---/ { rows++ }
	END { exit !(t && rows >= 2) }' "$T/report.md" &&
		ok "report.md has section $s" || fail "report.md has section $s" "missing, or no target/status line or rows"
done

# Rows and numbers, from the JSON.
if ! command -v python3 >/dev/null 2>&1; then
	skip "report.json rows and numbers" "python3 is missing"
	done_testing
fi
python3 - "$T/report.json" >"$T/check" 2>&1 <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
secs = {s["id"]: s for s in d["sections"]}
py = d["run"].get("python", "none") != "none"
nw = 6 if py else 5
want = {"1": nw * 2 * 6, "2": nw * 2 * 5, "3": (3 if py else 2) * 8, "4": 3,
        "5": 5, "5b": 4, "6": 20, "7": 16 if py else 9, "8": 6, "9": 5, "10": 3, "11": 3,
        "12b": 3, "13": 3, "14": (3 if py else 2) * 3, "16b": 5}
bad = []
# 16: a row every 3 s of a 12 s run (the readings' own pace decides 3 or 4)
if "16" in secs and len(secs["16"]["rows"]) >= 2:
    want["16"] = len(secs["16"]["rows"])
else:
    bad.append("section 16 has fewer than 2 rows")
# 12: every program has its three recorders (perf -g, perf DWARF, stax),
# or one row saying why it was skipped, marked n/a
if "12" in secs:
    progs = {}
    for row in secs["12"]["rows"]:
        progs.setdefault(row.get("program"), []).append(row)
    if sorted(progs) != sorted(["rustc", "go", "java", "node", "python3.12"]):
        bad.append("section 12 programs %r" % sorted(progs))
    for p, rows in progs.items():
        recs = [r.get("recorder") for r in rows]
        skipped = len(rows) == 1 and str(recs[0]).startswith("skipped: ") and rows[0].get("verdict") == "n/a"
        if not skipped and recs != ["perf-g", "perf-dwarf8", "stax-hybrid"]:
            bad.append("section 12 %s has recorders %r" % (p, recs))
    want["12"] = len(secs["12"]["rows"])
else:
    bad.append("section 12 missing")
# 12b: librustc_driver compiled (3 rows) and read from the cache (4), or
# 3 rows saying why not
if "12b" in secs and any("compiled (cache off)" in str(r.get("what", "")) for r in secs["12b"]["rows"]):
    want["12b"] = 7
for sid, n in want.items():
    s = secs.get(sid)
    if s is None:
        bad.append("section %s missing" % sid)
        continue
    if s["status"] not in ("met", "n/a") and not s["status"].startswith("not met"):
        bad.append("section %s status %r" % (sid, s["status"]))
    if len(s["rows"]) != n:
        bad.append("section %s has %d rows, want %d" % (sid, len(s["rows"]), n))
    types = {c["name"]: c["type"] for c in s["columns"]}
    for i, row in enumerate(s["rows"]):
        excused = any(isinstance(v, str) and (v.startswith("waiting on issue") or v == "n/a")
                      for v in row.values())
        if not row.get("command"):
            bad.append("section %s row %d has no command" % (sid, i + 1))
        for k, t in types.items():
            v = row.get(k)
            vals = [v] if t == "n" else ([v.get("median"), v.get("min"), v.get("max")] if isinstance(v, dict) else [v]) if t == "r" else []
            for x in vals:
                if x is None and excused:
                    continue
                if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
                    bad.append("section %s row %d column %r is %r, not a number" % (sid, i + 1, k, x))
print("\n".join(bad[:5]) if bad else "fine")
sys.exit(1 if bad else 0)
EOF
if [ $? -eq 0 ]; then
	ok "report.json has every row, every number a number"
else
	fail "report.json has every row, every number a number" "$(head -n 3 "$T/check" | tr '\n' ';') bench: $(grep -i 'fail' "$T/err" | head -n 2 | tr '\n' ';' | cut -c1-300)"
fi
done_testing
