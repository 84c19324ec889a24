#!/bin/sh
# includes.sh - hold src/ to the include rules that src/README.md states.
#
# usage: sh scripts/includes.sh [ROOT]     (ROOT: the tree, default .)
#
# src/README.md has one line per directory (and main.c):
#     - `DIR/`: what it is for. Includes A/, B/b.h, lib/.
#     - `lib/`: ... Includes nothing of stax.
#     - `cmd/`: ... May include anything.
# A file of DIR may include its own directory's headers and what that
# line lists: a whole directory (A/) or one header (B/b.h). Prints one
# line per breach ("src/DIR/FILE:LINE includes X: DIR/ may include ...")
# and per directory of src/ that has no line, and exits 1 when there is
# any; prints nothing and exits 0 when every include keeps the rules.
set -u
root=${1:-.}
readme=$root/src/README.md
if [ ! -f "$readme" ]; then
	echo "includes.sh: $readme is missing" >&2
	exit 2
fi
# DIR<TAB>ALLOWED (space-separated; "*" for anything, "" for nothing)
rules=$(awk '
/^- `[^`]+`:/ {
	name = $0
	sub(/^- `/, "", name)
	sub(/`.*/, "", name)
	line = $0
	if (line ~ /May include anything/) { print name "\t*"; next }
	if (line ~ /Includes nothing of stax/) { print name "\t"; next }
	i = index(line, "Includes ")
	if (!i) { print name "\t?"; next }
	list = substr(line, i + 9)
	sub(/\.[ \t]*$/, "", list)
	gsub(/\([^)]*\)/, "", list)
	n = split(list, a, /,[ \t]*/)
	out = ""
	for (k = 1; k <= n; k++) {
		t = a[k]
		gsub(/[ \t`]/, "", t)
		if (t != "")
			out = out (out == "" ? "" : " ") t
	}
	print name "\t" out
}' "$readme")

status=0
# breaches are found in subshells (pipelines): they leave a mark here
marks=$(mktemp "${TMPDIR:-/tmp}/stax-includes.XXXXXX") || exit 2
trap 'rm -f "$marks"' EXIT
# every directory of src/ must have its line
for d in "$root"/src/*/; do
	name=$(basename "$d")/
	if ! printf '%s\n' "$rules" | cut -f1 | grep -qx "$name"; then
		echo "src/$name has no line in src/README.md (say what it may include)"
		status=1
	fi
done

# every include of src/ as "FILE:LINE:TEXT", checked in one awk against
# the rules (its first input: "DIR<TAB>ALLOWED" lines)
(cd "$root" && grep -n '^[ \t]*#[ \t]*include[ \t]*"' src/*.c src/*/*.[ch] 2>/dev/null) |
	awk -F '\t' -v rules="$(printf '%s\n' "$rules")" '
	BEGIN {
		n = split(rules, r, "\n")
		for (i = 1; i <= n; i++) {
			if (split(r[i], kv, "\t") < 1 || kv[1] == "")
				continue
			allowed[kv[1]] = kv[2]
			if (kv[2] == "?")
				printf "src/README.md: the line of %s says neither '\''Includes ...'\'' nor '\''May include anything'\''\n", kv[1]
		}
	}
	{
		# src/DIR/FILE:LINE:#include "X"  (or src/main.c:...)
		split($0, c, ":")
		file = c[1]; lineno = c[2]
		inc = $0
		sub(/^[^"]*"/, "", inc)
		sub(/".*/, "", inc)
		if (inc !~ /\//)
			next # a generated header beside the file (the BPF skeleton)
		name = file
		sub(/^src\//, "", name)
		own = ""
		if (name ~ /\//) {
			sub(/\/.*/, "/", name)
			own = name
		}
		if (!(name in allowed) || allowed[name] == "*" || allowed[name] == "?")
			next
		if (own != "" && substr(inc, 1, length(own)) == own)
			next
		m = split(allowed[name], a, " ")
		ok = 0
		for (i = 1; i <= m; i++)
			if ((a[i] ~ /\/$/ && substr(inc, 1, length(a[i])) == a[i]) || inc == a[i])
				ok = 1
		if (!ok)
			printf "%s:%s includes %s: %s may include %s (src/README.md)\n", file, lineno, inc, name,
				allowed[name] == "" ? "nothing of stax" : allowed[name]
	}' >"$marks.out"
cat "$marks.out"
[ -s "$marks.out" ] && echo x >>"$marks"
rm -f "$marks.out"
[ -s "$marks" ] && status=1
exit $status
