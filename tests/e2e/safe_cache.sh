#!/bin/sh
# safe_cache.sh - the caches (kallsyms, dwarf/BUILDID, symbol/dwcache.c,
# unwind/BUILDID, unwind/tcache.c)
# cannot be turned against the user stax runs as: with HOME or
# XDG_CACHE_HOME pointing at a directory where someone planted symbolic
# links, or at another user's directory (sudo -E), stax writes and
# deletes nothing outside its own cache, warns once when it cannot use
# the cache, and the command still succeeds.
#
# gz is tests/programs/spin.c built with -gz (compressed debug sections,
# which is what makes a dwarf/BUILDID entry); spin N prints its pid and
# spins for N seconds in main;spin_loop.
# stax-test: seconds=8
. "$(dirname "$0")/lib.sh"
require_stax

if ! gcc -O1 -g -gz -fno-omit-frame-pointer -I"$ROOT/tests/programs" -o "$T/gz" "$ROOT/tests/programs/spin.c" 2>"$T/cc.err"; then
	skip "caches" "cannot build a program with compressed debug sections (gcc -gz): $(first_line "$T/cc.err")"
	done_testing
fi
bid=$(readelf -n "$T/gz" 2>/dev/null | sed -n 's/.*Build ID: *//p')
if [ -z "$bid" ]; then
	skip "caches" "the test program has no build-id"
	done_testing
fi
kernel=yes
offcpu=--off-cpu # it always reads the kernel's symbols (to tell wait reasons)
if [ "$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null)" != 0 ] || ! head -n 1 /proc/kallsyms | grep -qv '^0*  *' ||
	[ "$(id -u)" -ne 0 ]; then
	kernel=no # no kernel addresses to cache: only the dwarf cache is exercised
	offcpu=
fi

# The victims: a file and a directory of the user stax runs as, outside
# any cache, that planted links point to.
mkdir "$T/victim"
echo "precious" >"$T/victim/file"
echo "precious too" >"$T/victim/$bid"
echo "an old file" >"$T/victim/old.tmp"
touch -d '2 hours ago' "$T/victim/old.tmp"
victim_state() { (cd "$T/victim" && ls -A && cat -- *) 2>/dev/null | cksum; }
V0=$(victim_state)

# run LABEL ENV...: stax record of gz (1 s) with the environment ENV,
# into $T/r.data; status in $rc, stderr in $T/run.err
run() {
	_l=$1
	shift
	env -u XDG_CACHE_HOME -u STAX_NO_CACHE "$@" timeout 120 "$STAX" record -q $offcpu -o "$T/r.data" \
		-- "$T/gz" 1 >/dev/null 2>"$T/run.err"
	rc=$?
	if [ "$rc" -eq 0 ] && ! crashed "$T/run.err" "$rc" && stax top -n 1 -i "$T/r.data" >/dev/null 2>&1; then
		ok "$_l: the recording succeeds and reads"
	else
		fail "$_l: the recording succeeds and reads" "status $rc: $(tr '\n' '|' <"$T/run.err" | cut -c1-200)"
	fi
}
# untouched LABEL: the victims are as they were
untouched() {
	if [ "$(victim_state)" = "$V0" ]; then
		ok "$1: nothing outside the cache written or deleted"
	else
		fail "$1: nothing outside the cache written or deleted" "$T/victim now: $(ls -A "$T/victim" | tr '\n' ' ')"
	fi
}
# warned_once LABEL: exactly one warning about the cache
warned_once() {
	n=$(grep -c 'warning: not using the cache' "$T/run.err")
	if [ "$n" -eq 1 ]; then
		ok "$1: one warning ($(grep 'not using the cache' "$T/run.err" | cut -c1-110)...)"
	else
		fail "$1: one warning about the cache" "$n warnings: $(tr '\n' '|' <"$T/run.err" | cut -c1-200)"
	fi
}

# 1. The cache directory of our own, with links planted in it where stax
# writes: the kallsyms file and the temporary name earlier versions used
# (kallsyms.PID, here with the pid stax will have: exec keeps it), and
# the dwarf entry of gz with its old temporary name (BUILDID.PID.PID.tmp),
# and gz's unwind table entry (unwind/BUILDID, src/unwind/tcache.c).
C=$T/own/stax
mkdir -p "$C/dwarf" "$C/unwind"
chmod 700 "$C" "$C/dwarf" "$C/unwind"
ln -s "$T/victim/file" "$C/kallsyms"
ln -s "$T/victim/$bid" "$C/dwarf/$bid"
ln -s "$T/victim/$bid" "$C/unwind/$bid"
ln -s "$T/victim/old.tmp" "$C/dwarf/$bid.1.1.tmp"
export T STAX bid offcpu
env -u STAX_NO_CACHE XDG_CACHE_HOME="$T/own" sh -c '
	ln -s "$T/victim/file" "$T/own/stax/kallsyms.$$"
	ln -s "$T/victim/file" "$T/own/stax/dwarf/$bid.$$.$$.tmp"
	exec "$STAX" record -q $offcpu -o "$T/r.data" -- "$T/gz" 1' >/dev/null 2>"$T/run.err"
rc=$?
if [ "$rc" -eq 0 ] && ! grep -q 'warning: not using the cache' "$T/run.err"; then
	ok "links planted in our own cache: the recording succeeds, no warning"
else
	fail "links planted in our own cache: the recording succeeds, no warning" "status $rc: $(tr '\n' '|' <"$T/run.err" | cut -c1-200)"
fi
untouched "links planted in our own cache"
if [ -f "$C/dwarf/$bid" ] && [ ! -L "$C/dwarf/$bid" ] && [ "$(head -c 8 "$C/dwarf/$bid")" = STAXDWC1 ]; then
	ok "links planted in our own cache: the dwarf entry is a new file in place of the link"
else
	fail "links planted in our own cache: the dwarf entry is a new file in place of the link" "$(ls -l "$C/dwarf" | tr '\n' '|')"
fi
if [ -f "$C/unwind/$bid" ] && [ ! -L "$C/unwind/$bid" ] && [ "$(head -c 8 "$C/unwind/$bid")" = STAXUTC1 ]; then
	ok "links planted in our own cache: gz's unwind table entry is a new file in place of the link"
else
	fail "links planted in our own cache: gz's unwind table entry is a new file in place of the link" "$(ls -l "$C/unwind" | tr '\n' '|')"
fi
if [ $kernel = yes ]; then
	if [ -f "$C/kallsyms" ] && [ ! -L "$C/kallsyms" ] && [ "$(stat -c %a "$C/kallsyms")" = 600 ]; then
		ok "links planted in our own cache: the kallsyms cache is a new file (mode 600) in place of the link"
	else
		fail "links planted in our own cache: the kallsyms cache is a new file (mode 600)" "$(ls -l "$C" | tr '\n' '|')"
	fi
else
	skip "the kallsyms cache" "kernel addresses are hidden here (kptr_restrict, or not root)"
fi

# 2. A symbolic link in place of stax's cache directory, and of its
# dwarf directory (trimming there once deleted files elsewhere).
mkdir -p "$T/x1"
ln -s "$T/victim" "$T/x1/stax"
run "stax/ is a symlink" XDG_CACHE_HOME="$T/x1"
warned_once "stax/ is a symlink"
untouched "stax/ is a symlink"
mkdir -p "$T/x2/stax"
chmod 700 "$T/x2/stax"
ln -s "$T/victim" "$T/x2/stax/dwarf"
run "stax/dwarf is a symlink" XDG_CACHE_HOME="$T/x2"
warned_once "stax/dwarf is a symlink"
untouched "stax/dwarf is a symlink"
mkdir -p "$T/x3/stax"
chmod 700 "$T/x3/stax"
ln -s "$T/victim" "$T/x3/stax/unwind"
run "stax/unwind is a symlink" XDG_CACHE_HOME="$T/x3"
warned_once "stax/unwind is a symlink"
untouched "stax/unwind is a symlink"
# HOME's .cache a link of someone else's: not followed (as root, a
# link stax makes itself is; see 4)
mkdir -p "$T/h1"
ln -s "$T/victim" "$T/h1/.cache"
if [ "$(id -u)" -eq 0 ] && chown -h nobody "$T/h1/.cache" 2>/dev/null; then
	run "~/.cache is another user's symlink" HOME="$T/h1"
	warned_once "~/.cache is another user's symlink"
	untouched "~/.cache is another user's symlink"
else
	skip "~/.cache as another user's symlink" "needs root to give the link to nobody"
fi

# 3. HOME of another user (sudo -E): not used, nothing made in it
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p "$T/alice/.cache"
	chown -R nobody "$T/alice"
	before=$(find "$T/alice" | sort | cksum)
	run "HOME of another user" HOME="$T/alice"
	warned_once "HOME of another user"
	if [ "$(find "$T/alice" | sort | cksum)" = "$before" ]; then
		ok "HOME of another user: nothing created in it"
	else
		fail "HOME of another user: nothing created in it" "$(find "$T/alice" | tr '\n' ' ')"
	fi
	rm -rf "$T/alice/.cache"
	chmod 755 "$T/alice"
	run "HOME of another user, no ~/.cache yet" HOME="$T/alice"
	if [ ! -e "$T/alice/.cache" ]; then
		ok "HOME of another user, no ~/.cache yet: none is made"
	else
		fail "HOME of another user, no ~/.cache yet: none is made" "$(ls -ld "$T/alice/.cache")"
	fi
else
	skip "HOME of another user" "needs root and the user nobody"
fi

# 4. The user's own ~/.cache as a link to a directory of theirs: used
mkdir -p "$T/h2" "$T/elsewhere"
ln -s "$T/elsewhere" "$T/h2/.cache"
run "~/.cache is the user's own symlink" HOME="$T/h2"
if [ -f "$T/elsewhere/stax/dwarf/$bid" ] && [ "$(stat -c %a "$T/elsewhere/stax")" = 700 ] &&
	! grep -q 'not using the cache' "$T/run.err"; then
	ok "~/.cache is the user's own symlink: followed, stax/ made 0700, the entry written"
else
	fail "~/.cache is the user's own symlink: followed" "$(ls -lR "$T/elsewhere" | tr '\n' '|' | cut -c1-200): $(first_line "$T/run.err")"
fi
untouched "all of the above"

done_testing
