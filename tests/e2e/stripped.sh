#!/bin/sh
# stripped.sh - a binary without symbol tables groups its frames by the
# function ranges of its unwind tables (.eh_frame FDEs), named
# MODULE+0xSTART with the function's ELF virtual address. peek-stripped
# is peek-nofp (tests/programs/peek.c) after strip --strip-all, so the
# unstripped twin's symbol table says which function each start is:
# leaf_p ~66.7% self, leaf_q ~33.3%, hub called by x 50%, rec 33.3%, y 16.7%.
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v nm >/dev/null 2>&1; then
	skip "stripped binaries" "nm is not installed (apt-get install binutils)"
	done_testing
fi
BIN=$PROG/peek-stripped
if nm "$BIN" >/dev/null 2>&1 && [ -n "$(nm "$BIN" 2>/dev/null)" ]; then
	fail "setup" "$BIN still has a symbol table"
	done_testing
fi
# addr NAME: the name stax gives function NAME of peek-nofp in the stripped copy
addr() { nm "$PROG/peek-nofp" | awk -v n="$1" '$3 == n { sub(/^0+/, "", $1); print "peek-stripped+0x" $1; exit }'; }
LEAF_P=$(addr leaf_p) LEAF_Q=$(addr leaf_q) HUB=$(addr hub) X=$(addr x)

record() { stax record -o "$T/s.data" -- "$BIN" "$1" >/dev/null 2>"$T/rec.err"; }
check() {
	stax top "$T/s.data" -n 0 >"$T/top.txt" 2>"$T/top.err" &&
	between "$(row_where "$T/top.txt" FUNCTION "$LEAF_P" SELF% | tr -d %)" 58 75 &&
	between "$(row_where "$T/top.txt" FUNCTION "$LEAF_Q" SELF% | tr -d %)" 25 42
}
if ! record 1; then
	fail "record peek-stripped" "$(first_line "$T/rec.err")"
	done_testing
fi
check || { record 2 && check; }
if check; then
	ok "top: $LEAF_P (leaf_p) $(row_where "$T/top.txt" FUNCTION "$LEAF_P" SELF%) self (66.7), $LEAF_Q (leaf_q) $(row_where "$T/top.txt" FUNCTION "$LEAF_Q" SELF%) (33.3)"
else
	fail "top groups a stripped binary by function" "leaf_p is $LEAF_P: $(grep peek-stripped "$T/top.txt" | head -n 4 | tr '\n' '|') $(first_line "$T/top.err")"
fi
# few rows, one per function: every peek-stripped row starts at a function of the twin
starts=$(nm "$PROG/peek-nofp" | awk '$2 ~ /^[tT]$/ { sub(/^0+/, "", $1); print "peek-stripped+0x" $1 }')
rows=$(awk '$NF == "peek-stripped" && $5 ~ /^peek-stripped\+0x/ { print $5 }' "$T/top.txt")
nrows=$(echo "$rows" | grep -c .)
# A frame in a function without an FDE (crt's __do_global_dtors_aux,
# calling __cxa_finalize at exit) has no range to be grouped by: it keeps
# its own address. Only an address inside an FDE must be at its start.
fdes=$(readelf --debug-dump=frames "$BIN" 2>/dev/null | sed -n 's/.* FDE .*pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p')
in_fde() {
	a=$((0x${1#peek-stripped+0x}))
	echo "$fdes" | while read -r lo hi; do
		[ -n "$hi" ] && [ "$a" -ge $((0x$lo)) ] && [ "$a" -lt $((0x$hi)) ] && echo in
	done | grep -q in
}
bad=$(for r in $rows; do echo "$starts" | grep -qx "$r" || ! in_fde "$r" || echo "$r"; done)
if [ -z "$fdes" ]; then
	fail "top: one row per function" "readelf found no FDE in $BIN"
elif [ "$nrows" -ge 2 ] && [ "$nrows" -le 12 ] && [ -z "$bad" ]; then
	ok "top: $nrows rows for peek-stripped, each at a function's start (or outside every FDE)"
else
	fail "top: one row per function" "$nrows rows, not at a function start: $(echo $bad | cut -c1-200)"
fi

# callers and annotate work on those names
stax callers "$HUB" "$T/s.data" >"$T/c.txt" 2>"$T/c.err"
s=$(row_where "$T/c.txt" CALLER "$X" SHARE | tr -d %)
if between "$s" 42 58; then
	ok "callers $HUB (hub): $X (x) $s% (50)"
else
	fail "callers of a stripped function" "$X '$s': $(tr '\n' '|' <"$T/c.txt") $(first_line "$T/c.err")"
fi
stax annotate "$LEAF_P" "$T/s.data" --no-color >"$T/a.txt" 2>"$T/a.err"
asamp=$(sed -n '1s/.*: \([0-9]*\) samples (.*/\1/p' "$T/a.txt")
tself=$(row_where "$T/top.txt" FUNCTION "$LEAF_P" SELF)
isum=$(awk '$1 ~ /%$/ && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$T/a.txt")
if [ -n "$asamp" ] && [ "$asamp" = "$tself" ] && [ "$isum" = "$tself" ] && grep -q 'imul' "$T/a.txt"; then
	ok "annotate $LEAF_P: $asamp samples, as top's self; the instructions add up to it"
else
	fail "annotate a stripped function" "annotate '$asamp', instructions '$isum', top '$tself': $(first_line "$T/a.txt") $(first_line "$T/a.err")"
fi

done_testing
