#!/bin/sh
# errors.sh - every failure is one line "stax: error: ..." on stderr and a
# status between 1 and 123 (126 and 127 for a command that cannot run, as
# a shell says it); bad input files never crash a query.
# stax-test: seconds=15
. "$(dirname "$0")/lib.sh"
require_stax

# expect_error NAME GREP_ERE ARGS...: stax ARGS fails with one error line
# that matches GREP_ERE (case-insensitive; "" for any), with a status
# below 124 (timeouts, crashes and signals are above), or exactly
# $RC when it is set.
expect_error() {
	name=$1
	pat=$2
	shift 2
	stax "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ -n "${RC:-}" ] && [ "$rc" -ne "$RC" ]; then
		fail "$name" "status $rc, not $RC; stderr: $(tr '\n' '|' <"$T/err" | cut -c1-300)"
	elif [ -z "${RC:-}" ] && { [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ]; }; then
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
RC=127 expect_error "a command that does not exist (127, as a shell)" 'nonexistent' record -o "$T/x.data" -- /nonexistent
printf '#!/bin/sh\nexit 0\n' >"$T/notexec"
chmod 644 "$T/notexec"
RC=126 expect_error "a command that is not executable (126, as a shell)" 'notexec' record -o "$T/x.data" -- "$T/notexec"
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

# --- one flipped byte in each chunk kind -----------------------------------
# Chunks: a 24-byte header (magic, u16 kind at +4, ..., u32 comp_size at
# +16, check at +20) and a zstd payload (docs/FORMAT.md). A flipped byte
# in a chunk's kind, check or payload damages that chunk only: the query
# answers, with a warning that names the chunk's offset.
if [ "$size" -ge 1000 ]; then
	bad="" kinds="" o=16
	while [ $((o + 24)) -le "$size" ]; do
		kind=$(od -An -tu2 -j $((o + 4)) -N2 "$T/good.data" | tr -d ' ')
		comp=$(od -An -tu4 -j $((o + 16)) -N4 "$T/good.data" | tr -d ' ')
		case " $kinds " in *" $kind "*) o=$((o + 24 + comp)); continue ;; esac
		kinds="$kinds $kind"
		for at in $((o + 4)) $((o + 20)) $((o + 24 + comp / 2)); do
			cp "$T/good.data" "$T/flip.data"
			b=$(od -An -tu1 -j "$at" -N1 "$T/good.data" | tr -d ' ')
			printf "$(printf '\\%03o' $((b ^ 0xa5)))" | dd of="$T/flip.data" bs=1 seek="$at" conv=notrunc 2>/dev/null
			stax top -i "$T/flip.data" >"$T/fout" 2>"$T/ferr"
			rc=$?
			if crashed "$T/ferr" "$rc" || [ "$rc" -ne 0 ]; then
				bad="$bad [kind $kind byte $at: status $rc: $(tr '\n' '|' <"$T/ferr" | cut -c1-120)]"
			elif ! grep -q "^stax: warning: .*damaged chunk at offset $o\b" "$T/ferr"; then
				bad="$bad [kind $kind byte $at: no warning naming the chunk at offset $o: $(first_line "$T/ferr")]"
			elif [ "$kind" = 1 ] && { ! grep -q '^ *SELF%' "$T/fout" || [ "$(wc -l <"$T/fout")" -lt 2 ]; }; then
				bad="$bad [kind $kind byte $at: no answer: $(head -n 2 "$T/fout" | tr '\n' '|')]"
			fi
		done
		o=$((o + 24 + comp))
	done
	case "$kinds" in
	*1*2*3*) ;;
	*) bad="$bad [the recording has chunk kinds$kinds, not data, symbols and end]" ;;
	esac
	if [ -z "$bad" ]; then
		ok "a byte flipped in the kind, check and payload of each chunk kind ($kinds): an answer and a warning naming the chunk's offset"
	else
		fail "a byte flipped in each chunk kind" "$bad"
	fi
fi

# --- files that cannot be read -----------------------------------------------
# a directory is read as its recordings (tests/e2e/dirquery.sh): one whose
# *.data files are none is an error naming it
mkdir "$T/norec"
cp "$T/garbage.data" "$T/norec/garbage.data"
expect_error "a directory without a readable recording names it" "$T/norec: no recording could be read" top -i "$T/norec"
if [ "$(id -u)" -ne 0 ]; then
	skip "a recording the user may not read" "needs root to drop to user nobody"
elif ! command -v setpriv >/dev/null 2>&1; then
	skip "a recording the user may not read" "setpriv is not installed (apt-get install util-linux)"
else
	# a copy of stax and the recording in a directory nobody may enter
	# (the checkout may be in a private one)
	mkdir -m 755 "$T/nb"
	cp "$STAX" "$T/nb/stax"
	chmod 755 "$T/nb/stax"
	cp "$T/good.data" "$T/nb/secret.data"
	chmod 600 "$T/nb/secret.data"
	timeout 60 setpriv --reuid nobody --regid nogroup --clear-groups "$T/nb/stax" top -i "$T/nb/secret.data" \
		>/dev/null 2>"$T/err"
	rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] && one_line_error "$T/err" && grep -qi 'permission' "$T/err"; then
		ok "a recording the user may not read: one error saying permission"
	else
		fail "a recording the user may not read" "status $rc: $(tr '\n' '|' <"$T/err" | cut -c1-200)"
	fi
fi

# --- perf.data cut inside its attribute section ------------------------------
# perf_file_header: magic, size, attr_size, then attrs {u64 offset, u64 size}
if ! command -v perf >/dev/null 2>&1; then
	skip "perf.data cut in its attribute section" "perf is not installed (it only makes the input)"
elif ! perf record -q -o "$T/perf.data" -- "$PROG/exitcode-fp" 0 >/dev/null 2>&1; then
	skip "perf.data cut in its attribute section" "perf record does not run here"
else
	aoff=$(od -An -tu8 -j 24 -N8 "$T/perf.data" | tr -d ' ')
	asz=$(od -An -tu8 -j 32 -N8 "$T/perf.data" | tr -d ' ')
	head -c $((aoff + asz / 2)) "$T/perf.data" >"$T/cut.perf"
	expect_error "perf.data cut in its attribute section: top" 'offset [0-9]+' top -i "$T/cut.perf"
	expect_error "perf.data cut in its attribute section: import" 'offset [0-9]+' import "$T/cut.perf" -o "$T/imp.data"
fi

# --- a corrupt kallsyms cache is ignored and rewritten -------------------------
# ~/.cache/stax/kallsyms (docs: kallsyms.c) with HOME in a temp dir; an
# off-CPU recording always reads kernel symbols (to tell wait reasons).
if [ "$(cat /proc/sys/kernel/kptr_restrict 2>/dev/null)" != 0 ] || ! head -n 1 /proc/kallsyms | grep -qv '^0*  *'; then
	skip "a corrupt kallsyms cache" "kernel addresses are hidden here (kernel.kptr_restrict)"
else
	H=$T/home
	C=$H/.cache/stax/kallsyms
	mkdir -p "$H/.cache/stax"
	# kcache LABEL: record with HOME=$H after the corrupt cache was copied
	# to kbad; the cache must be a new, valid one after (the kernel's
	# table read again; BPF symbols come and go, so not byte-identical)
	kcache() {
		env -u XDG_CACHE_HOME -u STAX_NO_CACHE HOME="$H" timeout -k 5 60 "$STAX" record -q --off-cpu \
			-o "$T/k.data" -- "$PROG/pipewait-fp" 0.2 >/dev/null 2>"$T/kerr"
		rc=$?
		if crashed "$T/kerr" "$rc" || [ "$rc" -ne 0 ]; then
			fail "$1" "status $rc: $(tr '\n' '|' <"$T/kerr" | cut -c1-200)"
		elif cmp -s "$C" "$T/kbad"; then
			fail "$1" "the corrupt cache was kept (so it was used)"
		elif [ "$(head -c 8 "$C")" != STAXKSY1 ] || [ "$(wc -c <"$C")" -lt 1000 ]; then
			fail "$1" "no valid cache afterwards"
		else
			ok "$1"
		fi
	}
	head -c 100000 /dev/urandom >"$C"
	chmod 600 "$C"
	cp "$C" "$T/kbad"
	kcache "a kallsyms cache of random bytes is ignored and rewritten"
	cp "$C" "$T/kgood"
	# the right magic and key, a symbol whose end is 0 (before its start)
	cp "$T/kgood" "$C"
	printf '\000\000\000\000\000\000\000\000' | dd of="$C" bs=1 seek=48 conv=notrunc 2>/dev/null
	cp "$C" "$T/kbad"
	kcache "a kallsyms cache with a bad symbol is ignored and rewritten"
	head -c $(($(wc -c <"$T/kgood") - 1)) "$T/kgood" >"$C"
	cp "$C" "$T/kbad"
	kcache "a truncated kallsyms cache is ignored and rewritten"
	printf 'STAXKSY1' >"$C"
	cp "$C" "$T/kbad"
	kcache "a kallsyms cache of only its magic is ignored and rewritten"
	# a FIFO in its place must not block the reader
	rm -f "$C" "$T/kbad"
	if mkfifo -m 600 "$C" 2>/dev/null; then
		: >"$T/kbad"
		kcache "a FIFO in place of the kallsyms cache does not block, and is replaced"
	else
		skip "a FIFO in place of the kallsyms cache" "mkfifo failed"
	fi
fi

# --- a binary whose build-id is longer than any stax keeps -----------------
# (70 bytes; the kernel and the recording keep at most 20): attaching reads
# it from the file, and the recording must stay readable, the function named.
hex=$(head -c 70 /dev/urandom | od -An -tx1 | tr -d ' \n')
if ! cc -O1 -fno-omit-frame-pointer -I"$ROOT/tests/programs" -Wl,--build-id=0x"$hex" \
	-o "$T/longbid" "$ROOT/tests/programs/spin.c" 2>"$T/cc.err"; then
	skip "a binary with a 70-byte build-id" "the linker refused it: $(first_line "$T/cc.err")"
else
	"$T/longbid" 5 >/dev/null 2>&1 &
	LPID=$!
	bg_add "$LPID"
	sleep 0.2
	stax record -q -p "$LPID" --duration 0.5 -o "$T/longbid.data" >/dev/null 2>"$T/lerr"
	kill "$LPID" 2>/dev/null
	if stax top -i "$T/longbid.data" >"$T/ltop" 2>>"$T/lerr" && grep -q 'spin_loop' "$T/ltop"; then
		ok "a binary with a 70-byte build-id: attached, readable, its function named"
	else
		fail "a binary with a 70-byte build-id" "$(tr '\n' '|' <"$T/lerr" | cut -c1-200) $(head -n 3 "$T/ltop" | tr '\n' '|')"
	fi
fi

# --- stax serve: odd query parameters ---------------------------------------
why=$(loopback_why)
if [ -n "$why" ]; then
	skip "serve with odd query parameters" "$why"
elif ! command -v curl >/dev/null 2>&1; then
	skip "serve with odd query parameters" "curl is not installed (apt-get install curl)"
else
	"$STAX" serve -i "$T/good.data" --port 0 2>"$T/serve.err" &
	SPID=$!
	bg_add "$SPID"
	PORT=""
	if ! wait_for 'PORT=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/serve.err"); [ -n "$PORT" ]' 60; then
		fail "serve with odd query parameters" "the server did not start: $(first_line "$T/serve.err")"
	else
		bad=""
		long=$(head -c 6000 /dev/zero | tr '\0' 'x')
		for q in "/api/top?tid=abc" "/api/top?tid=-1" "/api/top?tid=99999999999999999999999" \
			"/api/top?tid=%00" "/flame.svg?tid=1&tid=2" "/api/threads?tid=" "/api/info?tid=0x10" \
			"/api/addrs" "/api/addrs?func=" "/api/addrs?func=%00" "/api/addrs?func=%ff%fe%22%5c%3c" \
			"/api/addrs?func=$long" "/api/addrs?func=work_a&tid=abc" "/flame.svg?mode=%00%ff" \
			"/api/annotate?func=%00" "/api/annotate?func=%22%5c" "/nothing?x=%zz" "/api/top?%%%=%%"; do
			code=$(curl -s -m 20 -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$PORT$q")
			case "$code" in
			200 | 400 | 404) ;;
			*) bad="$bad [$q: HTTP $code]" ;;
			esac
			if [ "$code" = 200 ] && [ "${q#/api/}" != "$q" ] && command -v python3 >/dev/null 2>&1 &&
				! python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' "$T/body" 2>/dev/null; then
				bad="$bad [$q: the body is not JSON: $(head -c 80 "$T/body")]"
			fi
		done
		if ! kill -0 "$SPID" 2>/dev/null || crashed "$T/serve.err" 0; then
			bad="$bad [the server died: $(tail -n 2 "$T/serve.err" | tr '\n' '|')]"
		fi
		if [ -z "$bad" ]; then
			ok "serve with odd query parameters: each answered 200, 400 or 404 (JSON when 200), the server lives"
		else
			fail "serve with odd query parameters" "$bad"
		fi
		kill "$SPID" 2>/dev/null
	fi
fi

done_testing
