#!/bin/sh
# dlopen.sh - libraries loaded and unloaded again and again keep their
# own symbols.
#
#   dlloop-fp 1   round after round, dlopen()s libdlloop_a.so or
#                 libdlloop_b.so in turn (usually at the same address),
#                 runs its hot function (main;dl_round;dl_hot_a or
#                 dl_hot_b, about 50% each) and dlclose()s it
. "$(dirname "$0")/lib.sh"
require_stax

# record SCALE: dlloop-fp into $T/d.data; top and folded stacks
record() {
	stax record -o "$T/d.data" -- "$PROG/dlloop-fp" "$1" >/dev/null 2>"$T/rec.err"
	rc=$?
	stax top -n 0 -i "$T/d.data" >"$T/top.txt" 2>"$T/top.err"
	stax flame --folded -i "$T/d.data" >"$T/d.folded" 2>>"$T/top.err"
	return $rc
}
# shares_ok: dl_hot_a and dl_hot_b each 35-65% of their samples together
shares_ok() {
	a=$(samples "$T/d.folded" ";main;dl_round;dl_hot_a$K")
	b=$(samples "$T/d.folded" ";main;dl_round;dl_hot_b$K")
	[ $((a + b)) -ge 100 ] && between "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * a / (a + b) }')" 35 65
}

if record 1; then
	ok "record dlloop-fp exits 0"
else
	fail "record dlloop-fp exits 0" "status $rc: $(first_line "$T/rec.err")"
fi
if ! shares_ok; then
	echo "# shares off (dl_hot_a $a, dl_hot_b $b samples): retrying 2x longer"
	record 2
fi
if shares_ok; then
	ok "main;dl_round;dl_hot_a has $a samples, main;dl_round;dl_hot_b $b (about half each)"
else
	fail "main;dl_round;dl_hot_a and dl_hot_b about half each" "$a and $b samples: $(sort -t' ' -k2 -nr "$T/d.folded" | head -n 2 | tr '\n' '|' | cut -c1-250)"
fi

# Each hot function in its own library, never in the other's, and no
# address of either library without a name.
ma=$(row_where "$T/top.txt" FUNCTION dl_hot_a MODULE)
mb=$(row_where "$T/top.txt" FUNCTION dl_hot_b MODULE)
if [ "$ma" = libdlloop_a.so ] && [ "$mb" = libdlloop_b.so ]; then
	ok "dl_hot_a is in libdlloop_a.so, dl_hot_b in libdlloop_b.so"
else
	fail "dl_hot_a is in libdlloop_a.so, dl_hot_b in libdlloop_b.so" "'$ma' and '$mb'"
fi
wrong=$(awk '!hdr { for (i = 1; i <= NF; i++) { if ($i == "FUNCTION") fc = i; if ($i == "MODULE") mc = i }
	if (fc && mc) hdr = 1; next }
	$mc ~ /^libdlloop_[ab]\.so$/ && ($fc ~ /^(0x|\[unknown\])/ ||
	    ($mc == "libdlloop_a.so" && $fc == "dl_hot_b") || ($mc == "libdlloop_b.so" && $fc == "dl_hot_a"))' "$T/top.txt")
if [ -s "$T/top.txt" ] && [ -z "$wrong" ]; then
	ok "every frame in the two libraries has a name, and never the other library's"
else
	fail "every frame of the two libraries has its own name" "$(echo "$wrong" | head -n 3 | tr '\n' '|')"
fi
crossed=$(samples "$T/d.folded" '(dl_hot_a;dl_hot_b|dl_hot_b;dl_hot_a)')
if [ "$crossed" -eq 0 ]; then
	ok "no stack mixes the two libraries"
else
	fail "no stack mixes the two libraries" "$crossed samples"
fi

done_testing
