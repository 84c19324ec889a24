#!/bin/sh
# go.sh (arm64 guest) - Go stacks on aarch64, as tests/e2e/runtime_go.sh
# checks them on x86-64, with the programs of tests/go built by make
# arm64 (this machine's Go, GOARCH=arm64, CGO_ENABLED=0), default options:
#   gochain: main.main -> main.a -> main.b -> main.hot, a leaf loop (its
#      caller in the link register): of the samples with main.hot on the
#      stack (with the signal handler's frames above it when the sample
#      fell in Go's preemption signal: runtime.sigtramp's signal frame,
#      docs/UNWINDING.md A11; or in runtime.asyncPreempt, which that
#      signal made look called from main.hot: A12), >= 95% under the
#      whole chain (measured 99.7-100%)
#      runtime.goexit;runtime.main;main.main;main.a;main.b;main.hot.
#   gowork: JSON, regexp and sha256 on several goroutines, whose runtime
#      switches to the g0 stack (systemstack, mcall, morestack: A10,
#      crossed through the goroutine's state the in-kernel reader read at
#      the sample): >= 95% of the stacks reach runtime.goexit,
#      runtime.mstart or runtime.rt0_go (bench/roots.awk; samples inside
#      the execve that starts it, the old program's, left out: the guest's
#      9p root makes them many), stacks cross a switch to their root, no
#      frame unnamed, no runtime.newproc invented at a switch, and stax
#      info counts what flame shows (measured 97.3-97.7% rooted).
. "$(dirname "$0")/lib.sh"

for p in gochain gowork; do
	if [ ! -x "$PROG/$p" ]; then
		fail "$p" "$PROG/$p is missing (make arm64 builds it with this machine's go: apt-get install golang-go)"
		done_testing
	fi
done

# --- gochain ---------------------------------------------------------------
CHAIN=';runtime\.goexit(\.abi0)?;runtime\.main;main\.main;main\.a;main\.b;main\.hot(;|$)'
for sc in 3 6; do
	rec gochain "$PROG/gochain" $sc || fail "gochain: record" "$(first_line "$T/gochain.err")"
	hot=$(samples "$T/gochain.folded" ';main\.hot(;|$)')
	full=$(samples "$T/gochain.folded" "$CHAIN")
	p=$(pct "$full" "$hot")
	[ "$hot" -ge 500 ] && between "$p" 95 100 && break
done
if [ "$hot" -ge 500 ] && between "$p" 95 100; then
	ok "gochain: $p% of $hot samples in main.hot have goexit;runtime.main;main.main;main.a;main.b;main.hot (want >= 95%)"
else
	fail "gochain: >= 95% of main.hot's samples have the whole chain" "$p% of $hot; top: $(grep 'main\.hot' "$T/gochain.folded" | grep -Ev "$CHAIN" | sort -t' ' -k2 -nr | head -n 3 | cut -c1-200 | tr '\n' '|')"
fi

# --- gowork ----------------------------------------------------------------
# the samples outside the execve that starts gowork (the shell's pc, mapped
# no more: [unknown])
noexec() { grep -v ';__arm64_sys_execve_\[k\]' "$T/gowork.folded" >"$T/gowork.noexec"; }
rooted() { awk -v fmt=folded -f "$ROOT/bench/roots.awk" "$T/gowork.noexec"; }
for sc in 4 8; do
	rec gowork "$PROG/gowork" $sc || fail "gowork: record" "$(first_line "$T/gowork.err")"
	noexec
	set -- $(rooted)
	n=${1:-0} pct=${3:-0}
	[ "$n" -ge 1000 ] && between "$pct" 95 100 && break
done
if [ "$n" -ge 1000 ] && between "$pct" 95 100; then
	ok "gowork: $pct% of $n stacks reach runtime.goexit, runtime.mstart or runtime.rt0_go (want >= 95%)"
else
	fail "gowork: stacks reach a root" "$pct% of $n (want >= 95% of >= 1000); not rooted: $(grep -v 'goexit\|mstart\|rt0_go\|runtime\.clone' "$T/gowork.noexec" | sort -t' ' -k2 -nr | head -n 3 | cut -c1-200 | tr '\n' '|')"
fi

sw=$(samples "$T/gowork.folded" ';runtime\.(goexit|mstart|rt0_go)(\.abi0)?;.*;runtime\.(systemstack|mcall|morestack)(\.abi0)?;')
if [ "$sw" -ge 20 ]; then
	ok "gowork: $sw stacks cross a switch to the g0 stack to their root"
else
	fail "gowork: stacks cross a switch to the g0 stack" "$sw in $n samples (want >= 20)"
fi

bad=$(grep -c '\[unknown\]\|;gowork+0x' "$T/gowork.noexec")
if [ "$bad" -eq 0 ]; then
	ok "gowork: no unnamed frames"
else
	fail "gowork: no unnamed frames" "$bad stacks: $(grep '\[unknown\]\|;gowork+0x' "$T/gowork.noexec" | head -n 2 | cut -c1-300 | tr '\n' '|')"
fi
# Here a `go` statement's stack shows its real caller under the switch,
# runtime.newproc;runtime.systemstack;runtime.newproc.func1 (systemstack's
# frame holds its return address; x86-64's rule skips it): from a
# goroutine's code, never from the g0 stack's own root (its leftovers),
# and systemstack never calls newproc itself.
inv=$(grep -Ec 'runtime\.(systemstack|mcall|morestack)(\.abi0)?;runtime\.newproc(\.abi0)?;|;runtime\.mstart(\.abi0)?;(.*;)?runtime\.newproc(\.abi0)?;runtime\.(systemstack|mcall|morestack)(\.abi0)?;' "$T/gowork.folded")
real=$(samples "$T/gowork.folded" ';runtime\.(goexit|rt0_go)(\.abi0)?;(.*;)?runtime\.newproc(\.abi0)?;runtime\.systemstack(\.abi0)?;runtime\.newproc\.func1')
if [ "$inv" -eq 0 ]; then
	ok "gowork: no runtime.newproc invented at a stack switch ($real samples under a goroutine's newproc;systemstack;newproc.func1)"
else
	fail "gowork: no runtime.newproc invented at a stack switch" "$inv stacks: $(grep -E 'runtime\.(systemstack|mcall|morestack)(\.abi0)?;runtime\.newproc(\.abi0)?;|;runtime\.mstart(\.abi0)?;(.*;)?runtime\.newproc(\.abi0)?;runtime\.(systemstack|mcall|morestack)' "$T/gowork.folded" | head -n 1 | cut -c1-250)"
fi

# info counts what flame shows
stax info -i "$T/gowork.data" --json >"$T/gowork.json" 2>>"$T/gowork.err"
info_rooted=$(sed -n 's/.*"reached_root":\([0-9]*\).*/\1/p' "$T/gowork.json")
info_n=$(sed -n 's/.*"samples":\([0-9]*\),"lost".*/\1/p' "$T/gowork.json")
set -- $(awk -v fmt=folded -f "$ROOT/bench/roots.awk" "$T/gowork.folded")
if [ -n "$info_rooted" ] && [ "$info_rooted" = "${2:-}" ] && [ "$info_n" = "${1:-}" ]; then
	ok "gowork: info's reached_root ($info_rooted of $info_n) is what flame shows"
else
	fail "gowork: info agrees with flame" "info $info_rooted of $info_n, flame ${2:-?} of ${1:-?}"
fi
done_testing
