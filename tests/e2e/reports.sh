#!/bin/sh
# reports.sh - exact, consistent reports: JSON addresses are "0x..."
# strings that read back exactly (kernel ones above 2^53 too), every
# --json object says its json_version, info counts every process (more
# than 64) and its quality lines agree, and every query command takes the
# recording as a positional FILE as well as -i FILE.
# stax-test: seconds=10
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v python3 >/dev/null 2>&1; then
	skip "reports" "python3 is not installed (it reads the JSON)"
	done_testing
fi

D=$T/cg.data
stax record -o "$D" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/rec.err" || {
	fail "record callgraph-fp" "$(first_line "$T/rec.err")"
	done_testing
}

# --- script --json: addresses are strings, equal to script's text ----------
# Text blocks: a header line, then "\tADDR NAME (MODULE)..." per frame.
stax script "$D" --json >"$T/s.json" 2>"$T/s.err"
stax script "$D" >"$T/s.txt" 2>>"$T/s.err"
r=$(python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["json_version"] == 3, "json_version %r" % d.get("json_version")
js = [[f["addr"] for f in s["frames"]] for s in d["samples"]]
tx, cur = [], None
for line in open(sys.argv[2]):
    if line.startswith("\t"):
        cur.append(int(line.split()[0], 16))
    elif line.strip():
        cur = []
        tx.append(cur)
assert len(js) == len(tx), "%d samples in JSON, %d in text" % (len(js), len(tx))
n = 0
for a, b in zip(js, tx):
    for x, y in zip(a, b):
        assert isinstance(x, str) and re.fullmatch("0x[0-9a-f]+", x), "address %r" % (x,)
        assert int(x, 16) == y, "%s is not %x" % (x, y)
        n += 1
    assert len(a) == len(b)
print(n)' "$T/s.json" "$T/s.txt" 2>"$T/perr")
set -- $r
if [ -n "$r" ] && [ "$1" -gt 1000 ]; then
	ok "script --json: $1 addresses, each a \"0x...\" string equal to script's text"
else
	fail "script --json: addresses are strings equal to the text" "$(tail -n 1 "$T/perr") $(first_line "$T/s.err")"
fi
# Kernel frames: callgraph-fp runs in user space, so a run may have none
# of its samples in the kernel; pingpong spends most of its time in
# read() and write(), so its recording has kernel frames whenever the
# recorder may see them.
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
	skip "a kernel address round-trips exactly" "no kernel frames: not root and kernel.perf_event_paranoid > 1"
elif ! stax record -q -o "$T/pp.data" -- "$PROG/pingpong-nofp" 50000 >/dev/null 2>"$T/pp.err"; then
	fail "a kernel address round-trips exactly" "record pingpong: $(first_line "$T/pp.err")"
else
	stax script "$T/pp.data" --json >"$T/pp.json" 2>"$T/pp.serr"
	stax script "$T/pp.data" >"$T/pp.txt" 2>>"$T/pp.serr"
	k=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
js = [int(f["addr"], 16) for s in d["samples"] for f in s["frames"]]
tx = [int(l.split()[0], 16) for l in open(sys.argv[2]) if l.startswith("\t")]
assert js == tx, "JSON and text addresses differ"
print(sum(a >= 1 << 53 for a in js))' "$T/pp.json" "$T/pp.txt" 2>"$T/pperr")
	if [ -n "$k" ] && [ "$k" -gt 0 ]; then
		ok "kernel addresses (above 2^53) round-trip exactly through script --json ($k frames)"
	else
		fail "a kernel address round-trips exactly" "${k:-no} kernel frames in the JSON of pingpong $(tail -n 1 "$T/pperr") $(first_line "$T/pp.serr")"
	fi
fi

# script --json: "time_ns" is the time exactly, a string of digits (a
# number passes 2^53 after 104 days of uptime); "time" is seconds with
# microseconds, the time script's text prints
if python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
tx = [re.search(r"\] ([0-9]+\.[0-9]{6}): ", l).group(1) for l in open(sys.argv[2])
      if l.strip() and not l.startswith("\t")]
assert len(tx) == len(d["samples"]) > 100, "%d text, %d JSON" % (len(tx), len(d["samples"]))
for s, t in zip(d["samples"], tx):
    ns = s["time_ns"]
    assert isinstance(ns, str) and re.fullmatch("[0-9]+", ns), "time_ns %r" % (ns,)
    want = "%d.%06d" % (int(ns) // 10**9, int(ns) // 1000 % 10**6)
    assert t == want, "text %s, time_ns %s" % (t, ns)
    assert isinstance(s["time"], float) and "%.6f" % s["time"] == want, "time %r, want %s" % (s["time"], want)
' "$T/s.json" "$T/s.txt" 2>"$T/perr"; then
	ok "script --json: time_ns exact as a string, time in seconds, both equal to the text"
else
	fail "script --json: time_ns exact as a string, time in seconds" "$(tail -n 1 "$T/perr")"
fi

# annotate --json: start and instruction addresses are strings
stax annotate leaf_b "$D" --json >"$T/a.json" 2>"$T/a.err"
if python3 -c '
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["json_version"] == 3
assert re.fullmatch("0x[0-9a-f]+", d["start"]), d["start"]
assert d["instructions"] and all(re.fullmatch("0x[0-9a-f]+", i["addr"]) for i in d["instructions"])
assert int(d["instructions"][0]["addr"], 16) == int(d["start"], 16)' "$T/a.json" 2>"$T/perr"; then
	ok "annotate --json: start and instruction addresses are \"0x...\" strings"
else
	fail "annotate --json: addresses are strings" "$(tail -n 1 "$T/perr") $(first_line "$T/a.err")"
fi

# every --json object starts with json_version 3
bad=""
for v in top "top --off-cpu" flame threads info script doctor "diff $D" "annotate leaf_b"; do
	# shellcheck disable=SC2086
	stax $v "$D" --json >"$T/v.json" 2>/dev/null
	case $(head -c 18 "$T/v.json") in
	'{"json_version":3,') ;;
	*) bad="$bad [$v: $(head -c 40 "$T/v.json")]" ;;
	esac
done
if [ -z "$bad" ]; then
	ok "every --json output starts with \"json_version\":3"
else
	fail "every --json output starts with \"json_version\":3" "$bad"
fi

# --- positional FILE, for every command that has no other --------------------
# (the default stax.data does not exist in $T: a command that ignored FILE
# would fail)
cd "$T" || exit 1
bad=""
for v in top "flame --folded" threads info script doctor "export --format folded" \
	"wait --for-samples 1"; do
	# shellcheck disable=SC2086
	stax $v "$D" >"$T/p.out" 2>"$T/p.err"
	rc=$?
	# shellcheck disable=SC2086
	stax $v -i "$D" >"$T/i.out" 2>>"$T/p.err"
	if [ "$rc" -ne 0 ] || ! cmp -s "$T/p.out" "$T/i.out"; then
		bad="$bad [$v FILE: status $rc: $(first_line "$T/p.err")]"
	fi
done
stax annotate leaf_b "$D" >"$T/p.out" 2>"$T/p.err" || bad="$bad [annotate FUNC FILE: $(first_line "$T/p.err")]"
grep -q 'leaf_b' "$T/p.out" || bad="$bad [annotate FUNC FILE: no leaf_b]"
if [ -z "$bad" ]; then
	ok "top, flame, threads, info, script, doctor, export, wait FILE and annotate FUNC FILE read FILE as -i FILE"
else
	fail "positional FILE" "$bad"
fi
stax top "$D" -i "$D" >/dev/null 2>"$T/two.err"
rc=$?
if [ "$rc" -ne 0 ] && one_line_error "$T/two.err" && grep -q 'two recordings' "$T/two.err"; then
	ok "a recording given twice (FILE and -i FILE): one error line"
else
	fail "a recording given twice: one error line" "status $rc: $(first_line "$T/two.err")"
fi
stax annotate leaf_b "$D" extra >/dev/null 2>"$T/ann3.err"
rc=$?
if [ "$rc" -ne 0 ] && one_line_error "$T/ann3.err"; then
	ok "annotate FUNC FILE EXTRA: one error line"
else
	fail "annotate FUNC FILE EXTRA: one error line" "status $rc: $(first_line "$T/ann3.err")"
fi
why=$(loopback_why)
if [ -n "$why" ]; then
	skip "serve FILE" "$why"
elif command -v curl >/dev/null 2>&1; then
	"$STAX" serve "$D" --port 0 2>"$T/serve.err" &
	SPID=$!
	bg_add "$SPID"
	PORT=""
	wait_for 'PORT=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/serve.err"); [ -n "$PORT" ]' 10
	if [ -n "$PORT" ] && curl -s -m 20 "http://127.0.0.1:$PORT/api/top" | grep -q '"name":"leaf_b"'; then
		ok "serve FILE serves FILE"
	else
		fail "serve FILE serves FILE" "$(first_line "$T/serve.err")"
	fi
	kill "$SPID" 2>/dev/null
	wait "$SPID" 2>/dev/null
else
	skip "serve FILE" "curl is not installed"
fi
cd "$ROOT" || exit 1

# --- info counts every process, and its quality lines agree -------------------
# 100 short spin-fp runs, one after another under one sh
M=$T/many.data
stax record -q -o "$M" -- sh -c "i=0; while [ \$i -lt 100 ]; do \"$PROG/spin-fp\" 0.03; i=\$((i + 1)); done" \
	>/dev/null 2>"$T/m.err"
stax info "$M" --json >"$T/m.json" 2>>"$T/m.err"
stax script "$M" --json >"$T/ms.json" 2>>"$T/m.err"
stax info "$M" >"$T/m.txt" 2>>"$T/m.err"
r=$(python3 -c '
import json, sys
info = json.load(open(sys.argv[1]))
pids = {s["pid"] for s in json.load(open(sys.argv[2]))["samples"]}
print(info["processes"], len(pids))' "$T/m.json" "$T/ms.json" 2>"$T/perr")
set -- $r
text=$(sed -n 's/^samples: .* in \([0-9]*\) process.*/\1/p' "$T/m.txt")
if [ -n "$r" ] && [ "$1" -eq "$2" ] && [ "$1" -gt 64 ] && [ "$text" = "$1" ]; then
	ok "info counts all $1 processes (as many as script shows; more than 64)"
else
	fail "info counts every process" "info $1 (text '$text'), script $2 distinct pids: $(tail -n 1 "$T/perr") $(first_line "$T/m.err")"
fi

# quality: no stack both reaches main and is counted truncated, broken or
# unverified (a frame-pointer recording's chains are unverified unless
# they reach main)
stax record -q --unwind fp -o "$T/fp.data" -- "$PROG/callgraph-fp" 0.5 >/dev/null 2>&1
bad=""
for f in "$D" "$M" "$T/fp.data"; do
	stax info "$f" --json >"$T/q.json" 2>/dev/null
	if ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
q = d["quality"]
n = d["samples"]
assert sum(q.values()) == n, "verdicts add up to %d of %d" % (sum(q.values()), n)
assert d["reached_root"] <= q["complete"], "%d reach main, %d complete" % (d["reached_root"], q["complete"])
assert q["truncated"] + q["broken"] <= n - d["reached_root"], "truncated+broken %d, not reaching main %d" % (
    q["truncated"] + q["broken"], n - d["reached_root"])' "$T/q.json" 2>"$T/perr"; then
		bad="$bad [$(basename "$f"): $(tail -n 1 "$T/perr")]"
	fi
done
if [ -z "$bad" ]; then
	ok "info: the verdicts add up, and a stack that reaches main is complete (hybrid, fp, 101 processes)"
else
	fail "info: the quality lines agree" "$bad"
fi

done_testing
