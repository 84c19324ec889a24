#!/bin/sh
# errors.sh - every failure is one line "stax: error: ..." on stderr and a
# status between 1 and 127; bad input files never crash a query.
. "$(dirname "$0")/lib.sh"
require_stax

# expect_error NAME GREP_ERE ARGS...: stax ARGS fails with one error line
# that matches GREP_ERE (case-insensitive; "" for any).
expect_error() {
	name=$1
	pat=$2
	shift 2
	stax "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; then
		fail "$name" "status $rc; stderr: $(tr '\n' '|' <"$T/err" | cut -c1-300)"
	elif ! one_line_error "$T/err"; then
		fail "$name" "stderr is not one 'stax: error: ' line: $(tr '\n' '|' <"$T/err" | cut -c1-300)"
	elif [ -n "$pat" ] && ! grep -Eqi "$pat" "$T/err"; then
		fail "$name" "error does not mention /$pat/: $(first_line "$T/err")"
	else
		ok "$name"
	fi
}

# --- record --------------------------------------------------------------
if [ -e /sys/bus/event_source/devices/cpu ] || [ -e /sys/bus/event_source/devices/cpu_core ]; then
	skip "-e cycles without a PMU names the available events" "this machine has hardware counters"
else
	expect_error "-e cycles without a PMU names the available events" 'cpu-clock' \
		record -e cycles -o "$T/x.data" -- "$PROG/exitcode-fp" 0
fi
expect_error "-e with an unknown event" 'cpu-clock' record -e no-such-event -o "$T/x.data" -- "$PROG/exitcode-fp" 0
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
expect_error "-F above kernel.perf_event_max_sample_rate names the sysctl" 'perf_event_max_sample_rate' \
	record -F $((max * 2)) -o "$T/x.data" -- "$PROG/exitcode-fp" 0
expect_error "-F that is not a number" '' record -F abc -o "$T/x.data" -- "$PROG/exitcode-fp" 0
expect_error "-F 0" '' record -F 0 -o "$T/x.data" -- "$PROG/exitcode-fp" 0
expect_error "a command that does not exist" 'nonexistent' record -o "$T/x.data" -- /nonexistent
printf '#!/bin/sh\nexit 0\n' >"$T/notexec"
chmod 644 "$T/notexec"
expect_error "a command that is not executable" 'notexec' record -o "$T/x.data" -- "$T/notexec"
expect_error "record with nothing to record" '' record -o "$T/x.data"
expect_error "-o in a directory that does not exist" 'nonexistent' record -o /nonexistent/dir/x.data -- "$PROG/exitcode-fp" 0
expect_error "record: unknown option" 'frobnicate' record --frobnicate -o "$T/x.data" -- "$PROG/exitcode-fp" 0
expect_error "record: -o without a value" '' record -o

# --- commands and options ----------------------------------------------------
expect_error "unknown subcommand" 'frobnicate' frobnicate
expect_error "help of an unknown subcommand" 'frobnicate' help frobnicate
for cmd in top flame threads info script; do
	expect_error "$cmd: missing input file" '/nonexistent' $cmd -i /nonexistent/stax.data
	expect_error "$cmd: unknown option" 'frobnicate' $cmd --frobnicate
done
expect_error "top -n with a bad number" '' top -n many -i /nonexistent
expect_error "top --sort with a bad key" '' top --sort sideways -i /nonexistent
expect_error "-i without a value" '' top -i
expect_error "--tid with a bad number" '' threads --tid abc -i /nonexistent
expect_error "a directory as input" '' top -i /

# --- bad files -------------------------------------------------------------
# query FILE LABEL: every query command on FILE; a one-line error or an
# answer, never a crash. Collects problems in $bad.
query() {
	for cmd in top "flame --folded" threads info script; do
		stax $cmd -i "$1" >/dev/null 2>"$T/qerr"
		rc=$?
		if crashed "$T/qerr" "$rc"; then
			bad="$bad [$2: $cmd status $rc: $(grep -Ei 'Segmentation|Sanitizer|runtime error|Aborted|core|free|smash' "$T/qerr" | head -n 1 | cut -c1-120)]"
		elif [ "$rc" -ne 0 ] && ! one_line_error "$T/qerr"; then
			bad="$bad [$2: $cmd status $rc, stderr not one error line: $(tr '\n' '|' <"$T/qerr" | cut -c1-120)]"
		fi
	done
}

head -c 65536 /dev/urandom >"$T/garbage.data"
expect_error "a file of random bytes" '' top -i "$T/garbage.data"
: >"$T/empty.data"
expect_error "an empty file" '' top -i "$T/empty.data"
printf 'hello\n' >"$T/text.data"
expect_error "a text file" '' info -i "$T/text.data"

stax record -o "$T/good.data" -- "$PROG/threads-fp" 0.5 >/dev/null 2>&1
size=$(wc -c <"$T/good.data")
if [ "$size" -lt 1000 ]; then
	fail "truncated recordings: setup" "the recording is only $size bytes"
else
	bad=""
	for cut in 0 1 4 8 12 16 24 32 64 100 256 512 1024 \
		$((size / 8)) $((size / 4)) $((size * 3 / 8)) $((size / 2)) $((size * 5 / 8)) \
		$((size * 3 / 4)) $((size * 7 / 8)) $((size - 64)) $((size - 9)) $((size - 1)); do
		head -c "$cut" "$T/good.data" >"$T/cut.data"
		query "$T/cut.data" "cut at $cut"
	done
	if [ -z "$bad" ]; then
		ok "a recording ($size bytes) cut at 23 sizes: an answer or one error line, no crash"
	else
		fail "a recording cut at 23 sizes: an answer or one error line, no crash" "$bad"
	fi

	# Flip one byte at 40 places spread over the file.
	bad=""
	i=0
	while [ $i -lt 40 ]; do
		off=$((i * (size - 1) / 39))
		cp "$T/good.data" "$T/flip.data"
		b=$(od -An -tu1 -j "$off" -N1 "$T/good.data" | tr -d ' ')
		printf "$(printf '\\%03o' $((b ^ 0xa5)))" | dd of="$T/flip.data" bs=1 seek="$off" conv=notrunc 2>/dev/null
		query "$T/flip.data" "byte $off flipped"
		i=$((i + 1))
	done
	if [ -z "$bad" ]; then
		ok "a recording with one byte flipped at 40 places: an answer or one error line, no crash"
	else
		fail "a recording with one byte flipped at 40 places: an answer or one error line, no crash" "$bad"
	fi
fi

done_testing
