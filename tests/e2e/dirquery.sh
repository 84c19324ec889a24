#!/bin/sh
# dirquery.sh - a directory of recordings read as one profile, and the
# wall-clock window --since/--until across its files (profile/merge.c).
# shift (tests/programs/shift.c) run as version 1 (parse_input and
# emit_output 40% each, hash_update 20%) into a.data, then a second
# later as version 2 (hash_update 60%) into b.data; spin (spin.c: main;
# spin_loop) recorded into the directory while it is queried.
# stax-test: seconds=10
. "$(dirname "$0")/lib.sh"
require_stax

D=$T/recs
mkdir -p "$D"
if ! stax record -o "$D/a.data" -- "$PROG/shift-fp" 1 >/dev/null 2>"$T/a.err"; then
	fail "record shift-fp 1" "$(first_line "$T/a.err")"
	done_testing
fi
sleep 1.2
if ! stax record -o "$D/b.data" -- "$PROG/shift-fp" 2 >/dev/null 2>"$T/b.err"; then
	fail "record shift-fp 2" "$(first_line "$T/b.err")"
	done_testing
fi

# samples per folded stack of the files read alone, added up, against
# those of the directory: the merge re-interns every stack, so the sums
# are exactly equal (the same samples, not a new sampling)
stax flame --folded -i "$D/a.data" >"$T/a.folded" 2>/dev/null
stax flame --folded -i "$D/b.data" >"$T/b.folded" 2>/dev/null
stax flame --folded -i "$D" >"$T/d.folded" 2>"$T/d.err"
sumup() { awk '{ n = $NF; sub(/[ \t]+[0-9]+$/, ""); c[$0] += n } END { for (k in c) print k " " c[k] }' "$@" | sort; }
sumup "$T/a.folded" "$T/b.folded" >"$T/ab.sum"
sumup "$T/d.folded" >"$T/d.sum"
na=$(samples "$T/a.folded")
nb=$(samples "$T/b.folded")
if [ "$na" -gt 100 ] && [ "$nb" -gt 100 ] && cmp -s "$T/ab.sum" "$T/d.sum" && [ ! -s "$T/d.err" ]; then
	ok "flame -i DIR: every stack of a.data and b.data, samples added up ($na + $nb, $(wc -l <"$T/d.sum") stacks)"
else
	fail "flame -i DIR is the sum of its files" "$na + $nb; $(diff "$T/ab.sum" "$T/d.sum" | head -3 | tr '\n' '|') $(first_line "$T/d.err")"
fi

# the files' wall-clock spans, from info --json's "files"
stax info -i "$D" --json >"$T/info.json" 2>"$T/info.err"
spans=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["path"].split("/")[-1]: x for x in d["files"]}
print(f["a.data"]["start"], f["a.data"]["end"], f["b.data"]["start"], f["b.data"]["end"], len(d["files"]))
' "$T/info.json" 2>&1)
set -- $spans
if [ $# -ne 5 ] || ! awk -v ae="$2" -v bs="$3" 'BEGIN { exit !(bs > ae + 0.5) }'; then
	fail "info -i DIR --json lists the files with their times" "$spans $(first_line "$T/info.err")"
	done_testing
fi
a_start=$1 a_end=$2 b_start=$3 b_end=$4
ok "info -i DIR --json: 2 files, a.data $a_start to $a_end, b.data $b_start to $b_end"
gap=$(awk -v a="$a_end" -v b="$b_start" 'BEGIN { printf "%.3f", (a + b) / 2 }')

# a window between the files: each side is exactly one file
top_samples() { stax top --json "$@" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])' 2>/dev/null; }
ta=$(top_samples -i "$D/a.data")
tb=$(top_samples -i "$D/b.data")
ts=$(top_samples -i "$D" --since "@$gap")
tu=$(top_samples -i "$D" --until "@$gap")
if [ -n "$ta" ] && [ "$ts" = "$tb" ] && [ "$tu" = "$ta" ]; then
	ok "--since @GAP keeps b.data's $tb samples, --until @GAP a.data's $ta"
else
	fail "--since/--until between the files" "since: '$ts' (b: $tb), until: '$tu' (a: $ta)"
fi
stax top -i "$D" --since "@$gap" >"$T/since.txt" 2>"$T/since.err"
h=$(row_where "$T/since.txt" FUNCTION hash_update SELF% | tr -d '%')
if between "$h" 45 75; then
	ok "top -i DIR --since @GAP: hash_update ${h}% (version 2's share, 60%)"
else
	fail "top -i DIR --since @GAP" "hash_update '$h'% $(first_line "$T/since.err")"
fi
stax info -i "$D" --since "@$gap" >"$T/wi.txt" 2>&1
if grep -q '^window: ' "$T/wi.txt" && grep -q '^files: *1 of 2 recordings read' "$T/wi.txt" &&
   grep -q 'a.data .*not read: outside the window' "$T/wi.txt"; then
	ok "info --since: the window, 1 of 2 files read, a.data outside it"
else
	fail "info --since names the window and the files" "$(grep -E '^(window|files)|a.data' "$T/wi.txt" | tr '\n' '|')"
fi

# a window across the files reads both, cut; --time counts from --since
mid_a=$(awk -v s="$a_start" -v e="$a_end" 'BEGIN { printf "%.3f", (s + e) / 2 }')
mid_b=$(awk -v s="$b_start" -v e="$b_end" 'BEGIN { printf "%.3f", (s + e) / 2 }')
tw=$(top_samples -i "$D" --since "@$mid_a" --until "@$mid_b")
if [ -n "$tw" ] && [ "$tw" -gt 0 ] && [ "$tw" -lt $((ta + tb)) ] && [ "$tw" -gt $(((ta + tb) / 5)) ]; then
	ok "--since/--until across both files: $tw of $((ta + tb)) samples"
else
	fail "a window across both files" "'$tw' of $((ta + tb))"
fi
t1=$(top_samples -i "$D" --since "@$mid_a" --time 0,0.5)
end_half=$(awk -v s="$mid_a" 'BEGIN { printf "%.3f", s + 0.5 }')
t2=$(top_samples -i "$D" --since "@$mid_a" --until "@$end_half")
if [ -n "$t1" ] && [ "$t1" -gt 0 ] && [ "$t1" -ge $((t2 - 1)) ] && [ "$t1" -le $((t2 + 1)) ]; then
	ok "--since T --time 0,0.5 is --since T --until T+0.5 ($t1 and $t2 samples)"
else
	fail "--time counts from --since" "--time 0,0.5: '$t1', --until T+0.5: '$t2'"
fi

# bad input: one error line each
stax top -i "$D" --since "$(date +%H:%M)" --until 00:00 >/dev/null 2>"$T/e1.err"
rc1=$?
stax top -i "$D" --since 25:99 >/dev/null 2>"$T/e2.err"
rc2=$?
mkdir "$T/empty"
stax top -i "$T/empty" >/dev/null 2>"$T/e3.err"
rc3=$?
stax top -i "$D" --since "@$(awk -v e="$b_end" 'BEGIN { printf "%.0f", e + 100 }')" >/dev/null 2>"$T/e4.err"
rc4=$?
if [ $rc1 -eq 1 ] && one_line_error "$T/e1.err" && grep -q 'is not before --until' "$T/e1.err" &&
   [ $rc2 -eq 1 ] && one_line_error "$T/e2.err" && grep -q "cannot read '25:99' as a time (use HH:MM" "$T/e2.err" &&
   [ $rc3 -eq 1 ] && one_line_error "$T/e3.err" && grep -q 'has no recordings' "$T/e3.err" &&
   [ $rc4 -eq 1 ] && one_line_error "$T/e4.err" && grep -q 'no samples in .* since .*last written at' "$T/e4.err"; then
	ok "errors: --since after --until, a time that is none, a directory without recordings, a window with no samples"
else
	fail "bad input: one error line" "$rc1 $(first_line "$T/e1.err") / $rc2 $(first_line "$T/e2.err") / $rc3 $(first_line "$T/e3.err") / $rc4 $(first_line "$T/e4.err")"
fi

# a file that is not a recording, and one cut short: warnings naming
# them, the others read
D2=$T/mixed
mkdir "$D2"
cp "$D/a.data" "$D2/a.data"
echo "not a recording" >"$D2/junk.data"
size=$(wc -c <"$D/b.data")
head -c $((size / 2)) "$D/b.data" >"$D2/b-cut.data"
touch "$D2/notes.txt"
stax top -i "$D2" -n 3 >"$T/m.txt" 2>"$T/m.err"
rc=$?
if [ $rc -eq 0 ] && grep -q 'junk.data.*skipped' "$T/m.err" && grep -q 'b-cut.data' "$T/m.err" &&
   ! grep -q 'notes.txt' "$T/m.err" && grep -q parse_input "$T/m.txt"; then
	ok "a *.data that is not a recording and a cut one: warned by name ($(grep -c . "$T/m.err") lines), the rest read"
else
	fail "damaged files in a directory" "status $rc: $(tr '\n' '|' <"$T/m.err" | cut -c1-400)"
fi

# the newest file still being written: read up to its last chunk
"$PROG/spin-fp" 5 >/dev/null &
sp=$!
bg_add "$sp"
stax record -o "$D/c.data" -p "$sp" >/dev/null 2>"$T/c.err" &
rp=$!
bg_add "$rp"
wait_for "[ -s '$D/c.data' ] && stax top -i '$D/c.data' 2>/dev/null | grep -q spin_loop" 20
stax top -i "$D" --since -3s >"$T/live.txt" 2>"$T/live.err"
rc=$?
if [ $rc -eq 0 ] && grep -q spin_loop "$T/live.txt" && grep -q 'c.data is still being recorded' "$T/live.err"; then
	ok "top -i DIR --since -3s while c.data is recorded: spin_loop, and says c.data is still being recorded"
else
	fail "a directory whose newest file grows" "status $rc: $(first_line "$T/live.err") $(head -3 "$T/live.txt" | tr '\n' '|')"
fi
kill "$sp" 2>/dev/null
wait "$rp" 2>/dev/null
done_testing
