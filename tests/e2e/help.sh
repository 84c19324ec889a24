#!/bin/sh
# help.sh - help text, README.md and the man page agree on the commands.
#
# Every subcommand that "stax help" lists must have "stax help CMD" text
# (the same as "stax CMD --help"), a section in README.md (a heading or a
# code line with "stax CMD"), and an entry in docs/stax.1 (a .B/.SS/.TP
# line or \fBstax CMD\fR).
. "$(dirname "$0")/lib.sh"
require_stax

stax help >"$T/help.txt" 2>"$T/help.err"
rc=$?
# the command list: "  NAME  summary" lines after "commands:"
cmds=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$T/help.txt")
if [ "$rc" -eq 0 ] && [ -n "$cmds" ]; then
	ok "stax help lists $(echo $cmds | wc -w) commands"
else
	fail "stax help lists the commands" "status $rc: $(first_line "$T/help.txt") $(first_line "$T/help.err")"
fi
for must in record top flame threads info script help; do
	echo "$cmds" | grep -qx "$must" || fail "stax help lists $must" "missing from: $(echo $cmds)"
done

# md_has FILE CMD: a Markdown heading or code line (fenced, indented or in
# backticks) mentions "stax CMD"
md_has() {
	C=$2 awk '
	/^[ \t]*(```|~~~)/ { code = !code; next }
	{ hit = ($0 ~ ("stax " ENVIRON["C"] "([^a-z-]|$)")) }
	hit && (code || /^#/ || /^    / || /`[^`]*stax /) { found = 1 }
	END { exit !found }' "$1"
}

for c in $cmds; do
	stax help "$c" >"$T/h1" 2>"$T/h1.err"
	r1=$?
	stax "$c" --help >"$T/h2" 2>/dev/null
	r2=$?
	if [ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && [ -s "$T/h1" ] && grep -q "stax $c" "$T/h1" && cmp -s "$T/h1" "$T/h2"; then
		ok "stax help $c (= stax $c --help)"
	else
		fail "stax help $c (= stax $c --help)" \
			"status $r1/$r2, $(wc -l <"$T/h1") lines, mentions 'stax $c': $(grep -c "stax $c" "$T/h1"), same: $(cmp -s "$T/h1" "$T/h2" && echo yes || echo no) $(first_line "$T/h1.err")"
	fi
	if [ ! -f "$ROOT/README.md" ]; then
		fail "README.md documents stax $c" "README.md does not exist"
	elif md_has "$ROOT/README.md" "$c"; then
		ok "README.md documents stax $c"
	else
		fail "README.md documents stax $c" "no heading or code line with 'stax $c'"
	fi
	if [ -f "$ROOT/docs/stax.1" ]; then
		if grep -Eq "^\.(B|SS|SH|TP|IP|BR) .*stax $c([^a-z-]|\$)|\\\\fBstax $c([^a-z-]|\$)" "$ROOT/docs/stax.1"; then
			ok "docs/stax.1 documents stax $c"
		else
			fail "docs/stax.1 documents stax $c" "no .B/.SS/.TP line or bold stax $c"
		fi
	fi
done

# Every option in every command's table (the entries "stax help CMD"
# prints, from the same table getopt_long parses) is named in the man
# page: "-F" or "--freq", hyphens written \- there.
if [ -f "$ROOT/docs/stax.1" ]; then
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' "$ROOT/docs/stax.1" >"$T/man.txt"
	for c in $cmds; do
		stax help "$c" 2>/dev/null |
			awk '/^  -/ { s = substr($0, 3); sub(/  .*/, "", s); n = split(s, w, /[ ,]+/)
			      for (i = 1; i <= n; i++) if (w[i] ~ /^-/) print w[i] }' >"$T/opts.$c"
		missing=""
		while read -r o; do
			grep -Eq -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|\$)" "$T/man.txt" || missing="$missing $o"
		done <"$T/opts.$c"
		if [ ! -s "$T/opts.$c" ] && [ "$c" != help ]; then
			fail "docs/stax.1 names every option of stax $c" "stax help $c lists no options"
		elif [ -z "$missing" ]; then
			ok "docs/stax.1 names every option of stax $c ($(wc -l <"$T/opts.$c"))"
		else
			fail "docs/stax.1 names every option of stax $c" "missing:$missing"
		fi
	done
fi

# The man page renders without warnings, when man is here.
if [ -f "$ROOT/docs/stax.1" ]; then
	if command -v groff >/dev/null 2>&1; then
		w=$(groff -man -Tutf8 -ww -z "$ROOT/docs/stax.1" 2>&1 | head -n 3)
		if [ -z "$w" ]; then
			ok "docs/stax.1 renders without warnings"
		else
			fail "docs/stax.1 renders without warnings" "$(echo "$w" | tr '\n' '|')"
		fi
	else
		skip "docs/stax.1 renders without warnings" "groff is not installed"
	fi
fi

done_testing
