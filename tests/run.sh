#!/bin/sh
# run.sh - run every test; "make check" calls it after building.
#
# Runs each unit test binary build/unit/* and each tests/e2e/*.sh (not
# lib.sh), two at a time (STAX_TEST_JOBS=N: N at a time; 1 runs them one
# after the other), the longest first, then, one at a time, the tests
# that must run alone. A test file says what it needs in a line of its
# first 30 that starts "# stax-test:", words separated by commas:
#   alone          run it by itself, after the others (say why beside it)
#   seconds=N      it takes about N seconds alone on an idle machine (the
#                  order: longest first, so two lanes end together; 5
#                  when not said; STAX_TEST_TIMES=FILE writes every
#                  test's seconds of a run into FILE)
#   no-sanitize    not part of make check-sanitize's pass (timings, or
#                  packaging that rebuilds stax itself): counted as
#                  skipped there, with the reason
# Every test must pass the same on a busy machine (make check's
# promise), so a test running beside another is a test on a busy
# machine. Each runs under "timeout 900" (STAX_TEST_TIMEOUT=SECONDS sets
# another limit; it only stops a hang: the tests assert no wall-clock
# limits, so a busy machine makes them slower, not failed). Every test
# prints lines "ok - NAME", "not ok - NAME: why" or "skip - NAME: why";
# this script counts them. A test that exits non-zero (or crashes, or
# times out) without printing a "not ok" line counts as one failure under
# its file name. A test's output is printed whole when it ends. Prints the
# slowest tests and the failures again at the end, then exactly one line
#   N passed, N failed[, N skipped]
# and exits 1 when anything failed.
#
# usage: sh tests/run.sh [PATTERN]   PATTERN limits the run to tests whose
#                                    file name contains it
# Another build (make check-sanitize, make check-arm64): STAX=/abs/path/stax is the stax
# the e2e tests run, STAX_UNIT_DIR=DIR holds the unit test binaries, and
# STAX_SANITIZER_LOGS=DIR is where ASAN_OPTIONS/UBSAN_OPTIONS log_path
# write their reports: each test gets a directory of its own there, and
# each report file that appears in it is one failure of that test (a
# report from a background process, or one a test did not look for,
# still fails the run).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
limit=${STAX_TEST_TIMEOUT:-900}
logs=${STAX_SANITIZER_LOGS:-}

# the words of a test file's "# stax-test:" line, one a line
marks() {
	sed -n -E '1,30s/^(#|\/\*) stax-test: *//p' "$1" | sed 's/ *(.*//; s/ *\*\/ *$//' | tr ',' '\n' |
		sed 's/^ *//; s/ *$//'
}

# --one TMP NAME CMD...: run one test, print its output whole, and leave
# its counts in TMP/res/NAME (called by this script itself).
if [ "${1:-}" = --one ]; then
	tmp=$2 name=$3
	shift 3
	key=$(echo "$name" | tr / _)
	out=$tmp/out/$key
	mkdir -p "$tmp/out" "$tmp/res"
	t0=$(date +%s)
	if [ -n "$logs" ]; then
		# this test's own report directory (the last log_path wins)
		tl=$logs/run-$key
		mkdir -p "$tl" && chmod 1777 "$tl"
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:log_path=$tl/asan
		UBSAN_OPTIONS=${UBSAN_OPTIONS:-}:log_path=$tl/ubsan
		export ASAN_OPTIONS UBSAN_OPTIONS
	fi
	timeout "$limit" "$@" >"$out.log" 2>"$out.err" </dev/null
	rc=$?
	{
		echo "# $name"
		cat "$out.log"
		p=$(grep -c '^ok - ' "$out.log")
		f=$(grep -c '^not ok - ' "$out.log")
		s=$(grep -c '^skip - ' "$out.log")
		grep '^not ok - ' "$out.log" >"$out.fail"
		line=""
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			case $rc in
			124) why="timed out after $limit s" ;;
			12[5-9] | 1[3-9][0-9] | 2[0-9][0-9]) why="exited with status $rc (crash or signal)" ;;
			*) why="exited with status $rc" ;;
			esac
			line="not ok - $name: $why without reporting a failure"
		elif [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
			line="not ok - $name: printed no results"
		fi
		if [ -n "$line" ]; then
			echo "$line"
			echo "$line" >>"$out.fail"
			f=1
		fi
		# sanitizer reports written while the test ran (moved aside)
		if [ -n "$logs" ]; then
			for r in "$tl"/*; do
				[ -f "$r" ] || continue
				line="not ok - $name: sanitizer report $(basename "$r"): $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$r" | cut -c1-200)"
				echo "$line"
				echo "$line" >>"$out.fail"
				mkdir -p "$logs/seen" && mv "$r" "$logs/seen/$key-$(basename "$r")"
				f=$((f + 1))
			done
			rmdir "$tl" 2>/dev/null
		fi
		if [ "$rc" -ne 0 ] && [ -s "$out.err" ]; then
			echo "# stderr of $name (last 15 lines):"
			tail -n 15 "$out.err" | sed 's/^/#   /'
		fi
		echo "$p $f $s $(($(date +%s) - t0))" >"$tmp/res/$key"
	} >"$out.print"
	# one test's output at a time
	flock "$tmp/print.lock" cat "$out.print"
	exit 0
fi

only=${1:-}
jobs=${STAX_TEST_JOBS:-2}
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stax-run.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
: >"$tmp/together"
: >"$tmp/alone"
: >"$tmp/order"

# list NAME CMD...: a test to run (one line per test: SECONDS NAME CMD
# in its lane's list, and NAME in the order of the report)
list() {
	case $1 in *"$only"*) ;; *) return ;; esac
	lane=together
	secs=5
	src=""
	[ "$2" = sh ] && src=$3
	# a unit test binary: its source says it, in a C comment
	case $1 in unit/*) src=tests/unit/${1#unit/}.c ;; esac
	if [ -n "$src" ] && [ -f "$src" ]; then
		m=$(marks "$src")
		case " $(echo $m) " in *" alone "*) lane=alone ;; esac
		s=$(echo "$m" | sed -n 's/^seconds=\([0-9]*\)$/\1/p' | head -n 1)
		[ -n "$s" ] && secs=$s
		if [ -n "$logs" ] && echo "$m" | grep -qx no-sanitize; then
			why=$(sed -n '1,30s/^# stax-test:.*no-sanitize[^(]*(\([^)]*\)).*/\1/p' "$src" | head -n 1)
			key=$(echo "$1" | tr / _)
			mkdir -p "$tmp/res" "$tmp/out"
			echo "skip - $1: not in the sanitizer pass (${why:-see the test file})" >"$tmp/out/$key.print"
			: >"$tmp/out/$key.fail"
			echo "0 0 1 0" >"$tmp/res/$key"
			cat "$tmp/out/$key.print"
			echo "$1" >>"$tmp/order"
			return
		fi
	fi
	echo "$secs $*" >>"$tmp/$lane"
	echo "$1" >>"$tmp/order"
}
unit_dir=${STAX_UNIT_DIR:-build/unit}
for t in "$unit_dir"/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	list "unit/$(basename "$t")" "$t"
done
# STAX_E2E_DIR=DIR: the end-to-end tests of DIR instead (the arm64
# guest's: tests/arm64, make check-arm64)
e2e_dir=${STAX_E2E_DIR:-tests/e2e}
for t in "$e2e_dir"/*.sh; do
	[ -f "$t" ] || continue
	[ "$(basename "$t")" = lib.sh ] && continue
	list "$(basename "$e2e_dir")/$(basename "$t" .sh)" sh "$t"
done

# names and commands hold no blanks (file names of this tree); the
# longest first
if [ -s "$tmp/together" ]; then
	sort -k1,1nr -s "$tmp/together" | cut -d' ' -f2- >"$tmp/together.sorted"
	# shellcheck disable=SC2016
	xargs -P "$jobs" -L 1 sh tests/run.sh --one "$tmp" <"$tmp/together.sorted"
fi
if [ -s "$tmp/alone" ]; then
	sort -k1,1nr -s "$tmp/alone" | cut -d' ' -f2- >"$tmp/alone.sorted"
	while read -r line; do
		# shellcheck disable=SC2086
		sh tests/run.sh --one "$tmp" $line
	done <"$tmp/alone.sorted"
fi

pass=0
failed=0
skipped=0
: >"$tmp/failures"
: >"$tmp/times"
while read -r name; do
	key=$(echo "$name" | tr / _)
	if [ -s "$tmp/res/$key" ]; then
		read -r p f s secs <"$tmp/res/$key"
		cat "$tmp/out/$key.fail" >>"$tmp/failures"
		echo "$secs $name" >>"$tmp/times"
	else
		p=0 f=1 s=0
		echo "not ok - $name: did not run to its end (run.sh)" >>"$tmp/failures"
	fi
	pass=$((pass + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done <"$tmp/order"

# reports that came after their test ended (a background process)
if [ -n "$logs" ]; then
	for r in "$logs"/run-*/* "$logs"/asan* "$logs"/ubsan*; do
		[ -f "$r" ] || continue
		echo "not ok - sanitizer report after its test ended: $r: $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$r" | cut -c1-200)" >>"$tmp/failures"
		failed=$((failed + 1))
		mkdir -p "$logs/seen" && mv "$r" "$logs/seen/late-$(basename "$(dirname "$r")")-$(basename "$r")"
	done
fi

if [ -s "$tmp/times" ]; then
	echo
	echo "# slowest (seconds): $(sort -rn "$tmp/times" | head -n 8 | tr '\n' ' ')"
	# STAX_TEST_TIMES=FILE: every test's seconds, for the seconds= marks
	[ -n "${STAX_TEST_TIMES:-}" ] && sort -rn "$tmp/times" >"$STAX_TEST_TIMES"
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
