#!/bin/sh
# run.sh SECONDS - build every fuzz target with libFuzzer (clang) and run
# each for SECONDS on its corpus. Prints ok/not ok lines; exits 1 when a
# target finds a crash (the reproducer is left in build/fuzz/).
set -u
secs=${1:-60}
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/fuzz
mkdir -p "$out"
cd "$top" || exit 1
srcs=$(find src -name '*.c' ! -name main.c ! -path 'src/cmd/*' | sort)
# the same libraries as ./stax (the Makefile's LDLIBS line)
libs=$(sed -n 's/^LDLIBS = //p' Makefile)
status=0
for t in tests/fuzz/fuzz_*.c; do
	name=$(basename "$t" .c)
	corpus=tests/fuzz/corpus/${name#fuzz_}
	mkdir -p "$corpus" "$out/$name.corpus"
	if ! clang -std=gnu11 -D_GNU_SOURCE -g -O1 -Isrc -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -o "$out/$name" "$t" $srcs \
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
