#!/bin/sh
# threads.sh - per-thread names, samples and filters.
#
# threads: three threads named worker-a/b/c run the same amount of work in
# work_a/work_b/work_c (~1/3 of the samples each; see threads.c).
. "$(dirname "$0")/lib.sh"
require_stax

# record SCALE: record threads-fp; tables in $T/threads.txt, $T/all.folded
record() {
	stax record -o "$T/t.data" -- "$PROG/threads-fp" "$1" >/dev/null 2>"$T/rec.err"
	rc=$?
	stax threads -i "$T/t.data" >"$T/threads.txt" 2>"$T/threads.err"
	stax flame --folded -i "$T/t.data" >"$T/all.folded" 2>"$T/all.err"
	return $rc
}

# names_ok: every worker has a row with a share between 20% and 47%
names_ok() {
	why=""
	for w in worker-a worker-b worker-c; do
		n=$(row_where "$T/threads.txt" NAME "$w" SAMPLES)
		s=$(share "$T/all.folded" "^$w;")
		[ -n "$n" ] && [ "$n" -gt 0 ] && between "$s" 20 47 || why="$why $w: ${n:-no row} samples, $s%;"
	done
	[ -z "$why" ]
}

if record 1; then
	ok "record threads-fp exits 0"
else
	fail "record threads-fp exits 0" "status $rc: $(first_line "$T/rec.err")"
fi
if ! names_ok; then
	echo "# retrying 2x longer:$why"
	record 2
fi
if names_ok; then
	ok "threads lists worker-a, worker-b, worker-c with ~1/3 of the samples each"
else
	fail "threads lists worker-a, worker-b, worker-c with ~1/3 of the samples each" \
		"$why table: $(tr '\n' '|' <"$T/threads.txt" | cut -c1-400) $(first_line "$T/threads.err")"
fi

# All workers are threads of one process, each with its own tid.
pids=$(col_values "$T/threads.txt" PID | sort -u | wc -l)
tids=$(col_values "$T/threads.txt" TID | sort -u | wc -l)
ta=$(row_where "$T/threads.txt" NAME worker-a TID)
pa=$(row_where "$T/threads.txt" NAME worker-a PID)
if [ "$pids" -eq 1 ] && [ "$tids" -ge 3 ] && [ -n "$ta" ] && [ "$ta" != "$pa" ]; then
	ok "workers share one pid and have their own tids"
else
	fail "workers share one pid and have their own tids" "$pids pids, $tids tids, worker-a tid=$ta pid=$pa"
fi

# CPU_MS: each worker burned about 0.45 s (at 999 Hz, ~1 ms per sample)
ms=$(row_where "$T/threads.txt" NAME worker-b CPU_MS)
n=$(row_where "$T/threads.txt" NAME worker-b SAMPLES)
if [ -n "$ms" ] && [ -n "$n" ] && between "$ms" "$(echo "$n" | awk '{ print $1 * 0.8 }')" "$(echo "$n" | awk '{ print $1 * 1.25 + 5 }')"; then
	ok "worker-b CPU_MS ($ms) matches its samples ($n) at 999 Hz"
else
	fail "worker-b CPU_MS matches its samples at 999 Hz" "CPU_MS '$ms', samples '$n'"
fi

# --tid: each thread's samples are in its own work function
for x in a b c; do
	tid=$(row_where "$T/threads.txt" NAME "worker-$x" TID)
	if [ -z "$tid" ]; then
		fail "--tid worker-$x keeps work_$x only" "no row for worker-$x"
		continue
	fi
	stax flame --folded --tid "$tid" -i "$T/t.data" >"$T/$x.folded" 2>"$T/$x.err"
	own=$(share "$T/$x.folded" "^worker-$x;.*;thread_main;work_$x$K")
	other=$(share "$T/$x.folded" ";work_[^$x]$K")
	if between "$own" 95 100 && between "$other" 0 0; then
		ok "--tid $tid (worker-$x): $own% in thread_main;work_$x"
	else
		fail "--tid $tid (worker-$x) keeps thread_main;work_$x only" \
			"$own% own, $other% other; first: $(first_line "$T/$x.folded") $(first_line "$T/$x.err")"
	fi
done

# --comm: the same through the thread name; top agrees
stax flame --folded --comm worker-b -i "$T/t.data" >"$T/cb.folded" 2>"$T/cb.err"
s=$(share "$T/cb.folded" ";work_b$K")
if [ -s "$T/cb.folded" ] && between "$s" 95 100; then
	ok "--comm worker-b keeps work_b ($s%)"
else
	fail "--comm worker-b keeps work_b" "$s%; first: $(first_line "$T/cb.folded") $(first_line "$T/cb.err")"
fi
first=$(stax top --comm worker-c -i "$T/t.data" 2>/dev/null | col_values /dev/stdin FUNCTION | sed -n 1p)
if [ "$first" = work_c ]; then
	ok "top --comm worker-c lists work_c first"
else
	fail "top --comm worker-c lists work_c first" "got '$first'"
fi

# --pid keeps the whole process
pid=$(row_where "$T/threads.txt" NAME worker-a PID)
a=$(samples "$T/all.folded")
stax flame --folded --pid "${pid:-0}" -i "$T/t.data" >"$T/p.folded" 2>/dev/null
p=$(samples "$T/p.folded")
if [ "$a" -gt 0 ] && [ "$p" -eq "$a" ]; then
	ok "--pid $pid keeps all $a samples"
else
	fail "--pid $pid keeps all samples" "$p of $a"
fi

# --comm with the process's name (its main thread's, threads-fp) keeps
# the threads that renamed themselves too
stax flame --folded --comm threads-fp -i "$T/t.data" >"$T/pn.folded" 2>/dev/null
pn=$(samples "$T/pn.folded")
if [ "$a" -gt 0 ] && [ "$pn" -eq "$a" ]; then
	ok "--comm threads-fp (the process's name) keeps all $a samples of its threads"
else
	fail "--comm with the process's name keeps its threads" "$pn of $a"
fi
# a name longer than the 15 bytes the kernel keeps matches what it kept
cp "$PROG/threads-fp" "$T/threads-fp-with-a-long-name"
stax record -q -o "$T/long.data" -- "$T/threads-fp-with-a-long-name" 0.2 >/dev/null 2>&1
stax flame --folded -i "$T/long.data" >"$T/la.folded" 2>/dev/null
stax flame --folded --comm threads-fp-with-a-long-name -i "$T/long.data" >"$T/ll.folded" 2>/dev/null
stax flame --folded --comm threads-fp-with-another-name -i "$T/long.data" >"$T/lo.folded" 2>/dev/null
la=$(samples "$T/la.folded")
if [ "$la" -gt 0 ] && [ "$(samples "$T/ll.folded")" -eq "$la" ] && [ "$(samples "$T/lo.folded")" -eq "$la" ] &&
	[ "$(stax flame --folded --comm threads-fp-w -i "$T/long.data" 2>/dev/null | samples /dev/stdin)" -eq 0 ]; then
	ok "--comm threads-fp-with-a-long-name matches the kernel's threads-fp-with (all $la samples); a shorter prefix does not"
else
	fail "--comm with a name longer than 15 bytes" "$(samples "$T/ll.folded") of $la"
fi

# A filter that matches nothing: an error naming it, exit 1, no rows
stax flame --folded --comm no-such-thread -i "$T/t.data" >"$T/none.folded" 2>"$T/none.err"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(samples "$T/none.folded")" -eq 0 ] && one_line_error "$T/none.err" &&
   grep -q -- '--comm no-such-thread' "$T/none.err"; then
	ok "--comm no-such-thread: exit 1, one error line naming the filter, no rows"
else
	fail "--comm no-such-thread: exit 1 naming the filter" "status $rc, $(samples "$T/none.folded") samples $(first_line "$T/none.err")"
fi

done_testing
