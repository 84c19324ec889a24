#!/bin/sh
# unwind_nofp.sh - the hybrid unwinder on programs built without frame
# pointers, against their known call graphs (tests/programs/unwind_*.c;
# each file's comment gives the expected stacks and its build line):
#   qsort comparator in libc, a hot signal handler (through __restore_rt),
#   vDSO, calls through the PLT into a .so, an assembly leaf without CFI,
#   a dlopen()ed library's _init (no CFI) calling into the library,
#   OpenSSL's assembly CFI (CFA by rax; CFA read below the stack pointer),
# and the point of it all: --unwind fp on a no-frame-pointer build loses
# the callers, and stax doctor explains that flat profile in one screen.
# For each program: of the samples whose leaf is the hot function, at
# least 99% must carry every known frame, root to leaf, in order (library
# frames such as libc's sort internals may sit between them).
# stax-test: seconds=45
. "$(dirname "$0")/lib.sh"
require_stax

# rec NAME PROG [ARGS...]: record with default options into $T/NAME.data
# and write $T/NAME.folded and $T/NAME.info.
rec() {
	_n=$1
	shift
	stax record -q -o "$T/$_n.data" -- "$@" >"$T/$_n.out" 2>"$T/$_n.err" &&
		stax flame -i "$T/$_n.data" --folded >"$T/$_n.folded" 2>>"$T/$_n.err" &&
		stax info -i "$T/$_n.data" >"$T/$_n.info" 2>>"$T/$_n.err"
}

# leaf_check NAME LEAF_ERE FULL_ERE WHAT: of the samples whose leaf
# matches LEAF_ERE (kernel frames stripped; a LEAF_ERE ending in (;.*)?
# selects a frame anywhere), >= 99% must match FULL_ERE;
# at least MIN (default 100) such samples. Retries once with a longer run.
leaf_check() {
	_n=$1 _leaf=$2 _full=$3 _what=$4
	_tot=$(samples "$T/$_n.folded" "$_leaf$K")
	_good=$(samples "$T/$_n.folded" "$_full$K")
	_pct=$(pct "$_good" "$_tot")
	if [ "$_tot" -ge "${MIN:-100}" ] && between "$_pct" 99 100; then
		ok "$_what: $_pct% of $_tot samples"
		return 0
	fi
	return 1
}

# check NAME PROG LEAF FULL WHAT: record, check, retry once at scale 2,
# and once more at scale 5 when there were too few samples in the leaf:
# how many land there (in a syscall, a PLT stub) depends on how busy the
# machine is, so the count is topped up, not given up on.
check() {
	_n=$1 _p=$2 _leaf=$3 _full=$4 _what=$5
	if [ ! -x "$PROG/$_p" ]; then
		fail "$_what" "$PROG/$_p is missing (run make programs)"
		return
	fi
	rec "$_n" "$PROG/$_p" && leaf_check "$_n" "$_leaf" "$_full" "$_what" && return
	rec "$_n" "$PROG/$_p" 2 && leaf_check "$_n" "$_leaf" "$_full" "$_what" && return
	[ "$_tot" -lt "${MIN:-100}" ] && rec "$_n" "$PROG/$_p" 5 && leaf_check "$_n" "$_leaf" "$_full" "$_what" && return
	fail "$_what" "$_pct% of $_tot samples have the full stack (want >= 99% of >= ${MIN:-100}); $(first_line "$T/$_n.err") top: $(sort -k2 -nr -t' ' "$T/$_n.folded" | head -n 2 | cut -c1-300 | tr '\n' '|')"
}

START=';_start;(.*;)?main;'

# qsort: main -> sort_caller -> libc's qsort internals -> cmp
for b in nofp fp; do
	check "qsort-$b" "unwind_qsort-$b" ';cmp' "${START}sort_caller;(.*;)?cmp" \
		"qsort-$b: main;sort_caller;[libc];cmp"
done
# a dlopen()ed library's _init (crti.o's code, no CFI) calling its
# __gmon_start__: main;dlopen;...;call_init;_init;__gmon_start__;gmon_hot
# (the stacks stopped at _init before stax gave crti's code rows)
check dlinit "dlinit-nofp" ';gmon_hot' "${START}dlopen;(.*;)?call_init;_init;__gmon_start__;gmon_hot" \
	"dlinit: main;dlopen;...;_init;__gmon_start__;gmon_hot"

# OpenSSL's CFI shapes (unwind_asmcfa_asm.S): a CFA defined by rax across
# a call to a leaf that leaves rax alone (aesni_gcm_encrypt) unwinds to
# main; a CFA read from below the stack pointer (sha512's AVX2 code)
# cannot be, and the stack ends there with its own reason, nothing
# invented above it, and doctor says why
check asmcfa "unwind_asmcfa-nofp" ';rax_leaf' "${START}rax_phase;rax_frame;rax_leaf" \
	"asm CFA = rax + 8 (OpenSSL's aesni_gcm_encrypt): main;rax_phase;rax_frame;rax_leaf"
bn=$(samples "$T/asmcfa.folded" ";below_frame$K")
bx=$(samples "$T/asmcfa.folded" "^[^;]*;below_frame$K")
br=$(sed -n 's/.*unwind_asmcfa-nofp \([0-9]*\) (a read below the stack pointer).*/\1/p' "$T/asmcfa.info")
stax doctor -i "$T/asmcfa.data" >"$T/asmcfa.doctor" 2>&1
if [ "$bn" -ge 100 ] && [ "$bx" -eq "$bn" ] && [ "${br:-0}" -ge $((bn * 9 / 10)) ] &&
	grep -q 'stop in unwind_asmcfa-nofp: its unwind information reads below the stack pointer' "$T/asmcfa.doctor"; then
	ok "asm CFA read below the stack pointer (OpenSSL's sha512): $bx of $bn stacks are below_frame alone, $br counted under that reason, doctor says so"
else
	fail "asm CFA read below the stack pointer: the stack ends there, counted, explained" "below_frame $bn, alone $bx, reason '$br': $(grep 'stop in' "$T/asmcfa.info") | $(grep -i 'below the stack' "$T/asmcfa.doctor" | cut -c1-200)"
fi

# the libc frames are really there (not a lucky direct link)
if grep -q ';sort_caller;[^;]*qsort[^;]*;' "$T/qsort-nofp.folded"; then
	ok "qsort-nofp: libc's sort frames between sort_caller and cmp"
else
	fail "qsort-nofp: libc's sort frames between sort_caller and cmp" "$(head -n 1 "$T/qsort-nofp.folded" | cut -c1-300)"
fi

# a hot signal handler: handler <- __restore_rt <- interrupted <- main
for b in nofp fp; do
	check "signal-$b" "unwind_signal-$b" ';handler' "${START}interrupted;__restore_rt;handler" \
		"signal-$b: main;interrupted;__restore_rt;handler"
done

# vDSO: clock_gettime in a loop, samples inside the vDSO
VDSO_LEAF=';[^;]*(vdso|do_hres|vread_)[^;]*'
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
rec vdso "$PROG/unwind_vdso-nofp"
if [ "$(samples "$T/vdso.folded" "$VDSO_LEAF$K")" -lt 100 ] && ! echo "$cs" | grep -Eq 'tsc|kvm-clock|hyperv'; then
	skip "vdso: main;clock_loop;clock_gettime;[vdso]" "clocksource $cs: clock_gettime does not run in the vDSO"
else
	check vdso unwind_vdso-nofp "$VDSO_LEAF" "${START}clock_loop;(.*;)?${VDSO_LEAF#;}" \
		"vdso: main;clock_loop;clock_gettime;[vdso]"
fi

# PLT: every sample in the loop's code (plt_tiny, the PLT stub, plt_loop
# itself; not start-up in ld.so or the exit) reaches main
check plt unwind_plt-nofp ';plt_tiny' "${START}plt_loop;plt_tiny" "plt: main;plt_loop;plt_tiny"
STUB=';plt_loop;[^;]*(@plt|unwind_plt-nofp\+0x)[^;]*'"$K"
stub=$(samples "$T/plt.folded" "$STUB")
# (the stub's share falls from ~10% to 0.2% on a busy machine: longer
# runs, 4x then 12x, while fewer than 3 samples landed in it)
for sc in 4 12; do
	[ "$stub" -ge 3 ] && break
	rec plt "$PROG/unwind_plt-nofp" "$sc"
	stub=$(samples "$T/plt.folded" "$STUB")
done
LOOP=';(plt_tiny|plt_tiny@plt|plt_loop|unwind_plt-nofp\+0x[0-9a-f]*|libunwind_plt\.so\+0x[0-9a-f]*)'
all=$(samples "$T/plt.folded" "$LOOP$K")
good=$(samples "$T/plt.folded" "${START}plt_loop(;[^;]*)?$K")
pct=$(pct "$good" "$all")
if [ "$stub" -ge 3 ] && between "$pct" 99 100; then
	ok "plt: $stub samples in the PLT stub, $pct% of the $all samples in the loop's code reach main;plt_loop"
else
	fail "plt: samples in the PLT stub reach main;plt_loop" "$stub in the stub, $pct% of $all in the loop's code reach main; others: $(PAT="${START}plt_loop(;[^;]*)?$K" awk '$0 !~ ENVIRON["PAT"]' "$T/plt.folded" | sort -t' ' -k2 -nr | head -n 3 | cut -c1-200 | tr '\n' '|')"
fi

# code without CFI: nocfi_leaf (assembly, frame pointer, no .cfi)
leafaddr=$(nm "$PROG/unwind_nocfi-nofp" 2>/dev/null | awk '$3 == "nocfi_leaf" { print $1 }')
covered=no
for r in $(readelf --debug-dump=frames "$PROG/unwind_nocfi-nofp" 2>/dev/null |
	sed -n 's/.* pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1:\2/p'); do
	if [ $((0x$leafaddr)) -ge $((0x${r%:*})) ] && [ $((0x$leafaddr)) -lt $((0x${r#*:})) ]; then
		covered=yes
	fi
done
if [ -z "$leafaddr" ] || [ $covered = yes ]; then
	fail "nocfi: nocfi_leaf has no CFI" "address '$leafaddr', covered by an FDE: $covered"
else
	ok "nocfi: nocfi_leaf has no CFI (readelf shows no FDE over it)"
fi
check nocfi unwind_nocfi-nofp ';nocfi_leaf' "${START}nocfi_caller;nocfi_leaf" \
	"nocfi: main;nocfi_caller;nocfi_leaf by frame-pointer fallback"

# lld puts the code segment mid-page (LOAD off 0x700 vaddr 0x1700, right
# after the read-only segment in the same file page): the executable
# mapping's load bias must come from the code segment
if readelf -lW "$PROG/callgraph-lld" 2>/dev/null | awk '$1 == "LOAD" && $NF == "0x1000" && $2 !~ /000$/ { f = 1 } END { exit !f }'; then
	ok "lld: callgraph-lld has a segment that starts mid-page"
else
	fail "lld: callgraph-lld has a segment that starts mid-page" "$(readelf -lW "$PROG/callgraph-lld" 2>&1 | grep LOAD | tr '\n' '|')"
fi
check lld callgraph-lld ';leaf_b' "${START}a;b;leaf_b" "lld: main;a;b;leaf_b"

# samples in rt_sigreturn reach main;raiser: before the kernel restores
# the interrupted registers the user pc is one past __restore_rt's FDE
# (and the stack goes through __restore_rt), after it they are the
# interrupted code's
if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ] && [ "$(id -u)" -ne 0 ]; then
	skip "rt_sigreturn" "kernel frames are not recorded (not root, kernel.perf_event_paranoid > 1)"
else
	MIN=50 check raise unwind_raise-nofp ';[^;]*rt_sigreturn[^;]*_\[k\](;.*)?' \
		"${START}raiser;.*;[^;]*rt_sigreturn[^;]*_\\[k\\](;.*)?" "rt_sigreturn: samples in the syscall reach main;raiser"
fi

# lazy binding: samples in ld.so's _dl_runtime_resolve_xsavec / _dl_fixup
# (the trampoline's CFA is rbx-based; rbx was saved by _dl_fixup) reach
# main;lazy_round
check lazy unwind_lazy-nofp ';(_dl_fixup|_dl_runtime_resolve[^;]*)(;.*)?' \
	"${START}lazy_round;.*;(_dl_fixup|_dl_runtime_resolve[^;]*)(;.*)?" \
	"lazy binding: samples in ld.so's resolver reach main;lazy_round"

# no stack from these programs is broken or stops early (not unwind_lazy:
# every dlopen of its library faults in the library's _init, which has no
# CFI (crti.o), at its first instruction: ~1.5% of its samples break there)
for n in qsort-nofp signal-nofp plt nocfi lld raise; do
	q=$(awk '/verdict:/ { for (i = 1; i <= NF; i++) if ($i == "broken") print $(i + 1) }' "$T/$n.info" | tr -d ',')
	tot=$(awk '/^samples:/ { print $2 }' "$T/$n.info")
	if [ -n "$q" ] && [ -n "$tot" ] && [ "$q" -le $((tot / 100)) ]; then
		ok "$n: stax info: $q of $tot stacks broken (<= 1%)"
	else
		fail "$n: stax info: at most 1% broken" "$(grep verdict "$T/$n.info")"
	fi
done

# --unwind fp on the same kind of program loses the callers: that is why
# hybrid exists. callgraph-nofp: main;a;b;leaf_b.
stax record -q --unwind fp -o "$T/fp.data" -- "$PROG/callgraph-nofp" >/dev/null 2>"$T/fp.err"
stax flame -i "$T/fp.data" --folded >"$T/fp.folded" 2>>"$T/fp.err"
rec hyb "$PROG/callgraph-nofp"
fpct=$(share "$T/fp.folded" ";main;a;b;leaf_b$K")
hpct=$(share "$T/hyb.folded" ";main;a;b;leaf_b$K")
fleaf=$(share "$T/fp.folded" ";leaf_b$K")
if between "$fleaf" 50 100 && between "$fpct" 0 20 && between "$hpct" 65 85; then
	ok "fp mode loses callers on callgraph-nofp: main;a;b;leaf_b in $fpct% of fp samples, $hpct% of hybrid"
else
	fail "fp mode loses callers on callgraph-nofp" "fp $fpct% (leaf_b $fleaf%), hybrid $hpct% (want fp < 20, hybrid ~75)"
fi

# stax doctor explains the flat profile in one screen: names the program,
# says it lacks frame pointers, says what to do; and has nothing to say
# about frame pointers on the hybrid recording of the same program.
stax doctor -i "$T/fp.data" >"$T/doc.out" 2>&1
lines=$(wc -l <"$T/doc.out")
if [ "$lines" -le 24 ] && grep -q 'callgraph-nofp' "$T/doc.out" &&
	grep -qi 'without frame pointers' "$T/doc.out" && grep -q -- '--unwind hybrid' "$T/doc.out"; then
	ok "doctor explains the flat fp profile in $lines lines"
else
	fail "doctor explains the flat fp profile in one screen" "$lines lines: $(head -n 3 "$T/doc.out" | tr '\n' '|' | cut -c1-300)"
fi
stax doctor -i "$T/hyb.data" >"$T/doc2.out" 2>&1
if grep -qi 'without frame pointers' "$T/doc2.out"; then
	fail "doctor is quiet about frame pointers on the hybrid recording" "$(head -n 3 "$T/doc2.out" | tr '\n' '|' | cut -c1-300)"
else
	ok "doctor is quiet about frame pointers on the hybrid recording"
fi
done_testing
