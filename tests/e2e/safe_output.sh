#!/bin/sh
# safe_output.sh - stax writes only regular files (lib/safefile.c).
#
# record -o PATH leaves a directory, FIFO, symlink or device node at PATH,
# or anything but a regular file at PATH.old, exactly as it was (same
# type, inode, link target, contents), with one error line and a
# non-zero status before CMD starts. import, export, flame --svg and
# diff --svg write beside the output and rename it into place, so a
# failed command leaves an existing output whole; they refuse what is not
# a regular file (import -o FIFO used to block), and -o - is standard
# output.
#
# The CMD of the refused recordings would create $T/started; exitcode-fp
# N burns ~0.2 s in main;burn_before_exit, then exits N.
. "$(dirname "$0")/lib.sh"
require_stax

# ident PATH: what must not change: type, inode, device numbers, link
# target, and a regular file's contents or a directory's listing
ident() {
	stat -c '%F %i %t:%T' "$1" 2>/dev/null || echo missing
	if [ -L "$1" ]; then
		readlink "$1"
	elif [ -d "$1" ]; then
		ls -A "$1"
	elif [ -f "$1" ]; then
		cksum <"$1"
	fi
}

# refused LABEL PATH: record -o PATH must fail with one error line that
# names PATH, leave PATH as it was, and never start CMD
refused() {
	before=$(ident "$2")
	rm -f "$T/started"
	timeout 60 "$STAX" record -o "$2" -- sh -c ": >'$T/started'" >/dev/null 2>"$T/err"
	rc=$?
	after=$(ident "$2")
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && one_line_error "$T/err" && grep -qF "$2" "$T/err" &&
		[ "$before" = "$after" ] && [ ! -e "$T/started" ]; then
		ok "record -o $1: refused ($(cut -c1-90 "$T/err")...), left as it was, CMD not started"
	else
		fail "record -o $1: refused, left as it was, CMD not started" \
			"status $rc, started: $([ -e "$T/started" ] && echo yes || echo no), before '$before' after '$after': $(tr '\n' '|' <"$T/err" | cut -c1-200)"
	fi
}

mkdir "$T/dir"
echo inside >"$T/dir/file"
refused "a directory" "$T/dir"
mkfifo "$T/fifo"
refused "a FIFO (does not block)" "$T/fifo"
echo "the target's own contents" >"$T/target"
ln -s "$T/target" "$T/link"
refused "a symlink to a regular file" "$T/link"
if [ "$(cat "$T/target")" = "the target's own contents" ]; then
	ok "record -o a symlink: the file it points to is untouched"
else
	fail "record -o a symlink: the file it points to is untouched" "now: $(first_line "$T/target")"
fi
ln -s "$T/nothere" "$T/dangling"
refused "a dangling symlink" "$T/dangling"
if [ ! -e "$T/nothere" ]; then
	ok "record -o a dangling symlink: nothing is created where it points"
else
	fail "record -o a dangling symlink: nothing is created where it points" "$T/nothere exists"
fi
if [ "$(id -u)" -eq 0 ] && mknod "$T/null" c 1 3 2>/dev/null; then
	refused "a character device made for the test (1:3)" "$T/null"
else
	skip "record -o a character device" "mknod needs root (and a file system that allows devices)"
fi
if command -v python3 >/dev/null 2>&1 &&
	python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$T/sock" 2>/dev/null; then
	refused "a socket" "$T/sock"
else
	skip "record -o a socket" "cannot make a unix socket file here (python3)"
fi

# PATH.old: only a regular file is replaced by the previous recording
echo "the previous recording" >"$T/x.data"
mkdir "$T/x.data.old"
echo inside >"$T/x.data.old/file"
before_old=$(ident "$T/x.data.old")
refused "PATH whose PATH.old is a directory" "$T/x.data"
if [ "$(ident "$T/x.data.old")" = "$before_old" ]; then
	ok "record: a directory at PATH.old is left as it was"
else
	fail "record: a directory at PATH.old is left as it was" "now $(ident "$T/x.data.old" | tr '\n' ' ')"
fi
rm -rf "$T/x.data.old"
ln -s "$T/target" "$T/x.data.old"
refused "PATH whose PATH.old is a symlink" "$T/x.data"
if [ "$(readlink "$T/x.data.old")" = "$T/target" ] && [ "$(cat "$T/target")" = "the target's own contents" ]; then
	ok "record: a symlink at PATH.old and its target are left as they were"
else
	fail "record: a symlink at PATH.old and its target are left as they were" "link -> $(readlink "$T/x.data.old"), target: $(first_line "$T/target")"
fi
rm -f "$T/x.data.old"
# and the usual case still works: a regular PATH.old is replaced
echo "an older recording" >"$T/x.data.old"
cp "$T/x.data" "$T/prev"
stax record -q -o "$T/x.data" -- "$PROG/exitcode-fp" 0 >/dev/null 2>"$T/err"
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$T/prev" "$T/x.data.old" && stax info -i "$T/x.data" >/dev/null 2>&1; then
	ok "record -o a regular file: the previous one becomes PATH.old (replacing a regular PATH.old)"
else
	fail "record -o a regular file: the previous one becomes PATH.old" "status $rc: $(first_line "$T/err")"
fi
# a recording that cannot start leaves the previous one in place
cp "$T/x.data" "$T/prev"
stax record -q -o "$T/x.data" -- "$T/no-such-command" >/dev/null 2>"$T/err"
rc=$?
if [ "$rc" -eq 127 ] && cmp -s "$T/prev" "$T/x.data"; then
	ok "record of a command that cannot run: status 127, the previous file back in place"
else
	fail "record of a command that cannot run: the previous file back in place" "status $rc: $(first_line "$T/err")"
fi

# A recording and a perf.data that cannot be imported (the right magic,
# nothing else), for the finished-file writers below.
stax record -q -o "$T/rec.data" -- "$PROG/exitcode-fp" 0 >/dev/null 2>"$T/err" ||
	fail "record rec.data" "$(first_line "$T/err")"
{ printf 'PERFILE2'; head -c 200 /dev/zero; } >"$T/bad.perf"

# unchanged LABEL PATH BEFORE STATUS: a failed command left PATH as BEFORE
# and no temporary file beside it
unchanged() {
	left=$(ls -A "$(dirname "$2")" | grep -c '\.stax-.*\.tmp$')
	if [ "$4" -ne 0 ] && [ "$4" -lt 124 ] && [ "$(ident "$2")" = "$3" ] && [ "$left" -eq 0 ] &&
		grep -q '^stax: error: ' "$T/err"; then
		ok "$1: fails ($(cut -c1-80 "$T/err")...), the existing output left whole"
	else
		fail "$1: fails, the existing output left whole" \
			"status $4, $left temporary files, before '$3' after '$(ident "$2")': $(first_line "$T/err")"
	fi
}

echo "an existing output" >"$T/out.data"
b=$(ident "$T/out.data")
stax import "$T/bad.perf" -o "$T/out.data" >/dev/null 2>"$T/err"
unchanged "import of a bad perf.data" "$T/out.data" "$b" $?
echo "an existing svg" >"$T/out.svg"
b=$(ident "$T/out.svg")
stax flame --svg -o "$T/out.svg" -i "$T/bad.perf" >/dev/null 2>"$T/err"
unchanged "flame --svg of a bad input" "$T/out.svg" "$b" $?
stax diff --svg -o "$T/out.svg" "$T/rec.data" "$T/bad.perf" >/dev/null 2>"$T/err"
unchanged "diff --svg with a bad input" "$T/out.svg" "$b" $?
echo "an existing export" >"$T/out.json"
b=$(ident "$T/out.json")
stax export --format speedscope -o "$T/out.json" -i "$T/bad.perf" >/dev/null 2>"$T/err"
unchanged "export of a bad input" "$T/out.json" "$b" $?

# not regular files: refused at once, left as they were
for cmd in "import $T/bad.perf" "export --format speedscope -i $T/rec.data" \
	"flame --svg -i $T/rec.data" "diff --svg $T/rec.data $T/rec.data"; do
	for target in fifo link dir; do
		b=$(ident "$T/$target")
		# shellcheck disable=SC2086
		timeout 60 "$STAX" $cmd -o "$T/$target" >/dev/null 2>"$T/err"
		rc=$?
		name=${cmd%% *}
		if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && one_line_error "$T/err" && [ "$(ident "$T/$target")" = "$b" ] &&
			[ "$(cat "$T/target")" = "the target's own contents" ]; then
			ok "$name -o a $target: refused with one error line, left as it was"
		else
			fail "$name -o a $target: refused with one error line, left as it was" \
				"status $rc: $(tr '\n' '|' <"$T/err" | cut -c1-200)"
		fi
	done
done

# success replaces a regular file (keeping its permissions), and -o - is
# standard output
echo old >"$T/ok.svg"
chmod 640 "$T/ok.svg"
if stax flame --svg -o "$T/ok.svg" -i "$T/rec.data" 2>"$T/err" && grep -q '<svg' "$T/ok.svg" &&
	[ "$(stat -c %a "$T/ok.svg")" = 640 ] && [ "$(ls -A "$T" | grep -c '\.stax-.*\.tmp$')" -eq 0 ]; then
	ok "flame --svg -o an existing file: replaced by the flamegraph, mode 640 kept, no temporary file left"
else
	fail "flame --svg -o an existing file: replaced, mode kept" "$(first_line "$T/err"); mode $(stat -c %a "$T/ok.svg")"
fi
n=$(stax flame --svg -o - -i "$T/rec.data" 2>/dev/null | grep -c '<svg')
if [ "$n" -ge 1 ]; then
	ok "flame --svg -o -: the SVG on standard output"
else
	fail "flame --svg -o -: the SVG on standard output" "no <svg> in the output"
fi
(cd "$T" && timeout 60 "$STAX" import -q "$T/bad.perf" -o - >/dev/null 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && [ ! -e "$T/-" ]; then
	ok "import -o - of a bad perf.data: fails, and makes no file named '-'"
else
	fail "import -o - of a bad perf.data: fails, and makes no file named '-'" "status $rc"
fi
if command -v perf >/dev/null 2>&1 && perf record -q -e cpu-clock -g -o "$T/perf.data" -- "$PROG/exitcode-fp" 0 >/dev/null 2>&1; then
	stax import -q "$T/perf.data" -o - >"$T/piped.data" 2>"$T/err"
	rc=$?
	magic=$(head -c 7 "$T/piped.data")
	if [ "$rc" -eq 0 ] && [ "$magic" = STAXREC ] && stax top -n 1 -i "$T/piped.data" >/dev/null 2>&1; then
		ok "import -o -: the recording on standard output reads"
	else
		fail "import -o -: the recording on standard output reads" "status $rc, magic '$magic': $(first_line "$T/err")"
	fi
else
	skip "import -o -" "perf record cannot run here"
fi

done_testing
