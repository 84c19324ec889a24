#!/bin/sh
# live.sh - stax live in batch mode (no terminal): snapshots of a running
# process (-p, never signalled) and of a command, the recording in a
# memory file that leaves nothing behind, or kept with -o.
# phases-nofp (tests/programs/phases.c) runs first_half, then second_half.
. "$(dirname "$0")/lib.sh"
require_stax

"$PROG/phases-nofp" 20 >/dev/null &
tpid=$!
bg_add "$tpid"
sleep 0.3
mkdir -p "$T/cwd"
(cd "$T/cwd" && timeout 120 "$STAX" live -p "$tpid" --interval 0.5 --count 3 -n 5 </dev/null >"$T/p.txt" 2>"$T/p.err")
rc=$?
snaps=$(grep -c '^stax live: snapshot' "$T/p.txt")
alive=no
kill -0 "$tpid" 2>/dev/null && alive=yes
hot=$(awk '/^whole run:/ { w = 1; next } w && /^ *[0-9.]+%/ { print $5; exit }' "$T/p.txt")
if [ "$rc" -eq 0 ] && [ "$snaps" -eq 3 ] && [ "$alive" = yes ] && [ "$hot" = first_half ] &&
   [ -z "$(ls -A "$T/cwd")" ]; then
	ok "live -p PID --count 3: 3 snapshots, first_half on top, the process still runs, no file left"
else
	fail "live -p PID --count 3" "status $rc, $snaps snapshots, alive $alive, top '$hot', files: $(ls -A "$T/cwd" | tr '\n' ' ') $(first_line "$T/p.err")"
fi
# the last-interval table counts only the newest samples: fewer than the whole run
# (the first row of each table in the last snapshot: first_half)
last=$(awk '/^since the previous snapshot/ { l = 1; n = 0; next } l && /^ *[0-9.]+%/ && !n++ { v = $2 } END { print v }' "$T/p.txt")
all=$(awk '/^whole run:/ { w = 1; n = 0; next } w && /^ *[0-9.]+%/ && !n++ { v = $2 } END { print v }' "$T/p.txt")
if [ -n "$last" ] && [ -n "$all" ] && [ "$last" -lt "$all" ]; then
	ok "live: the last interval ($last samples of first_half) is a part of the whole run ($all)"
else
	fail "live: last interval" "last '$last', whole '$all'"
fi
kill "$tpid" 2>/dev/null

# a command, kept with -o
(cd "$T/cwd" && timeout 120 "$STAX" live --interval 0.5 --count 2 -o "$T/kept.data" -- \
	sh -c 'echo $$ >"$0"; exec "$1" 30' "$T/cmd.pid" "$PROG/peek-nofp" </dev/null >"$T/c.txt" 2>"$T/c.err")
rc=$?
if [ "$rc" -eq 0 ] && [ "$(grep -c '^stax live: snapshot' "$T/c.txt")" -eq 2 ] && [ -z "$(ls -A "$T/cwd")" ] &&
   stax top "$T/kept.data" 2>/dev/null | grep -q ' leaf_p '; then
	ok "live -o FILE -- CMD: 2 snapshots, the recording kept and readable"
else
	fail "live -o FILE -- CMD" "status $rc: $(first_line "$T/c.err") $(ls -A "$T/cwd" | tr '\n' ' ')"
fi
cpid=$(cat "$T/cmd.pid" 2>/dev/null)
if [ -n "$cpid" ] && ! kill -0 "$cpid" 2>/dev/null; then
	ok "live: the command ends with live (SIGINT, as stax record sends it)"
else
	fail "live: the command ends with live" "pid '$cpid' still runs"
	[ -n "$cpid" ] && kill "$cpid" 2>/dev/null
fi

# the exit status: CMD's when it ends the recording, 127 for a command
# that cannot run (as stax record), with the recorder's one error line
stax live --count 50 --interval 0.2 -- sh -c 'exit 3' </dev/null >/dev/null 2>"$T/st.err"
rc=$?
if [ "$rc" -eq 3 ]; then
	ok "live -- CMD: CMD's exit status when CMD ends the recording (3)"
else
	fail "live -- CMD exit status" "status $rc, not 3: $(first_line "$T/st.err")"
fi
stax live --count 2 -- "$T/no-such-command" </dev/null >"$T/nc.out" 2>"$T/nc.err"
rc=$?
if [ "$rc" -eq 127 ] && one_line_error "$T/nc.err" && [ ! -s "$T/nc.out" ]; then
	ok "live -- a command that does not exist: 127, one error line, no snapshot"
else
	fail "live -- a command that does not exist" "status $rc, $(wc -l <"$T/nc.out") lines out: $(first_line "$T/nc.err")"
fi

# On a terminal with standard output redirected (stax live -- CMD
# >/dev/null): the screen goes to the controlling terminal, CMD's output
# to /dev/null; p pauses, and the paused status is one line rewritten in
# place (\r, erase line), not a line appended every interval. Run in a
# pseudo-terminal (python3's pty), stdin and stdout /dev/null.
if command -v python3 >/dev/null 2>&1; then
	timeout 120 python3 - "$STAX" "$PROG/phases-nofp" >"$T/pty.out" 2>&1 <<'PY'
import os, pty, select, sys, time
stax, prog = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    null = os.open("/dev/null", os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.execv(stax, [stax, "live", "--interval", "0.3", "-n", "3", "--",
                    "sh", "-c", 'echo CMD-OUTPUT; exec "$0" 30', prog])
def read_for(secs):
    out, end = b"", time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out += os.read(fd, 65536)
            except OSError:
                break
    return out
def wait_for(what, secs):
    out, end = b"", time.time() + secs
    while time.time() < end and what not in out:
        out += read_for(0.2)
    return out
before = wait_for(b"snapshot 3", 60)
os.write(fd, b"p")
paused = wait_for(b"(paused", 10) + read_for(3)
os.write(fd, b"q")
rest = read_for(2)
_, st = os.waitpid(pid, 0)
shots = before.count(b"stax live: snapshot")
tail = paused[paused.find(b"(paused"):]
appended = tail.count(b"\n(paused")
inplace = tail.count(b"\r\x1b[K(paused")
print("snapshots %d, paused in place %d, appended %d, cmd output %s, status %d" %
      (shots, inplace, appended, b"CMD-OUTPUT" in before + paused + rest, os.WEXITSTATUS(st)))
ok = shots >= 3 and inplace >= 5 and appended == 0 and b"CMD-OUTPUT" not in before + paused + rest and os.WEXITSTATUS(st) == 0
sys.exit(0 if ok else 1)
PY
	if [ $? -eq 0 ]; then
		ok "live -- CMD >/dev/null on a terminal: the screen on /dev/tty, CMD's output not; paused status in place ($(tail -n 1 "$T/pty.out"))"
	else
		fail "live -- CMD >/dev/null on a terminal: screen on /dev/tty, paused status in place" "$(tail -n 3 "$T/pty.out" | tr '\n' '|' | cut -c1-300)"
	fi
else
	skip "live on a pseudo-terminal" "python3 is not installed"
fi

stax live --count 2 </dev/null >/dev/null 2>"$T/bad.err"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/bad.err"; then
	ok "live without a target: one-line error, exit 1"
else
	fail "live without a target" "status $rc: $(first_line "$T/bad.err")"
fi

done_testing
