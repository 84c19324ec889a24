#!/bin/sh
# check-arm64.sh - the run of make check-arm64, once stax and the test
# programs are built for arm64 (build-arm64/, tests/programs/build-arm64/)
# and the guest is ready (scripts/arm64-guest.sh build):
#   0. here, perf record of tests/programs/build/callgraph-nofp, which
#      the guest reads (tests/arm64/x86data.sh);
#   1. in the arm64 guest, the tests of tests/arm64/ (tests/run.sh with
#      the arm64 build: STAX, STAX_PROG, STAX_E2E_DIR), one at a time
#      (the guest's two cpus are two threads of this machine);
#   2. here, the tests of tests/arm64-host/: what the guest left in
#      build/arm64/out/ (perf.data recorded there) read on this machine.
# Prints both runs' output, then one line "arm64: N passed, N failed"
# and exits 1 when anything failed (or a run did not finish).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stax-arm64.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
rm -rf build/arm64/out
mkdir -p build/arm64/out

# for tests/arm64/x86data.sh: a perf.data of this machine's, with perf's
# build-id cache and this stax's answer
echo "== this machine: perf record --call-graph dwarf of callgraph-nofp, for the guest to read"
out=$top/build/arm64/out
perf --buildid-dir "$out/x86-debug" record -q --buildid-all -e cpu-clock -F 999 --call-graph dwarf \
	-o "$out/x86-cg-dwarf.data" -- tests/programs/build/callgraph-nofp >/dev/null 2>"$tmp/x86.err" &&
	./stax flame -i "$out/x86-cg-dwarf.data" --folded >"$out/x86-cg-dwarf.host.folded" 2>>"$tmp/x86.err" ||
	echo "check-arm64: recording here failed: $(tail -n 1 "$tmp/x86.err")"

echo "== arm64 guest: tests/arm64"
sh scripts/arm64-guest.sh run -t "${STAX_ARM64_TIMEOUT:-3600}" \
	"STAX=$top/build-arm64/stax STAX_PROG=$top/tests/programs/build-arm64" \
	"STAX_E2E_DIR=tests/arm64 STAX_UNIT_DIR=/nonexistent STAX_TEST_JOBS=1 sh tests/run.sh" \
	>"$tmp/guest" 2>&1
grc=$?
cat "$tmp/guest"
echo "== this machine ($(uname -m)): tests/arm64-host"
STAX_E2E_DIR=tests/arm64-host STAX_UNIT_DIR=/nonexistent sh tests/run.sh >"$tmp/host" 2>&1
hrc=$?
cat "$tmp/host"

# the last "N passed, N failed" line of each run
counts() { sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$1" | tail -n 1; }
set -- $(counts "$tmp/guest") $(counts "$tmp/host")
if [ $# -ne 4 ]; then
	echo "not ok - check-arm64: a run ended without its summary (guest exit $grc, host exit $hrc)"
	echo "arm64: ${1:-0} passed, 1 failed"
	exit 1
fi
pass=$(($1 + $3)) failed=$(($2 + $4))
[ "$grc" -ne 0 ] && [ "$2" -eq 0 ] && failed=$((failed + 1)) &&
	echo "not ok - check-arm64: the guest run exited $grc"
echo "arm64: $pass passed, $failed failed"
[ "$failed" -eq 0 ]
