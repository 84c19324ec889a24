#!/bin/sh
# runtime_go.sh - Go stacks: the runtime switches stacks (systemstack,
# mcall and morestack run on the g0 stack; signals on the gsignal stack),
# which rules for one contiguous stack turn into made-up callers
# (runtime.newproc under runtime.systemstack, heap addresses as frames).
# A Go program doing JSON, regexp and sha256 on several goroutines
# (tests/go/gowork): stacks follow each switch to runtime.goexit,
# runtime.mstart or runtime.rt0_go, never show a frame outside the
# program's code, and stax info counts completeness by the roots flame
# shows (bench/roots.awk, the same list).
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v go >/dev/null 2>&1; then
	skip "go program" "go is not installed"
	done_testing
fi
# stdlib only: builds offline; a private cache when HOME has none
[ -n "$HOME" ] && [ -d "$HOME" ] || export GOCACHE="$T/gocache"
if ! (cd "$ROOT/tests/go/gowork" && GOFLAGS=-mod=mod go build -o "$T/gowork" .) >"$T/build.err" 2>&1; then
	fail "go build" "$(head -n 3 "$T/build.err" | tr '\n' '|')"
	done_testing
fi

rec() {
	stax record -q -o "$T/go.data" -- "$T/gowork" "$1" >"$T/go.out" 2>"$T/go.err" &&
		stax flame -i "$T/go.data" --folded >"$T/go.folded" 2>>"$T/go.err" &&
		stax info -i "$T/go.data" --json >"$T/go.json" 2>>"$T/go.err"
}

rooted_pct() { awk -v fmt=folded -f "$ROOT/bench/roots.awk" "$T/go.folded" | awk '{ print $3 }'; }

rec 4 || fail "record" "$(first_line "$T/go.err")"
n=$(samples "$T/go.folded")
pct=$(rooted_pct)
if [ "$n" -lt 500 ] || ! between "$pct" 97 100; then
	rec 8 || fail "record (again)" "$(first_line "$T/go.err")"
	n=$(samples "$T/go.folded")
	pct=$(rooted_pct)
fi
if [ "$n" -ge 500 ] && between "$pct" 97 100; then
	ok "$pct% of $n stacks reach runtime.goexit, runtime.mstart or runtime.rt0_go (want >= 97%)"
else
	fail "stacks reach a root" "$pct% of $n (want >= 97% of >= 500); not rooted: $(grep -v 'goexit\|mstart\|rt0_go\|runtime\.clone' "$T/go.folded" | sort -t' ' -k2 -nr | head -n 3 | cut -c1-200 | tr '\n' '|')"
fi

# the stack switches are crossed (frames on both sides of one)
sw=$(samples "$T/go.folded" ';runtime\.(goexit|mstart|rt0_go)(\.abi0)?;.*;runtime\.(systemstack|mcall|morestack)(\.abi0)?;')
if [ "$sw" -ge 1 ]; then
	ok "$sw stacks cross a stack switch to their root"
else
	fail "stacks cross a stack switch" "none in $n samples"
fi

# never an invented frame: no address outside the program's code
# ("[unknown]", a heap address), no unsymbolized address in the program,
# no caller found by reading the g0 stack's leftovers. A sample inside
# the execve that starts gowork has the old program's pc (the shell's,
# mapped no more): [unknown], as it always was; those are left out.
grep -v ';__x64_sys_execve_\[k\]' "$T/go.folded" >"$T/go.noexec"
bad=$(grep -c '\[unknown\]\|;gowork+0x' "$T/go.noexec")
if [ "$bad" -eq 0 ]; then
	ok "no unnamed frames"
else
	# the frames around the first unnamed one (a stack's start says little)
	fail "no unnamed frames" "$bad stacks: $(grep '\[unknown\]\|;gowork+0x' "$T/go.noexec" | head -n 2 |
		sed 's/.*\(\(;[^;]*\)\{3\};\(\[unknown\]\|gowork+0x[0-9a-f]*\)\(;[^;]*\)\{0,3\}\).*/...\1.../' | cut -c1-300 | tr '\n' '|')"
fi
inv=$(grep -Ec 'runtime\.(systemstack|mcall|morestack)(\.abi0)?;runtime\.newproc(\.abi0)?;|;runtime\.newproc(\.abi0)?;runtime\.(systemstack|mcall|morestack)(\.abi0)?;' "$T/go.folded")
if [ "$inv" -eq 0 ]; then
	ok "no runtime.newproc invented at a stack switch"
else
	fail "no runtime.newproc invented at a stack switch" "$inv stacks: $(grep -E 'newproc(\.abi0)?;runtime\.(systemstack|mcall)' "$T/go.folded" | head -n 1 | cut -c1-250)"
fi

# info counts what flame shows
info_rooted=$(sed -n 's/.*"reached_root":\([0-9]*\).*/\1/p' "$T/go.json")
info_n=$(sed -n 's/.*"samples":\([0-9]*\),"lost".*/\1/p' "$T/go.json")
flame_rooted=$(awk -v fmt=folded -f "$ROOT/bench/roots.awk" "$T/go.folded" | awk '{ print $2 }')
if [ -n "$info_rooted" ] && [ "$info_rooted" = "$flame_rooted" ] && [ "$info_n" = "$n" ]; then
	ok "info's reached_root ($info_rooted of $info_n) is what flame shows"
else
	fail "info agrees with flame" "info $info_rooted of $info_n, flame $flame_rooted of $n"
fi
done_testing
