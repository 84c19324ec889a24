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

# stax's own failure is not confused with the command's: a command that
# cannot be executed is an error of stax (non-zero, one line)
stax record -o "$T/none.data" -- "$T/no-such-program" >/dev/null 2>"$T/none.err"
rc=$?
if [ "$rc" -ne 0 ] && one_line_error "$T/none.err"; then
	ok "a command that does not exist: status $rc and one error line"
else
	fail "a command that does not exist: non-zero and one error line" "status $rc, stderr: $(tr '\n' '|' <"$T/none.err" | cut -c1-300)"
fi

done_testing
