#!/bin/sh
# symbolize.sh - stax symbolize resolves a finished recording again with
# what is there now. The program is peek-nofp (tests/programs/peek.c)
# stripped, with a .gnu_debuglink to a debug file that is elsewhere while
# it is recorded and next to it afterwards: before, its functions are
# app+0xSTART; after, leaf_p (~66.7% self), leaf_q, and hub's callers.
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v objcopy >/dev/null 2>&1 || ! command -v strip >/dev/null 2>&1; then
	skip "symbolize" "objcopy and strip are not installed (apt-get install binutils)"
	done_testing
fi
mkdir -p "$T/bin" "$T/later"
objcopy --only-keep-debug "$PROG/peek-nofp" "$T/later/app.debug" &&
	strip --strip-all -o "$T/app.s" "$PROG/peek-nofp" &&
	objcopy --add-gnu-debuglink="$T/later/app.debug" "$T/app.s" "$T/bin/app" ||
	{ fail "setup" "cannot make the stripped program"; done_testing; }

if ! stax record -o "$T/r.data" -- "$T/bin/app" 0.5 >/dev/null 2>"$T/rec.err"; then
	fail "record the stripped program" "$(first_line "$T/rec.err")"
	done_testing
fi
stax top "$T/r.data" -n 0 >"$T/before.txt" 2>/dev/null
stax doctor "$T/r.data" >"$T/doc0.txt" 2>/dev/null
mv "$T/later/app.debug" "$T/bin/app.debug"
stax doctor "$T/r.data" >"$T/doc1.txt" 2>/dev/null
if ! grep -q 'stax symbolize' "$T/doc0.txt" && grep -q "app have no symbol, but .*run stax symbolize" "$T/doc1.txt"; then
	ok "doctor points to stax symbolize once the debug file is there, not before"
else
	fail "doctor points to stax symbolize" "before: $(grep -c 'stax symbolize' "$T/doc0.txt"), after: $(grep 'app have' "$T/doc1.txt" | cut -c1-150)"
fi
cp "$T/r.data" "$T/orig.data"

# -o: a new file, the input untouched
stax symbolize "$T/r.data" -o "$T/new.data" >"$T/s.out" 2>"$T/s.err"
rc=$?
stax top "$T/new.data" -n 0 >"$T/after.txt" 2>/dev/null
lp=$(row_where "$T/after.txt" FUNCTION leaf_p SELF% | tr -d %)
if [ "$rc" -eq 0 ] && ! grep -q ' leaf_p ' "$T/before.txt" && grep -q ' app+0x' "$T/before.txt" &&
   between "$lp" 55 78 && cmp -s "$T/r.data" "$T/orig.data"; then
	ok "symbolize -o: leaf_p named now ($lp% self), app+0x... before; input unchanged ($(first_line "$T/s.err"))"
else
	fail "symbolize -o" "status $rc, leaf_p '$lp': $(first_line "$T/s.err") $(grep -c 'app+0x' "$T/after.txt") unnamed rows after"
fi
stax callers hub "$T/new.data" >"$T/c.txt" 2>&1
if between "$(row_where "$T/c.txt" CALLER x SHARE | tr -d %)" 40 60; then
	ok "symbolized recording: callers hub gives x $(row_where "$T/c.txt" CALLER x SHARE)"
else
	fail "symbolized recording: callers hub" "$(tr '\n' '|' <"$T/c.txt")"
fi
# the samples are the same
n0=$(stax flame --folded "$T/r.data" 2>/dev/null | samples /dev/stdin)
n1=$(stax flame --folded "$T/new.data" 2>/dev/null | samples /dev/stdin)
if [ "$n0" -gt 0 ] && [ "$n0" = "$n1" ]; then
	ok "symbolize keeps every sample ($n1)"
else
	fail "symbolize keeps every sample" "$n0 before, $n1 after"
fi

# in place: FILE replaced
stax symbolize "$T/r.data" >/dev/null 2>"$T/s2.err"
rc=$?
if [ "$rc" -eq 0 ] && stax top "$T/r.data" -n 3 2>/dev/null | grep -q ' leaf_p '; then
	ok "symbolize FILE replaces FILE"
else
	fail "symbolize FILE replaces FILE" "status $rc: $(first_line "$T/s2.err")"
fi

# a recording still being written is refused, and left alone
"$STAX" record -o "$T/live.data" -- "$PROG/peek-nofp" 20 >/dev/null 2>&1 &
rpid=$!
bg_add "$rpid"
wait_for '[ -s "$T/live.data" ]' 30
sleep 0.5
size0=$(wc -c <"$T/live.data")
stax symbolize "$T/live.data" >/dev/null 2>"$T/live.err"
rc=$?
kill -INT "$rpid" 2>/dev/null
wait "$rpid" 2>/dev/null
if [ "$rc" -eq 1 ] && one_line_error "$T/live.err" && grep -q 'still being recorded' "$T/live.err" &&
   [ -z "$(ls "$T" | grep -v -e '^live.data$' -e '^live.err$' -e '\.data$' -e '\.txt$' -e '\.err$' -e '\.out$' -e '^bin$' -e '^later$' -e '^app.s$')" ]; then
	ok "symbolize refuses a recording still being written ($(cut -c1-80 "$T/live.err"))"
else
	fail "symbolize refuses a recording still being written" "status $rc (size was $size0): $(first_line "$T/live.err"); left: $(ls "$T" | tr '\n' ' ')"
fi

# a perf.data: symbolize says what can be done with it, and touches nothing
if command -v perf >/dev/null 2>&1 &&
   perf record -q -g -o "$T/perf-g.data" -- "$PROG/callgraph-fp" 0.1 >/dev/null 2>&1; then
	sum0=$(md5sum <"$T/perf-g.data")
	stax symbolize "$T/perf-g.data" >/dev/null 2>"$T/pd.err"
	rc=$?
	if [ "$rc" -eq 1 ] && one_line_error "$T/pd.err" && grep -q 'is a perf.data file' "$T/pd.err" &&
	   grep -q 'stax import' "$T/pd.err" && ! grep -q 'neither STAXREC nor PERFILE2' "$T/pd.err" &&
	   [ "$(md5sum <"$T/perf-g.data")" = "$sum0" ]; then
		ok "symbolize of a perf.data says what to do with it (stax top reads it, stax import keeps the names)"
	else
		fail "symbolize of a perf.data" "status $rc: $(first_line "$T/pd.err")"
	fi
else
	skip "symbolize of a perf.data" "perf could not record here"
fi

done_testing
