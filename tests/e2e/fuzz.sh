#!/bin/sh
# fuzz.sh - every fuzz target (tests/fuzz/fuzz_*.c, built with libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer) runs once on each file
# of its committed corpus (tests/fuzz/corpus/NAME/), on the seeds
# tests/fuzz/seeds.sh generates (the same bytes every run: test programs'
# ELF and CFI, recordings in chunk form) and on an empty input: a replay,
# no random mutation and no corpus growth, so every make check tests the
# same inputs. Fuzzing proper: make fuzz FUZZ_SECONDS=300.
# stax-test: seconds=60
. "$(dirname "$0")/lib.sh"
require_stax

sh "$ROOT/tests/fuzz/run.sh" --replay || FAILED=1

# fuzz_elf writes each input to a file whose debuglink lookups look
# beside it: that file, and every other it makes, must be inside a
# directory it made itself (mkdtemp), never straight in /tmp where other
# processes' files are; and the directory goes when it exits. Traced
# with strace on one input (byte 0 = 0: an ELF file, a test program).
fz=$ROOT/build/fuzz/fuzz_elf
if ! command -v strace >/dev/null 2>&1; then
	skip "fuzz_elf keeps its files in a private directory" "strace is not installed"
elif [ ! -x "$fz" ]; then
	fail "fuzz_elf keeps its files in a private directory" "$fz was not built"
else
	{ printf '\000'; cat "$PROG/callgraph-fp"; } >"$T/elf-input"
	# LeakSanitizer cannot run under ptrace: leaks are the replay's job
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -qq -e trace=openat,mkdir,mkdirat -o "$T/trace" "$fz" -runs=1 "$T/elf-input" \
		>/dev/null 2>"$T/fz.err"
	rc=$?
	r=$(python3 -c '
import os, re, sys
made, created = [], []
for line in open(sys.argv[1]):
    m = re.search(r"mkdir(?:at)?\((?:AT_FDCWD, )?\"([^\"]+)\", [0-7]+\) = 0", line)
    if m:
        made.append(m.group(1))
    m = re.search(r"openat\(AT_FDCWD, \"([^\"]+)\", [^)]*O_CREAT[^)]*\) = [0-9]", line)
    if m:
        created.append(m.group(1))
loose = [c for c in created if c.startswith("/tmp/") and not any(c.startswith(d + "/") for d in made)]
left = [d for d in made if d.startswith("/tmp/") and os.path.exists(d)]
print(len(created), len(made), "loose:" + ",".join(loose), "left:" + ",".join(left))
' "$T/trace" 2>&1)
	case $r in
	*"loose: left:"*)
		if [ "$rc" -eq 0 ] && [ "${r%% *}" -gt 0 ]; then
			ok "fuzz_elf: its $(echo "$r" | cut -d" " -f1) files are made inside a private directory, removed at exit"
		else
			fail "fuzz_elf keeps its files in a private directory" "status $rc, $r: $(first_line "$T/fz.err")"
		fi ;;
	*) fail "fuzz_elf keeps its files in a private directory" "$r" ;;
	esac
fi
done_testing
