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
#     (issue 30; 99.6-99.7% here), in a first recording (empty unwind
#     table cache) and in the next; the rest are the first samples of a
#     new shape whose new part lies deeper than the reader's window past
#     the copy, before the recorder had unwound one and told the reader
#     which words to read; the figure is printed;
#   - with the reader, the stacks that went past the copy are completed
#     by the words it read at the sample (its window and the slots asked
#     for): at most one late for ten (about 520 against 0-3 late a run
#     here; before the window 558 against 20);
#   - no frame of rustc, librustc_driver or libLLVM is unnamed.
# stax-test: alone (rustc runs on both cpus; the rooted share is what the reader reads in time), seconds=25, no-sanitize
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
# A first recording, with an empty unwind table cache (XDG_CACHE_HOME of
# its own): librustc_driver's and libLLVM's tables compile while rustc
# runs (200 ms each; 8 ms from the cache), and meanwhile the recorder
# unwinds with their provisional tables (the .eh_frame_hdr search table,
# each frame's FDE run at the walk). Before those, such a run was 90-98%
# rooted here: the samples waited for the tables, and the reader learned
# late what to read. Then the second recording, from the cache. Each is
# run once more when it falls short (sampling).
cold() {
	rm -rf "$T/xdg"
	mkdir "$T/xdg"
	XDG_CACHE_HOME=$T/xdg rec
}
cold || { echo "# first recording: rooted $p% of ${all:-0}, ${words:-0} completed by words read at the sample, ${late:-0} late: again"; cold; }
if [ "${all:-0}" -ge 1500 ] && between "$p" 99 100; then
	ok "rustc, first recording (empty unwind table cache): $p% of $all stacks rooted ($(sed -n 's/^  verdict: *//p' "$T/r.info"))"
else
	fail "rustc, first recording: at least 99% of the stacks rooted" "$p% of ${all:-0}: $(grep -E 'verdict|moment|stop in' "$T/r.info" | tr '\n' '|' | cut -c1-300); $(first_line "$T/r.err")"
fi
warm() { XDG_CACHE_HOME=$T/xdg rec; }
warm || { echo "# rooted $p% of ${all:-0}, ${words:-0} completed by words read at the sample, ${late:-0} late: again"; warm; }
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
