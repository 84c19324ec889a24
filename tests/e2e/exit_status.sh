#!/bin/sh
# exit_status.sh - "stax record -- CMD" exits with CMD's status (128+N when
# signal N killed it), and the recording stays readable.
#
# exitcode N burns ~0.2 s in main;burn_before_exit, then exits N;
# exitcode sig N burns the same, then kills itself with signal N.
. "$(dirname "$0")/lib.sh"
require_stax
ulimit -c 0 2>/dev/null

# check WANT ARGS...: record exitcode-fp ARGS, expect status WANT
check() {
	want=$1
	shift
	f=$T/$(echo "$*" | tr ' ' _).data
	stax record -o "$f" -- "$PROG/exitcode-fp" "$@" >/dev/null 2>"$T/rec.err"
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		ok "exitcode $* -> stax exits $want"
	else
		fail "exitcode $* -> stax exits $want" "exited $rc: $(first_line "$T/rec.err")"
	fi
	stax info -i "$f" >"$T/info.txt" 2>"$T/info.err"
	irc=$?
	stax flame --folded -i "$f" >"$T/x.folded" 2>"$T/x.err"
	s=$(share "$T/x.folded" ";main;burn_before_exit$K")
	if [ "$irc" -eq 0 ] && [ "$(samples "$T/x.folded")" -gt 50 ] && between "$s" 90 100; then
		ok "exitcode $*: recording readable, $s% in main;burn_before_exit"
	else
		fail "exitcode $*: recording readable with main;burn_before_exit" \
			"info status $irc ($(first_line "$T/info.err")), $(samples "$T/x.folded") samples, $s%"
	fi
}

check 0 0
check 7 7
check 255 255
check 137 sig 9
check 143 sig 15
check 139 sig 11
check 134 sig 6

# (a command that cannot be executed, 127/126: errors.sh)

# A signal sent to stax alone reaches the target once; stax records on
# until the target exits and exits with its status.
cat >"$T/trap.sh" <<'EOS'
trap 'echo "$1" >>"$2"; exit 11' INT TERM
echo started >"$3"
while :; do :; done
EOS
"$STAX" record -q -o "$T/sig.data" -- sh "$T/trap.sh" got "$T/got" "$T/started" >/dev/null 2>"$T/sig.err" &
SP=$!
bg_add "$SP"
wait_for "[ -s '$T/started' ]" 60
sleep 0.3
kill -INT "$SP"
wait "$SP"
rc=$?
n=$(wc -l <"$T/got" 2>/dev/null || echo 0)
if [ "$rc" -eq 11 ] && [ "$n" -eq 1 ] && stax top -n 1 -i "$T/sig.data" >/dev/null 2>&1; then
	ok "SIGINT to stax alone: forwarded once, the target's status (11), the file finished"
else
	fail "SIGINT to stax alone: forwarded once, the target's status" "status $rc, the target got it $n times: $(first_line "$T/sig.err")"
fi
# A target that ignores it: a second signal stops the recording; stax
# exits 128+signal, the file is finished, the target goes on.
cat >"$T/deaf.sh" <<'EOS'
trap 'echo got >>"$1"' TERM
echo $$ >"$2"
while :; do :; done
EOS
rm -f "$T/started" "$T/got"
"$STAX" record -q -o "$T/deaf.data" -- sh "$T/deaf.sh" "$T/got" "$T/started" >/dev/null 2>"$T/deaf.err" &
SP=$!
bg_add "$SP"
wait_for "[ -s '$T/started' ]" 60
TP=$(cat "$T/started")
[ -n "$TP" ] && bg_add "$TP"
sleep 0.3
kill -TERM "$SP"
# the second signal once the first has reached the target (two sent
# before stax handles the first would arrive as one)
wait_for "[ -s '$T/got' ]" 60
kill -TERM "$SP"
wait "$SP"
rc=$?
alive=no
[ -n "$TP" ] && kill -0 "$TP" 2>/dev/null && alive=yes
if [ "$rc" -eq 143 ] && [ $alive = yes ] && grep -q "second signal" "$T/deaf.err" &&
	stax info -i "$T/deaf.data" 2>/dev/null | grep -q finished; then
	ok "a second SIGTERM: stax stops, exits 143, the file is finished, the target goes on"
else
	fail "a second SIGTERM: stax stops, exits 143, the target goes on" "status $rc, target alive: $alive: $(first_line "$T/deaf.err")"
fi
[ -n "$TP" ] && kill -KILL "$TP" 2>/dev/null

done_testing
