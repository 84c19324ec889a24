#!/bin/sh
# nonroot.sh - recording as an unprivileged user (nobody).
#
# Under kernel.perf_event_paranoid 2 a user may profile its own processes,
# user-space frames only. stax and callgraph-fp are copied to a directory
# nobody can read and run; the output goes to one nobody can write.
# stax-test: alone, seconds=10 (it records as the user nobody: the locked ring memory of every such recording counts against one per-user limit)
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(id -u)" -ne 0 ]; then
	skip "record as nobody" "needs root to switch users (setpriv)"
	exit 0
fi
if ! command -v setpriv >/dev/null 2>&1 || ! id nobody >/dev/null 2>&1; then
	skip "record as nobody" "needs setpriv (util-linux) and the user nobody"
	exit 0
fi
group=$(id -gn nobody)
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
mkdir -m 755 "$T/bin"
mkdir -m 777 "$T/out"
cp "$STAX" "$PROG/callgraph-fp" "$T/bin/"
chmod 755 "$T/bin/stax" "$T/bin/callgraph-fp"

# as_nobody CMD...: run CMD as nobody, with a time limit
as_nobody() { timeout 120 setpriv --reuid=nobody --regid="$group" --clear-groups "$@"; }

if [ "$paranoid" -gt 2 ]; then
	# The kernel refuses unprivileged perf_event_open at all (Debian's 3).
	as_nobody "$T/bin/stax" record -o "$T/out/x.data" -- "$T/bin/callgraph-fp" 0.3 >/dev/null 2>"$T/err"
	rc=$?
	if [ "$rc" -ne 0 ] && one_line_error "$T/err" && grep -q 'perf_event_paranoid' "$T/err"; then
		ok "paranoid $paranoid: one error line naming kernel.perf_event_paranoid"
	else
		fail "paranoid $paranoid: one error line naming kernel.perf_event_paranoid" "status $rc: $(tr '\n' '|' <"$T/err" | cut -c1-300)"
	fi
	skip "record as nobody" "kernel.perf_event_paranoid is $paranoid (this test wants 2 or lower)"
	done_testing
fi

# record SCALE: as nobody, callgraph-fp into $T/out/x.data
record() {
	as_nobody "$T/bin/stax" record -o "$T/out/x.data" -- "$T/bin/callgraph-fp" "$1" >/dev/null 2>"$T/rec.err"
	rc=$?
	as_nobody "$T/bin/stax" flame --folded -i "$T/out/x.data" >"$T/x.folded" 2>"$T/x.err"
	return $rc
}
shares_ok() {
	sb=$(share "$T/x.folded" ";main;a;b;leaf_b$K")
	sc=$(share "$T/x.folded" ";main;a;c;leaf_c$K")
	between "$sb" 65 85 && between "$sc" 15 35
}

if record 0.7; then
	ok "record as nobody (paranoid $paranoid) exits 0"
else
	fail "record as nobody (paranoid $paranoid) exits 0" "status $rc: $(tr '\n' '|' <"$T/rec.err" | cut -c1-300)"
fi
owner=$(stat -c %U "$T/out/x.data" 2>/dev/null)
if [ "$owner" = nobody ]; then
	ok "the recording belongs to nobody"
else
	fail "the recording belongs to nobody" "owner '${owner:-no file}'"
fi
n=$(samples "$T/x.folded")
if [ "$n" -gt 300 ]; then
	ok "nobody's recording has $n samples"
else
	fail "nobody's recording has samples" "$n: $(first_line "$T/x.err")"
fi
if ! shares_ok; then
	echo "# shares off (leaf_b $sb%, leaf_c $sc%): retrying 2x longer"
	record 1.4
fi
if shares_ok; then
	ok "as nobody: main;a;b;leaf_b $sb%, main;a;c;leaf_c $sc%"
else
	fail "as nobody: main;a;b;leaf_b ~75%, main;a;c;leaf_c ~25%" "$sb% and $sc%"
fi
if [ "$paranoid" -ge 2 ]; then
	k=$(samples "$T/x.folded" '_[[]k[]]')
	if [ "$k" -eq 0 ]; then
		ok "paranoid $paranoid: no kernel frames"
	else
		fail "paranoid $paranoid: no kernel frames" "$k samples have _[k] frames"
	fi
else
	skip "no kernel frames under paranoid 2" "kernel.perf_event_paranoid is $paranoid here"
fi

# Refusals: one line, saying what to do, and only what would help: no
# kernel.perf_event_paranoid lets a user profile another user's process
# (root, CAP_PERFMON or CAP_SYS_PTRACE does).
as_nobody "$T/bin/stax" record -p 1 -o "$T/out/p1.data" >/dev/null 2>"$T/p1.err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/p1.err" && grep -qi 'permission' "$T/p1.err"; then
	ok "nobody attaching to pid 1: one error line (permission)"
else
	fail "nobody attaching to pid 1: one error line (permission)" "status $rc: $(tr '\n' '|' <"$T/p1.err" | cut -c1-300)"
fi
if grep -q 'belongs to root' "$T/p1.err" && grep -q 'CAP_PERFMON' "$T/p1.err" && ! grep -q 'sysctl' "$T/p1.err"; then
	ok "nobody attaching to pid 1: says it belongs to root, suggests no sysctl"
else
	fail "nobody attaching to pid 1: says it belongs to root, suggests no sysctl" "$(first_line "$T/p1.err")"
fi
# -F far above kernel.perf_event_max_sample_rate: the limit's real value,
# not the rate asked for
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
as_nobody "$T/bin/stax" record -F 10000000 -o "$T/out/f.data" -- "$T/bin/callgraph-fp" 0.1 >/dev/null 2>"$T/f.err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/f.err" &&
	grep -q "perf_event_max_sample_rate is $max" "$T/f.err" && grep -q -- "-F $max or lower" "$T/f.err" &&
	! grep -q '=10000000' "$T/f.err"; then
	ok "nobody with -F 10000000: cites kernel.perf_event_max_sample_rate's value ($max)"
else
	fail "nobody with -F 10000000: cites kernel.perf_event_max_sample_rate's value ($max)" "status $rc: $(first_line "$T/f.err")"
fi
# the recorder, info and doctor give one reason for the missing kernel
# frames (from the facts the recording keeps)
if [ "$paranoid" -ge 2 ]; then
	why=$(sed -n 's/^stax: recording user-space frames only: //p' "$T/rec.err")
	as_nobody "$T/bin/stax" info "$T/out/x.data" >"$T/info.txt" 2>/dev/null
	as_nobody "$T/bin/stax" doctor "$T/out/x.data" >"$T/doctor.txt" 2>/dev/null
	if [ -n "$why" ] && grep -qF "kernel:      user-space frames only: $why" "$T/info.txt" &&
		grep -qF "$why" "$T/doctor.txt"; then
		ok "record, info and doctor give the same reason for the missing kernel frames"
	else
		fail "record, info and doctor give the same reason for the missing kernel frames" \
			"record '$why'; info '$(grep '^kernel:' "$T/info.txt")'; doctor '$(grep -i kernel "$T/doctor.txt" | head -n 1)'"
	fi
else
	skip "record, info and doctor give the same reason" "kernel.perf_event_paranoid is $paranoid: kernel frames are recorded"
fi
as_nobody "$T/bin/stax" record -o "$T/bin/x.data" -- "$T/bin/callgraph-fp" 0.1 >/dev/null 2>"$T/ro.err"
rc=$?
if [ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] && one_line_error "$T/ro.err"; then
	ok "nobody writing to a read-only directory: one error line"
else
	fail "nobody writing to a read-only directory: one error line" "status $rc: $(tr '\n' '|' <"$T/ro.err" | cut -c1-300)"
fi

done_testing
