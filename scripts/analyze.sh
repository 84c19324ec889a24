#!/bin/sh
# analyze.sh - static analysis of src/ (make analyze): gcc's -fanalyzer on
# every src/*.c file, then cppcheck over src/ (warnings, portability,
# performance; whole-program checks, so one job). Every finding is one line
#   TOOL ID FILE FUNCTION LINE: MESSAGE
# (FUNCTION is "-" for cppcheck, which does not name it). A finding is
# suppressed only by a line of scripts/analyze.supp
#   TOOL ID FILE FUNCTION  # why it is not a bug
# which must give its reason. Exits 0 when every finding is suppressed,
# 1 otherwise (or when a tool is missing or fails); prints the findings
# left and any suppression that no longer matches.
#   CC=gcc (the analyzer needs gcc 10 or later), CPPCHECK=cppcheck
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
out=${ANALYZE_DIR:-build/analyze}
supp=scripts/analyze.supp
gcc=${ANALYZE_CC:-gcc}
cppcheck=${CPPCHECK:-cppcheck}
mkdir -p "$out/gcc" || exit 1
for t in "$gcc" "$cppcheck"; do
	command -v "$t" >/dev/null 2>&1 || {
		echo "stax: error: make analyze needs $t (apt-get install -y $t)" >&2
		exit 1
	}
done
# every suppression names its reason
bad=$(grep -v '^[[:space:]]*\(#\|$\)' "$supp" | grep -v '^[a-z]\+ [A-Za-z0-9_-]\+ [^ ]\+ [^ ]\+ \+# .*[a-z]' | head -n 3)
if [ -n "$bad" ]; then
	echo "stax: error: $supp: every line is 'TOOL ID FILE FUNCTION  # reason': $bad" >&2
	exit 1
fi

# gcc -fanalyzer, one file a process, as many as there are cpus
srcs=$(find src -name '*.c' ! -name '*.bpf.c' | sort)
printf '%s\n' $srcs | xargs -P "$(nproc)" -I{} sh -c \
	'f=$1; log=$2/gcc/$(echo "$f" | tr / _).log
	 "$3" -fanalyzer -std=gnu11 -Isrc -Ibuild/bpf -D_GNU_SOURCE -O0 -c -o /dev/null "$f" >"$log" 2>&1 ||
		echo "stax: error: $3 -fanalyzer failed on $f (see $log)" >&2' sh {} "$out" "$gcc" 2>"$out/gcc.errors"
if [ -s "$out/gcc.errors" ]; then
	cat "$out/gcc.errors" >&2
	exit 1
fi
: >"$out/findings"
for f in $srcs; do
	# "FILE: In function 'NAME':" then "FILE:L:C: warning: MSG [-Wanalyzer-ID]"
	awk -v file="$f" '
	/: In function / { fn = $0; sub(/^.*In function [^A-Za-z_]*/, "", fn); sub(/[^A-Za-z0-9_].*$/, "", fn) }
	/: warning: .*\[-W[a-z-]+\]$/ && index($0, file ":") == 1 {
		id = $0; sub(/^.*\[-W/, "", id); sub(/\]$/, "", id)
		split($0, loc, ":")
		msg = $0; sub(/^[^:]*:[0-9]+:[0-9]+: warning: /, "", msg); sub(/ \[-W[a-z-]+\]$/, "", msg)
		print "gcc " id " " file " " (fn == "" ? "-" : fn) " " loc[2] ": " msg
	}' "$out/gcc/$(echo "$f" | tr / _).log" >>"$out/findings"
done

# cppcheck: warnings, portability and performance, not style (not the BPF
# programs of src/bpf/, which only clang -target bpf reads)
if ! "$cppcheck" -q --std=c11 -Isrc -Ibuild/bpf -isrc/bpf -D_GNU_SOURCE --enable=warning,portability,performance \
	--inline-suppr --template='cppcheck {id} {file} - {line}: {message}' src 2>"$out/cppcheck.log" >"$out/cppcheck.out"; then
	echo "stax: error: cppcheck failed (see $out/cppcheck.log)" >&2
	exit 1
fi
grep '^cppcheck ' "$out/cppcheck.log" >>"$out/findings"

# apply the suppressions
awk -v supp="$supp" '
BEGIN {
	while ((getline line < supp) > 0) {
		if (line ~ /^[ \t]*(#|$)/) continue
		split(line, w, " ")
		key = w[1] " " w[2] " " w[3] " " w[4]
		keys[key] = 1
	}
}
{
	key = $1 " " $2 " " $3 " " $4
	if (key in keys) { used[key] = 1; n_supp++; next }
	print "finding: " $0
	left++
}
END {
	for (k in keys)
		if (!(k in used))
			print "stax: warning: " supp ": \"" k "\" no longer matches a finding (remove it)"
	printf "stax: analyze: %d finding%s left, %d suppressed with reasons in %s\n", left, left == 1 ? "" : "s", n_supp, supp
	exit left > 0
}' "$out/findings"
