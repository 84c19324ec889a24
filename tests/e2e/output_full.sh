#!/bin/sh
# output_full.sh - no command loses its output without a word: with
# standard output on /dev/full (every write fails with ENOSPC), each
# command that prints (every query, help, --version, export to -) exits
# non-zero and says "cannot write output" on stderr. Commands that print
# nothing on standard output (record, import, symbolize, serve, live)
# are covered by their help. main.c checks standard output at exit.
. "$(dirname "$0")/lib.sh"
require_stax

if [ ! -c /dev/full ]; then
	skip "stdout at /dev/full" "this machine has no /dev/full"
	done_testing
fi

stax record -o "$T/a.data" -- "$PROG/callgraph-fp" 0.3 >/dev/null 2>"$T/rec.err" ||
	fail "record" "$(head -c 300 "$T/rec.err")"
cp "$T/a.data" "$T/b.data"

# full NAME ARGS...: stax ARGS with stdout at /dev/full fails with the message
full() {
	name=$1
	shift
	stax "$@" >/dev/full 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; then
		fail "$name: stdout at /dev/full" "status $rc; stderr: $(head -c 300 "$T/err")"
	elif ! grep -Eq '^stax: error: (.*: )?cannot write (output|the profile): No space left on device$' "$T/err"; then
		fail "$name: stdout at /dev/full" "no 'cannot write output' line: $(head -c 300 "$T/err")"
	elif [ "$(grep -c '^stax: error:' "$T/err")" -ne 1 ]; then
		fail "$name: stdout at /dev/full" "more than one error line: $(tr '\n' '|' <"$T/err" | head -c 300)"
	else
		ok "$name: stdout at /dev/full: status $rc and one error line"
	fi
}

# the same command with stdout on a file works (the test would pass for
# the wrong reason if the command failed anyway)
works() {
	name=$1
	shift
	if stax "$@" >"$T/out" 2>"$T/err" && [ -s "$T/out" ]; then
		full "$name" "$@"
	else
		fail "$name: prints with stdout on a file" "status $?: $(head -c 300 "$T/err")"
	fi
}

works top top -i "$T/a.data"
works flame flame -i "$T/a.data"
works "flame --folded" flame --folded -i "$T/a.data"
works threads threads -i "$T/a.data"
works info info -i "$T/a.data"
works "info --json" info --json -i "$T/a.data"
works script script -i "$T/a.data"
works doctor doctor -i "$T/a.data"
works timeline timeline -i "$T/a.data"
works wakers wakers -i "$T/a.data"
works callers callers leaf_b -i "$T/a.data"
works callees callees main -i "$T/a.data"
works annotate annotate leaf_b -i "$T/a.data"
works diff diff "$T/a.data" "$T/b.data"
works "export -f pprof" export -f pprof -i "$T/a.data"
works "export -f speedscope" export -f speedscope -i "$T/a.data"
works help help
works "--version" --version
# every command's help
for c in $(stax help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p'); do
	works "help $c" help "$c"
done

done_testing
