#!/bin/sh
# sizes.sh - the rooms of src/ stay small: no source file over 1200
# lines, no C function over 200 but the CFI opcode interpreter
# (scripts/sizes.sh checks). The checker is also shown a copy of src/
# with a file too long and a function too long, and must name each.
# stax-test: seconds=5
. "$(dirname "$0")/lib.sh"

if out=$(sh "$ROOT/scripts/sizes.sh" "$ROOT" 2>&1); then
	ok "no source file of src/ over 1200 lines, no function over 200 (cfi.c's exec aside)"
else
	fail "no source file of src/ over 1200 lines, no function over 200 (cfi.c's exec aside)" "$(printf '%s' "$out" | head -n 5 | tr '\n' '|')"
fi

mkdir -p "$T/tree"
cp -R "$ROOT/src" "$T/tree/src"
{
	printf 'static int too_long(int x)\n{\n'
	i=0
	while [ $i -lt 201 ]; do printf '\tx++;\n'; i=$((i + 1)); done
	printf '\treturn x;\n}\n'
} >"$T/tree/src/lib/too_long.c"
awk 'BEGIN { for (i = 0; i < 1201; i++) print "/* line */" }' >"$T/tree/src/lib/too_big.h"
out=$(sh "$ROOT/scripts/sizes.sh" "$T/tree" 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -q '^src/lib/too_long.c:2: too_long: 202 lines' &&
	printf '%s\n' "$out" | grep -q '^src/lib/too_big.h: 1201 lines'; then
	ok "a function of 202 lines and a file of 1201 fail the check, each named"
else
	fail "a function of 202 lines and a file of 1201 fail the check" "status $rc: $(printf '%s' "$out" | head -n 4 | tr '\n' '|')"
fi
done_testing
