#!/bin/sh
# fuzz.sh - every fuzz target (tests/fuzz/fuzz_*.c, built with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer) runs once on each file
# of its committed corpus (tests/fuzz/corpus/NAME/), on the seeds
# tests/fuzz/seeds.sh generates (the same bytes every run: test programs'
# ELF and CFI, recordings in chunk form) and on an empty input: a replay,
# no random mutation and no corpus growth, so every make check tests the
# same inputs. Fuzzing proper: make fuzz FUZZ_SECONDS=300.
. "$(dirname "$0")/lib.sh"
require_stax

sh "$ROOT/tests/fuzz/run.sh" --replay || FAILED=1
done_testing
