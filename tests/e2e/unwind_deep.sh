#!/bin/sh
# unwind_deep.sh - stacks deeper than the stack copy: splicing the
# kernel's frame-pointer chain onto the CFI unwind, and honest verdicts
# where that cannot work (tests/programs/unwind_deep.c, unwind_recurse.c).
#   unwind_deep: 71 frame-pointer frames of 1 KiB (more than any copy),
#     hot_leaf and leaf_caller built without frame pointers. Hybrid must
#     give main;deep x71;leaf_caller;hot_leaf in >= 99% of samples, spliced
#     and complete (stax info); --unwind dwarf stops at the copy
#     (truncated); --unwind fp loses leaf_caller and deep(0).
#   unwind_recurse-nofp: the same depth without frame pointers: nothing
#     can recover the frames beyond the copy, so the stacks must be
#     reported truncated (never complete), and what is shown is right.
#   unwind_recurse-fp at depth 200: the kernel's chain is capped at
#     kernel.perf_event_max_stack; stax says so and offers the sysctl.
. "$(dirname "$0")/lib.sh"
require_stax

# rec NAME MODE PROG ARGS...: record, then folded stacks and info.
rec() {
	_n=$1 _m=$2
	shift 2
	stax record --unwind "$_m" -o "$T/$_n.data" -- "$@" >"$T/$_n.out" 2>"$T/$_n.err" &&
		stax flame -i "$T/$_n.data" --folded >"$T/$_n.folded" 2>>"$T/$_n.err" &&
		stax info -i "$T/$_n.data" >"$T/$_n.info" 2>>"$T/$_n.err"
}

# verdict INFO WORD: the count after WORD on the info's verdict/method lines.
verdict() {
	W=$2 awk '/verdict:|method:/ { for (i = 1; i <= NF; i++) if ($i == ENVIRON["W"]) { v = $(i + 1); sub(/,$/, "", v); print v } }' "$1"
}
total() { awk '/^samples:/ { print $2 }' "$1"; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }

# rep WORD N: WORD; repeated N times (mawk has no {n} intervals)
rep() { _r=; _i=0; while [ $_i -lt "$2" ]; do _r="$_r$1;"; _i=$((_i + 1)); done; echo "$_r"; }
DEEP71=$(rep deep 71)
FULL=";main;${DEEP71}leaf_caller;hot_leaf$K"

# hybrid: complete spliced stacks down to main
try=1
while :; do
	rec deep hybrid "$PROG/unwind_deep" "$try"
	n=$(samples "$T/deep.folded" ";hot_leaf$K")
	g=$(samples "$T/deep.folded" "$FULL")
	p=$(pct "$g" "$n")
	{ [ "$n" -ge 300 ] && between "$p" 99 100; } || [ "$try" -ge 2 ] && break
	try=2
done
if [ "$n" -ge 300 ] && between "$p" 99 100; then
	ok "deep hybrid: main;deep x71;leaf_caller;hot_leaf in $p% of $n hot_leaf samples"
else
	fail "deep hybrid: main;deep x71;leaf_caller;hot_leaf in >= 99%" "$p% of $n; top: $(sort -t' ' -k2 -nr "$T/deep.folded" | head -n 1 | sed 's/\(deep;\)\{1,\}/deep;...;/' | cut -c1-300)"
fi
tot=$(total "$T/deep.info")
sp=$(verdict "$T/deep.info" spliced)
co=$(verdict "$T/deep.info" complete)
if [ -n "$tot" ] && [ "$tot" -gt 0 ] && between "$(pct "${sp:-0}" "$tot")" 90 100 && between "$(pct "${co:-0}" "$tot")" 99 100; then
	ok "deep hybrid: stax info: $sp of $tot spliced, $co complete"
else
	fail "deep hybrid: stax info: >= 90% spliced, >= 99% complete" "$(grep -E 'verdict|method' "$T/deep.info" | tr '\n' ' ')"
fi
# the spliced stacks end in libc (no frame pointers) below main; the
# outermost frames learnt from shallow_phase's DWARF stacks complete them
n=$(samples "$T/deep.folded" ";hot_leaf$K")
g=$(samples "$T/deep.folded" "^unwind_deep;_start;__libc_start_main;__libc_start_call_main;main;deep;.*;hot_leaf$K")
p=$(pct "$g" "$n")
if [ "$n" -ge 300 ] && between "$p" 99 100; then
	ok "deep hybrid: $p% of the spliced hot_leaf stacks start at _start;__libc_start_main (learnt from shallow_phase)"
else
	fail "deep hybrid: the spliced stacks start at _start;__libc_start_main" "$p% of $n; roots: $(cut -d';' -f2 "$T/deep.folded" | sort | uniq -c | tr '\n' '|')"
fi

# dwarf alone stops where the copy ends: truncated, and no main
rec deepdw dwarf "$PROG/unwind_deep" 0.5
tot=$(total "$T/deepdw.info")
tr=$(verdict "$T/deepdw.info" truncated)
# (all but shallow_phase's samples, ~5%, which DWARF unwinds to _start)
hl=$(samples "$T/deepdw.folded" ";hot_leaf$K")
m=$(pct "$(samples "$T/deepdw.folded" ";main;.*;hot_leaf$K")" "$hl")
if [ -n "$tot" ] && between "$(pct "${tr:-0}" "$tot")" 90 100 && [ "$hl" -gt 0 ] && between "$m" 0 1; then
	ok "deep dwarf: $tr of $tot truncated at the copy, $m% of $hl hot_leaf stacks reach main"
else
	fail "deep dwarf: truncated at the copy" "$(grep verdict "$T/deepdw.info"), main in $m%"
fi

# fp alone reaches main but loses leaf_caller and deep(0): leaf_caller
# makes no frame record, so deep(0)'s return address into it is not in
# the chain (main;deep x70;hot_leaf)
rec deepfp fp "$PROG/unwind_deep" 0.5
m=$(share "$T/deepfp.folded" ";main;$(rep deep 70)hot_leaf$K")
lc=$(share "$T/deepfp.folded" ";leaf_caller;")
if between "$m" 90 100 && between "$lc" 0 1; then
	ok "deep fp: main;deep x70;hot_leaf in $m% (leaf_caller and one deep lost), leaf_caller in $lc%"
else
	fail "deep fp: the kernel chain skips leaf_caller" "main;deep..;hot_leaf $m%, leaf_caller $lc%"
fi

# no frame pointers, deeper than the copy: truncated, never complete or
# garbage (the samples taken while the program starts are complete: a 3x
# longer run when they make more than 1%)
rnofp_ok() {
	tot=$(total "$T/rnofp.info")
	tr=$(verdict "$T/rnofp.info" truncated)
	co=$(verdict "$T/rnofp.info" complete)
	# what is shown is a correct leaf end: leaf under only recurse frames
	good=$(samples "$T/rnofp.folded" '^[^;]*(;recurse)+;leaf'"$K")
	n=$(samples "$T/rnofp.folded" ";leaf$K")
	[ -n "$tot" ] && between "$(pct "${tr:-0}" "$tot")" 99 100 && [ "${co:-1}" -le $((tot / 100)) ] &&
		between "$(pct "$good" "$n")" 99 100
}
rec rnofp hybrid "$PROG/unwind_recurse-nofp"
rnofp_ok || rec rnofp hybrid "$PROG/unwind_recurse-nofp" 3
if rnofp_ok; then
	ok "recurse-nofp: $tr of $tot truncated, $co complete; $good of $n leaf stacks are recurse frames only"
else
	fail "recurse-nofp: deeper than the copy is truncated" "$(grep verdict "$T/rnofp.info"); $good of $n leaf stacks clean"
fi
# stax info names where they stop and why, and stax doctor what to do
if grep -Eq "stop in: +unwind_recurse-nofp [0-9]+ \(the stack copy ended\)" "$T/rnofp.info"; then
	ok "recurse-nofp: stax info: $(grep 'stop in:' "$T/rnofp.info" | sed 's/^ *//')"
else
	fail "recurse-nofp: stax info says they stop in unwind_recurse-nofp where the copy ended" "$(grep 'stop in' "$T/rnofp.info")"
fi
stax doctor -i "$T/rnofp.data" >"$T/rnofp.doctor" 2>&1
if grep -q "cut where the stack copy ended" "$T/rnofp.doctor" && grep -q -- "-fno-omit-frame-pointer" "$T/rnofp.doctor"; then
	ok "recurse-nofp: stax doctor says the copy ended and to keep frame pointers"
else
	fail "recurse-nofp: stax doctor explains the truncation" "$(tr '\n' '|' <"$T/rnofp.doctor" | cut -c1-400)"
fi

# the same recursion with frame pointers: spliced and complete
rec rfp hybrid "$PROG/unwind_recurse-fp"
n=$(samples "$T/rfp.folded" ";leaf$K")
g=$(samples "$T/rfp.folded" ";main;$(rep recurse 71)leaf$K")
tot=$(total "$T/rfp.info")
co=$(verdict "$T/rfp.info" complete)
if [ "$n" -ge 300 ] && between "$(pct "$g" "$n")" 99 100 && between "$(pct "${co:-0}" "$tot")" 99 100; then
	ok "recurse-fp: main;recurse x71;leaf in $(pct "$g" "$n")% of $n, $co of $tot complete"
else
	fail "recurse-fp: spliced complete stacks" "$g of $n; $(grep verdict "$T/rfp.info")"
fi

# beyond the kernel's chain cap: truncated, and a note offers the sysctl
cap=$(cat /proc/sys/kernel/perf_event_max_stack 2>/dev/null || echo 127)
if [ "$cap" -ge 200 ]; then
	skip "recurse-fp depth 250: chain cap" "kernel.perf_event_max_stack is $cap already"
else
	# (the few samples taken before the recursion is deep are complete:
	# a longer run when they make more than 1%)
	for sc in 0.3 1.5; do
		rec rcap hybrid "$PROG/unwind_recurse-fp" "$sc" 250
		tot=$(total "$T/rcap.info")
		tr=$(verdict "$T/rcap.info" truncated)
		[ -n "$tot" ] && between "$(pct "${tr:-0}" "$tot")" 99 100 && break
	done
	if [ -n "$tot" ] && between "$(pct "${tr:-0}" "$tot")" 99 100 &&
		grep -q "kernel.perf_event_max_stack ($cap" "$T/rcap.err" &&
		grep -q "sysctl kernel.perf_event_max_stack=" "$T/rcap.err"; then
		ok "recurse-fp depth 250: $tr of $tot truncated; stax offers the sysctl"
	else
		fail "recurse-fp depth 250: truncated, note about kernel.perf_event_max_stack" "$(grep verdict "$T/rcap.info"); $(first_line "$T/rcap.err")"
	fi
	if [ "$(cat /proc/sys/kernel/perf_event_max_stack)" = "$cap" ]; then
		ok "recurse-fp depth 250: kernel.perf_event_max_stack left at $cap"
	else
		fail "recurse-fp depth 250: system settings untouched" "perf_event_max_stack changed"
	fi
fi
done_testing
