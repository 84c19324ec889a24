#!/bin/sh
# moment_window.sh - the in-kernel reader's window past the copy (issue
# 30): a thread's first samples, before the recorder has unwound one of
# its stacks and could tell the reader which stack words to read.
#
# tests/programs/build/moment_window-nofp starts a thread every 15 ms,
# each 37 to 46 KiB deep (a new depth each: a new shape), no frame
# pointers: past the 32 KiB copy by less than the window the reader
# reads at each sample whose stack goes on past the copy (16 KiB). Before
# the window, a new thread's first samples were read on from the process
# later (late: 331 of 1,921 here), or cut at the copy when the thread was
# gone by then. Checks, over about 2,000 samples:
#   - at least 99% complete (the words at the sample), at most 1% late;
#   - at least 97% of them clone3;start_thread;run;down...;leaf (and its
#     callees: now_ns, the vDSO);
#   - info counts them as completed by the words read at the sample.
# stax-test: seconds=10, alone (new threads' first samples: read in time)
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ]; then
	skip "window" "needs root (the in-kernel reader)"
	done_testing
fi
# (longer when the cpus are busy and 2 s gave fewer than 1000 samples)
for secs in 2 6; do
	if ! stax record -q -o "$T/w.data" -- "$PROG/moment_window-nofp" $secs >"$T/w.out" 2>"$T/w.err"; then
		fail "record moment_window" "$(first_line "$T/w.err")"
		done_testing
	fi
	stax info -i "$T/w.data" >"$T/w.info" 2>&1
	all=$(sed -n 's/^stacks: *[0-9]* of \([0-9]*\) .*/\1/p' "$T/w.info")
	[ "${all:-0}" -ge 1000 ] && break
done
stax flame --folded -i "$T/w.data" >"$T/w.folded" 2>>"$T/w.err"
complete=$(sed -n 's/^  verdict: *complete \([0-9]*\),.*/\1/p' "$T/w.info")
late=$(sed -n 's/^  verdict: .* late \([0-9]*\),.*/\1/p' "$T/w.info")
words=$(sed -n 's/^  moment: .* \([0-9][0-9]*\) stacks completed past the copy.*/\1/p' "$T/w.info")
if grep -q "^  moment: .*in-kernel reader (BPF)" "$T/w.info" && [ "${all:-0}" -ge 1000 ] &&
	between "$(pct "${complete:-0}" "$all")" 99 100 && between "$(pct "${late:-0}" "$all")" 0 1; then
	ok "new threads past the copy: ${complete} of $all complete, ${late} late"
else
	fail "new threads past the copy: >= 99% complete, <= 1% late" "complete '${complete}' late '${late}' of '${all}': $(grep -E 'moment|verdict' "$T/w.info" | tr '\n' '|')"
fi
s=$(share "$T/w.folded" "^moment_window-n;clone3;start_thread;run;(down;)+leaf(;.*)?$")
if between "$s" 97 100; then
	ok "their stacks: clone3;start_thread;run;down...;leaf... in $s%"
else
	fail "their stacks: clone3;start_thread;run;down...;leaf in >= 97%" "$s%: $(sort -t' ' -k2 -n "$T/w.folded" | tail -n 2 | cut -c1-200 | tr '\n' '|')"
fi
if [ "${words:-0}" -ge $((${all:-0} * 9 / 10)) ]; then
	ok "info: $words stacks completed past the copy by the words read at the sample"
else
	fail "info: the stacks completed by the words read at the sample" "'${words}' of '${all}'"
fi
done_testing
