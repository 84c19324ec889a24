#!/bin/sh
# run.sh - build every fuzz target (tests/fuzz/fuzz_NAME.c) with libFuzzer
# (clang), AddressSanitizer and UndefinedBehaviorSanitizer, then either
#   sh tests/fuzz/run.sh SECONDS   fuzz each target for SECONDS (make fuzz)
#                                  from its committed corpus
#                                  (tests/fuzz/corpus/NAME/), the generated
#                                  seeds (tests/fuzz/seeds.sh) and what
#                                  earlier runs found (build/fuzz/NAME.corpus,
#                                  which grows)
#   sh tests/fuzz/run.sh --replay  run each target once on every committed
#                                  corpus file, every generated seed and an
#                                  empty input, and nothing else: no
#                                  mutation, no corpus growth, so every run
#                                  tests the same inputs (make check, via
#                                  tests/e2e/fuzz.sh)
# FUZZ_ONLY=NAME: only fuzz_NAME. Prints ok/not ok lines; exits 1 when a
# target does not build or finds a crash, hang or leak (the reproducer is
# left in build/fuzz/; add it to tests/fuzz/corpus/NAME/). New targets and
# corpus directories are picked up by their names.
set -u
mode=fuzz
secs=60
case ${1:-} in
--replay) mode=replay ;;
"") ;;
*) secs=$1 ;;
esac
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz
mkdir -p "$out"
cd "$top" || exit 1
only=${FUZZ_ONLY:-}
srcs=$(find src -name '*.c' ! -name main.c ! -name '*.bpf.c' ! -path 'src/cmd/*' | sort)
# and the page's strings, which make generates (make all ran first)
if [ ! -f build/gen/page.c ]; then
	echo "not ok - fuzz: build/gen/page.c is missing (make builds it)"
	exit 1
fi
srcs="$srcs build/gen/page.c"
# the same libraries as ./stax (the Makefile's STAX_LIBS line)
libs=$(sed -n 's/^STAX_LIBS = //p' Makefile)
cflags="-std=gnu11 -D_GNU_SOURCE -g -O1 -Isrc -I$top/build/bpf -fsanitize=address,undefined -fno-sanitize-recover=undefined"
status=0
if ! command -v clang >/dev/null 2>&1; then
	echo "not ok - fuzz: clang is not installed (sh scripts/deps.sh installs it; libFuzzer needs it)"
	exit 1
fi
# every src/ file once, instrumented for libFuzzer; the targets link them
mkdir -p "$out/obj"
objs=""
for s in $srcs; do
	objs="$objs $out/obj/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')"
done
if ! printf '%s\n' $srcs | xargs -P "$(nproc)" -I{} sh -c \
	'o="$1/obj/$(echo "$2" | tr / _ | sed "s/\\.c\$/.o/")"
	 [ "$o" -nt "$2" ] && [ "$o" -nt Makefile ] && ! find src -name "*.h" -newer "$o" | grep -q . ||
	 clang $3 -fsanitize=fuzzer-no-link -c -o "$o" "$2"' sh "$out" {} "$cflags" 2>"$out/obj.build.log"; then
	echo "not ok - fuzz: building src/ for libFuzzer failed (see $out/obj.build.log)"
	exit 1
fi
# the generated seeds: the same bytes every run (tests/fuzz/seeds.sh)
sh tests/fuzz/seeds.sh "$out/seeds"
# an empty input, for every target
: >"$out/empty"
for t in tests/fuzz/fuzz_*.c; do
	name=$(basename "$t" .c)
	short=${name#fuzz_}
	[ -z "$only" ] || [ "$short" = "$only" ] || continue
	corpus=tests/fuzz/corpus/$short
	seeds=$out/seeds/$short
	if [ "$out/$name" -nt "$t" ] && ! find $objs -newer "$out/$name" 2>/dev/null | grep -q .; then
		:   # built already, from these objects
	elif ! clang $cflags -fsanitize=fuzzer -o "$out/$name" "$t" $objs \
		$libs 2>"$out/$name.build.log"; then
		echo "not ok - fuzz $name: build failed (see $out/$name.build.log)"
		status=1
		continue
	fi
	if [ "$mode" = replay ]; then
		# each file once (libFuzzer runs the files it is given and stops);
		# -timeout only catches a hang
		find "$top/$corpus" "$seeds" -type f 2>/dev/null | sort >"$out/$name.inputs"
		echo "$out/empty" >>"$out/$name.inputs"
		n=$(wc -l <"$out/$name.inputs")
		nc=$(find "$corpus" -type f 2>/dev/null | wc -l)
		ns=$(find "$seeds" -type f 2>/dev/null | wc -l)
		if (cd "$out" && xargs "./$name" -timeout=120 -rss_limit_mb=2048 \
			-artifact_prefix="$out/$name-" <"$out/$name.inputs") >"$out/$name.log" 2>&1; then
			ran=$(grep -c '^Executed ' "$out/$name.log")
			if [ "$ran" -eq "$n" ]; then
				echo "ok - fuzz $name: replayed $n inputs (corpus $nc, seeds $ns, empty 1), no crash"
			else
				echo "not ok - fuzz $name: replayed $ran of $n inputs (log $out/$name.log)"
				status=1
			fi
		else
			echo "not ok - fuzz $name: an input crashed, hung or leaked: $(grep -m1 -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$out/$name.log" | cut -c1-200) (log $out/$name.log)"
			status=1
		fi
		continue
	fi
	mkdir -p "$out/$name.corpus" "$corpus" "$seeds"
	# the first directory is where libFuzzer adds what it finds
	if (cd "$out" && "./$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/$name-" "$out/$name.corpus" "$top/$corpus" "$seeds") >"$out/$name.log" 2>&1; then
		runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$out/$name.log" | awk '{print $2}')
		[ -n "$runs" ] || runs=$(grep -Eo '^#[0-9]+' "$out/$name.log" | tail -1 | tr -d '#')
		echo "ok - fuzz $name: ${secs}s, ${runs:-?} runs, no crash"
	else
		echo "not ok - fuzz $name: crash found (log $out/$name.log, reproducer $out/$name-*)"
		status=1
	fi
done
exit $status
