#!/bin/sh
# record_basic.sh - record tests/programs/callgraph and check the stacks.
#
# callgraph: main -> a -> b -> leaf_b (75% of the work),
#            main -> a -> c -> leaf_c (25%); see callgraph.c.
# The -fp build (clang, leaf frame pointers) must give complete stacks,
# root first; the -nofp build (gcc) is only checked at the leaf for now.
# stax-test: seconds=10
. "$(dirname "$0")/lib.sh"
require_stax

# record NAME SCALE: record callgraph-NAME into $T/NAME.data and the folded
# stacks into $T/NAME.folded; returns the recorder's exit status.
record() {
	stax record -o "$T/$1.data" -- "$PROG/callgraph-$1" "$2" >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	stax flame --folded -i "$T/$1.data" >"$T/$1.folded" 2>"$T/$1.ferr"
	return $rc
}

# shares_ok NAME PATTERN_B PATTERN_C: leaf_b 65-85%, leaf_c 15-35%.
shares_ok() {
	sb=$(share "$T/$1.folded" "$2")
	sc=$(share "$T/$1.folded" "$3")
	between "$sb" 65 85 && between "$sc" 15 35
}

FULL_B=";main;a;b;leaf_b$K"
FULL_C=";main;a;c;leaf_c$K"

# --- frame pointers: complete stacks, shares ------------------------------
if record fp 1; then
	ok "record callgraph-fp exits 0"
else
	fail "record callgraph-fp exits 0" "status $rc: $(first_line "$T/fp.err")"
fi
if [ -s "$T/fp.err" ]; then
	ok "record prints a summary on stderr"
else
	fail "record prints a summary on stderr" "stderr is empty"
fi
n=$(samples "$T/fp.folded")
# 1.3 s of CPU at 999 Hz is ~1300 samples
if between "$n" 700 2000; then
	ok "callgraph-fp has ~1300 samples at 999 Hz ($n)"
else
	fail "callgraph-fp has ~1300 samples at 999 Hz" "$n samples in flame --folded ($(first_line "$T/fp.ferr"))"
fi

if ! shares_ok fp "$FULL_B" "$FULL_C"; then
	echo "# shares off (main;a;b;leaf_b $sb%, main;a;c;leaf_c $sc%): retrying 2x longer"
	record fp 2
fi
if shares_ok fp "$FULL_B" "$FULL_C"; then
	ok "fp stacks main;a;b;leaf_b $sb% (75 +-10) and main;a;c;leaf_c $sc% (25 +-10)"
else
	fail "fp stacks main;a;b;leaf_b ~75% and main;a;c;leaf_c ~25%" \
		"got $sb% and $sc%; top stacks: $(sort -k2 -nr -t' ' "$T/fp.folded" | head -n 3 | tr '\n' '|')"
fi

s=$(share "$T/fp.folded" '^callgraph-fp;')
if between "$s" 99 100; then
	ok "folded lines start with the comm callgraph-fp"
else
	fail "folded lines start with the comm callgraph-fp" "$s% do; first line: $(first_line "$T/fp.folded")"
fi

# root first: main comes before a, which comes before b or c
s=$(share "$T/fp.folded" ";main;a;[bc];leaf_[bc]$K")
r=$(share "$T/fp.folded" ";leaf_[bc];([^;]*;)*main(;|$)")
if between "$s" 95 100 && between "$r" 0 0; then
	ok "folded stacks are root first ($s% main;a;b|c;leaf)"
else
	fail "folded stacks are root first" "$s% match main;a;[bc];leaf_[bc], $r% have main after a leaf"
fi

stax top -i "$T/fp.data" >"$T/top.txt" 2>"$T/top.err"
first=$(col_values "$T/top.txt" FUNCTION | sed -n 1p)
second=$(col_values "$T/top.txt" FUNCTION | sed -n 2p)
if [ "$first" = leaf_b ] && [ "$second" = leaf_c ]; then
	ok "top lists leaf_b then leaf_c"
else
	fail "top lists leaf_b then leaf_c" "got '$first', '$second' ($(first_line "$T/top.err"))"
fi

# --sort total: main (or a frame above it) outranks the leaves
stax top --sort total -i "$T/fp.data" >"$T/topt.txt" 2>"$T/topt.err"
rank_main=$(col_values "$T/topt.txt" FUNCTION | grep -n '^main$' | cut -d: -f1)
rank_leaf=$(col_values "$T/topt.txt" FUNCTION | grep -n '^leaf_b$' | cut -d: -f1)
if [ -n "$rank_main" ] && [ -n "$rank_leaf" ] && [ "$rank_main" -lt "$rank_leaf" ]; then
	ok "top --sort total ranks main above leaf_b"
else
	fail "top --sort total ranks main above leaf_b" "main at '${rank_main:-none}', leaf_b at '${rank_leaf:-none}'"
fi

# -n limits the rows
rows=$(stax top -n 2 -i "$T/fp.data" 2>/dev/null | col_values /dev/stdin FUNCTION | wc -l)
if [ "$rows" -eq 2 ]; then
	ok "top -n 2 prints 2 functions"
else
	fail "top -n 2 prints 2 functions" "printed $rows"
fi

# The text tree: each of main, a, b, leaf_b indented deeper than the last.
stax flame -i "$T/fp.data" >"$T/flame.txt" 2>"$T/flame.err"
# indent NAME: the column where NAME starts on its first line in the tree
indent() {
	F=$1 awk '{ for (i = 1; i <= NF; i++) if ($i == ENVIRON["F"]) { if (match($0, "(^| )" ENVIRON["F"] "( |$)")) print RSTART; exit } }' "$T/flame.txt"
}
im=$(indent main) ia=$(indent a) ib=$(indent b) il=$(indent leaf_b)
if [ -n "$im" ] && [ -n "$ia" ] && [ -n "$ib" ] && [ -n "$il" ] &&
	[ "$im" -lt "$ia" ] && [ "$ia" -lt "$ib" ] && [ "$ib" -lt "$il" ]; then
	ok "flame tree nests main > a > b > leaf_b"
else
	fail "flame tree nests main > a > b > leaf_b" "indents main=$im a=$ia b=$ib leaf_b=$il ($(first_line "$T/flame.err"))"
fi

# -d limits the depth, in the tree (comm is level 1) and in folded output;
# D is main's level in the full folded stacks (it depends on libc's start)
D=$(stax flame --folded -i "$T/fp.data" 2>/dev/null | awk -F';' '/;a;/ { for (i = 1; i <= NF; i++) if ($i == "main") { print i; exit } }')
D=${D:-3}
stax flame -d "$D" -i "$T/fp.data" >"$T/d3.txt" 2>"$T/d3.err"
if grep -qw main "$T/d3.txt" && ! grep -qw a "$T/d3.txt" && ! grep -qw leaf_b "$T/d3.txt"; then
	ok "flame -d $D shows the tree down to main only"
else
	fail "flame -d $D shows the tree down to main only" "$(tr '\n' '|' <"$T/d3.txt" | cut -c1-300) $(first_line "$T/d3.err")"
fi
stax flame --folded -d 3 -i "$T/fp.data" >"$T/d3.folded" 2>"$T/d3f.err"
deep=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); if (split(s, f, ";") > 3) n++ } END { print n + 0 }' "$T/d3.folded")
if [ -s "$T/d3.folded" ] && [ "$deep" -eq 0 ]; then
	ok "flame --folded -d 3 cuts stacks after 3 levels"
else
	fail "flame --folded -d 3 cuts stacks after 3 levels" "$deep lines are deeper, e.g. $(first_line "$T/d3.folded") $(first_line "$T/d3f.err")"
fi

# info: what was recorded
stax info -i "$T/fp.data" >"$T/info.txt" 2>"$T/info.err"
n=$(samples "$T/fp.folded")
miss=""
grep -q 'callgraph-fp' "$T/info.txt" || miss="$miss command;"
grep -q 'cpu-clock' "$T/info.txt" || miss="$miss event cpu-clock;"
grep -qw '999' "$T/info.txt" || miss="$miss requested 999 Hz;"
grep -qw "$n" "$T/info.txt" || miss="$miss samples $n;"
grep -qi 'lost' "$T/info.txt" || miss="$miss lost;"
grep -qi 'throttl' "$T/info.txt" || miss="$miss throttled;"
if [ -z "$miss" ]; then
	ok "info shows command, event, rate, samples ($n), lost, throttled"
else
	fail "info shows command, event, rate, samples, lost, throttled" "missing:$miss $(first_line "$T/info.err")"
fi

# script: one block per sample, leaf first
stax script -i "$T/fp.data" >"$T/script.txt" 2>"$T/script.err"
blocks=$(awk 'NF && !/^[ \t]/ { n++ } END { print n + 0 }' "$T/script.txt")
order=$(awk '
	!NF { prev = ""; next }
	/^[ \t]/ { f = $2; if (prev == "leaf_b") { total++; if (f == "b") good++ } prev = f; next }
	{ prev = "" }
	END { printf "%d %d\n", good, total }' "$T/script.txt")
if [ "$blocks" -eq "$n" ] && [ "${order% *}" -gt 0 ] && [ "${order% *}" = "${order#* }" ]; then
	ok "script prints $blocks blocks, leaf_b then its caller b"
else
	fail "script prints one block per sample, leaf first" "$blocks blocks for $n samples; leaf_b followed by b in ${order% *} of ${order#* } $(first_line "$T/script.err")"
fi

# -e task-clock works too and is recorded as such
stax record -e task-clock -o "$T/tc.data" -- "$PROG/callgraph-fp" 0.3 >/dev/null 2>"$T/tc.err"
rc=$?
tcn=$(stax flame --folded -i "$T/tc.data" 2>/dev/null | samples /dev/stdin)
if [ "$rc" -eq 0 ] && [ "$tcn" -gt 100 ] && stax info -i "$T/tc.data" 2>/dev/null | grep -q task-clock; then
	ok "-e task-clock records $tcn samples, info says task-clock"
else
	fail "-e task-clock records, info says task-clock" "status $rc, $tcn samples: $(first_line "$T/tc.err")"
fi

# --- sampling rate ---------------------------------------------------------
stax record -F 199 -o "$T/f199.data" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/f199.err"
stax flame --folded -i "$T/f199.data" >"$T/f199.folded" 2>/dev/null
n199=$(samples "$T/f199.folded")
# 1.3 s at 199 Hz is ~265 samples
if between "$n199" 130 400; then
	ok "-F 199 gives ~265 samples ($n199)"
else
	fail "-F 199 gives ~265 samples" "$n199 ($(first_line "$T/f199.err"))"
fi

# --- process start-up: a zero return address ends the stack -----------------
# Samples in ld.so before main get kernel chains that end in a 0 return
# address; that is the end of the stack, not a frame at 0 - 1. A 10 ms run
# at 20 kHz puts ~10 samples there.
z=0
for i in 1 2 3; do
	stax record -F 20000 -o "$T/st.data" -- "$PROG/callgraph-fp" 0.01 >/dev/null 2>&1
	stax flame --folded --threshold 0 -i "$T/st.data" >"$T/st.folded" 2>/dev/null
	z=$((z + $(samples "$T/st.folded" '0xffffffffffffffff|(^|;)0x0+(;|$)')))
	[ "$z" -gt 0 ] && break
done
if [ "$z" -eq 0 ]; then
	ok "start-up samples have no frame at address 0 or -1"
else
	fail "start-up samples have no frame at address 0 or -1" "$z samples, e.g. $(grep -m1 -E '0xffffffffffffffff|;0x0+(;| )' "$T/st.folded" | cut -c1-160)"
fi

# --- no frame pointers: the leaf at least ----------------------------------
if record nofp 1; then
	ok "record callgraph-nofp exits 0"
else
	fail "record callgraph-nofp exits 0" "status $rc: $(first_line "$T/nofp.err")"
fi
if ! shares_ok nofp ";leaf_b$K" ";leaf_c$K"; then
	echo "# shares off (leaf_b $sb%, leaf_c $sc%): retrying 2x longer"
	record nofp 2
fi
if shares_ok nofp ";leaf_b$K" ";leaf_c$K"; then
	ok "nofp leaves leaf_b $sb% (75 +-10) and leaf_c $sc% (25 +-10)"
else
	fail "nofp leaves leaf_b ~75% and leaf_c ~25%" "got $sb% and $sc%; first: $(first_line "$T/nofp.folded")"
fi

# --- the effective rate: samples per second of the CPU time the target
# used (measured apart from the samples), so losses show ----------------
# json_num KEY FILE: the first number after "KEY": in FILE
json_num() { grep -o "\"$1\":[0-9.]*" "$2" | head -n 1 | cut -d: -f2; }
# kept_hz KEPT LOST: what the rate can be when LOST of KEPT+LOST samples
# were lost (each lost record is at least one lost sample): 999 Hz times
# the kept share. With nothing lost, 999.
kept_hz() { awk -v k="${1:-0}" -v l="${2:-0}" 'BEGIN { if (k + l) printf "%.1f", 999 * k / (k + l); else print 0 }'; }
stax record -q -o "$T/eff.data" -- "$PROG/threads-fp" 1 >/dev/null 2>"$T/eff.err"
stax info --json -i "$T/eff.data" >"$T/eff.json" 2>>"$T/eff.err"
eff=$(json_num effective_hz "$T/eff.json")
lost=$(json_num lost "$T/eff.json")
kept=$(json_num samples "$T/eff.json")
want=$(kept_hz "$kept" "$lost")
# 999 Hz of the targets' CPU time (three threads on two cpus: wall time
# would give more, one thread's CPU time less), less what was lost if the
# recorder fell behind on a busy machine
if [ -n "$eff" ] && [ "${kept:-0}" -gt 0 ] && between "$eff" "$(awk -v w="$want" 'BEGIN { print 0.9 * w }')" "$(awk -v w="$want" 'BEGIN { print 1.01 * w + 1 }')"; then
	ok "effective rate at -F 999: $eff Hz (999 x kept/(kept+lost) = $want; $lost lost)"
else
	fail "effective rate at -F 999 is ~999 Hz x kept/(kept+lost)" "'$eff' Hz, kept '$kept', lost '$lost' (want ~$want): $(first_line "$T/eff.err")"
fi
# the recorder stopped while the program burns 1.2 s of CPU time: its
# rings (-m 4M: 4 MiB per cpu; a sample with a 32 KiB stack copy) overflow,
# samples are lost and the rate says so. Stopped and resumed by the
# program's own CPU time (/proc/PID/stat), not by the clock.
# cpu_ms PID: user+system CPU time of PID (all its threads) in ms
cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "/proc/$1/stat" 2>/dev/null; }
"$STAX" record -q -m 4M -o "$T/stop.data" -- "$PROG/threads-fp" 2 >/dev/null 2>"$T/stop.err" &
SP=$!
bg_add "$SP"
TP=""
wait_for 'TP=$(ps -o pid= --ppid "$SP" | tr -d " "); [ -n "$TP" ] && [ "$(cpu_ms "$TP")" -ge 300 ]' 120
c0=$(cpu_ms "$TP")
kill -STOP "$SP"
wait_for 'c=$(cpu_ms "$TP"); [ -z "$c" ] || [ "$c" -ge $((${c0:-0} + 1200)) ]' 120
c1=$(cpu_ms "$TP")
kill -CONT "$SP"
wait "$SP"
stax info --json -i "$T/stop.data" >"$T/stop.json" 2>>"$T/stop.err"
eff=$(json_num effective_hz "$T/stop.json")
lost=$(json_num lost "$T/stop.json")
kept=$(json_num samples "$T/stop.json")
# at most what the kept share of 999 Hz would be (the old rate, from the
# samples' own periods, stayed at 999 whatever was lost)
want=$(kept_hz "$kept" "$lost")
if [ -n "$eff" ] && [ "${lost:-0}" -gt 20 ] && [ $((lost * 5)) -ge $((kept + lost)) ] &&
	between "$eff" 1 "$(awk -v w="$want" 'BEGIN { print w * 1.1 }')"; then
	ok "a recorder stopped while the program used $((${c1:-0} - ${c0:-0})) ms of CPU: $lost lost, effective rate $eff Hz (<= 999 x kept/(kept+lost) = $want)"
else
	fail "a recorder stopped for 1.2 s of the program's CPU: losses counted and the effective rate lower by as much" "CPU while stopped '${c0:-}'..'${c1:-}' ms, kept '$kept', lost '$lost', effective '$eff', want <= ~$want: $(first_line "$T/stop.err")"
fi

done_testing
