#!/bin/sh
# manpage.sh - docs/stax.1 renders clean in man(1): no form feed or other
# control bytes where an escape was meant (a "\f" written through printf
# once became a form feed, and man showed "B-oR IFILER"), no backslash
# left in the rendered text (an escape groff did not take), and no
# warning from groff.
. "$(dirname "$0")/lib.sh"

MAN=$ROOT/docs/stax.1
bad=$(LC_ALL=C tr -d '\n\t\040-\176' <"$MAN" | wc -c)
if [ "$bad" -eq 0 ]; then
	ok "docs/stax.1 holds no control bytes (form feeds) and no bytes outside ASCII"
else
	fail "docs/stax.1 holds no control bytes" "$bad such bytes, first at line $(LC_ALL=C grep -n "$(printf '[\001-\010\013-\037\177]')" "$MAN" | head -n 1 | cut -d: -f1)"
fi
if ! command -v groff >/dev/null 2>&1; then
	skip "docs/stax.1 rendered" "groff is not installed (apt-get install groff-base)"
	done_testing
fi
LC_ALL=C.UTF-8 groff -man -ww -Tutf8 "$MAN" >"$T/man.txt" 2>"$T/man.err"
if [ -s "$T/man.err" ]; then
	fail "groff renders docs/stax.1 without a warning" "$(head -n 3 "$T/man.err" | tr '\n' '|')"
else
	ok "groff renders docs/stax.1 without a warning"
fi
# the text as man shows it: overstrike bold and underline removed
sed 's/.\x08//g' "$T/man.txt" >"$T/plain.txt"
if grep -n '\\' "$T/plain.txt" >"$T/bs.txt"; then
	fail "no raw escapes in the rendered page" "$(head -n 3 "$T/bs.txt" | tr '\n' '|')"
else
	ok "no raw escapes (backslashes) in the rendered page"
fi
# the option list of record renders as options, not as font letters
if grep -Eq '^ +-o +FILE +\(default +stax\.data\)' "$T/plain.txt"; then
	ok "record's -o FILE renders as '-o FILE (default stax.data)'"
else
	fail "record's -o FILE renders" "$(grep -n 'default stax.data' "$T/plain.txt" | head -n 1)"
fi
done_testing
