#!/bin/sh
# forkexec.sh - follow a fork and an exec.
#
# forkexec-fp forks; the child execs callgraph-fp 0.5 (main;a;b;leaf_b 75%,
# main;a;c;leaf_c 25%) while the parent spins in main;parent_spin.
. "$(dirname "$0")/lib.sh"
require_stax

record() {
	stax record -o "$T/f.data" -- "$PROG/forkexec-fp" "$PROG/callgraph-fp" "$1" >/dev/null 2>"$T/rec.err"
	rc=$?
	stax flame --folded -i "$T/f.data" >"$T/all.folded" 2>"$T/all.err"
	stax threads -i "$T/f.data" >"$T/threads.txt" 2>"$T/threads.err"
	return $rc
}

# child_ok: in the child's samples (comm callgraph-fp), leaf_b 63-87%
child_ok() {
	stax flame --folded --comm callgraph-fp -i "$T/f.data" >"$T/child.folded" 2>"$T/child.err"
	cb=$(share "$T/child.folded" ";main;a;b;leaf_b$K")
	cc=$(share "$T/child.folded" ";main;a;c;leaf_c$K")
	between "$cb" 63 87 && between "$cc" 13 37
}

if record 0.5; then
	ok "record forkexec-fp exits 0"
else
	fail "record forkexec-fp exits 0" "status $rc: $(first_line "$T/rec.err")"
fi

ps=$(share "$T/all.folded" "^forkexec-fp;.*;main;parent_spin$K")
lb=$(share "$T/all.folded" "^callgraph-fp;.*;main;a;b;leaf_b$K")
if between "$ps" 20 80; then
	ok "parent: forkexec-fp;...;main;parent_spin has $ps% of the samples"
else
	fail "parent: forkexec-fp;...;main;parent_spin has samples" "$ps%; first: $(first_line "$T/all.folded") $(first_line "$T/all.err")"
fi
if between "$lb" 10 70; then
	ok "child: callgraph-fp;...;main;a;b;leaf_b has $lb% of the samples"
else
	fail "child: callgraph-fp;...;main;a;b;leaf_b has samples" "$lb%; first: $(first_line "$T/all.folded")"
fi

if ! child_ok; then
	echo "# child shares off (leaf_b $cb%, leaf_c $cc%): retrying 2x longer"
	record 1
fi
if child_ok; then
	ok "child after exec: leaf_b $cb% (75 +-12), leaf_c $cc% (25 +-12)"
else
	fail "child after exec: leaf_b ~75%, leaf_c ~25%" "$cb% and $cc% $(first_line "$T/child.err")"
fi

# Two processes: the child has its own pid and the comm of what it exec'd.
ppid=$(row_where "$T/threads.txt" NAME forkexec-fp PID)
cpid=$(row_where "$T/threads.txt" NAME callgraph-fp PID)
ctid=$(row_where "$T/threads.txt" NAME callgraph-fp TID)
if [ -n "$ppid" ] && [ -n "$cpid" ] && [ "$ppid" != "$cpid" ] && [ "$cpid" = "$ctid" ]; then
	ok "threads: parent pid $ppid (forkexec-fp), child pid $cpid (callgraph-fp)"
else
	fail "threads: parent and child have their own pids and comms" \
		"parent '$ppid', child '$cpid'/'$ctid'; table: $(tr '\n' '|' <"$T/threads.txt" | cut -c1-300)"
fi

# --pid separates them
if [ -n "$ppid" ] && [ -n "$cpid" ]; then
	stax flame --folded --pid "$ppid" -i "$T/f.data" >"$T/p.folded" 2>/dev/null
	stax flame --folded --pid "$cpid" -i "$T/f.data" >"$T/c.folded" 2>/dev/null
	sp=$(share "$T/p.folded" ";parent_spin$K")
	sc=$(share "$T/c.folded" ";leaf_[bc]$K")
	if between "$sp" 95 100 && between "$sc" 95 100; then
		ok "--pid: parent $sp% parent_spin, child $sc% leaf_b/leaf_c"
	else
		fail "--pid separates parent and child" "parent $sp% parent_spin, child $sc% leaves"
	fi
else
	fail "--pid separates parent and child" "no pids from stax threads"
fi

# Symbols of two executables: no frame of either is left unsymbolized.
stax top -n 0 -i "$T/f.data" >"$T/top.txt" 2>/dev/null
unsym=$(awk '!hdr { for (i = 1; i <= NF; i++) { if ($i == "FUNCTION") fc = i; if ($i == "MODULE") mc = i }
	if (fc && mc) hdr = 1; next }
	($mc == "callgraph-fp" || $mc == "forkexec-fp") && $fc ~ /^(0x|\[unknown\])/' "$T/top.txt")
if [ -s "$T/top.txt" ] && [ -z "$unsym" ]; then
	ok "top: every frame of callgraph-fp and forkexec-fp has a name"
else
	fail "top: every frame of callgraph-fp and forkexec-fp has a name" "$(echo "$unsym" | head -n 3 | tr '\n' '|')"
fi

# A zero return address (the kernel's chain has them at process start, in
# ld.so) is the end of the stack, not a frame at 0 - 1.
z=$(samples "$T/all.folded" '0xffffffffffffffff|(^|;)0x0+(;|$)')
if [ "$z" -eq 0 ]; then
	ok "no frame at address 0 or -1"
else
	fail "no frame at address 0 or -1" "$z samples, e.g. $(grep -m1 -E '0xffffffffffffffff|;0x0+(;| )' "$T/all.folded" | cut -c1-160)"
fi

# A process that runs as one program, then exec()s another: its row in
# top --by process and --by thread is named as at its last sample (the
# program it became, as stax threads names it), though its first
# samples were taken under the shell's name.
stax record -o "$T/x.data" -- sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exec "$0" 0.3' \
	"$PROG/callgraph-fp" >/dev/null 2>"$T/x.err"
stax script -i "$T/x.data" 2>/dev/null | awk '/^[^\t]/ { print $1 }' | sort | uniq -c >"$T/x.comms"
stax top --by process -i "$T/x.data" >"$T/x.top" 2>>"$T/x.err"
stax top --by thread -i "$T/x.data" >"$T/x.topt" 2>>"$T/x.err"
if grep -q ' sh$' "$T/x.comms" && grep -q ' callgraph-fp$' "$T/x.comms" &&
	[ "$(grep -c '%  *[0-9]' "$T/x.top")" -eq 1 ] && grep -q '%.* callgraph-fp/[0-9]*$' "$T/x.top" &&
	grep -q '%.* callgraph-fp/[0-9]* (pid ' "$T/x.topt"; then
	ok "top --by process|thread: a process that exec()ed is named by the program it became"
else
	fail "top --by process|thread: a process that exec()ed is named by the program it became" \
		"comms $(tr -s ' \n' ' ' <"$T/x.comms"); top: $(tr '\n' '|' <"$T/x.top") $(first_line "$T/x.err")"
fi

done_testing
