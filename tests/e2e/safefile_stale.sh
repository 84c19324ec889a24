#!/bin/sh
# safefile_stale.sh - a writer that was SIGKILLed leaves its temporary
# file (NAME.stax-XXXXXXXX.tmp) beside its output; the next stax command
# that writes a finished file into that directory removes it
# (lib/safefile.c: a temporary file is locked with flock() while its
# writer lives, so one nobody holds a lock on is left over).
#
# Deterministic: "stax import - -o FILE" opens its output before it reads
# standard input; with standard input a FIFO nobody writes to, it waits
# there, its temporary file made, until the test SIGKILLs it.
#
# What must stay: the temporary file of a writer still alive (a second
# import, waiting), a symlink with a temporary file's name (and its
# target), a file with a name stax does not make, a directory with a
# temporary file's name, and (as root) another user's file with a
# temporary file's name.
. "$(dirname "$0")/lib.sh"
require_stax

tmps() { ls -A "$1" | grep '\.stax-[A-Za-z0-9]\{8\}\.tmp$' | sort; }

mkdir "$T/out"
stax record -q -o "$T/rec.data" -- "$PROG/exitcode-fp" 0 >/dev/null 2>"$T/err" ||
	fail "record rec.data" "$(first_line "$T/err")"

# a writer alive: waits (its standard input open, nothing written)
mkfifo "$T/fifo2"
"$STAX" import -q - -o "$T/out/alive.data" <"$T/fifo2" >/dev/null 2>"$T/err2" &
apid=$!
bg_add "$apid"
exec 5>"$T/fifo2"
wait_for '[ -n "$(tmps "$T/out")" ]' 60 ||
	fail "the live import made a temporary file" "$(first_line "$T/err2")"
alive=$(tmps "$T/out")

# a writer killed: its temporary file stays behind
mkfifo "$T/fifo1"
"$STAX" import -q - -o "$T/out/killed.data" <"$T/fifo1" >/dev/null 2>"$T/err" &
kpid=$!
bg_add "$kpid"
exec 4>"$T/fifo1"
if wait_for '[ "$(tmps "$T/out" | wc -l)" -ge 2 ]' 60; then
	kill -9 "$kpid"
	wait "$kpid" 2>/dev/null
	stale=$(tmps "$T/out" | grep -v "^$alive\$")
	ok "import -o FILE killed by SIGKILL: its temporary file $stale stays behind"
else
	fail "import -o FILE made a temporary file" "none appeared: $(first_line "$T/err")"
	stale=""
fi
exec 4>&-

# things with a temporary file's name that stax did not make (or must not touch)
echo "the target" >"$T/target"
ln -s "$T/target" "$T/out/link.stax-Abcdef12.tmp"
mkdir "$T/out/dir.stax-Abcdef34.tmp"
echo mine >"$T/out/short.stax-abc.tmp"
echo mine >"$T/out/other.stax-Abcdef56.tmpx"
others=""
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	echo theirs >"$T/out/theirs.stax-Abcdef78.tmp"
	chown nobody "$T/out/theirs.stax-Abcdef78.tmp"
	others="theirs.stax-Abcdef78.tmp"
fi

# the next finished-file writer into the same directory
if stax export --format speedscope -i "$T/rec.data" -o "$T/out/next.json" 2>"$T/err" &&
	[ -s "$T/out/next.json" ]; then
	ok "export -o into the same directory: written"
else
	fail "export -o into the same directory: written" "$(first_line "$T/err")"
fi
if [ -n "$stale" ] && [ ! -e "$T/out/$stale" ] && [ ! -L "$T/out/$stale" ]; then
	ok "the next write into the directory removed the killed writer's $stale"
else
	fail "the next write into the directory removed the killed writer's temporary file" \
		"still there: $(tmps "$T/out" | tr '\n' ' ')"
fi
if [ -n "$alive" ] && [ -f "$T/out/$alive" ] && kill -0 "$apid" 2>/dev/null; then
	ok "the live writer's $alive is left alone"
else
	fail "the live writer's temporary file is left alone" "'$alive' missing: $(tmps "$T/out" | tr '\n' ' ')"
fi
if [ -L "$T/out/link.stax-Abcdef12.tmp" ] && [ "$(cat "$T/target")" = "the target" ] &&
	[ -d "$T/out/dir.stax-Abcdef34.tmp" ] && [ -f "$T/out/short.stax-abc.tmp" ] &&
	[ -f "$T/out/other.stax-Abcdef56.tmpx" ]; then
	ok "a symlink, a directory and files named otherwise are left alone"
else
	fail "a symlink, a directory and files named otherwise are left alone" "$(ls -A "$T/out" | tr '\n' ' ')"
fi
if [ -n "$others" ]; then
	if [ -f "$T/out/$others" ]; then
		ok "another user's file with a temporary file's name is left alone"
	else
		fail "another user's file with a temporary file's name is left alone" "removed"
	fi
else
	skip "another user's file is left alone" "needs root and a user nobody to own it"
fi

# the live import, ended by its input closing: fails (no perf.data), and
# leaves nothing behind
exec 5>&-
wait "$apid" 2>/dev/null
left=$(tmps "$T/out" | grep -v -e '^link\.' -e '^dir\.' -e '^theirs\.')
if [ -z "$left" ]; then
	ok "the live import, once ended, left no temporary file"
else
	fail "the live import, once ended, left no temporary file" "$left"
fi

done_testing
