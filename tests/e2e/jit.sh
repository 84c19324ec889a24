#!/bin/sh
# jit.sh - JIT code named from /tmp/perf-PID.map and jitdump files:
# tests/programs/jitmap.c (built here: gcc -O2 -g -o jitmap jitmap.c)
# writes both for two machine-code loops; Node.js with --perf-basic-prof
# writes a perf map of its JavaScript functions.
# stax-test: seconds=9
. "$(dirname "$0")/lib.sh"
require_stax

if [ "$(uname -m)" != x86_64 ]; then
	skip "JIT maps" "the jitmap fixture is x86-64 machine code"
	exit 0
fi
if ! gcc -O2 -g -I"$ROOT/tests/programs" -o "$T/jitmap" "$ROOT/tests/programs/jitmap.c" 2>"$T/cc.err"; then
	fail "build jitmap" "$(first_line "$T/cc.err")"
	done_testing
fi

# jit_pid DATA: the recorded process's pid; its JIT files are removed
jit_cleanup() {
	p=$(stax script -i "$1" 2>/dev/null | awk 'NR == 1 { split($2, a, "/"); print a[1] }')
	[ -n "$p" ] && rm -f "/tmp/perf-$p.map" "/tmp/jit-$p.dump"
}

stax record -o "$T/j.data" -- "$T/jitmap" 1 >/dev/null 2>"$T/j.err" || fail "record jitmap" "$(first_line "$T/j.err")"
stax flame --folded -i "$T/j.data" >"$T/j.folded" 2>/dev/null
jit_cleanup "$T/j.data"
s_map=$(share "$T/j.folded" ";jit_map_loop$K")
s_dump=$(share "$T/j.folded" ";jit_dump_loop$K")
if between "$s_map" 25 75; then
	ok "perf map names JIT code ($s_map% in jit_map_loop)"
else
	fail "perf map names JIT code" "jit_map_loop $s_map% (want ~50)"
fi
if between "$s_dump" 25 75; then
	ok "jitdump found through its marker mapping names JIT code ($s_dump% in jit_dump_loop)"
else
	fail "jitdump names JIT code" "jit_dump_loop $s_dump% (want ~50)"
fi
# JIT code without a perf map (a sanitizer runtime's, libffi's): the
# recorder asks for the map less and less often, not every 50 ms
if command -v strace >/dev/null 2>&1; then
	# LeakSanitizer cannot run under ptrace (make check-sanitize): the
	# leak check is left out of this one run, the rest of ASan stays
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq -e trace=openat -o "$T/nm.trace" "$STAX" record -o "$T/nm.data" -- "$T/jitmap" 3 --no-maps \
		>/dev/null 2>"$T/nm.err" || fail "record jitmap --no-maps" "$(first_line "$T/nm.err")"
	asks=$(grep -c 'perf-[0-9]*\.map' "$T/nm.trace")
	# 3 s at one ask per 50 ms: 60; doubling to 400 ms: about 10
	if [ "$asks" -ge 1 ] && [ "$asks" -le 20 ]; then
		ok "a JIT process without a perf map: the map asked for $asks times in 3 s (backing off)"
	else
		fail "a JIT process without a perf map is asked for it less and less often" "$asks opens of its perf map in 3 s (want 1-20)"
	fi
else
	skip "a JIT process without a perf map is asked for it less and less often" "strace is not installed"
fi
# after /tmp is cleaned the recording still names them (symbols chunk)
if stax top -n 3 -i "$T/j.data" 2>/dev/null | grep -q jit_map_loop; then
	ok "names survive removing the map files"
else
	fail "names survive removing the map files" "no jit_map_loop in stax top"
fi

# a JIT that deletes its perf map and jitdump before it exits (runtimes do
# this at exit): read while they existed, they still name its code
stax record -o "$T/d.data" -- "$T/jitmap" 1 --delete-maps >/dev/null 2>"$T/d.err" || fail "record jitmap --delete-maps" "$(first_line "$T/d.err")"
stax flame --folded -i "$T/d.data" >"$T/d.folded" 2>/dev/null
p=$(stax script -i "$T/d.data" 2>/dev/null | awk 'NR == 1 { split($2, a, "/"); print a[1] }')
left=$(ls "/tmp/perf-$p.map" "/tmp/jit-$p.dump" 2>/dev/null | wc -l)
jit_cleanup "$T/d.data"
s_map=$(share "$T/d.folded" ";jit_map_loop$K")
s_dump=$(share "$T/d.folded" ";jit_dump_loop$K")
if [ -n "$p" ] && [ "$left" -eq 0 ] && between "$s_map" 25 75 && between "$s_dump" 25 75; then
	ok "maps deleted before exit still name JIT code (perf map $s_map%, jitdump $s_dump%)"
else
	fail "maps deleted before exit still name JIT code" "jit_map_loop $s_map%, jit_dump_loop $s_dump% (want ~50 each); $left files left; $(first_line "$T/d.err")"
fi

# perf's rule: a map others can write is not read, and stax says so once
stax record -o "$T/o.data" -- "$T/jitmap" 0.5 --open-map >/dev/null 2>"$T/o.err"
stax flame --folded -i "$T/o.data" >"$T/o.folded" 2>/dev/null
jit_cleanup "$T/o.data"
s_map=$(share "$T/o.folded" "jit_map_loop")
n_warn=$(grep -c "ignoring /tmp/perf-[0-9]*.map: writable by other users" "$T/o.err")
if [ "$s_map" = "0.0" ] && [ "$n_warn" -eq 1 ]; then
	ok "a perf map writable by others is skipped with one warning"
else
	fail "a perf map writable by others is skipped with one warning" "jit_map_loop $s_map%; $n_warn warnings; stderr: $(grep -m1 perf- "$T/o.err")"
fi

# Node.js: JavaScript function names from --perf-basic-prof. The loop
# runs for 1 s of the process's CPU time, not of wall time: on a busy
# machine a wall-time loop gets less of the CPU and node's start-up more
# of the samples.
if ! command -v node >/dev/null 2>&1; then
	skip "node --perf-basic-prof" "node is not installed"
	done_testing
fi
cat >"$T/hot.js" <<'EOF'
function hotLoopJs(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s * 31 + i) % 1000003; } return s; }
function cpuMs() { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }
function driverJs() { const end = cpuMs() + 1000; let t = 0; while (cpuMs() < end) t += hotLoopJs(100000); return t; }
console.log(driverJs() > 0);
EOF
# from $T: node --perf-basic-prof also writes an isolate-*-v8.log to its cwd
(cd "$T" && stax record -o "$T/n.data" -- node --perf-basic-prof "$T/hot.js" >/dev/null 2>"$T/n.err") ||
	fail "record node" "$(first_line "$T/n.err")"
stax flame --folded -i "$T/n.data" >"$T/n.folded" 2>/dev/null
jit_cleanup "$T/n.data"
s_js=$(share "$T/n.folded" ";[^;]*hotLoopJs[^;]*$K")
if between "$s_js" 40 100; then
	ok "node --perf-basic-prof: JavaScript function hotLoopJs named ($s_js%)"
else
	fail "node --perf-basic-prof: JavaScript function hotLoopJs named" "$s_js% (want most samples)"
fi
done_testing
