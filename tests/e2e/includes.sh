#!/bin/sh
# includes.sh - the include rules of src/README.md hold: every #include
# of src/ goes to its own directory or to one src/README.md lists for it
# (scripts/includes.sh checks; arrows run downward only). The checker is
# also shown a copy of src/ with a breach and a new directory without a
# line, and must fail on each: a checker that passes everything would
# hold nothing.
# stax-test: seconds=15
. "$(dirname "$0")/lib.sh"

if out=$(sh "$ROOT/scripts/includes.sh" "$ROOT" 2>&1); then
	ok "every include of src/ keeps src/README.md's rules"
else
	fail "every include of src/ keeps src/README.md's rules" "$(printf '%s' "$out" | head -n 5 | tr '\n' '|')"
fi

# a copy of src/ (and its README) to break
mkdir -p "$T/tree"
cp -R "$ROOT/src" "$T/tree/src"
printf '#include "view/view.h"\n' >>"$T/tree/src/store/stacks.c"
out=$(sh "$ROOT/scripts/includes.sh" "$T/tree" 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -q '^src/store/stacks.c:[0-9]* includes view/view.h: store/'; then
	ok "a breach (store/ including view/) fails the check, named with its file and line"
else
	fail "a breach (store/ including view/) fails the check" "status $rc: $(printf '%s' "$out" | head -n 3 | tr '\n' '|')"
fi

cp "$ROOT/src/store/stacks.c" "$T/tree/src/store/stacks.c"
mkdir "$T/tree/src/newstage"
printf '#include "lib/util.h"\n' >"$T/tree/src/newstage/x.c"
out=$(sh "$ROOT/scripts/includes.sh" "$T/tree" 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -q 'src/newstage/ has no line in src/README.md'; then
	ok "a directory without a line in src/README.md fails the check"
else
	fail "a directory without a line in src/README.md fails the check" "status $rc: $(printf '%s' "$out" | head -n 3 | tr '\n' '|')"
fi

done_testing
