#!/bin/sh
# version.sh - print stax's version, the one string that stax --version,
# the recordings (META stax_version) and make deb use.
# The VERSION file is its source. Built from a git checkout, what git
# knows is added: "0.1+git12.gabc1234", 12 commits after the tag v0.1
# (git describe), or after the commit that last changed VERSION when
# there is no such tag, at commit abc1234; ".dirty" follows when tracked
# files differ from that commit. Every form is a valid Debian version.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
v=$(sed -n '1{s/[[:space:]]//g;p;}' "$top/VERSION" 2>/dev/null)
case $v in
*[!0-9A-Za-z.+~]*) v= ;;
esac
case $v in
[0-9]*) ;;
*)
	echo "stax: error: cannot read the version from $top/VERSION (one line: a digit, then digits, letters, '.', '+' or '~')" >&2
	exit 1
	;;
esac
g() { git -C "$top" "$@" 2>/dev/null; }
if [ -e "$top/.git" ] && command -v git >/dev/null 2>&1 && h=$(g rev-parse --short=7 HEAD); then
	if d=$(g describe --tags --long --abbrev=7 --match "v$v"); then
		# v0.1-12-gabc1234
		n=${d%-g*}
		n=${n##*-}
	else
		base=$(g log -1 --format=%H -- VERSION)
		if [ -n "$base" ]; then
			n=$(g rev-list --count "$base..HEAD")
		else
			n=$(g rev-list --count HEAD)
		fi
	fi
	v="$v+git${n:-0}.g$h"
	g diff --quiet HEAD -- || v="$v.dirty"
fi
echo "$v"
