#!/bin/sh
# annotate_exact.sh - annotate shows every sample of a function: its
# total equals the self samples top gives it, also when the function
# holds bytes capstone cannot decode. evex-nofp (tests/programs/evex.c)
# spends ~100% in evex_hot, whose loop follows a block of AVX-512
# instructions it jumps over (capstone 4.0.2 cannot decode them; this
# CPU need not have AVX-512, the block never runs).
# stax-test: seconds=12
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v python3 >/dev/null 2>&1; then
	skip "annotate totals" "python3 is not installed"
	done_testing
fi
if ! stax record -o "$T/e.data" -- "$PROG/evex-nofp" >/dev/null 2>"$T/rec.err"; then
	fail "record evex-nofp" "$(first_line "$T/rec.err")"
	done_testing
fi
stax annotate evex_hot "$T/e.data" --json >"$T/a.json" 2>"$T/a.err"
stax top --no-inline "$T/e.data" --json -n 0 >"$T/top.json" 2>/dev/null
if python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); t = json.load(open(sys.argv[2]))
self_ = [f["self"] for f in t["functions"] if f["name"] == "evex_hot"][0]
rows = a["instructions"]
und = [r for r in rows if r.get("undecoded")]
total = sum(r["samples"] for r in rows) + a["samples_elsewhere"]
assert a["samples"] == self_, "annotate %d, top self %d" % (a["samples"], self_)
assert total == self_, "instructions add up to %d, top self %d" % (total, self_)
assert self_ > 0.8 * t["samples"], "evex_hot has %d of %d samples" % (self_, t["samples"])
assert und and all(r["samples"] == 0 for r in und), "undecoded rows: %r" % und
hot = max(rows, key=lambda r: r["samples"])
assert int(hot["addr"], 16) > max(int(r["addr"], 16) for r in und), "hottest row %r is not after the block" % hot
print("%d samples = top self; %d undecoded range(s) of %d bytes" % (self_, len(und), sum(r["bytes"] for r in und)))
' "$T/a.json" "$T/top.json" >"$T/check.out" 2>&1; then
	ok "annotate evex_hot: $(cat "$T/check.out")"
else
	fail "annotate evex_hot counts every sample" "$(tail -n 1 "$T/check.out") $(first_line "$T/a.err")"
fi
stax annotate evex_hot "$T/e.data" --no-color >"$T/a.txt" 2>/dev/null
if grep -q 'bytes capstone cannot decode: 62 ' "$T/a.txt"; then
	ok "annotate (text) shows the undecoded bytes"
else
	fail "annotate (text) shows the undecoded bytes" "$(sed -n 6,9p "$T/a.txt" | tr '\n' '|')"
fi

# every user function with self samples (libc's and ld.so's among them):
# annotate's total equals top's self
stax record -o "$T/c.data" -- sh -c "'$PROG/evex-nofp' 0.3 >/dev/null; '$PROG/peek-nofp' 0.3 >/dev/null; ls -lR /usr/lib >/dev/null" \
	>/dev/null 2>"$T/rec2.err"
stax top --no-inline "$T/c.data" --json -n 0 >"$T/top2.json" 2>/dev/null
python3 -c '
import json, sys
fs = [f for f in json.load(open(sys.argv[1]))["functions"] if f["self"] > 0 and not f["kernel"] and not f.get("python")]
# the 30 with most samples (top sorts by self), libc functions among them
for f in fs[:30]:
    print("%s\t%s\t%d" % (f["name"], f["module"], f["self"]))' "$T/top2.json" >"$T/funcs.txt"
n=0 bad=""
while IFS="$(printf '\t')" read -r name module self; do
	what=$name
	stax annotate "$what" "$T/c.data" --json >"$T/f.json" 2>"$T/f.err"
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "several functions are named" "$T/f.err"; then
		# the same name in several modules (fstatat: libc and ld.so):
		# annotate lists them; take the address it gives for this one
		what=$(sed -n "s/.* in $module (\(0x[0-9a-f]*\)).*/\1/p" "$T/f.err" | head -n 1)
		[ -n "$what" ] || { bad="$bad $name(no address for $module in: $(head -c 200 "$T/f.err"))"; continue; }
		stax annotate "$what" "$T/c.data" --json >"$T/f.json" 2>"$T/f.err"
		rc=$?
	fi
	if [ "$rc" -ne 0 ]; then
		# a function whose binary cannot be read is refused with a reason
		one_line_error "$T/f.err" || bad="$bad $name(crash)"
		continue
	fi
	got=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["samples"])' "$T/f.json")
	[ "$got" = "$self" ] || bad="$bad $name:$got/$self"
	n=$((n + 1))
done <"$T/funcs.txt"
libc=$(grep -c 'libc.so' "$T/funcs.txt")
if [ "$n" -ge 3 ] && [ -z "$bad" ]; then
	ok "annotate total = top self for the $n user functions with most self samples ($libc in libc)"
else
	fail "annotate total = top self" "$n checked, differ:$bad"
fi

done_testing
