#!/bin/sh
# annotate_kernel.sh - annotate (and the page's assembly view) of a kernel
# function: its code read from the running kernel (/proc/kcore, or where
# the kernel has none, bpf_probe_read_kernel), its range from this boot's
# kallsyms. dd copying /dev/zero to /dev/null spends most of its time in
# the kernel; the kernel function with the most self samples is
# annotated. Real code decodes: every sampled address is an instruction
# start, so no row is bytes capstone could not decode (wrong bytes, or
# bytes from the wrong address, would put samples inside instructions),
# and the rows' samples add up to the function's self samples in top.
# stax-test: seconds=15
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ]; then
	skip "annotate of a kernel function" "needs root (the kernel's code and addresses)"
	done_testing
fi
if ! command -v python3 >/dev/null 2>&1; then
	skip "annotate of a kernel function" "python3 is not installed"
	done_testing
fi
if ! stax record -q -o "$T/k.data" -- dd if=/dev/zero of=/dev/null bs=4k count=400000 >/dev/null 2>"$T/rec.err"; then
	fail "record dd" "$(first_line "$T/rec.err")"
	done_testing
fi
stax top --no-inline --json -n 0 -i "$T/k.data" >"$T/top.json" 2>"$T/top.err"
fn=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
k = [f for f in t["functions"] if f.get("kernel") and f["self"] >= 20]
print(k[0]["name"] if k else "")' "$T/top.json")
if [ -z "$fn" ]; then
	fail "a kernel function with 20 or more self samples" "$(head -c 300 "$T/top.json")"
	done_testing
fi
stax annotate "$fn" -i "$T/k.data" --json >"$T/a.json" 2>"$T/a.err"
rc=$?
if [ "$rc" -eq 0 ] && r=$(python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
self_ = [f["self"] for f in t["functions"] if f["name"] == sys.argv[3] and f.get("kernel")][0]
rows = a["instructions"]
und = [r for r in rows if r.get("undecoded")]
total = sum(r["samples"] for r in rows) + a["samples_elsewhere"]
assert a["path"] in ("/proc/kcore", "the running kernel, read by BPF"), "path %s" % a["path"]
assert len(rows) >= 3, "%d instructions" % len(rows)
assert not und, "%d rows capstone could not decode: %s" % (len(und), und[0]["asm"])
assert a["samples"] == self_ and total == self_, "annotate %d, rows %d, top self %d" % (a["samples"], total, self_)
assert int(a["start"], 16) >= 0xffff800000000000, "start %s" % a["start"]
print("%d instructions from %s, %d samples" % (len(rows), a["path"], self_))' "$T/a.json" "$T/top.json" "$fn" 2>&1); then
	ok "annotate $fn (kernel): $r, every sampled address an instruction start"
else
	fail "annotate $fn (kernel): decodes, its samples add up to top's self" "status $rc: $(first_line "$T/a.err") ${r:-}"
fi

# text: the header says where the code came from
stax annotate "$fn" -i "$T/k.data" >"$T/a.txt" 2>&1
if head -n 1 "$T/a.txt" | grep -q "^$fn (\[kernel.kallsyms\], \(/proc/kcore\|the running kernel, read by BPF\)) at 0xffff"; then
	ok "annotate $fn: the header names the kernel and where its code came from"
else
	fail "annotate $fn: the header names the kernel and where its code came from" "$(first_line "$T/a.txt")"
fi

# not root: kallsyms hides the addresses; a clear error, not "another boot"
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1; then
	chmod 755 "$T"
	chmod 644 "$T/k.data"
	setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups "$STAX" annotate "$fn" -i "$T/k.data" \
		>/dev/null 2>"$T/n.err"
	rc=$?
	if [ "$rc" -eq 1 ] && one_line_error "$T/n.err" && grep -q "run as root" "$T/n.err"; then
		ok "nobody: annotate of a kernel function is refused in one line saying to run as root"
	else
		fail "nobody: annotate of a kernel function is refused saying to run as root" "status $rc: $(first_line "$T/n.err")"
	fi
else
	skip "nobody: annotate of a kernel function" "needs the user nobody and setpriv"
fi

# the page's assembly view: /api/asm of a frame of that function
why=$(loopback_why)
if [ -n "$why" ]; then
	skip "the page's assembly of a kernel function" "$why"
	done_testing
fi
SERR=$T/serve.err
"$STAX" serve -i "$T/k.data" --port 0 >/dev/null 2>"$SERR" &
SPID=$!
bg_add $SPID
PORT=""
if ! wait_for 'PORT=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$SERR"); [ -n "$PORT" ]' 60; then
	fail "stax serve starts" "$(first_line "$SERR")"
	done_testing
fi
if r=$(python3 -c '
import json, sys, urllib.request
port, fn = sys.argv[1], sys.argv[2]
base = "http://127.0.0.1:%s" % port
p = json.load(urllib.request.urlopen(base + "/api/profile", timeout=60))
S, F, N = p["strings"], p["funcs"], p["nodes"]
nodes = [i for i, f in enumerate(N["func"]) if F["kind"][f] == "k" and S[F["name"][f]] == fn]
assert nodes, "no node of %s in /api/profile" % fn
a = json.load(urllib.request.urlopen("%s/api/asm?node=%d&v=%d" % (base, nodes[0], p["version"]), timeout=60))
assert "error" not in a, a.get("error")
rows = [r for r in a["nodes"] if r[0] == nodes[0]]
assert rows and 0 <= rows[0][1] < len(a["instructions"]), "the frame has no row"
print("%d instructions, the frame at row %d" % (len(a["instructions"]), rows[0][1]))' "$PORT" "$fn" 2>&1); then
	ok "/api/asm of a $fn frame: $r"
else
	fail "/api/asm of a kernel frame: its instructions and the frame's row" "$r"
fi
kill "$SPID" 2>/dev/null
done_testing
