#!/bin/sh
# fuzz.sh - every fuzz target runs briefly on seeds made from real files:
# a stax recording, a perf.data file, and a test program's .eh_frame.
# Longer campaigns: make fuzz FUZZ_SECONDS=300.
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v clang >/dev/null 2>&1; then
	skip "fuzz targets" "clang is not installed (libFuzzer needs it)"
	done_testing
fi
out=$ROOT/build/fuzz
mkdir -p "$out/fuzz_recording.corpus" "$out/fuzz_perfdata.corpus" "$out/fuzz_cfi.corpus"

# seeds: small real inputs, so the fuzzer starts from valid structure
if stax record -q -o "$T/seed.data" -- "$PROG/spin-fp" 0.2 >/dev/null 2>&1; then
	cp "$T/seed.data" "$out/fuzz_recording.corpus/seed-stax"
else
	fail "seed recording" "stax record failed"
fi
if command -v perf >/dev/null 2>&1 &&
	perf record -q -g -o "$T/perf.data" -- "$PROG/spin-fp" 0.2 >/dev/null 2>&1; then
	cp "$T/perf.data" "$out/fuzz_perfdata.corpus/seed-perf"
else
	skip "perf.data seed" "perf record did not run here"
fi
if objcopy -O binary --only-section=.eh_frame "$PROG/callgraph-nofp" "$T/eh" 2>/dev/null; then
	{ printf '\000'; cat "$T/eh"; } >"$out/fuzz_cfi.corpus/seed-eh_frame"
fi

sh "$ROOT/tests/fuzz/run.sh" "${STAX_FUZZ_SECONDS:-8}" || FAILED=1
done_testing
