#!/bin/sh
# run.sh - run every test; "make check" calls it after building.
#
# Runs each unit test binary build/unit/*, then each tests/e2e/*.sh (not
# lib.sh), one at a time (sampling tests need the CPUs to themselves), each
# under "timeout 900" (STAX_TEST_TIMEOUT=SECONDS sets another limit; it
# only stops a hang: the tests assert no wall-clock limits, so a busy
# machine makes them slower, not failed). Every test prints lines
# "ok - NAME", "not ok - NAME: why" or "skip - NAME: why"; this script
# counts them. A test that exits non-zero (or crashes, or times out)
# without printing a "not ok" line counts as one failure under its file
# name. Prints the failures again at the end, then exactly one line
#   N passed, N failed[, N skipped]
# and exits 1 when anything failed.
#
# usage: sh tests/run.sh [PATTERN]   PATTERN limits the run to tests whose
#                                    file name contains it
# Another build (make check-sanitize): STAX=/abs/path/stax is the stax
# the e2e tests run, STAX_UNIT_DIR=DIR holds the unit test binaries, and
# STAX_SANITIZER_LOGS=DIR is where ASAN_OPTIONS/UBSAN_OPTIONS log_path
# write their reports: each report file that appears while a test runs
# is one failure of that test (a report from a background process, or
# one a test did not look for, still fails the run).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
only=${1:-}
limit=${STAX_TEST_TIMEOUT:-900}
unit_dir=${STAX_UNIT_DIR:-build/unit}
logs=${STAX_SANITIZER_LOGS:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stax-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
: >"$tmp/failures"
: >"$tmp/times"
pass=0
failed=0
skipped=0

# run_one NAME CMD...: run one test, stream its output, count its lines.
run_one() {
	name=$1
	shift
	case $name in *"$only"*) ;; *) return ;; esac
	echo "# $name"
	t0=$(date +%s)
	{ timeout "$limit" "$@" 2>"$tmp/err"; echo $? >"$tmp/rc"; } | tee "$tmp/out"
	rc=$(cat "$tmp/rc")
	p=$(grep -c '^ok - ' "$tmp/out")
	f=$(grep -c '^not ok - ' "$tmp/out")
	s=$(grep -c '^skip - ' "$tmp/out")
	grep '^not ok - ' "$tmp/out" >>"$tmp/failures"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		case $rc in
		124) why="timed out after $limit s" ;;
		12[5-9] | 1[3-9][0-9] | 2[0-9][0-9]) why="exited with status $rc (crash or signal)" ;;
		*) why="exited with status $rc" ;;
		esac
		line="not ok - $name: $why without reporting a failure"
		echo "$line"
		echo "$line" >>"$tmp/failures"
		f=1
	elif [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
		line="not ok - $name: printed no results"
		echo "$line"
		echo "$line" >>"$tmp/failures"
		f=1
	fi
	# sanitizer reports written while the test ran (moved aside, so
	# the next test starts with none)
	if [ -n "$logs" ]; then
		for r in "$logs"/*; do
			[ -f "$r" ] || continue
			line="not ok - $name: sanitizer report $(basename "$r"): $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$r" | cut -c1-200)"
			echo "$line"
			echo "$line" >>"$tmp/failures"
			mkdir -p "$logs/seen" && mv "$r" "$logs/seen/"
			f=$((f + 1))
		done
	fi
	if [ "$rc" -ne 0 ] && [ -s "$tmp/err" ]; then
		echo "# stderr of $name (last 15 lines):"
		tail -n 15 "$tmp/err" | sed 's/^/#   /'
	fi
	echo "$(($(date +%s) - t0)) $name" >>"$tmp/times"
	pass=$((pass + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

for t in "$unit_dir"/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in tests/e2e/*.sh; do
	[ -f "$t" ] || continue
	[ "$(basename "$t")" = lib.sh ] && continue
	run_one "e2e/$(basename "$t" .sh)" sh "$t"
done

if [ -s "$tmp/times" ]; then
	echo
	echo "# slowest (seconds): $(sort -rn "$tmp/times" | head -n 8 | tr '\n' ' ')"
fi
if [ -s "$tmp/failures" ]; then
	echo
	echo "failures:"
	cat "$tmp/failures"
fi
echo
if [ "$skipped" -gt 0 ]; then
	echo "$pass passed, $failed failed, $skipped skipped"
else
	echo "$pass passed, $failed failed"
fi
[ "$failed" -eq 0 ]
