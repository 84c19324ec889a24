#!/bin/sh
# unwind_deep.sh - stacks deeper than the stack copy: splicing the
# kernel's frame-pointer chain onto the CFI unwind, and honest verdicts
# where that cannot work (tests/programs/unwind_deep.c, unwind_recurse.c).
#   unwind_deep: 71 frame-pointer frames of 1 KiB (more than any copy),
#     hot_leaf and leaf_caller built without frame pointers. Hybrid must
#     give main;deep x71;leaf_caller;hot_leaf in >= 99% of samples, spliced
#     and complete (stax info); --unwind dwarf reads the rest of the
#     stack from the process, and with --no-read-stack (and --no-bpf: the
#     in-kernel reader reads the stack's top at the sample) stops at the
#     copy (truncated); --unwind fp loses leaf_caller and deep(0).
#   unwind_recurse-nofp: the same depth without frame pointers: the
#     frames beyond the copy are read from the process (the recursion
#     stays in place while the leaf runs, marked late), or with the
#     in-kernel reader taken from the words it read at the sample
#     (complete); with --no-read-stack and --no-bpf nothing
#     can recover them, so the stacks must be reported truncated (never
#     complete), and what is shown is right.
#   unwind_far-nofp: the recursion below a 512 KiB frame: the read far
#     above the copy (checked by the last return address read) reaches main.
#   unwind_recurse-fp at depth 250: the kernel's chain is capped at
#     kernel.perf_event_max_stack. With --no-read-stack and --no-bpf the
#     stacks end there (truncated) and stax offers the sysctl; with the
#     in-kernel reader the splice onto the cut chain is undone and the
#     stack goes on past the copy from the words read at the sample
#     (complete, rooted at main).
# stax-test: seconds=30
. "$(dirname "$0")/lib.sh"
require_stax

# rec NAME MODE PROG ARGS...: record, then folded stacks and info.
rec() {
	_n=$1 _m=$2
	shift 2
	stax record --unwind "$_m" ${REC_OPTS:-} -o "$T/$_n.data" -- "$@" >"$T/$_n.out" 2>"$T/$_n.err" &&
		stax flame -i "$T/$_n.data" --folded >"$T/$_n.folded" 2>>"$T/$_n.err" &&
		stax info -i "$T/$_n.data" >"$T/$_n.info" 2>>"$T/$_n.err"
}

# verdict INFO WORD: the count after WORD on the info's verdict/method lines.
verdict() {
	W=$2 awk '/verdict:|method:/ { for (i = 1; i <= NF; i++) if ($i == ENVIRON["W"]) { v = $(i + 1); sub(/,$/, "", v); print v } }' "$1"
}
total() { awk '/^samples:/ { print $2 }' "$1"; }
# gone INFO: deep stacks not read because their process had exited
# first (the recorder unwinds the last samples after the program ends)
gone() { sed -n 's/.* \([0-9]*\) not (the process had exited.*/\1/p' "$1"; }
# lpct GOOD ALL GONE: GOOD's share of ALL's stacks less those unwound after
# the process exited; GONE counts stacks of any function, so ALL - GONE
# may be less than GOOD (then 100%)
lpct() { awk -v a="$1" -v n="$2" -v g="${3:-0}" 'BEGIN { b = n - g; if (b < a) b = a; printf "%.1f", b ? 100 * a / b : 0 }'; }

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

# dwarf alone, without the in-kernel reader, reads the stack beyond the
# copy from the process (after the sample: late)
REC_OPTS=--no-bpf rec deepdr dwarf "$PROG/unwind_deep" 0.5
hl=$(samples "$T/deepdr.folded" ";hot_leaf$K")
gn=$(gone "$T/deepdr.info")
f=$(lpct "$(samples "$T/deepdr.folded" "$FULL")" "$hl" "$gn")
rd=$(awk '/^ *read:/ { print $2 }' "$T/deepdr.info")
if [ "$hl" -gt 0 ] && [ -n "$gn" ] && [ "$gn" -lt $((hl / 4)) ] && between "$f" 95 100 &&
	[ "${rd:-0}" -ge $(((hl - gn) * 9 / 10)) ]; then
	ok "deep dwarf, --no-bpf: main;deep x71;leaf_caller;hot_leaf in $f% of $hl hot_leaf stacks ($gn unwound after the program exited), $rd read on from the process"
else
	fail "deep dwarf, --no-bpf: the stack beyond the copy read from the process" "full in $f% of $hl less $gn exited, read '$rd': $(grep -E 'verdict|read|deep:' "$T/deepdr.info" | tr '\n' ' ')"
fi
# with the reader: the words beyond the copy read at the sample
rec deepdm dwarf "$PROG/unwind_deep" 0.5
hl=$(samples "$T/deepdm.folded" ";hot_leaf$K")
f=$(pct "$(samples "$T/deepdm.folded" "$FULL")" "$hl")
wd=$(sed -n 's/^  moment: .* \([0-9][0-9]*\) stacks completed past the copy.*/\1/p' "$T/deepdm.info")
if [ "$hl" -gt 0 ] && between "$f" 95 100 && [ "${wd:-0}" -ge $((hl * 9 / 10)) ]; then
	ok "deep dwarf: main;deep x71;leaf_caller;hot_leaf in $f% of $hl hot_leaf stacks, $wd completed by the words read at the sample"
else
	fail "deep dwarf: the stack beyond the copy from the words read at the sample" "full in $f% of $hl, words '$wd': $(grep -E 'verdict|moment|read|deep:' "$T/deepdm.info" | tr '\n' ' ')"
fi

# a 512 KiB frame between main and the recursion (unwind_far-nofp): the
# read far above the copy is checked by the last return address read, and
# reaches main (the old check wanted bytes next to what was read)
rec far hybrid "$PROG/unwind_far-nofp" 0.5
hl=$(samples "$T/far.folded" ";hot_leaf$K")
gn=$(gone "$T/far.info")
f=$(lpct "$(samples "$T/far.folded" ";main;far_frame;$(rep deep 41)hot_leaf$K")" "$hl" "$gn")
if [ "$hl" -gt 0 ] && [ -n "$gn" ] && [ "$gn" -lt $((hl / 4)) ] && between "$f" 95 100; then
	ok "far frame: main;far_frame;deep x41;hot_leaf in $f% of $hl hot_leaf stacks ($gn unwound after the program exited)"
else
	fail "far frame: the stack 512 KiB above the copy read from the process" "full in $f% of $hl less $gn exited: $(grep -E 'deep:|stacks:' "$T/far.info" | tr '\n' ' ' | cut -c1-300); top: $(sort -t' ' -k2 -nr "$T/far.folded" | head -n 1 | sed 's/\(deep;\)\{1,\}/deep;...;/' | cut -c1-200)"
fi

# dwarf with --no-read-stack stops where the copy ends: truncated, and no main
# (without the reader: it reads the stack's top, where main is, at the sample)
REC_OPTS="--no-read-stack --no-bpf" rec deepdw dwarf "$PROG/unwind_deep" 0.5
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
REC_OPTS="--no-read-stack --no-bpf" rec rnofp hybrid "$PROG/unwind_recurse-nofp"
rnofp_ok || REC_OPTS="--no-read-stack --no-bpf" rec rnofp hybrid "$PROG/unwind_recurse-nofp" 3
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

# 71 KiB deep is beyond any copy: doctor does not offer --stack-size. The
# deep dwarf recording above (--no-read-stack --no-bpf) has them cut, and
# its thread's stack top known from shallow_phase's complete stacks
# (recurse-nofp's has no shallow phase: its top stays unknown there).
b=$(sed -n 's/.* \([0-9]*\) beyond, the rest unknown$/\1/p' "$T/deepdw.info")
stax doctor -i "$T/deepdw.data" >"$T/deepdw.doctor" 2>&1
if [ "${b:-0}" -eq 0 ]; then
	skip "deep dwarf: doctor on stacks deeper than any copy" "no stack of the thread reached its root, so its stack top is unknown"
elif grep -q "deeper than 65528 bytes.*--stack-size does not help" "$T/deepdw.doctor" &&
	! grep -q "record with --stack-size" "$T/deepdw.doctor"; then
	ok "deep dwarf: $b cut stacks deeper than 65528 bytes: doctor says --stack-size does not help"
else
	fail "deep dwarf: doctor on stacks deeper than any copy" "$b beyond: $(grep -i 'stack copy' "$T/deepdw.doctor" | cut -c1-300)"
fi

# without --no-read-stack (and without the in-kernel reader), the frames
# beyond the copy are read from the process: every leaf stack is
# main;recurse x71;leaf (late: read after the sample)
REC_OPTS=--no-bpf rec rnofpr hybrid "$PROG/unwind_recurse-nofp"
n=$(samples "$T/rnofpr.folded" ";leaf$K")
g=$(samples "$T/rnofpr.folded" ";main;$(rep recurse 71)leaf$K")
rd=$(awk '/^ *read:/ { print $2 }' "$T/rnofpr.info")
gn=$(gone "$T/rnofpr.info")
if [ "$n" -gt 0 ] && [ -n "$gn" ] && [ "$gn" -lt $((n / 4)) ] && between "$(lpct "$g" "$n" "$gn")" 95 100 &&
	[ "${rd:-0}" -ge $(((n - gn) * 9 / 10)) ]; then
	ok "recurse-nofp read on: main;recurse x71;leaf in $(lpct "$g" "$n" "$gn")% of $n less $gn unwound after the program exited, $rd read from the process"
else
	fail "recurse-nofp read on: complete stacks from the process's memory" "$g of $n less $gn exited, read '$rd': $(grep -E 'verdict|read|deep:' "$T/rnofpr.info" | tr '\n' ' ')"
fi
# with the in-kernel reader: from the words read at the sample, complete
rec rnofpm hybrid "$PROG/unwind_recurse-nofp"
n=$(samples "$T/rnofpm.folded" ";leaf$K")
g=$(samples "$T/rnofpm.folded" ";main;$(rep recurse 71)leaf$K")
wd=$(sed -n 's/^  moment: .* \([0-9][0-9]*\) stacks completed past the copy.*/\1/p' "$T/rnofpm.info")
cp=$(sed -n 's/^  verdict: *complete \([0-9]*\),.*/\1/p' "$T/rnofpm.info")
if [ "$n" -gt 0 ] && between "$(pct "$g" "$n")" 95 100 && [ "${wd:-0}" -ge $((n * 9 / 10)) ] &&
	[ "${cp:-0}" -ge $((n * 9 / 10)) ]; then
	ok "recurse-nofp: main;recurse x71;leaf in $(pct "$g" "$n")% of $n, $wd completed by the words read at the sample, $cp complete"
else
	fail "recurse-nofp: complete stacks from the words read at the sample" "$g of $n, words '$wd', complete '$cp': $(grep -E 'verdict|moment|read|deep:' "$T/rnofpm.info" | tr '\n' ' ')"
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
		REC_OPTS="--no-read-stack --no-bpf" rec rcap hybrid "$PROG/unwind_recurse-fp" "$sc" 250
		tot=$(total "$T/rcap.info")
		tr=$(verdict "$T/rcap.info" truncated)
		[ -n "$tot" ] && between "$(pct "${tr:-0}" "$tot")" 99 100 && break
	done
	if [ -n "$tot" ] && between "$(pct "${tr:-0}" "$tot")" 99 100 &&
		grep -q "kernel.perf_event_max_stack ($cap" "$T/rcap.err" &&
		grep -q "sysctl kernel.perf_event_max_stack=" "$T/rcap.err"; then
		ok "recurse-fp depth 250, --no-read-stack --no-bpf: $tr of $tot truncated; stax offers the sysctl"
	else
		fail "recurse-fp depth 250, --no-read-stack --no-bpf: truncated, note about kernel.perf_event_max_stack" "$(grep verdict "$T/rcap.info"); $(first_line "$T/rcap.err")"
	fi
	if [ "$(id -u)" -eq 0 ]; then
		rec rcapw hybrid "$PROG/unwind_recurse-fp" 1.5 250
		tot=$(total "$T/rcapw.info")
		co=$(verdict "$T/rcapw.info" complete)
		rooted=$(samples "$T/rcapw.folded" '^[^;]*;(.*;)?main;recurse;')
		if grep -q "^  moment: .*in-kernel reader (BPF)" "$T/rcapw.info" && [ -n "$tot" ] &&
			between "$(pct "${co:-0}" "$tot")" 99 100 && between "$(pct "$rooted" "$tot")" 99 100; then
			ok "recurse-fp depth 250, in-kernel reader: $co of $tot complete past the cut chain, $rooted under main"
		else
			fail "recurse-fp depth 250, in-kernel reader: >= 99% complete and under main" "$co complete, $rooted under main of $tot; $(grep -E 'verdict|moment:' "$T/rcapw.info" | tr '\n' ' '); $(first_line "$T/rcapw.err")"
		fi
	else
		skip "recurse-fp depth 250, in-kernel reader" "needs root"
	fi
	if [ "$(cat /proc/sys/kernel/perf_event_max_stack)" = "$cap" ]; then
		ok "recurse-fp depth 250: kernel.perf_event_max_stack left at $cap"
	else
		fail "recurse-fp depth 250: system settings untouched" "perf_event_max_stack changed"
	fi
fi
done_testing
