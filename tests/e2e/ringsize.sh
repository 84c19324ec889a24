#!/bin/sh
# ringsize.sh - the ring buffers: -m/--mmap-pages as perf takes it, the
# default sized from the rate and the stack copy, the limit of an
# unprivileged user, and lost records reported with the knob to turn.
#
#   spin-fp SECONDS       main;spin_loop
#   manythreads-fp N S    N threads spinning in thread_work for S seconds
# stax-test: alone, seconds=15 (it records as the user nobody up to its locked memory limit, which other recordings as nobody share)
. "$(dirname "$0")/lib.sh"
require_stax

# ring_of FILE: the "rings:" line of stax info, without the label
ring_of() { stax info -i "$1" 2>/dev/null | sed -n 's/^rings: *//p'; }

# --- bad values: one error line, nothing recorded ---------------------------
for bad in 3 1025 0 4X x 1.5M 2G -1 ""; do
	rm -f "$T/bad.data"
	stax record -m "$bad" --unwind fp -o "$T/bad.data" -- "$PROG/spin-fp" 0.1 >/dev/null 2>"$T/bad.err"
	rc=$?
	if [ "$rc" -ne 0 ] && ! crashed "$T/bad.err" "$rc" && one_line_error "$T/bad.err" && [ ! -e "$T/bad.data" ]; then
		ok "-m '$bad' refused in one line: $(first_line "$T/bad.err" | cut -c14-120)"
	else
		fail "-m '$bad' refused in one line, nothing written" "status $rc: $(tr '\n' '|' <"$T/bad.err" | cut -c1-200)"
	fi
done
stax record -m 3 -o "$T/bad.data" -- true 2>"$T/p2.err" >/dev/null
if grep -q 'power of two (2 or 4)' "$T/p2.err"; then
	ok "-m 3 names the powers of two around it"
else
	fail "-m 3 names the powers of two around it" "$(first_line "$T/p2.err")"
fi
# a ring that cannot hold two samples with their 32 KiB stack copies
stax record -m 8 -o "$T/small.data" -- "$PROG/spin-fp" 0.1 >/dev/null 2>"$T/small.err"
rc=$?
if [ "$rc" -ne 0 ] && one_line_error "$T/small.err" && grep -q 'cannot hold two samples.*give -m 32 or more' "$T/small.err" &&
	[ ! -e "$T/small.data" ]; then
	ok "-m 8 with 32 KiB stack copies: refused, asks for -m 32 or more"
else
	fail "-m 8 with 32 KiB stack copies is refused" "status $rc: $(first_line "$T/small.err")"
fi

# --- good values: pages, sizes rounded up to a power of two -----------------
for spec in "512:2 MiB" "1M:1 MiB" "3M:4 MiB" "640K:1 MiB" "5K:8 KiB" "100B:4 KiB"; do
	m=${spec%%:*}
	want=${spec#*:}
	stax record -q -m "$m" --unwind fp -o "$T/m.data" -- "$PROG/spin-fp" 0.1 >/dev/null 2>"$T/m.err"
	rc=$?
	got=$(ring_of "$T/m.data")
	if [ "$rc" -eq 0 ] && [ "$got" = "$want per cpu" ]; then
		ok "-m $m: rings of $want per cpu"
	else
		fail "-m $m: rings of $want per cpu" "status $rc, rings '$got': $(first_line "$T/m.err")"
	fi
done
stax record -q --mmap-pages 64 --unwind fp -o "$T/m.data" -- "$PROG/spin-fp" 0.1 >/dev/null 2>"$T/m.err"
got=$(ring_of "$T/m.data")
if [ "$got" = "256 KiB per cpu" ]; then
	ok "--mmap-pages 64: rings of 256 KiB per cpu"
else
	fail "--mmap-pages 64: rings of 256 KiB per cpu" "rings '$got': $(first_line "$T/m.err")"
fi

# --- the default: 500 ms of samples at the rate (root: no lock limit) -------
if [ "$(id -u)" -eq 0 ] && [ "$(getconf PAGESIZE)" -eq 4096 ] &&
	[ "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)" -ge $((4 * 1024 * 1024)) ]; then
	# hybrid: 999 Hz x 0.5 s x ~33.3 KB = 16.6 MB -> 16 MiB; 99 Hz -> 2 MiB;
	# frame pointers: 999 Hz x 0.5 s x ~350 B -> the 1 MiB floor
	for spec in "999:hybrid:16 MiB" "99:hybrid:2 MiB" "999:fp:1 MiB" "4000:hybrid:64 MiB"; do
		hz=${spec%%:*}
		rest=${spec#*:}
		mode=${rest%%:*}
		want=${rest#*:}
		stax record -q -F "$hz" --unwind "$mode" -o "$T/d.data" -- "$PROG/spin-fp" 0.1 >/dev/null 2>"$T/d.err"
		got=$(ring_of "$T/d.data")
		if [ "$got" = "$want per cpu" ]; then
			ok "default at -F $hz --unwind $mode: $want per cpu"
		else
			fail "default at -F $hz --unwind $mode: $want per cpu" "rings '$got': $(first_line "$T/d.err")"
		fi
	done
else
	skip "default ring sizes" "needs root (no lock limit), 4 KiB pages and 4 GiB of memory (the 1/32 cap)"
fi

# --- lost records name the knob ----------------------------------------------
# The recorder stopped for 1.5 s while three threads spin: its 16 KiB rings
# fill in milliseconds, so records are lost; the summary says how many and
# what to raise or lower, and stax info agrees on the number.
"$STAX" record -m 4 --unwind fp -o "$T/lost.data" -- "$PROG/manythreads-fp" 3 4 >/dev/null 2>"$T/lost.err" &
REC=$!
bg_add "$REC"
stax wait -i "$T/lost.data" --for-samples 100 --timeout 60 >/dev/null 2>&1
kill -STOP "$REC"
sleep 1.5
kill -CONT "$REC"
wait "$REC"
rc=$?
said=$(sed -n 's/^stax: warning: \([0-9]*\) records were lost .*(raise -m, now 16 KiB per cpu, or lower -F, now 999 Hz)$/\1/p' "$T/lost.err")
summ=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$T/lost.err")
info=$(stax info --json -i "$T/lost.data" 2>/dev/null | grep -o '"lost":[0-9]*' | head -n 1 | cut -d: -f2)
if [ "$rc" -eq 0 ] && [ -n "$said" ] && [ "$said" -gt 0 ] && [ "$said" = "$summ" ] && [ "$said" = "$info" ]; then
	ok "a stopped recorder: $said records lost, the warning says raise -m (16 KiB per cpu) or lower -F; info agrees"
else
	fail "a stopped recorder: losses reported with the knob" "status $rc, warning '$said', summary '$summ', info '$info': $(grep -m1 warning "$T/lost.err" | cut -c1-200)"
fi
# with stack copies the warning names --stack-size too
"$STAX" record -m 32 -o "$T/lost2.data" -- "$PROG/manythreads-fp" 3 4 >/dev/null 2>"$T/lost2.err" &
REC=$!
bg_add "$REC"
stax wait -i "$T/lost2.data" --for-samples 100 --timeout 60 >/dev/null 2>&1
kill -STOP "$REC"
sleep 1
kill -CONT "$REC"
wait "$REC"
if grep -q '^stax: warning: [0-9]* records were lost .*(raise -m, now 128 KiB per cpu, or lower -F, now 999 Hz, or lower --stack-size (now 32768 bytes a sample))$' "$T/lost2.err"; then
	ok "with 32 KiB stack copies the warning also names --stack-size"
else
	fail "with 32 KiB stack copies the warning also names --stack-size" "$(grep -m1 'lost\|error' "$T/lost2.err" | cut -c1-250)"
fi

# --- an unprivileged user asking for more than it may lock -------------------
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1 &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	group=$(id -gn nobody)
	lim=$(setpriv --reuid=nobody --regid="$group" --clear-groups sh -c 'ulimit -l')
	mlock=$(cat /proc/sys/kernel/perf_event_mlock_kb)
	if [ "$lim" = unlimited ]; then
		skip "nobody: -m above the lock limit" "ulimit -l is unlimited here: nothing to exceed"
	else
		# twice what nobody may lock on one cpu alone: over the limit on any cpu count
		kb=$((2 * (mlock + lim)))
		mkdir -m 755 "$T/bin"
		mkdir -m 777 "$T/out"
		cp "$STAX" "$PROG/spin-fp" "$T/bin/"
		chmod 755 "$T/bin/stax" "$T/bin/spin-fp"
		timeout 60 setpriv --reuid=nobody --regid="$group" --clear-groups \
			"$T/bin/stax" record -m "${kb}K" -o "$T/out/n.data" -- "$T/bin/spin-fp" 0.2 >/dev/null 2>"$T/n.err"
		rc=$?
		if [ "$rc" -eq 1 ] && one_line_error "$T/n.err" && grep -q 'kernel.perf_event_mlock_kb' "$T/n.err" &&
			grep -q 'ulimit -l' "$T/n.err" && grep -q 'sudo sysctl kernel.perf_event_mlock_kb=' "$T/n.err" &&
			[ ! -e "$T/out/n.data" ]; then
			ok "nobody: -m ${kb}K refused in one line naming kernel.perf_event_mlock_kb and ulimit -l"
		else
			fail "nobody: -m above the lock limit refused in one line" "status $rc: $(tr '\n' '|' <"$T/n.err" | cut -c1-300)"
		fi
		# and the default fits what nobody may lock
		timeout 60 setpriv --reuid=nobody --regid="$group" --clear-groups \
			"$T/bin/stax" record -q -o "$T/out/d.data" -- "$T/bin/spin-fp" 0.2 >/dev/null 2>"$T/nd.err"
		rc=$?
		if [ "$rc" -eq 0 ] && [ -n "$(ring_of "$T/out/d.data")" ]; then
			ok "nobody: the default rings fit the lock limit ($(ring_of "$T/out/d.data"))"
		else
			fail "nobody: the default rings fit the lock limit" "status $rc: $(tr '\n' '|' <"$T/nd.err" | cut -c1-300)"
		fi
	fi
else
	skip "nobody: -m above the lock limit" "needs root, setpriv, the user nobody and kernel.perf_event_paranoid <= 2"
fi

done_testing
