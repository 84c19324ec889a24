#!/bin/sh
# run.sh SECONDS - build every fuzz target with libFuzzer (clang) and run
# each for SECONDS on its corpus (FUZZ_ONLY=NAME: only fuzz_NAME). Prints
# ok/not ok lines; exits 1 when a target finds a crash, hang or leak (the
# reproducer is left in build/fuzz/; add it to tests/fuzz/corpus/NAME/).
set -u
secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz
mkdir -p "$out"
cd "$top" || exit 1
# FUZZ_ONLY=NAME runs one target (fuzz_NAME.c) only
only=${FUZZ_ONLY:-}
srcs=$(find src -name '*.c' ! -name main.c ! -path 'src/cmd/*' | sort)
# the same libraries as ./stax (the Makefile's LDLIBS line)
libs=$(sed -n 's/^LDLIBS = //p' Makefile)
cflags="-std=gnu11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=address,undefined -fno-sanitize-recover=undefined"
status=0
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
for t in tests/fuzz/fuzz_*.c; do
	name=$(basename "$t" .c)
	[ -z "$only" ] || [ "$name" = "fuzz_$only" ] || continue
	corpus=tests/fuzz/corpus/${name#fuzz_}
	mkdir -p "$corpus" "$out/$name.corpus"
	if ! clang $cflags -fsanitize=fuzzer -o "$out/$name" "$t" $objs \
		$libs 2>"$out/$name.build.log"; then
		echo "not ok - fuzz $name: build failed (see $out/$name.build.log)"
		status=1
		continue
	fi
	if (cd "$out" && "./$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/$name-" "$out/$name.corpus" "$top/$corpus") >"$out/$name.log" 2>&1; then
		runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$out/$name.log" | awk '{print $2}')
		[ -n "$runs" ] || runs=$(grep -Eo '^#[0-9]+' "$out/$name.log" | tail -1 | tr -d '#')
		echo "ok - fuzz $name: ${secs}s, ${runs:-?} runs, no crash"
	else
		echo "not ok - fuzz $name: crash found (log $out/$name.log, reproducer $out/$name-*)"
		status=1
	fi
done
exit $status
