#!/bin/sh
# moment_rustc.sh - rustc on a large crate (issue 30): rustc and LLVM keep
# no frame pointers and run far deeper than any stack copy (stacker
# segments of a megabyte), so most of a stack's outer frames lie past the
# copy; the in-kernel reader reads the words a thread's deep stacks need
# at each sample.
#
# The crate: bench/real/crate.sh 40 (40 generic structs with impls and
# derives), rustc -O -C codegen-units=2, about 3 s of CPU. Checks, over
# the samples of the rustc process (--comm rustc; the linker it runs is
# another program):
#   - at least 99% of its stacks reach main or a thread start function
#     (issue 30; 99.3-99.5% here: the rest are the first samples of a
#     thread whose new part lies deeper than the reader's window past
#     the copy, or past a jump to another stack (rustc's stacker
#     segments), before the recorder had unwound one and told the reader
#     which words to read; the figure is printed);
#   - with the reader, the stacks that went past the copy are completed
#     by the words it read at the sample (its window and the slots asked
#     for): at most one late for ten (about 520 against 1-3 late a run
#     here; before the window 558 against 20);
#   - no frame of rustc, librustc_driver or libLLVM is unnamed.
# stax-test: alone (rustc runs on both cpus; the rooted share is what the reader reads in time), seconds=15, no-sanitize
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ]; then
	skip "rustc" "needs root (the in-kernel reader)"
	done_testing
fi
if ! command -v rustc >/dev/null 2>&1 || ! rustc --version >/dev/null 2>&1; then
	skip "rustc" "rustc is not installed"
	done_testing
fi
sh "$ROOT/bench/real/crate.sh" 40 >"$T/crate.rs"

rec() {
	stax record -q -o "$T/r.data" -- rustc -O -C codegen-units=2 -o "$T/crate.out" "$T/crate.rs" \
		>/dev/null 2>"$T/r.err" || return 1
	stax info --comm rustc -i "$T/r.data" >"$T/r.info" 2>&1
	rooted=$(sed -n 's/^stacks: *\([0-9]*\) of \([0-9]*\) .*/\1/p' "$T/r.info")
	all=$(sed -n 's/^stacks: *\([0-9]*\) of \([0-9]*\) .*/\2/p' "$T/r.info")
	p=$(pct "${rooted:-0}" "${all:-0}")
	words=$(sed -n 's/^  moment: .* \([0-9][0-9]*\) stacks completed past the copy.*/\1/p' "$T/r.info")
	late=$(sed -n 's/^  verdict: .* late \([0-9]*\),.*/\1/p' "$T/r.info")
	[ "${all:-0}" -ge 1500 ] && between "$p" 99 100 && [ "${words:-0}" -ge $((${late:-0} * 10)) ]
}
# Once more when the first run fell short: a first run with an empty
# unwind table cache compiles librustc_driver's and libLLVM's tables while
# rustc runs (200 ms each, 8 ms cached), and the samples of those 200 ms
# wait for them: the recorder cannot tell the reader what to read for a
# thread until it has unwound one of its stacks (90-98% rooted in such
# runs here, a few hundred late or cut at a stacker jump). The second run
# is what a user gets from the second recording of a program on.
rec || { echo "# rooted $p% of ${all:-0}, ${words:-0} completed by words read at the sample, ${late:-0} late: again"; rec; }
if [ "${all:-0}" -ge 1500 ] && between "$p" 99 100; then
	ok "rustc: $p% of $all stacks reach main or a thread start function ($(sed -n 's/^  verdict: *//p' "$T/r.info"))"
else
	fail "rustc: at least 99% of the stacks rooted" "$p% of ${all:-0}: $(grep -E 'verdict|moment|stop in' "$T/r.info" | tr '\n' '|' | cut -c1-300); $(first_line "$T/r.err")"
fi
if [ "${words:-0}" -ge 100 ] && [ "${words:-0}" -ge $((${late:-0} * 10)) ]; then
	ok "rustc: $words stacks completed past the copy by the words read at the sample, ${late:-0} late"
else
	fail "rustc: the stacks past the copy come from the words read at the sample" "words '${words}', late '${late}': $(grep -E 'moment|deep' "$T/r.info" | tr '\n' '|' | cut -c1-300)"
fi
unnamed=$(awk '$1 ~ /^(rustc|librustc_driver-.*|libLLVM.*)$/ && $3 != "0.0%" { printf "%s %s; ", $1, $3 }' "$T/r.info")
seen=$(awk '$1 ~ /^(librustc_driver-.*|libLLVM.*)$/ { n++ } END { print n + 0 }' "$T/r.info")
if [ "$seen" -ge 2 ] && [ -z "$unnamed" ]; then
	ok "rustc: every frame of rustc, librustc_driver and libLLVM is named"
else
	fail "rustc: every frame of rustc, librustc_driver and libLLVM named" "${unnamed:-modules not seen}"
fi
done_testing
