#!/bin/sh
# unwind_switch.sh - work run on another stack segment (Rust's
# stacker/psm, tests/programs/unwind_switch.c: psm's own assembly and
# CFI, built without frame pointers). A sample taken on the segment has
# none of the caller's stack in its copy, and the kernel's chain cannot
# follow code without frame pointers: the live recorder reads the
# caller's stack from the process (marked in info), or the stack ends
# with a verdict that says it stopped at a stack switch; never made-up
# frames.
. "$(dirname "$0")/lib.sh"
require_stax

P="$PROG/unwind_switch-nofp"
if [ ! -x "$P" ]; then
	fail "unwind_switch" "$P is missing (run make programs)"
	done_testing
fi
rec() {
	stax record -q -o "$T/s.data" -- "$P" "$1" >"$T/s.out" 2>"$T/s.err" &&
		stax flame -i "$T/s.data" --folded >"$T/s.folded" 2>>"$T/s.err" &&
		stax info -i "$T/s.data" >"$T/s.info" 2>>"$T/s.err"
}
FULL=';_start;(.*;)?main;run_switched;rust_psm_on_stack;on_segment;hot'
check() {
	n=$(samples "$T/s.folded" ";hot$K")
	full=$(samples "$T/s.folded" "$FULL$K")
	pct=$(awk -v g="$full" -v t="$n" 'BEGIN { if (t == 0) print "0.0"; else printf "%.1f", 100 * g / t }')
	[ "$n" -ge 200 ] && between "$pct" 90 100
}
rec 1 || fail "record" "$(first_line "$T/s.err")"
check || { rec 2 || fail "record (again)" "$(first_line "$T/s.err")"; }
if check; then
	ok "$pct% of $n samples in hot reach main across the stack switch"
else
	fail "stacks cross the stack switch" "$pct% of $n (want >= 90% of >= 200): $(sort -t' ' -k2 -nr "$T/s.folded" | head -n 2 | cut -c1-200 | tr '\n' '|')"
fi
# the rest end at the switch with that verdict (the process gone before
# its last samples were unwound), never with other callers
other=$(grep ';hot' "$T/s.folded" | grep -Ev "^[^;]*;rust_psm_on_stack;on_segment;hot|$FULL" | wc -l)
if [ "$other" -eq 0 ]; then
	ok "no other callers of rust_psm_on_stack"
else
	fail "no other callers of rust_psm_on_stack" "$(grep ';hot' "$T/s.folded" | grep -Ev "$FULL" | head -n 2 | cut -c1-200 | tr '\n' '|')"
fi
read_n=$(sed -n 's/^  read: *\([0-9]*\) .*/\1/p' "$T/s.info")
if [ -n "$read_n" ] && [ "$read_n" -ge "$full" ]; then
	ok "info counts the $read_n samples read from the process"
else
	fail "info counts samples read from the process" "read '$read_n', full stacks $full"
fi
done_testing
