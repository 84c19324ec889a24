#!/bin/sh
# unwind.sh (arm64 guest) - the hybrid unwinder on aarch64, in a real
# arm64 kernel, against the known call graphs of tests/programs (each
# file's comment gives the expected stacks; tests/programs/Makefile's
# arm64 target the builds). docs/UNWINDING.md's arm64 traps, by number:
#   A1 the leaf's caller is in the link register (x30) only: callgraph
#      -cc (gcc's defaults: frame records, but none in leaves), where
#      --unwind fp loses b and c, hybrid has them
#   A2 pointer authentication signs the return addresses
#      (-mbranch-protection=pac-ret+leaf): callgraph-pac and -pacfp
#   A3 signal frames return through the vDSO's __kernel_rt_sigreturn,
#      which has no CFI: unwind_signal
#   A4 the vDSO has no .eh_frame; its functions are leaves: unwind_vdso
#   A5 a frame record may be anywhere in its frame: the splice finds it
#      by the return address slot: unwind_deep, unwind_twopaths
# For each program: of the samples whose leaf is the hot function, at
# least 99% carry every known frame, root to leaf.
. "$(dirname "$0")/lib.sh"

# the pac builds must sign (else A2 tests nothing)
for b in pac pacfp; do
	n=$(objdump -d "$PROG/callgraph-$b" 2>/dev/null | grep -c 'paciasp')
	if [ "${n:-0}" -gt 0 ]; then
		ok "callgraph-$b signs its return addresses ($n paciasp)"
	else
		fail "callgraph-$b signs its return addresses" "no paciasp in objdump -d"
	fi
done

# the known chain, every build
for b in fp nofp cc pac pacfp; do
	check "cg-$b" "callgraph-$b" ';leaf_[bc]' "${START}a;(b;leaf_b|c;leaf_c)" \
		"callgraph-$b: main;a;b;leaf_b and main;a;c;leaf_c"
done
# ... in the program's proportions (leaf_b 3 units a round, leaf_c 1)
s=$(share "$T/cg-pac.folded" ";a;b;leaf_b$K")
if between "$s" 60 85; then
	ok "callgraph-pac: main;a;b;leaf_b is $s% of the samples (3 of 4 units)"
else
	fail "callgraph-pac: main;a;b;leaf_b is ~75% of the samples" "$s%"
fi

# A1: --unwind fp (the kernel's frame-record chain) skips the leaf's
# caller; hybrid takes it from the link register
REC_OPTS="--unwind fp" rec cgfp "$PROG/callgraph-cc"
f=$(share "$T/cgfp.folded" ";a;(b;leaf_b|c;leaf_c)$K")
h=$(share "$T/cg-cc.folded" ";a;(b;leaf_b|c;leaf_c)$K")
if between "$f" 0 5 && between "$h" 95 100; then
	ok "leaf rule: main;a;b;leaf_b in $f% of --unwind fp samples, $h% of hybrid ones"
else
	fail "leaf rule: fp loses the leaf's caller, hybrid has it" "fp $f%, hybrid $h%"
fi

# A3: a hot signal handler
for b in nofp fp; do
	check "sig-$b" "unwind_signal-$b" ';handler' "${START}interrupted;__kernel_rt_sigreturn;handler" \
		"signal-$b: main;interrupted;__kernel_rt_sigreturn;handler"
done

# A4: clock_gettime in the vDSO
for b in nofp fp; do
	check "vdso-$b" "unwind_vdso-$b" ';__kernel_clock_gettime' \
		"${START}clock_loop;clock_gettime;__kernel_clock_gettime" \
		"vdso-$b: main;clock_loop;clock_gettime;__kernel_clock_gettime"
done

# A5: deeper than the copy, spliced with the kernel's chain
check deep unwind_deep ';hot_leaf' "${START}$(rep deep 71)leaf_caller;hot_leaf" \
	"deep: main;deep x71;leaf_caller;hot_leaf" 0.5
sp=$(awk '/method:/ { for (i = 1; i <= NF; i++) if ($i == "spliced") { v = $(i + 1); sub(/,$/, "", v); print v } }' "$T/deep.info")
tot=$(awk '/^samples:/ { print $2 }' "$T/deep.info")
if [ -n "$tot" ] && [ "$tot" -gt 0 ] && between "$(pct "${sp:-0}" "$tot")" 85 100; then
	ok "deep: $sp of $tot stacks spliced"
else
	fail "deep: most stacks spliced" "$(grep -E 'method' "$T/deep.info")"
fi

# two ~100 KiB paths that alternate every ~1 ms, alike inside: rooted,
# and never under the other path (frame records: the kernel's chain, read
# at the sample, tells them apart; nofp, without frame records: the
# in-kernel reader's words, read at the sample)
A=";path_a;$(rep deep 97)leaf_a"
B=";path_b;$(rep deep 97)leaf_b"
for b in fp cc pacfp nofp; do
	rec "two-$b" "$PROG/unwind_twopaths-$b"
	n=$(samples "$T/two-$b.folded" ';leaf_[ab]'"$K")
	good=$(samples "$T/two-$b.folded" "${START#;}(${A#;}|${B#;})$K")
	wrong=$(samples "$T/two-$b.folded" ';path_a;.*;leaf_b'"$K|"';path_b;.*;leaf_a'"$K")
	g=$(pct "$good" "$n")
	w=$(pct "$wrong" "$n")
	if [ "$n" -ge 300 ] && between "$g" 99 100 && between "$w" 0 1; then
		ok "twopaths-$b: $g% of $n rooted on their own path, $w% under the other"
	else
		fail "twopaths-$b: >= 99% rooted on their own path, <= 1% under the other" \
			"$g% rooted, $w% wrong of $n; top: $(sort -k2 -nr -t' ' "$T/two-$b.folded" | head -n 2 | sed 's/\(deep;\)\{1,\}/deep;...;/g' | cut -c1-200 | tr '\n' '|')"
	fi
done

# no stack broken in the plain programs
for n in cg-nofp cg-pac sig-nofp vdso-nofp; do
	br=$(awk '/verdict:/ { for (i = 1; i <= NF; i++) if ($i == "broken") { v = $(i + 1); sub(/,$/, "", v); print v } }' "$T/$n.info")
	tot=$(awk '/^samples:/ { print $2 }' "$T/$n.info")
	if [ -n "$tot" ] && [ "$tot" -gt 0 ] && between "$(pct "${br:-0}" "$tot")" 0 1; then
		ok "$n: stax info: ${br:-0} of $tot stacks broken (<= 1%)"
	else
		fail "$n: stax info: <= 1% broken" "$(grep verdict "$T/$n.info")"
	fi
done
done_testing
