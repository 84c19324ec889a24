#!/bin/sh
# unwind_switch.sh - work run on another stack segment (Rust's
# stacker/psm, tests/programs/unwind_switch.c: psm's own assembly and
# CFI, built without frame pointers). A sample taken on the segment has
# none of the caller's stack in its copy, and the kernel's chain cannot
# follow code without frame pointers: the live recorder reads the
# caller's stack from the process (marked in info), or the stack ends
# with a verdict that says it stopped at a stack switch; never made-up
# frames. The same for a signal handled on an alternate stack
# (tests/programs/unwind_altstack.c).
# stax-test: seconds=9
. "$(dirname "$0")/lib.sh"
require_stax

P="$PROG/unwind_switch-nofp"
if [ ! -x "$P" ]; then
	fail "unwind_switch" "$P is missing (run make programs)"
	done_testing
fi
rec() {
	stax record -q -o "$T/s.data" -- "$P" "$1" >"$T/s.out" 2>"$T/s.err" &&
		stax flame -i "$T/s.data" --folded >"$T/s.folded" 2>>"$T/s.err" &&
		stax info -i "$T/s.data" >"$T/s.info" 2>>"$T/s.err"
}
FULL=';_start;(.*;)?main;run_switched;rust_psm_on_stack;on_segment;hot'
check() {
	n=$(samples "$T/s.folded" ";hot$K")
	full=$(samples "$T/s.folded" "$FULL$K")
	pct=$(pct "$full" "$n")
	[ "$n" -ge 200 ] && between "$pct" 90 100
}
rec 1 || fail "record" "$(first_line "$T/s.err")"
check || { rec 2 || fail "record (again)" "$(first_line "$T/s.err")"; }
if check; then
	ok "$pct% of $n samples in hot reach main across the stack switch"
else
	fail "stacks cross the stack switch" "$pct% of $n (want >= 90% of >= 200): $(sort -t' ' -k2 -nr "$T/s.folded" | head -n 2 | cut -c1-200 | tr '\n' '|')"
fi
# the rest end at the switch with that verdict (the process gone before
# its last samples were unwound), never with other callers
other=$(grep ';hot' "$T/s.folded" | grep -Ev "^[^;]*;rust_psm_on_stack;on_segment;hot|$FULL" | wc -l)
if [ "$other" -eq 0 ]; then
	ok "no other callers of rust_psm_on_stack"
else
	fail "no other callers of rust_psm_on_stack" "$(grep ';hot' "$T/s.folded" | grep -Ev "$FULL" | head -n 2 | cut -c1-200 | tr '\n' '|')"
fi
# the caller's stack: read at the sample by the in-kernel reader (the
# words of the slots its first such stack used), or read from the process
# after it (the first, or without the reader)
read_n=$(sed -n 's/^  read: *\([0-9]*\) .*/\1/p' "$T/s.info")
words=$(sed -n 's/^  moment: .* \([0-9][0-9]*\) stacks completed past the copy.*/\1/p' "$T/s.info")
if [ -n "$read_n$words" ] && [ $((${read_n:-0} + ${words:-0})) -ge "$full" ]; then
	ok "info counts the stacks that crossed: ${words:-0} by the words read at the sample, ${read_n:-0} read from the process after it"
else
	fail "info counts the stacks that crossed" "read '$read_n', words '$words', full stacks $full"
fi

# a signal handled on an alternate stack (sigaltstack): the interrupted
# frames are on the thread's own stack, outside the copy
A="$PROG/unwind_altstack-nofp"
arec() {
	stax record -q -o "$T/a.data" -- "$A" "$1" >"$T/a.out" 2>"$T/a.err" &&
		stax flame -i "$T/a.data" --folded >"$T/a.folded" 2>>"$T/a.err"
}
AFULL=';_start;(.*;)?main;interrupted;__restore_rt;handler'
acheck() {
	an=$(samples "$T/a.folded" ";handler$K")
	afull=$(samples "$T/a.folded" "$AFULL$K")
	apct=$(pct "$afull" "$an")
	[ "$an" -ge 200 ] && between "$apct" 90 100
}
if [ ! -x "$A" ]; then
	fail "sigaltstack" "$A is missing (run make programs)"
else
	arec 1 || fail "record altstack" "$(first_line "$T/a.err")"
	acheck || { arec 2 || fail "record altstack (again)" "$(first_line "$T/a.err")"; }
	if acheck; then
		ok "sigaltstack: $apct% of $an samples in the handler reach main through the signal frame"
	else
		fail "sigaltstack: handler stacks reach main" "$apct% of $an (want >= 90% of >= 200): $(sort -t' ' -k2 -nr "$T/a.folded" | head -n 2 | cut -c1-200 | tr '\n' '|')"
	fi
	# A stack may end at the interrupted frame (truncated: the thread's
	# own stack had moved on when it was read): interrupted, or the
	# setitimer call main makes before it (a first signal can come
	# while main is still in it). Any other frame is invented.
	AOK="^[^;]*;(interrupted|(__)?setitimer);__restore_rt;handler|$AFULL"
	abad=$(grep ';handler' "$T/a.folded" | grep -Ev "$AOK" | wc -l)
	if [ "$abad" -eq 0 ]; then
		ok "sigaltstack: no other callers of the handler"
	else
		fail "sigaltstack: no other callers of the handler" "$(grep ';handler' "$T/a.folded" | grep -Ev "$AOK" | head -n 2 | cut -c1-200 | tr '\n' '|')"
	fi
fi
# a coroutine on a makecontext() stack (tests/programs/unwind_context.c):
# its stack begins at glibc's __start_context, which the coroutine
# "returns" into at its first byte; nothing above it is a caller. Also
# with a libc whose symbols and debug file cannot be found (a copy
# without build-id and debuglink): __start_context is found by its code.
ctx_check() { # NAME PROGRAM [env ...]: hot's stacks begin at __start_context
	_n=$1 _p=$2
	shift 2
	stax record -q -o "$T/$_n.data" -- env "$@" "$_p" 0.5 >/dev/null 2>"$T/$_n.err" &&
		stax flame -i "$T/$_n.data" --folded --comm unwind_context- >"$T/$_n.folded" 2>>"$T/$_n.err" ||
		{ echo "record: $(first_line "$T/$_n.err")"; return 1; }
	n=$(samples "$T/$_n.folded" ";hot$K")
	g=$(samples "$T/$_n.folded" "^[^;]*;__start_context;coroutine;hot$K")
	p=$(pct "$g" "$n")
	if [ "$n" -ge 200 ] && between "$p" 95 100; then
		echo "$p% of $n samples"
	else
		echo "$p% of $n: $(sort -t' ' -k2 -nr "$T/$_n.folded" | head -n 2 | cut -c1-200 | tr '\n' '|')"
		return 1
	fi
}
for v in nofp fp; do
	if why=$(ctx_check ctx$v "$PROG/unwind_context-$v" STAX_X=1); then
		ok "makecontext ($v): $why in hot begin at __start_context;coroutine, nothing above"
	else
		fail "makecontext ($v): stacks begin at __start_context" "$why"
	fi
done
LIBC=$(ldd "$PROG/unwind_context-nofp" | awk '/libc\.so/ { print $3 }')
if ! command -v objcopy >/dev/null 2>&1 || [ -z "$LIBC" ]; then
	skip "makecontext, stripped libc" "objcopy or libc not found"
elif ! mkdir -p "$T/lib" || ! objcopy --remove-section .note.gnu.build-id --remove-section .gnu_debuglink \
	--strip-unneeded "$LIBC" "$T/lib/libc.so.6" 2>"$T/objcopy.err"; then
	fail "makecontext, stripped libc: objcopy" "$(first_line "$T/objcopy.err")"
elif why=$(ctx_check ctxs "$PROG/unwind_context-nofp" LD_LIBRARY_PATH="$T/lib"); then
	ok "makecontext, a libc without symbols or debug file: $why in hot begin at __start_context;coroutine"
else
	fail "makecontext, stripped libc: stacks begin at __start_context" "$why"
fi

done_testing
