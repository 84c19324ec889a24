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

printf '%s\n' "$rules" | while IFS="$(printf '\t')" read -r name allowed; do
	if [ "$allowed" = "?" ]; then
		echo "src/README.md: the line of $name says neither 'Includes ...' nor 'May include anything'"
		echo x >>"$marks"
		continue
	fi
	[ "$allowed" = "*" ] && continue
	case $name in
	*/) files=$(find "$root/src/$name" -maxdepth 1 -name '*.[ch]' | sort); own=$name ;;
	*) files=$root/src/$name; own="" ;;
	esac
	for f in $files; do
		[ -f "$f" ] || continue
		grep -n '^[ \t]*#[ \t]*include[ \t]*"' "$f" | while IFS= read -r hit; do
			lineno=${hit%%:*}
			inc=$(printf '%s\n' "$hit" | sed 's/^[^"]*"\([^"]*\)".*/\1/')
			case $inc in
			*/*) ;;
			*) continue ;; # a header beside the file (page.c's, generated)
			esac
			[ -n "$own" ] && case $inc in "$own"*) continue ;; esac
			ok=""
			for a in $allowed; do
				case $a in
				*/) case $inc in "$a"*) ok=1 ;; esac ;;
				*) [ "$inc" = "$a" ] && ok=1 ;;
				esac
			done
			if [ -z "$ok" ]; then
				echo "${f#"$root"/}:$lineno includes $inc: $name may include ${allowed:-nothing of stax} (src/README.md)"
				echo x >>"$marks"
			fi
		done
	done
done
[ -s "$marks" ] && status=1
exit $status
