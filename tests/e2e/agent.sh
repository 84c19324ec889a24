#!/bin/sh
# agent.sh - stax agent: the whole machine into a directory of recordings
# that rotate (each one reads alone, with its own symbols, and the next
# begins where the last ended), SIGHUP starts the next one, SIGTERM ends
# the last one and exits 0, retention removes the agent's own old files
# and nothing else, and under process churn the state it carries from
# one recording to the next stays small (exited processes let go).
#
#   callgraph-nofp 3   main;a;b;leaf_b 75%, main;a;c;leaf_c 25% (needs DWARF
#                      unwinding: no frame pointers), ~4.5 s of CPU
#   churn-nofp 40 12   40 new processes a second (fork + exec) for 12 s,
#                      each ~2 ms of CPU in child_work
# The machine is shared: the agent records every process; the checks look
# at the processes this test starts, by pid, and at what the agent says
# of itself (stax info --json: agent); with --listen, go tool pprof reads
# the pull endpoint while it records. Nothing waits for the clock beyond
# generous time limits on conditions (wait_for).
# stax-test: seconds=40
. "$(dirname "$0")/lib.sh"
require_stax

json_num() { grep -o "\"$1\": *[0-9.]*" "$2" | head -n 1 | sed 's/.*: *//'; }
json_str() { grep -o "\"$1\": *\"[^\"]*\"" "$2" | head -n 1 | sed 's/.*: *"//; s/"$//'; }
# the agent's files in a directory, oldest first
files() { ls "$1" 2>/dev/null | grep -E '^stax-[0-9]{8}-[0-9]{6}\.data$'; }

# --- what it refuses, before anything is made --------------------------------
stax agent --rotate 0.5s --dir "$T/no" >"$T/o" 2>"$T/e"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/e" && grep -q -- '--rotate' "$T/e" && [ ! -e "$T/no" ]; then
	ok "--rotate below 1 s: one-line error, exit 1, nothing made"
else
	fail "--rotate below 1 s is refused" "status $rc: $(first_line "$T/e")"
fi
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	skip "stax agent records" "needs root or kernel.perf_event_paranoid <= 0"
	done_testing
fi

# a user who may not record the whole machine: a clear error, no directory
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1 &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
	# a copy nobody can reach (a clone under a 0700 directory, as
	# mktemp -d makes, is not), as nonroot.sh does
	mkdir -m 755 "$T/bin" && cp "$STAX" "$T/bin/stax" && chmod 755 "$T/bin/stax"
	runuser -u nobody -- "$T/bin/stax" agent --dir "$T/nobody" >"$T/o" 2>"$T/e"
	rc=$?
	if [ "$rc" -eq 1 ] && one_line_error "$T/e" && grep -q 'whole machine' "$T/e" && [ ! -e "$T/nobody" ]; then
		ok "as nobody (paranoid $(cat /proc/sys/kernel/perf_event_paranoid)): one-line error, nothing made ($(cut -c1-90 "$T/e"))"
	else
		fail "as nobody: a clear error" "status $rc: $(first_line "$T/e")"
	fi
else
	skip "as nobody: a clear error" "needs root and runuser, with kernel.perf_event_paranoid > 0"
fi

mkdir "$T/real"
ln -s "$T/real" "$T/link"
stax agent --dir "$T/link" >"$T/o" 2>"$T/e"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/e" && grep -q 'symbolic link' "$T/e" && [ -z "$(ls "$T/real")" ]; then
	ok "--dir that is a symbolic link: refused, nothing written through it"
else
	fail "--dir that is a symbolic link is refused" "status $rc: $(first_line "$T/e")"
fi
if [ "$(id -u)" -eq 0 ]; then
	mkdir "$T/theirs"
	chown nobody "$T/theirs"
	stax agent --dir "$T/theirs" >"$T/o" 2>"$T/e"
	rc=$?
	if [ "$rc" -eq 1 ] && one_line_error "$T/e" && grep -q 'another user' "$T/e" && [ -z "$(ls "$T/theirs")" ]; then
		ok "--dir of another user: refused"
	else
		fail "--dir of another user is refused" "status $rc: $(first_line "$T/e")"
	fi
fi

# --- a run: rotation, SIGHUP, retention, SIGTERM --------------------------------
D=$T/d
mkdir -m 700 "$D"
# what is not the agent's to remove: a file with its name pattern that is
# no recording, a symbolic link with the pattern to an old recording, and
# another name; and one that is: an old recording named as the agent names
# its files (a previous run's)
stax record -q -F 99 -o "$T/old.data" -- "$PROG/callgraph-fp" 0.05 >/dev/null 2>&1
printf 'not a recording\n' >"$D/stax-20000101-000000.data"
cp "$T/old.data" "$T/target.data"
ln -s "$T/target.data" "$D/stax-20000101-000001.data"
echo notes >"$D/notes.txt"
cp "$T/old.data" "$D/stax-20000101-000002.data"
touch -d '2000-01-01 00:00' "$D/stax-20000101-000000.data" "$D/stax-20000101-000002.data" "$T/target.data" \
	"$D/notes.txt"
before=$(ls -l --time-style=+%s "$D/stax-20000101-000000.data" "$D/notes.txt" "$T/target.data" | awk '{ print $5, $6 }' | tr '\n' ' ')

"$STAX" agent --dir "$D" --rotate 2s --keep 6s -F 99 >"$T/agent.out" 2>"$T/agent.err" &
AG=$!
bg_add "$AG"
wait_for "[ -n \"\$(files '$D' | grep -v '^stax-2000')\" ]" 60 || fail "the agent starts a file" "none after 60 s: $(first_line "$T/agent.err")"
first=$(files "$D" | grep -v '^stax-2000' | head -n 1)
"$PROG/callgraph-nofp" 3 >/dev/null 2>&1 &
CG=$!
wait "$CG"
# SIGHUP: the file being written ends (says so) and the next begins
hup_file() {
	for _f in $(files "$D" | grep -v '^stax-2000'); do
		"$STAX" info --json -i "$D/$_f" 2>/dev/null | grep -q '"file_end": *"SIGHUP"' && return 0
	done
	return 1
}
kill -HUP "$AG"
if wait_for hup_file 60; then
	ok "SIGHUP ended a file (file_end SIGHUP) and started the next"
else
	fail "SIGHUP starts the next file" "no file says file_end SIGHUP after 60 s"
fi
# the first file goes once it is 6 s past its last write
wait_for "[ ! -e '$D/$first' ]" 90
gone_first=$?
kill -TERM "$AG"
wait "$AG"
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "SIGTERM: the agent exits 0"
else
	fail "SIGTERM: the agent exits 0" "status $rc: $(tail -n 2 "$T/agent.err" | tr '\n' '|')"
fi

after=$(ls -l --time-style=+%s "$D/stax-20000101-000000.data" "$D/notes.txt" "$T/target.data" 2>&1 | awk '{ print $5, $6 }' | tr '\n' ' ')
if [ "$before" = "$after" ] && [ -L "$D/stax-20000101-000001.data" ] &&
	[ "$(readlink "$D/stax-20000101-000001.data")" = "$T/target.data" ]; then
	ok "retention left a foreign file with the pattern, a symbolic link with it (and its old target) and another name as they were"
else
	fail "retention leaves what is not the agent's" "before: $before after: $after; $(ls -l "$D" | head -n 8 | tr '\n' '|')"
fi
if [ "$gone_first" -eq 0 ] && [ ! -e "$D/stax-20000101-000002.data" ]; then
	ok "retention removed the agent's own files past --keep (its first, $first, and an old recording with its name)"
else
	fail "retention removes the agent's own old files" "first $first there: $([ -e "$D/$first" ] && echo yes || echo no); old one there: $([ -e "$D/stax-20000101-000002.data" ] && echo yes || echo no)"
fi

# each file reads alone; the hot function is there in each one the
# program ran in; the files follow one another without a gap
n=0 with=0 bad="" prev_end="" gaps="" total=0 tb=0
for f in $(files "$D" | grep -v '^stax-2000'); do
	n=$((n + 1))
	stax info --json -i "$D/$f" >"$T/i.json" 2>"$T/i.err"
	st=$(json_str state "$T/i.json")
	[ "$st" = finished ] || bad="$bad $f: $st $(first_line "$T/i.err");"
	s0=$(json_num start_ns "$T/i.json")
	e0=$(json_num end_ns "$T/i.json")
	[ -n "$prev_end" ] && [ "$prev_end" != "$s0" ] && gaps="$gaps $f starts at $s0, the last ended at $prev_end;"
	prev_end=$e0
	stax flame --folded --pid "$CG" -i "$D/$f" >"$T/f.folded" 2>/dev/null
	c=$(samples "$T/f.folded")
	[ "$c" -gt 0 ] || continue
	with=$((with + 1))
	b=$(samples "$T/f.folded" ";main;a;b;leaf_b$K")
	l=$(samples "$T/f.folded" ";main;a;(b;leaf_b|c;leaf_c)$K")
	total=$((total + c))
	tb=$((tb + b))
	# (a file with a few of its samples, at its start or exit, is too
	# small for a share: 0 of 1 under the sanitizer; the total counts it)
	[ "$c" -lt 20 ] || [ $((l * 100)) -ge $((c * 80)) ] || bad="$bad $f: $l of $c samples of callgraph in main;a;b;leaf_b or main;a;c;leaf_c;"
done
if [ -z "$bad" ] && [ "$with" -ge 2 ] && between "$(pct "$tb" "$total")" 60 90; then
	ok "$n files, each finished and read alone; callgraph-nofp in $with of them, main;a;b;leaf_b $(pct "$tb" "$total")% of its $total samples (75% expected)"
else
	fail "each file reads alone and names the hot function" "$with files with callgraph, leaf_b $tb of $total;$bad"
fi
if [ -z "$gaps" ] && [ "$n" -ge 3 ]; then
	ok "each file begins where the last one ended (start_ns = the last end_ns): no time between files"
else
	fail "files follow one another" "$n files;$gaps"
fi
last=$(files "$D" | grep -v '^stax-2000' | tail -n 1)
stax top -n 3 -i "$D/$last" >"$T/top" 2>"$T/top.err"
if [ $? -eq 0 ] && [ -n "$(col_values "$T/top" FUNCTION)" ]; then
	ok "the last file (ended by SIGTERM) reads: stax top names $(col_values "$T/top" FUNCTION | head -n 1)"
else
	fail "the last file reads" "$(first_line "$T/top.err")"
fi

# --- --listen: the pull endpoint while the agent records ----------------------
# go tool pprof -top on ?seconds=3 while spin runs, across a file boundary
# (--rotate 2s): it names spin_loop (the issue's check). Its share of the
# machine's samples is the share of the CPUs spin gets, which a busy
# machine makes as small as it likes: the share is checked in a second
# profile of the same seconds, ?pid= of spin's process
why=$(loopback_why)
[ -z "$why" ] && ! command -v go >/dev/null 2>&1 && why="go (the client: go tool pprof) is not installed"
if [ -n "$why" ]; then
	skip "agent --listen" "$why"
else
	G=$T/go
	mkdir -p "$G"
	P=$T/p
	"$STAX" agent --dir "$P" --rotate 2s -F 99 --listen 127.0.0.1:0 >/dev/null 2>"$T/p.err" &
	AG=$!
	bg_add "$AG"
	wait_for "grep -q 'debug/pprof/ ' '$T/p.err'" 30
	port=$(sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/debug/pprof/ .*|\1|p' "$T/p.err" | head -n 1)
	"$PROG/spin-fp" 12 >"$T/spin.out" 2>/dev/null &
	SP=$!
	bg_add "$SP"
	wait_for "[ -s '$T/spin.out' ]" 30
	spid=$(head -n 1 "$T/spin.out")
	HOME=$G GOCACHE=$G/cache GOPATH=$G/path GOFLAGS=-mod=mod GOPROXY=off PPROF_TMPDIR=$G \
		timeout 90 go tool pprof -top "http://127.0.0.1:$port/debug/pprof/profile?seconds=3&pid=$spid" \
		>"$T/ptop.txt" 2>"$T/ptop.err" &
	GP=$!
	HOME=$G GOCACHE=$G/cache GOPATH=$G/path GOFLAGS=-mod=mod GOPROXY=off PPROF_TMPDIR=$G \
		timeout 90 go tool pprof -top "http://127.0.0.1:$port/debug/pprof/profile?seconds=3" >"$T/top.txt" 2>"$T/top.err"
	wait "$GP"
	flat=$(awk '$NF == "spin_loop" { print $2; exit }' "$T/top.txt" | tr -d '%')
	pflat=$(awk '$NF == "spin_loop" { print $2; exit }' "$T/ptop.txt" | tr -d '%')
	kill "$SP" 2>/dev/null
	kill -TERM "$AG"
	wait "$AG"
	rc=$?
	if [ -n "$port" ] && between "${flat:-0}" 0.01 100 && between "${pflat:-0}" 80 100; then
		ok "agent --listen: go tool pprof -top on ?seconds=3 names spin_loop (flat ${flat}% of the machine's samples, ${pflat}% of spin's with &pid=$spid)"
	else
		fail "agent --listen: go tool pprof names spin_loop" "port '$port', flat '$flat', with pid= '$pflat': $(head -n 8 "$T/top.txt" | tr '\n' '|' | cut -c1-300) $(first_line "$T/top.err") $(first_line "$T/ptop.err") $(first_line "$T/p.err")"
	fi
	bad=""
	for f in $(files "$P"); do
		stax top -n 1 -i "$P/$f" >/dev/null 2>"$T/e" || bad="$bad $f: $(first_line "$T/e")"
	done
	if [ "$rc" -eq 0 ] && [ -z "$bad" ] && [ "$(files "$P" | wc -l)" -ge 2 ]; then
		ok "agent --listen: SIGTERM exits 0; its $(files "$P" | wc -l) files read"
	else
		fail "agent --listen: SIGTERM exits 0 and the files read" "status $rc;$bad"
	fi
fi

# --- churn: what the agent carries from one file to the next -----------------
C=$T/c
# --max-processes 5: with 8 sleeping processes of this test (and whatever
# else runs) there are more live processes than that, so each new file
# evicts some (a later sample of theirs reads them from /proc)
for i in 1 2 3 4 5 6 7 8; do
	sleep 120 &
	bg_add $!
done
"$STAX" agent --dir "$C" --rotate 3s --max-processes 5 -q >/dev/null 2>"$T/c.err" &
AG=$!
bg_add "$AG"
wait_for "[ -n \"\$(files '$C')\" ]" 60
"$PROG/churn-nofp" 40 12 >"$T/churn.out" 2>&1
started=$(awk '{ print $1 }' "$T/churn.out")
sleep 3.5 # one more file boundary after the churn: its exited processes go
kill -TERM "$AG"
wait "$AG"
rc=$?
dropped=0 maxcarried=0 rss2="" rsslast="" k=0 evicted=0 unread=""
for f in $(files "$C"); do
	k=$((k + 1))
	stax info --json -i "$C/$f" >"$T/i.json" 2>/dev/null
	d=$(json_num dropped_processes "$T/i.json")
	ev=$(json_num evicted_processes "$T/i.json")
	evicted=$((evicted + ${ev:-0}))
	stax top -n 1 -i "$C/$f" >/dev/null 2>&1 || unread="$unread $f"
	cp=$(json_num carried_processes "$T/i.json")
	r=$(json_num rss_bytes "$T/i.json")
	dropped=$((dropped + ${d:-0}))
	[ "${cp:-0}" -gt "$maxcarried" ] && maxcarried=${cp:-0}
	[ "$k" -eq 2 ] && rss2=$r
	rsslast=$r
done
if [ "$rc" -eq 0 ] && [ "${started:-0}" -ge 100 ] && [ $((dropped * 100)) -ge $((started * 70)) ] &&
	[ "$maxcarried" -le 5 ]; then
	ok "churn of $started processes in $k files: $dropped exited ones let go at file starts, at most $maxcarried carried into one (--max-processes 5)"
else
	fail "exited processes are let go under churn" "status $rc, $started started, $dropped let go, at most $maxcarried carried, $k files: $(first_line "$T/c.err")"
fi
if [ "$evicted" -gt 0 ] && [ -z "$unread" ]; then
	ok "--max-processes 5: $evicted live processes evicted at file starts (counted in stax info), every file reads"
else
	fail "--max-processes evicts the least recently sampled" "$evicted evicted; files that do not read:$unread"
fi
# resident memory at the end of the second file and of the last: a
# generous margin (unwind tables of whatever else the machine runs come
# and go); stax record -a grew by about 2 KiB per process seen
if [ -n "${STAX_SANITIZER_LOGS:-}" ]; then
	# AddressSanitizer keeps freed memory in quarantine (256 MiB) and
	# its own shadow: resident memory says nothing of stax's there
	skip "memory stays bounded under churn" "not under the sanitizers: AddressSanitizer's quarantine grows resident memory (201 to 325 MiB)"
elif [ -n "$rss2" ] && [ -n "$rsslast" ] && [ "$rsslast" -le $((rss2 + 16 * 1048576)) ]; then
	ok "resident memory $((rss2 / 1048576)) MiB at the end of file 2, $((rsslast / 1048576)) MiB at the end of file $k"
else
	fail "memory stays bounded under churn" "rss at file 2: '$rss2', at the last: '$rsslast'"
fi
done_testing
