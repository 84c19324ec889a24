#!/bin/sh
# run.sh - measure stax against perf on the same workloads, in the same run.
#
# usage: sh bench/run.sh          (make bench: about 17 minutes)
#        QUICK=1 sh bench/run.sh  (make bench QUICK=1: every row once, tiny
#                                  workloads, under a minute)
# Needs ./stax, tests/programs/build (make all programs), perf, xz, cc
# and, for the unwinder rows, make's objects in build/ and libunwind-dev
# (scripts/deps.sh --bench).
#
# Writes bench/report.md and bench/report.json (both rendered by
# bench/report.awk from bench/work/report.tsv) and prints the tables.
# Scratch files go to bench/work/ (gitignored). BENCH_WORK and BENCH_OUT
# move the scratch directory and the reports (tests/e2e/bench_quick.sh);
# BENCH_STAX=PATH measures that stax binary instead of ./stax.
# BENCH_ONLY=LIST (comma-separated) runs only some sections: record (1, 2,
# 3), startup (4), answer (5, 5b), unwind (7), symbols (8), switch (9),
# long (10), crash (11), real (12, 12b), page (13), moment (14), arm64 (15:
# the arm64 guest of make check-arm64, which make arm64 builds; QUICK=1
# runs it only when BENCH_ONLY names it), agent (16, 16b: 10 minutes of
# stax agent under 50 new processes a second); section 6 comes with
# record or answer. Example:
#   BENCH_ONLY=symbols,switch sh bench/run.sh
#
# Method. The machine is shared and noisy, so every timing is a ratio
# against its reference measured in the same run: repetitions interleave
# (ref, stax, ref, stax, ...) and a ratio is taken within each repetition;
# the report gives the median and the spread (min-max) of those ratios.
# Absolute times are for context. Each command runs under bench/benchrun
# (wall time, CPU time of the whole process tree, peak RSS from wait4);
# in the recording rows the workload itself is wrapped in a second
# benchrun, so "wall" is the workload's own wall time under the profiler
# and "total" includes the profiler's start and finish.
set -u
cd "$(dirname "$0")/.." || exit 1
case ${QUICK:-0} in "" | 0) QUICK=0 ;; *) QUICK=1 ;; esac
ONLY=${BENCH_ONLY:-}
W=${BENCH_WORK:-bench/work}
OUT=${BENCH_OUT:-bench}
TSV=$W/report.tsv
RAW=$W/raw.tsv
BR=$W/benchrun
STAX=$W/stax
PROG=tests/programs/build
START=$(date +%s)

die() { echo "bench: error: $*" >&2; exit 1; }
say() { echo "# $*" >&2; }
tsv() { printf '%s' "$1"; shift; for f in "$@"; do printf '\t%s' "$f"; done; printf '\n'; } >>"$TSV"

# verdict MET N: a section's status from its rows' verdicts.
verdict() { if [ "$2" -eq 0 ]; then echo "n/a"; elif [ "$1" -eq "$2" ]; then echo met; else echo "not met ($1 of $2 rows met)"; fi; }
# want SECTION: whether BENCH_ONLY asks for it (everything when unset).
want() { [ -z "$ONLY" ] && return 0; case ",$ONLY," in *",$1,"*) return 0 ;; esac; return 1; }
for sec in $(echo "$ONLY" | tr ',' ' '); do
	case $sec in record | startup | answer | unwind | symbols | switch | long | crash | real | page | moment | arm64 | agent) ;;
	*) die "BENCH_ONLY: unknown section '$sec' (record, startup, answer, unwind, symbols, switch, long, crash, real, page, moment, arm64, agent)" ;; esac
done
[ -x "${BENCH_STAX:-./stax}" ] || die "${BENCH_STAX:-./stax} is missing (run make)"
[ -x "$PROG/callgraph-nofp" ] || die "$PROG is missing (run make programs)"
command -v perf >/dev/null || die "perf is missing (run sh scripts/deps.sh --bench as root)"
command -v xz >/dev/null || die "xz is missing (run sh scripts/deps.sh --bench as root)"
mkdir -p "$W" || exit 1
rm -f "$W"/*.data "$W"/*.data.old "$W"/*.t "$W"/*.err
: >"$TSV"
: >"$RAW"
: >"$W/answer.tsv"
cc -O2 -o "$BR" bench/benchrun.c || die "cannot build bench/benchrun.c"
# A private copy of ./stax (or of BENCH_STAX: tests/e2e/bench_quick.sh
# under make check-sanitize): a rebuild during the run must not change it.
cp "${BENCH_STAX:-./stax}" "$STAX" || die "cannot copy ${BENCH_STAX:-./stax} to $STAX"

if [ "$QUICK" = 1 ]; then
	REPS=1 REPS_TRUE=1 REPS12=1 XZ_BYTES=100000 PY_N=300000 SCALE=0.04
	BIG_SCALE=1 DW_SCALE=0.7
	SB_FUNCS=100 SB_SECS=0.5 SYN_SAMPLES=20000 SYN_ADDRS=2000 PP_N=5000 REPS_SW=1
	LONG_S=2 PAGE_HZ=999 PAGE_S=1 REPS_PAGE=1
	AGENT_S=12 AGENT_ROT=3 AGENT_KEEP=6 AGENT_AT=3 AGENT_TO=12 AGENT_EVERY=3
else
	REPS=3 REPS_TRUE=5 REPS12=5 XZ_BYTES=2000000 PY_N=20000000 SCALE=0.6
	BIG_SCALE=70 DW_SCALE=22
	SB_FUNCS=4000 SB_SECS=50 SYN_SAMPLES=1000000 SYN_ADDRS=50000 PP_N=200000 REPS_SW=5
	LONG_S=60 PAGE_HZ=40000 PAGE_S=25 REPS_PAGE=3
	AGENT_S=600 AGENT_ROT=20 AGENT_KEEP=60 AGENT_AT=30 AGENT_TO=150 AGENT_EVERY=30
fi

# --- workloads ----------------------------------------------------------
# Deterministic compressible text for xz: words from a fixed list chosen by
# a 32-bit LCG (exact in awk's doubles), regenerated only when missing.
XZ_IN=$W/xz-input-$XZ_BYTES.txt
if [ ! -s "$XZ_IN" ]; then
	awk -v want="$XZ_BYTES" 'BEGIN {
		nw = split("the of and to in is was for on that with as by at from his her which " \
		  "stack frame sample profile unwind record kernel thread process module symbol " \
		  "table chunk window fast slow main leaf caller callee perf stax", w, " ")
		x = 12345
		while (bytes < want) {
			x = (x * 69069 + 1) % 4294967296; k = 4 + int(x / 4294967296 * 12); line = ""
			for (j = 0; j < k; j++) { x = (x * 69069 + 1) % 4294967296; line = line w[1 + int(x / 4294967296 * nw)] " " }
			x = (x * 69069 + 1) % 4294967296; line = line int(x / 4294967296 * 100000)
			print line; bytes += length(line) + 1
		}
	}' >"$XZ_IN" || die "cannot write $XZ_IN"
fi
# The real CPython binary, not pyenv's shim script (which would exec it).
PY=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || PY=""

WLS="xz python callgraph-fp callgraph-nofp threads-fp threads-nofp"
[ -n "$PY" ] || WLS="xz callgraph-fp callgraph-nofp threads-fp threads-nofp"
wl_cmd() {
	case $1 in
	xz) echo "xz -6 -T1 -c $XZ_IN" ;;
	python) echo "$PY -c 'sum(i*i for i in range($PY_N))'" ;;
	*) echo "$PROG/$1 $SCALE" ;;
	esac
}

# rec_cmd MODE HZ OUT INNER WORKLOAD: the recording command line.
rec_cmd() {
	inner="$BR -o $4 -- $5"
	case $1 in
	bare) echo "$inner" ;;
	perf-g) echo "perf record --no-bpf-event -e cpu-clock -F $2 -g -o $3 -- $inner" ;;
	perf-dwarf8) echo "perf record --no-bpf-event -e cpu-clock -F $2 --call-graph dwarf,8192 -o $3 -- $inner" ;;
	perf-dwarf32) echo "perf record --no-bpf-event -e cpu-clock -F $2 --call-graph dwarf,32768 -o $3 -- $inner" ;;
	stax-fp) echo "$STAX record -F $2 --unwind fp -o $3 -- $inner" ;;
	stax-hybrid) echo "$STAX record -F $2 -o $3 -- $inner" ;;
	esac
}
MODES="bare perf-g perf-dwarf8 perf-dwarf32 stax-fp stax-hybrid"

# timed KEY CMD: run the shell command CMD under benchrun (stdout to
# /dev/null, stderr to $W/KEY.err); "wall user sys rss status" in $W/KEY.t.
timed() {
	rm -f "$W/$1.t"
	eval "$BR -o $W/$1.t -- $2" >/dev/null 2>"$W/$1.err"
	[ -s "$W/$1.t" ] || echo "- - - - 255" >"$W/$1.t"
}
# field FILE N: the Nth field of the first line of FILE, or "-".
field() { awk -v n="$2" 'NR == 1 { v = $n } END { print (v == "" ? "-" : v) }' "$1" 2>/dev/null || echo -; }
fsize() { if [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo -; fi; }
# samples_of ERRFILE: sample count from perf's or stax's closing summary.
samples_of() {
	sed -n 's/.*(\([0-9][0-9]*\) samples).*/\1/p; s/^stax: recorded \([0-9][0-9]*\) samples.*/\1/p' "$1" | tail -n 1 | grep . || echo -
}

# --- machine ------------------------------------------------------------
tsv M date "$(date -u '+%Y-%m-%d %H:%M UTC')"
tsv M mode "$([ "$QUICK" = 1 ] && echo "QUICK (tiny workloads, 1 repetition: numbers are not meaningful)" || echo "full")${ONLY:+ (BENCH_ONLY=$ONLY: other sections not run)}"
tsv M machine "$(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
tsv M stax "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
tsv M perf "$(perf version 2>/dev/null)"
tsv M python "${PY:-none}"
MAXRATE=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo unknown)
tsv M perf_event_max_sample_rate "$MAXRATE$(case $MAXRATE in [0-9]*) [ "$MAXRATE" -lt 9999 ] && echo ' (caps 9999 Hz)' || echo ' (9999 Hz is not capped)' ;; esac)"
tsv M perf_event_paranoid "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)"
tsv M event "cpu-clock (this VM has no hardware PMU)"

# --- 1, 2, 3: recording overhead, file size, stack quality ---------------
# (Each section's block is an unindented "if want NAME; then ... fi".)
if want record; then
QUAL_WLS="callgraph-nofp threads-nofp python"
: >"$W/quality.tsv"
for wl in $WLS; do
	wcmd=$(wl_cmd "$wl")
	for hz in 999 9999; do
		rep=1
		while [ "$rep" -le "$REPS" ]; do
			say "recording: $wl at $hz Hz, repetition $rep of $REPS"
			for mode in $MODES; do
				key=s1.$wl.$hz.$mode
				out=$W/$key.data
				rm -f "$out" "$out.old"
				cmd=$(rec_cmd "$mode" "$hz" "$out" "$W/$key.in" "$wcmd")
				rm -f "$W/$key.in"
				timed "$key" "$cmd"
				iw=$(field "$W/$key.in" 1)
				ow=$(field "$W/$key.t" 1)
				cpu=$(awk '{ if ($2 ~ /^[0-9.]+$/) printf "%.6f", $2 + $3; else print "-" }' "$W/$key.t")
				rss=$(field "$W/$key.t" 4)
				st=$(field "$W/$key.t" 5)
				if [ "$mode" = bare ]; then n=- bytes=-; else n=$(samples_of "$W/$key.err"); bytes=$(fsize "$out"); fi
				[ "$st" = 0 ] || { say "failed ($st): $cmd"; sed 's/^/#   /' "$W/$key.err" | tail -n 3 >&2; iw=- ow=- cpu=-; }
				printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$hz" "$mode" "$rep" \
					"$iw" "$ow" "$cpu" "$rss" "$st" "$n" "$bytes" "$cmd" >>"$RAW"
			done
			rep=$((rep + 1))
		done
		# Stack quality from the last repetition's files, at 999 Hz.
		case " $QUAL_WLS " in *" $wl "*) [ "$hz" = 999 ] && for mode in $MODES; do
			f=$W/s1.$wl.$hz.$mode.data
			[ -f "$f" ] || continue
			case $mode in
			perf-*)
				c="perf script -F comm,ip,sym -i $f | awk -v fmt=script -f bench/roots.awk"
				r=$(eval "$c" 2>/dev/null | tail -n 1 | tr ' ' '\t')
				printf '%s\t%s\tperf\t%s\t%s\n' "$wl" "$mode" "$r" "$c" >>"$W/quality.tsv"
				;;
			esac
			c="$STAX flame --folded -i $f | awk -v fmt=folded -f bench/roots.awk"
			r=$(eval "$c" 2>/dev/null | tail -n 1 | tr ' ' '\t')
			printf '%s\t%s\tstax\t%s\t%s\n' "$wl" "$mode" "$r" "$c" >>"$W/quality.tsv"
		done ;; esac
		rm -f "$W"/s1."$wl"."$hz".*.data "$W"/s1."$wl"."$hz".*.data.old
	done
done

# Section 1 and 2 rows from the raw measurements. Ratios are taken within
# a repetition (same wl, hz, rep), then summarized over repetitions.
rm -f "$W/rows1" "$W/rows2"
awk -F '\t' -v reps="$REPS" -v W="$W" '
function med(list,    a, n, i, j, t) {
	n = split(list, a, " ")
	if (!n) return "-"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(list,    a, n, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0; return m }
function hi(list,    a, n, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 > m) m = a[i] + 0; return m }
function triple(list) { return list == "" ? "-" : sprintf("%.3f %.3f %.3f", med(list), lo(list), hi(list)) }
function isn(v) { return v ~ /^[0-9.]+$/ }
function add(k, v) { L[k] = L[k] (L[k] == "" ? "" : " ") v }
{
	k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
	iw[k] = $5; ow[k] = $6; cpu[k] = $7; rss[k] = $8; smp[k] = $10; by[k] = $11
	cmd[$1 SUBSEP $2 SUBSEP $3] = $12
	if (!(($1 SUBSEP $2) in seen)) { seen[$1 SUBSEP $2] = 1; order[++no] = $1 SUBSEP $2 }
}
END {
	nm = split("bare perf-g perf-dwarf8 perf-dwarf32 stax-fp stax-hybrid", modes, " ")
	for (o = 1; o <= no; o++) {
		split(order[o], p, SUBSEP); wl = p[1]; hz = p[2]
		for (m = 1; m <= nm; m++) {
			mode = modes[m]; g = wl SUBSEP hz SUBSEP mode
			for (r = 1; r <= reps; r++) {
				k = g SUBSEP r; kg = wl SUBSEP hz SUBSEP "perf-g" SUBSEP r; kb = wl SUBSEP hz SUBSEP "bare" SUBSEP r
				if (isn(iw[k])) add(g SUBSEP "iw", iw[k])
				if (isn(ow[k])) add(g SUBSEP "ow", ow[k])
				if (isn(cpu[k])) add(g SUBSEP "cpu", cpu[k])
				if (isn(rss[k])) add(g SUBSEP "rss", rss[k])
				if (isn(smp[k])) add(g SUBSEP "smp", smp[k])
				if (isn(smp[k]) && smp[k] > 0 && isn(by[k])) add(g SUBSEP "bps", by[k] / smp[k])
				if (isn(by[k])) add(g SUBSEP "by", by[k])
				if (isn(iw[k]) && isn(iw[kg]) && iw[kg] > 0) add(g SUBSEP "iwg", iw[k] / iw[kg])
				if (isn(ow[k]) && isn(ow[kg]) && ow[kg] > 0) add(g SUBSEP "owg", ow[k] / ow[kg])
				if (isn(cpu[k]) && isn(cpu[kg]) && cpu[kg] > 0) add(g SUBSEP "cpug", cpu[k] / cpu[kg])
				if (isn(iw[k]) && isn(iw[kb]) && iw[kb] > 0) add(g SUBSEP "iwb", iw[k] / iw[kb])
				if (isn(cpu[k]) && isn(cpu[kb]) && cpu[kb] > 0) add(g SUBSEP "cpub", cpu[k] / cpu[kb])
			}
		}
		gd = wl SUBSEP hz SUBSEP "perf-dwarf8"
		for (m = 1; m <= nm; m++) {
			mode = modes[m]; g = wl SUBSEP hz SUBSEP mode
			v = "-"
			if (mode == "stax-fp")
				v = (L[g SUBSEP "cpug"] != "" && med(L[g SUBSEP "cpug"]) <= 1.05 && med(L[g SUBSEP "iwg"]) <= 1.05) ? "met" : "not met"
			if (mode == "stax-hybrid")
				v = (L[g SUBSEP "cpug"] != "" && med(L[g SUBSEP "cpug"]) <= 1.10 && med(L[g SUBSEP "iwg"]) <= 1.10 && \
				     med(L[g SUBSEP "cpug"]) < med(L[gd SUBSEP "cpug"])) ? "met" : "not met"
			if (v != "-") { n1++; if (v == "met") m1++ }
			printf "R\t1\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", wl, hz, mode,
				triple(L[g SUBSEP "iwg"]), triple(L[g SUBSEP "owg"]), triple(L[g SUBSEP "cpug"]),
				triple(L[g SUBSEP "iwb"]), triple(L[g SUBSEP "cpub"]),
				L[g SUBSEP "iw"] == "" ? "-" : sprintf("%.3f", med(L[g SUBSEP "iw"])),
				L[g SUBSEP "ow"] == "" ? "-" : sprintf("%.3f", med(L[g SUBSEP "ow"])),
				L[g SUBSEP "cpu"] == "" ? "-" : sprintf("%.3f", med(L[g SUBSEP "cpu"])),
				L[g SUBSEP "smp"] == "" ? (mode == "bare" ? 0 : "-") : sprintf("%d", med(L[g SUBSEP "smp"])), v, cmd[g] > (W "/rows1")
			if (mode == "bare") continue
			bg = med(L[wl SUBSEP hz SUBSEP "perf-g" SUBSEP "bps"]); bd = med(L[gd SUBSEP "bps"])
			b = L[g SUBSEP "bps"] == "" ? "-" : med(L[g SUBSEP "bps"])
			v = "-"
			if (mode == "stax-fp") v = (b != "-" && b <= 0.5 * bg) ? "met" : "not met"
			if (mode == "stax-hybrid") v = (b != "-" && b <= bg && b * 50 <= bd) ? "met" : "not met"
			if (v != "-") { n2++; if (v == "met") m2++ }
			printf "R\t2\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", wl, hz, mode,
				L[g SUBSEP "by"] == "" ? "-" : sprintf("%d", med(L[g SUBSEP "by"])),
				L[g SUBSEP "smp"] == "" ? "-" : sprintf("%d", med(L[g SUBSEP "smp"])),
				b == "-" ? "-" : sprintf("%.1f", b), (b == "-" || bg == "-" || bg == 0) ? "-" : sprintf("%.3f", b / bg),
				(b == "-" || bd == "-" || b == 0) ? "-" : sprintf("%.1f", bd / b), v, cmd[g] > (W "/rows2")
		}
	}
	printf "%s %s %s %s\n", m1 + 0, n1 + 0, m2 + 0, n2 + 0 > (W "/verdicts12")
}' "$RAW"
read -r m1 n1 m2 n2 <"$W/verdicts12"

tsv S 1 "1. Recording overhead"
tsv T 1 "stax record --unwind fp no slower than perf record -g (median ratio <= 1.05, 5% for noise); stax record (hybrid) within 10% of perf record -g (<= 1.10) and below perf --call-graph dwarf,8192, in both the workload's wall time and the total CPU time" "$(verdict "$m1" "$n1")"
tsv C 1 workload:s Hz:n recorder:s "wall/perf-g:r" "total/perf-g:r" "cpu/perf-g:r" "wall/bare:r" "cpu/bare:r" "wall s:n" "total s:n" "cpu s:n" samples:n verdict:s command:s
cat "$W/rows1" >>"$TSV"
tsv N 1 "wall: the workload's own wall time, measured inside the recorder by the inner bench/work/benchrun; total: wall time of the whole command (start, recording, finishing the file); cpu: user+system time of the recorder and the workload together. Ratios are median [min-max] over $REPS interleaved repetitions, each against perf record -g (or the bare workload) of the same repetition."
tsv N 1 "perf runs with --no-bpf-event: by default its BPF side-band thread adds about 1 s at exit (a poll timeout; see section 4), which would flatter stax."
tsv N 1 "Each command runs as: $BR -o T -- COMMAND, stdout to /dev/null. $STAX is a copy of ./stax taken when the run started."

tsv S 2 "2. File size"
tsv T 2 "stax record (hybrid) bytes/sample no more than perf record -g's and at least 50x below perf --call-graph dwarf,8192; stax record --unwind fp at most half of perf record -g's" "$(verdict "$m2" "$n2")"
tsv C 2 workload:s Hz:n recorder:s bytes:n samples:n bytes/sample:n "vs perf-g:n" "dwarf8 / this:n" verdict:s command:s
cat "$W/rows2" >>"$TSV"
tsv N 2 "bytes: the recording file's size; samples: from the recorder's closing summary (perf: 'Captured and wrote ... (N samples)', stax: 'recorded N samples'); medians over repetitions."

# Section 3 from quality.tsv.
m3=0 n3=0
tsv S 3 "3. Stack quality"
while IFS='	' read -r wl mode reader n m pct c; do
	v=-
	if [ "$mode" = stax-hybrid ]; then
		want=99
		[ "$wl" = python ] && want=95
		n3=$((n3 + 1))
		if awk -v p="$pct" -v w="$want" 'BEGIN { exit !(p + 0 >= w) }'; then v=met; m3=$((m3 + 1)); else v="not met (< $want%)"; fi
	fi
	printf 'R\t3\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$mode" "$reader" "$n" "$m" "$pct" "$v" "$c" >>"$W/rows3"
done <"$W/quality.tsv"
tsv T 3 "stax record (hybrid): at least 99% of samples reach the root on programs without frame pointers, 95% on CPython" "$(verdict "$m3" "$n3")"
tsv C 3 workload:s recording:s "unwound by:s" samples:n rooted:n "rooted %:n" verdict:s command:s
[ -f "$W/rows3" ] && cat "$W/rows3" >>"$TSV"
rm -f "$W/rows3"
tsv N 3 "From the 999 Hz recordings of section 1 (last repetition). A sample reaches the root when a frame is main, __libc_start_call_main, __libc_start_main, _start, start_thread, clone, clone3, Py_BytesMain or _dl_start_user (ld.so running library constructors; the list stax info uses, bench/roots.awk). 'unwound by perf' is perf script's own unwinding; 'unwound by stax' is stax reading the same file (for perf's DWARF files, stax's unwinder on perf's stack copies)."
fi # record

# --- 4: start-up ----------------------------------------------------------
if want startup; then
say "start-up"
rep=1
: >"$W/true.tsv"
while [ "$rep" -le "$REPS_TRUE" ]; do
	for what in perf perf-nobpf stax; do
		out=$W/true.$what.data
		rm -f "$out" "$out.old"
		case $what in
		perf) c="perf record -e cpu-clock -o $out -- true" ;;
		perf-nobpf) c="perf record --no-bpf-event -e cpu-clock -o $out -- true" ;;
		stax) c="$STAX record -o $out -- true" ;;
		esac
		timed "true.$what" "$c"
		tt=$(field "$W/true.$what.t" 1)
		[ "$(field "$W/true.$what.t" 5)" = 0 ] || tt=-
		printf '%s\t%s\t%s\t%s\n' "$what" "$rep" "$tt" "$c" >>"$W/true.tsv"
	done
	rep=$((rep + 1))
done
tsv S 4 "4. Start-up"
awk -F '\t' -v W="$W" '
function sortl(list, a,    n, i, j, t) { n = split(list, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
function med(list,    a, n) { n = sortl(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function tri(list,    a, n) { if (list == "") return "-"; n = sortl(list, a); return sprintf("%.3f %.3f %.3f", med(list), a[1], a[n]) }
{ t[$1, $2] = $3; c[$1] = $4; if ($2 > nr) nr = $2 }
END {
	split("stax perf perf-nobpf", w, " ")
	for (i = 1; i <= 3; i++) {
		ms = ""; rat = ""
		for (r = 1; r <= nr; r++) {
			if (t[w[i], r] !~ /^[0-9.]+$/) continue
			ms = ms " " t[w[i], r] * 1000
			if (t["perf", r] ~ /^[0-9.]+$/) rat = rat " " t[w[i], r] / t["perf", r]
		}
		v = "-"
		if (w[i] == "stax") { v = (ms != "" && med(ms) < 50) ? "met" : "not met"; print v > (W "/verdict4") }
		printf "R\t4\t%s\t%s\t%s\t%s\n", tri(ms), tri(rat), v, c[w[i]]
	}
}' "$W/true.tsv" >"$W/rows4"
tsv T 4 "stax record -- true under 50 ms (median)" "$(cat "$W/verdict4" 2>/dev/null || echo "not met")"
tsv C 4 "ms:r" "vs perf record:r" verdict:s command:s
cat "$W/rows4" >>"$TSV"
tsv N 4 "Median [min-max] of $REPS_TRUE interleaved runs. perf's default start-up includes about 1 s at exit waiting for its BPF side-band thread's poll timeout; --no-bpf-event removes it."

fi # startup

# --- 5, 6: answer time and memory on a big recording ---------------------
if want answer; then
# threads-fp under perf record -g at 9999 Hz: cpu-clock counts each
# thread's CPU time, so the sample count (about 1 million at full scale)
# does not depend on how busy the machine is, only the wall time does.
BIG=$W/big.perf.data
BIGX=$W/big.stax.data
say "recording the big perf.data (threads-fp $BIG_SCALE at 9999 Hz)"
rm -f "$BIG" "$BIG.old" "$BIGX" "$BIGX.old"
bigrec="perf record --no-bpf-event -e cpu-clock -F 9999 -g -o $BIG -- $PROG/threads-fp $BIG_SCALE"
timed big.rec "$bigrec"
BIGN=$(samples_of "$W/big.rec.err")
BIGS=$(field "$W/big.rec.t" 1)
say "big recording: $BIGN samples in $BIGS s; importing"
impcmd="$STAX import $BIG -o $BIGX"
timed big.import "$impcmd"
: >"$W/answer.tsv"
rep=1
while [ "$rep" -le "$REPS" ]; do
	say "answer time, repetition $rep of $REPS"
	for q in perf-report stax-top stax-flame stax-top-perfdata stax-flame-perfdata; do
		case $q in
		perf-report) c="perf report --stdio -i $BIG" ;;
		stax-top) c="$STAX top -i $BIGX" ;;
		stax-flame) c="$STAX flame -i $BIGX" ;;
		stax-top-perfdata) c="$STAX top -i $BIG" ;;
		stax-flame-perfdata) c="$STAX flame -i $BIG" ;;
		esac
		timed "big.$q" "$c"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$q" "$rep" "$(field "$W/big.$q.t" 1)" "$(field "$W/big.$q.t" 4)" "$(field "$W/big.$q.t" 5)" "$c" >>"$W/answer.tsv"
	done
	rep=$((rep + 1))
done

# The DWARF perf recording for section 5b: callgraph-nofp at perf's
# default rate (4000 Hz), what `perf record --call-graph dwarf` writes
# when a user gives no -F: about 8.3 KiB a sample, ~1 GB for 30 s.
DW=$W/dwarf.perf.data
say "recording the DWARF perf.data (callgraph-nofp $DW_SCALE at perf's default 4000 Hz)"
rm -f "$DW" "$DW.old"
dwrec="perf record --no-bpf-event -e cpu-clock --call-graph dwarf -o $DW -- $PROG/callgraph-nofp $DW_SCALE"
timed dw.rec "$dwrec"
DWN=$(samples_of "$W/dw.rec.err")
DWS=$(field "$W/dw.rec.t" 1)
rep=1
while [ "$rep" -le "$REPS" ]; do
	say "DWARF perf.data answer time, repetition $rep of $REPS"
	for q in dw-perf-report dw-stax-top; do
		case $q in
		dw-perf-report) c="perf report --stdio -i $DW" ;;
		dw-stax-top) c="$STAX top -i $DW" ;;
		esac
		timed "$q" "$c"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$q" "$rep" "$(field "$W/$q.t" 1)" "$(field "$W/$q.t" 4)" "$(field "$W/$q.t" 5)" "$c" >>"$W/answer.tsv"
	done
	rep=$((rep + 1))
done

# answer_rows SECTION REF QUERY...: one row per query, its time and the
# ratio to REF in the same repetition; verdicts by rule per query.
answer_rows() {
	sec=$1 ref=$2
	shift 2
	awk -F '\t' -v sec="$sec" -v ref="$ref" -v qs="$*" -v W="$W" '
	function sortl(list, a,    n, i, j, t) { n = split(list, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
	function med(list,    a, n) { n = sortl(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
	function tri(list,    a, n) { if (list == "") return "-"; n = sortl(list, a); return sprintf("%.3f %.3f %.3f", med(list), a[1], a[n]) }
	{ t[$1, $2] = $3; st[$1, $2] = $5; c[$1] = $6; if ($2 > nr) nr = $2 }
	END {
		nq = split(qs, q, " ")
		for (i = 1; i <= nq; i++) {
			s = ""; rat = ""; fast = ""
			for (r = 1; r <= nr; r++) {
				if (st[q[i], r] != "0" || t[q[i], r] !~ /^[0-9.]+$/) continue
				s = s " " t[q[i], r]
				if (st[ref, r] == "0" && t[ref, r] > 0) { rat = rat " " t[q[i], r] / t[ref, r]; fast = fast " " t[ref, r] / t[q[i], r] }
			}
			v = "-"
			if (q[i] == "stax-top" || q[i] == "stax-flame") v = (s != "" && med(s) < 0.5 && med(fast) >= 10) ? "met" : "not met"
			if (q[i] == "stax-top-perfdata") v = (fast != "" && med(fast) > 1) ? "met" : "not met"
			if (q[i] == "dw-stax-top") v = (fast != "" && med(fast) >= 10) ? "met" : "not met"
			if (v != "-") { n++; if (v == "met") m++ }
			printf "R\t%s\t%s\t%s\t%s\t%s\t%s\n", sec, tri(s), tri(rat), fast == "" ? "-" : sprintf("%.1f", med(fast)), v, c[q[i]]
		}
		printf "%d %d\n", m, n >> (W "/verdict" sec)
	}' "$W/answer.tsv" >>"$TSV.rows"
}
: >"$TSV.rows"
rm -f "$W/verdict5" "$W/verdict5b"
answer_rows 5 perf-report perf-report stax-top stax-flame stax-top-perfdata stax-flame-perfdata
tsv S 5 "5. Answer time"
read -r m5 n5 <"$W/verdict5"
tsv T 5 "stax top and stax flame on the imported recording under 0.5 s and at least 10x faster than perf report --stdio on the same samples" "$(verdict "$m5" "$n5")"
tsv C 5 "s:r" "vs perf report:r" "x faster:n" verdict:s command:s
cat "$TSV.rows" >>"$TSV"
imps=$(field "$W/big.import.t" 1)
tsv N 5 "The samples: $bigrec ($BIGN samples, recorded in $BIGS s); imported once with $impcmd (took $imps s, not a query). Median [min-max] of $REPS interleaved repetitions; output to /dev/null."

: >"$TSV.rows"
answer_rows 5b dw-perf-report dw-perf-report dw-stax-top
# The frame-pointer rows of 5b are the big recording's, measured above.
answer_rows 5b perf-report perf-report stax-top-perfdata
read -r m5b n5b <<EOF
$(awk '{ m += $1; n += $2 } END { print m + 0, n + 0 }' "$W/verdict5b")
EOF
tsv S 5b "5b. Reading perf.data (issue 5)"
tsv T 5b "stax top -i perf.data at least 10x faster than perf report --stdio on a DWARF recording, and faster on a frame-pointer recording, both at least 30 s" "$(verdict "$m5b" "$n5b")"
tsv C 5b "s:r" "vs perf report:r" "x faster:n" verdict:s command:s
cat "$TSV.rows" >>"$TSV"
rm -f "$TSV.rows"
tsv N 5b "DWARF: $dwrec ($DWN samples in $DWS s). Frame pointers: the section 5 recording ($BIGN samples in $BIGS s).$([ "$QUICK" = 1 ] && echo ' QUICK mode: both recordings are about 1 s, not 30 s.')"
fi # answer

if want record || want answer; then

tsv S 6 "6. Memory"
tsv T 6 "none set (context: peak RSS)" "n/a"
tsv C 6 what:s "peak RSS MiB:n" command:s
for hz in 999 9999; do
	for mode in $MODES; do
		awk -F '\t' -v hz="$hz" -v mode="$mode" '
		$1 == "callgraph-nofp" && $2 == hz && $3 == mode && $8 ~ /^[0-9]+$/ { if ($8 > m) m = $8; c = $12 }
		END { if (c != "") printf "R\t6\t%s\t%.1f\t%s\n", "recording callgraph-nofp at " hz " Hz: " mode, m / 1024, c }' "$RAW" >>"$TSV"
	done
done
awk -F '\t' '$4 ~ /^[0-9]+$/ { if ($4 > m[$1]) m[$1] = $4; c[$1] = $6; if (!($1 in seen)) { seen[$1] = 1; o[++n] = $1 } }
END { for (i = 1; i <= n; i++) printf "R\t6\tquery: %s\t%.1f\t%s\n", o[i], m[o[i]] / 1024, c[o[i]] }' "$W/answer.tsv" >>"$TSV"
[ -s "$W/big.import.t" ] && printf 'R\t6\timport of the big recording\t%s\t%s\n' "$(awk '$4 ~ /^[0-9]+$/ { printf "%.1f", $4 / 1024; exit }' "$W/big.import.t")" "$impcmd" >>"$TSV"
tsv N 6 "Peak RSS is wait4's ru_maxrss (what /usr/bin/time %M reports): the largest of the process tree, so a recorder row is max(recorder, workload); callgraph-nofp itself stays near 1 MiB. Largest over repetitions."
fi # record or answer

# --- 7: unwinder ----------------------------------------------------------
# The target's measure: the warm unwinder replaying every sample of real
# recordings of programs without frame pointers (xz, CPython), made by
# perf record --call-graph dwarf,32768 and read by stax's importer
# (bench/bench_replay.c, linked with make's objects). libunwind's remote
# interface unwinds the same samples. bench/bench_unwind.c is the older
# synthetic row: one captured stack unwound again and again (every rule
# lookup hits the unwinder's cache), and libunwind live on that stack.
if want unwind; then
say "unwinder"
tsv S 7 "7. Unwinder"
tsv C 7 what:s value:n unit:s verdict:s command:s
UNW_LIBS="-lelf -ldw -lz -llzma -lzstd"
LU=""
[ -f /usr/include/x86_64-linux-gnu/libunwind.h ] || [ -f /usr/include/libunwind.h ] && LU="-DHAVE_LIBUNWIND"
m7=0 n7=0
# 7a: recorded stacks
# make's objects but cmd/'s, and only those whose source still exists (a
# file moved to another directory leaves its old object behind)
lib_objs() {
	for _o in build/src/*/*.o build/gen/page.o; do
		_s=${_o#build/}
		case $_o in build/src/cmd/*) continue ;; esac
		case $_o in build/gen/*) [ -f "$_o" ] && echo "$_o"; continue ;; esac
		[ -f "${_s%.o}.c" ] && echo "$_o"
	done
}
# the libraries stax links (the Makefile's STAX_LIBS line)
stax_libs=$(sed -n 's/^STAX_LIBS = //p' Makefile)
rb="cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE $LU -o $W/bench_replay bench/bench_replay.c \$(lib_objs) -Wl,--wrap=unwind_sample $stax_libs${LU:+ -lunwind-x86_64 -lunwind}"
rb_ok=0
[ -f build/src/unwind/unwind.o ] && eval "$rb" 2>"$W/rb.err" && rb_ok=1
[ "$rb_ok" = 1 ] || say "bench_replay did not build: $(head -n 3 "$W/rb.err" 2>/dev/null | tr '\n' ' ')"
UR_SECS=2
[ "$QUICK" = 1 ] && UR_SECS=0.2
cold7=""
for wl in xz python; do
	[ "$wl" = python ] && [ -z "$PY" ] && continue
	case $wl in xz) lbl="xz -6 -T1" ;; python) lbl="CPython 3.11 loop" ;; esac
	data=$W/unwind.$wl.perf.data
	rm -f "$data" "$data.old"
	urrec="perf record --no-bpf-event -e cpu-clock -F 999 --call-graph dwarf,32768 -o $data -- $(wl_cmd $wl)"
	say "unwinder: recording $wl with perf --call-graph dwarf,32768"
	timed "ur.$wl.rec" "$urrec"
	# the table cache off: the cold pass compiles the tables
	urc="env STAX_NO_CACHE=1 $W/bench_replay -t $UR_SECS $data"
	: >"$W/ur.$wl.out"
	if [ "$rb_ok" = 1 ] && [ -s "$data" ]; then
		say "unwinder: replaying $wl"
		$urc >"$W/ur.$wl.out" 2>"$W/ur.$wl.err" ||
			say "bench_replay $wl: $(tail -n 2 "$W/ur.$wl.err" "$W/ur.$wl.out" | tr '\n' ' ')"
	fi
	O=$W/ur.$wl.out
	ns=$(sed -n 's/^replay: \([0-9]*\) samples.*/\1/p' "$O")
	fps=$(sed -n 's/^replay: .*(\([0-9.]*\) frames\/sample).*/\1/p' "$O")
	cpl=$(sed -n 's/^replay: .*complete [0-9]* (\([0-9.]*\)%).*/\1/p' "$O")
	wf=$(sed -n 's/^warm: \([0-9.]*\) ns\/frame.*/\1/p' "$O")
	wsm=$(sed -n 's/^warm: .* ns\/frame, \([0-9.]*\) ns\/sample.*/\1/p' "$O")
	wk=$(sed -n 's/^warm: .*median of \([0-9]*\) passes.*/\1/p' "$O")
	wmin=$(sed -n 's/^warm: .*; min \([0-9.]*\), max .*/\1/p' "$O")
	cold=$(sed -n 's/^cold: first pass \([0-9.]*\) ms (\([0-9]*\) tables built in \([0-9.]*\) ms.*/\1 ms (\2 tables built in \3 ms)/p' "$O")
	cold7="$cold7 $lbl: ${cold:-?};"
	n7=$((n7 + 1))
	if awk -v v="$wf" 'BEGIN { exit !(v != "" && v + 0 <= 10) }'; then vd=met; m7=$((m7 + 1)); else vd="not met"; fi
	tsv R 7 "stax warm unwinding, recorded $lbl stacks (${ns:-?} samples; fastest pass ${wmin:-?} ns/frame)" "${wf:--}" "ns/frame (median of ${wk:-?} passes)" "$vd" "$urc"
	tsv R 7 "stax warm unwinding, recorded $lbl stacks, per sample" "${wsm:--}" ns/sample - "$urc"
	tsv R 7 "frames per sample, recorded $lbl stacks (stax)" "${fps:--}" frames - "$urc"
	tsv R 7 "samples complete (reached a root), recorded $lbl stacks (stax)" "${cpl:--}" "%" - "$urc"
	lf=$(sed -n 's/^libunwind: \([0-9.]*\) ns\/frame.*/\1/p' "$O")
	lfps=$(sed -n 's/^libunwind: .* \([0-9.]*\) frames\/sample.*/\1/p' "$O")
	lsame=$(sed -n 's/^libunwind: .*same frames as stax [0-9]* (\([0-9.]*\)%).*/\1/p' "$O")
	if [ -n "$LU" ]; then
		tsv R 7 "libunwind remote (unw_init_remote, unw_step; UNW_CACHE_GLOBAL), same recorded $lbl stacks (${lfps:-?} frames/sample, ${lsame:-?}% of samples the same frames as stax)" "${lf:--}" ns/frame - "$urc"
	else
		tsv R 7 "libunwind remote, recorded $lbl stacks: libunwind-dev not installed (sh scripts/deps.sh --bench)" - ns/frame n/a "$urc"
	fi
	tsv N 7 "Recorded $lbl stacks: $urrec ($(samples_of "$W/ur.$wl.rec.err") samples, $(sed -n 's/^recording: .*stack copies \(.*\)/\1 of stack copies/p' "$O"))."
done
# 7b: the synthetic stack
ub="cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE $LU -o $W/bench_unwind bench/bench_unwind.c src/unwind/*.c src/module/*.c src/lib/*.c $UNW_LIBS${LU:+ -lunwind}"
tb="cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE -o $W/bench_tables bench/bench_tables.c src/unwind/*.c src/module/*.c src/lib/*.c $UNW_LIBS"
if eval "$ub" 2>"$W/ub.err" && "$W/bench_unwind" >"$W/ub.out" 2>&1; then
	v=$(sed -n 's/^warm: .* \([0-9.]*\) ns\/frame.*/\1/p' "$W/ub.out")
	fr=$(sed -n 's/^sample: \([0-9]*\) frames.*/\1/p' "$W/ub.out")
	tsv R 7 "synthetic: stax warm unwinding of one captured $fr-frame stack, 200,000 times (every rule lookup hits the rule cache; not the target's measure)" "${v:--}" "ns/frame (best of 5)" - "$W/bench_unwind"
	for k in unw_step unw_backtrace; do
		lv=$(sed -n "s/^libunwind $k: \([0-9.]*\) ns\/frame.*/\1/p" "$W/ub.out")
		if [ -n "$LU" ]; then
			tsv R 7 "synthetic: libunwind $k, live and local on the same recursion (not the recorded stacks)" "${lv:--}" "ns/frame (best of 5)" - "$W/bench_unwind"
		else
			tsv R 7 "synthetic: libunwind $k: libunwind-dev not installed (sh scripts/deps.sh --bench)" - ns/frame n/a "$W/bench_unwind"
		fi
	done
else
	say "bench_unwind failed: $(head -n 3 "$W/ub.err" "$W/ub.out" 2>/dev/null)"
	tsv R 7 "synthetic: stax warm unwinding: bench/bench_unwind.c did not build or run" - ns/frame - "$ub"
	for k in unw_step unw_backtrace; do
		tsv R 7 "synthetic: libunwind $k: bench/bench_unwind.c did not build or run" - ns/frame - "$ub"
	done
fi
LIBC=$(ldd "$PROG/callgraph-nofp" | awk '/libc\.so/ { print $3 }')
PYLIB=""
[ -n "$PY" ] && PYLIB=$(ldd "$PY" | awk '/libpython/ { print $3 }')
if eval "$tb" 2>"$W/tb.err"; then
	for f in $LIBC $PYLIB $PY; do
		line=$("$W/bench_tables" "$f" 2>/dev/null | tail -n 1)
		ms=$(echo "$line" | awk '{ print $3 }')
		rows=$(echo "$line" | awk '{ print $4 }')
		vd=-
		if [ "$f" = "$LIBC" ]; then
			n7=$((n7 + 1))
			if awk -v v="$ms" 'BEGIN { exit !(v != "" && v + 0 < 50) }'; then vd=met; m7=$((m7 + 1)); else vd="not met"; fi
		fi
		tsv R 7 "cold table build: $(basename "$f") (${rows:-?} rows)" "${ms:--}" "ms (median of 5)" "$vd" "$W/bench_tables $f"
	done
else
	tsv R 7 "cold table build: bench/bench_tables.c did not build" - ms "not met" "$tb"
fi
tsv T 7 "warm unwinding of recorded stacks (xz and CPython without frame pointers) at most 10 ns/frame; a libc table built in under 50 ms" "$(verdict "$m7" "$n7")"
tsv N 7 "Recorded stacks: bench/bench_replay.c, built after make with $rb. It reads the perf.data with stax's importer (as stax import does) and keeps every sample's registers, stack copy and kernel chain as handed to unwind_sample(), with the modules the importer's lookup answered from the recording's mappings. With a new unwinder it then unwinds every sample once (cold: builds the tables; checks each sample gets the frames the import got), then passes over all samples for $UR_SECS s (at least 5 passes), timing each pass: only unwind_sample() calls, modules looked up from the recording's mappings as the importer does. ns/frame: median pass time / frames of a pass. Cold first passes (tables built on the way):$cold7 libunwind unwinds the same samples through its remote interface as perf's libunwind unwinder uses it (one address space per process with UNW_CACHE_GLOBAL, unw_init_remote, unw_step; memory from the stack copy, else from the mapped ELF files; unwind info from .eh_frame_hdr through dwarf_search_unwind_table), one untimed pass first, then timed passes as for stax."
tsv N 7 "Synthetic: $ub; one stack without frame pointers (a recursion under libc's qsort) captured in-process and unwound 200,000 times, best of 5; libunwind unwinds the live stack of the same recursion in-process (unw_step from unw_init_local, and unw_backtrace). Cold: $tb; utable_load() wall time (file open, parse, compile; the file is in the page cache)."
fi # unwind

# --- 8: symbolization (issue 6) -------------------------------------------
# bench/symbench/gen.sh writes a C program of SB_FUNCS functions made of
# always_inline helpers (built -O2 -g), so that samples spread over tens of
# thousands of addresses, most of them inside inlined code. perf records it
# with -g at a fixed period of 50 us of CPU time; symbench stops after
# SB_SECS seconds of its own CPU time, so the sample count (about a million
# at full scale) does not depend on how busy the machine is.
if want symbols; then
SB=$(cd "$W" && pwd)/symbench-$SB_FUNCS
SBP=$W/sb.perf.data
SBX=$W/sb.stax.data
SYN=$W/sb.synth.data
if [ ! -x "$SB" ] || [ bench/symbench/gen.sh -nt "$SB" ]; then
	say "symbolization: building $SB"
	rm -f "$SB"
	sh bench/symbench/gen.sh "$SB.c" "$SB_FUNCS" && cc -O2 -g -o "$SB" "$SB.c" 2>"$W/sb.cc.err"
fi
sbrec="perf record --no-bpf-event -e cpu-clock -c 50000 -g -o $SBP -- $SB $SB_SECS"
rm -f "$SBP" "$SBP.old"
say "symbolization: recording $SB_SECS CPU seconds of symbench"
if [ -x "$SB" ]; then timed sb.rec "$sbrec"; else echo "- - - - 255" >"$W/sb.rec.t"; fi
SBN=$(samples_of "$W/sb.rec.err")
# Unique addresses: every frame of every sample (what a symbolizer
# resolves), and those in symbench itself.
perf script -F ip,dso -i "$SBP" 2>/dev/null | awk 'NF { if (!($1 in u)) { u[$1] = 1; n++; if (index($0, "/symbench-")) m++ } }
	END { print n + 0, m + 0 }' >"$W/sb.addrs"
read -r SBU SBUS <"$W/sb.addrs"
# The synthetic recording: exactly SYN_SAMPLES samples over SYN_ADDRS leaf
# addresses of symbench, no symbols chunk (bench/symbench/mkrec.c).
mkb="cc -O2 -Isrc -D_GNU_SOURCE -o $W/mkrec bench/symbench/mkrec.c build/src/store/*.o build/src/lib/*.o -lzstd -lxxhash -lelf -lz"
rm -f "$SYN"
SYNU=- SYNN=-
if [ -x "$SB" ] && eval "$mkb" 2>"$W/mkrec.err" &&
	objdump -d --no-show-raw-insn "$SB" | awk '/^ +[0-9a-f]+:/ { print $1 }' |
	"$W/mkrec" "$SB" "$SYN" "$SYN_SAMPLES" "$SYN_ADDRS" 2>"$W/mkrec.out"; then
	read -r SYNN SYNU <<EOS
$(sed -n 's/^mkrec: \([0-9]*\) samples over \([0-9]*\) addresses.*/\1 \2/p' "$W/mkrec.out")
EOS
else
	say "mkrec failed: $(head -n 2 "$W/mkrec.err" "$W/mkrec.out" 2>/dev/null | tr '\n' ' ')"
fi
SBQ="perf-report stax-import stax-top-perfdata stax-top stax-flame stax-top-synth"
: >"$W/sym.tsv"
rep=1
while [ "$rep" -le "$REPS" ]; do
	say "symbolization, repetition $rep of $REPS"
	for q in $SBQ; do
		case $q in
		perf-report) c="perf report -i $SBP --stdio --inline" ;;
		stax-import) c="$STAX import -q $SBP -o $SBX"; rm -f "$SBX" ;;
		stax-top-perfdata) c="$STAX top -i $SBP -n 20" ;;
		stax-top) c="$STAX top -i $SBX -n 20" ;;
		stax-flame) c="$STAX flame -i $SBX" ;;
		stax-top-synth) c="$STAX top -i $SYN -n 20" ;;
		esac
		timed "sb.$q" "$c"
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$q" "$rep" "$(field "$W/sb.$q.t" 1)" "$(field "$W/sb.$q.t" 4)" "$(field "$W/sb.$q.t" 5)" "$c" >>"$W/sym.tsv"
	done
	rep=$((rep + 1))
done
awk -F '\t' -v W="$W" -v n="$SBN" -v u="$SBU" -v sn="$SYNN" -v su="$SYNU" '
function sortl(list, a,    n, i, j, t) { n = split(list, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
function med(list,    a, n) { n = sortl(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function tri(list,    a, n) { if (list == "") return "-"; n = sortl(list, a); return sprintf("%.3f %.3f %.3f", med(list), a[1], a[n]) }
{ t[$1, $2] = $3; rss[$1] = ($4 ~ /^[0-9]+$/ && $4 > rss[$1]) ? $4 : rss[$1]; st[$1, $2] = $5; c[$1] = $6; if ($2 > nr) nr = $2 }
END {
	nq = split("perf-report stax-import stax-top-perfdata stax-top stax-flame stax-top-synth", q, " ")
	what["perf-report"] = "perf report --stdio --inline on perf.data (reference)"
	what["stax-import"] = "stax import: perf.data to a stax recording, every address symbolized with inlines"
	what["stax-top-perfdata"] = "stax top on perf.data (reads, unwinds and symbolizes on the fly)"
	what["stax-top"] = "stax top on the imported recording (symbols from its symbols chunk)"
	what["stax-flame"] = "stax flame on the imported recording"
	what["stax-top-synth"] = "stax top on the synthetic recording (no symbols chunk: symbolizes every address)"
	for (i = 1; i <= nq; i++) {
		s = ""; rat = ""; fast = ""
		for (r = 1; r <= nr; r++) {
			if (st[q[i], r] != "0" || t[q[i], r] !~ /^[0-9.]+$/) continue
			s = s " " t[q[i], r]
			if (st["perf-report", r] == "0" && t["perf-report", r] > 0 && t[q[i], r] > 0) {
				rat = rat " " t[q[i], r] / t["perf-report", r]; fast = fast " " t["perf-report", r] / t[q[i], r]
			}
		}
		smp = q[i] == "stax-top-synth" ? sn : n; adr = q[i] == "stax-top-synth" ? su : u
		v = "-"
		if (q[i] == "stax-import" || q[i] == "stax-top-synth") {
			if (s == "" || med(s) >= 2) v = "not met"
			else if (smp !~ /^[0-9]+$/ || smp < 950000 || adr < 50000) v = "not met (under 2 s, but " smp " samples over " adr " addresses, not 1M over 50,000)"
			else v = "met"
			nv++; if (v == "met") mv++
		}
		printf "R\t8\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", what[q[i]], smp, adr, tri(s), tri(rat),
			fast == "" ? "-" : sprintf("%.1f", med(fast)), rss[q[i]] == "" ? "-" : sprintf("%.1f", rss[q[i]] / 1024), v, c[q[i]]
	}
	printf "%d %d\n", mv, nv > (W "/verdict8")
}' "$W/sym.tsv" >"$W/rows8"
read -r m8 n8 <"$W/verdict8"
tsv S 8 "8. Symbolization (issue 6)"
tsv T 8 "a recording of 1 million samples over 50,000 unique addresses symbolized, inline expansion on, in under 2 s: stax import of perf.data (every address of every frame) and stax top on the synthetic recording" "$(verdict "$m8" "$n8")"
tsv C 8 what:s samples:n "unique addresses:n" "s:r" "vs perf report:r" "x faster:n" "peak RSS MiB:n" verdict:s command:s
cat "$W/rows8" >>"$TSV"
sbs=$(field "$W/sb.rec.t" 1)
tsv N 8 "The perf.data: $sbrec ($SBN samples, recorded in $sbs s; workload: sh bench/symbench/gen.sh OUT.c $SB_FUNCS, cc -O2 -g). Its unique addresses count every frame of every sample, kernel included ($SBUS of them in symbench itself): perf script -F ip,dso | sort -u. Median [min-max] of $REPS interleaved repetitions; ratios against perf report in the same repetition; output to /dev/null."
tsv N 8 "What each row measures: stax import reads perf.data, keeps its frame-pointer chains and resolves every sampled address once (function, inline chain, file and line) into the recording's symbols chunk, as stax record does at stop: that is the symbolization time. stax top on the import only reads that chunk. stax top on perf.data does the import's work in memory. perf report --inline (perf's default) expands inline frames only for the call chains it prints, through addr2line; perf $(perf version 2>/dev/null | sed 's/^perf version //') here is built $(perf version --build-options 2>/dev/null | grep -q 'libbfd: \[ on' && echo with || echo without) libbfd."
tsv N 8 "The synthetic recording: $mkb, then objdump -d symbench | mkrec symbench OUT $SYN_SAMPLES $SYN_ADDRS: $SYNN samples whose leaf frames cycle through $SYNU instruction addresses spread evenly over symbench's code (a few percent of them alignment padding between functions, which no symbol covers), under one caller, with no symbols chunk, so the query symbolizes them all from the binary. perf cannot read it; its ratio is against perf report on the perf.data above (same binary, a similar number of samples and addresses)."
fi # symbols

# --- 9: switch recording (issue 8) -----------------------------------------
# tests/programs pingpong-fp: two threads bouncing a byte over two pipes,
# about two context switches per round trip; it prints round trips/s.
if want switch; then
PP=$PROG/pingpong-fp
SWM="alone stax-offcpu stax-nowakers perf-switch perf-sched"
: >"$W/switch.tsv"
rep=1
while [ "$rep" -le "$REPS_SW" ]; do
	say "switch recording, repetition $rep of $REPS_SW"
	for mode in $SWM; do
		key=sw.$mode
		out=$W/pp.$mode.data
		rm -f "$out" "$out.old" "$W/$key.in"
		inner="$BR -o $W/$key.in -- $PP $PP_N"
		case $mode in
		alone) c=$inner ;;
		stax-offcpu) c="$STAX record --off-cpu -o $out -- $inner" ;;
		stax-nowakers) c="$STAX record --off-cpu --no-wakers -o $out -- $inner" ;;
		perf-switch) c="perf record --no-bpf-event -e sched:sched_switch -g -o $out -- $inner" ;;
		perf-sched) c="perf sched record --no-bpf-event -o $out -- $inner" ;;
		esac
		timed "$key" "$c"
		st=$(field "$W/$key.t" 5)
		rts=$(sed -n 's/^pingpong: .*(\([0-9.]*\)\/s).*/\1/p' "$W/$key.err" | tail -n 1 | grep . || echo -)
		sw=- lost=- by=-
		case $mode in
		stax-*)
			sw=$(sed -n 's/^stax: recorded \([0-9]*\) off-CPU intervals.*/\1/p' "$W/$key.err" | tail -n 1 | grep . || echo -)
			lost=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$W/$key.err" | tail -n 1 | grep . || echo -)
			;;
		perf-*)
			perf report --stats -i "$out" 2>/dev/null | awk '
			/ stats:$/ { ev = $1; next }
			ev == "sched:sched_switch" && $1 == "SAMPLE" { sw = $3 }
			ev != "" && ev != "Aggregated" && $1 == "LOST_SAMPLES" { lost += $3 }
			END { print (sw == "" ? "-" : sw), lost + 0 }' >"$W/$key.stats"
			read -r sw lost <"$W/$key.stats"
			;;
		esac
		[ "$mode" = alone ] || by=$(fsize "$out")
		[ "$st" = 0 ] || { say "failed ($st): $c"; sed 's/^/#   /' "$W/$key.err" | tail -n 3 >&2; rts=-; }
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mode" "$rep" "$rts" "$(field "$W/$key.in" 1)" "$(field "$W/$key.t" 1)" \
			"$(awk '{ if ($2 ~ /^[0-9.]+$/) printf "%.6f", $2 + $3; else print "-" }' "$W/$key.t")" "$sw" "$lost" "$by" "$st" "$c" >>"$W/switch.tsv"
		rm -f "$out" "$out.old"
	done
	rep=$((rep + 1))
done
awk -F '\t' '
function sortl(list, a,    n, i, j, t) { n = split(list, a, " "); for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return n }
function med(list,    a, n) { n = sortl(list, a); return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
function tri(list,    a, n) { if (list == "") return "-"; n = sortl(list, a); return sprintf("%.3f %.3f %.3f", med(list), a[1], a[n]) }
function isn(v) { return v ~ /^[0-9.]+$/ }
function add(k, v) { L[k] = L[k] (L[k] == "" ? "" : " ") v }
function m(k, f) { return L[k] == "" ? "-" : sprintf(f, med(L[k])) }
{ rt[$1, $2] = $3; iw[$1, $2] = $4; ow[$1, $2] = $5; cpu[$1, $2] = $6; sw[$1, $2] = $7; lost[$1, $2] = $8; by[$1, $2] = $9; c[$1] = $11; if ($2 > nr) nr = $2 }
END {
	nm = split("alone stax-offcpu stax-nowakers perf-switch perf-sched", md, " ")
	for (i = 1; i <= nm; i++) {
		x = md[i]
		for (r = 1; r <= nr; r++) {
			if (!isn(rt[x, r])) continue
			add(x SUBSEP "rt", rt[x, r])
			if (isn(rt["alone", r]) && rt["alone", r] > 0) add(x SUBSEP "rtr", rt[x, r] / rt["alone", r])
			if (isn(iw[x, r])) add(x SUBSEP "iw", iw[x, r])
			if (isn(iw[x, r]) && isn(iw["alone", r]) && iw["alone", r] > 0) add(x SUBSEP "iwr", iw[x, r] / iw["alone", r])
			if (isn(ow[x, r])) add(x SUBSEP "ow", ow[x, r])
			if (isn(cpu[x, r])) add(x SUBSEP "cpu", cpu[x, r])
			if (isn(sw[x, r])) add(x SUBSEP "sw", sw[x, r])
			if (isn(lost[x, r])) add(x SUBSEP "lost", lost[x, r])
			if (isn(by[x, r])) add(x SUBSEP "by", by[x, r])
			if (isn(by[x, r]) && isn(sw[x, r]) && sw[x, r] > 0) add(x SUBSEP "bps", by[x, r] / sw[x, r])
			if (isn(iw[x, r]) && isn(iw["alone", r]) && isn(sw[x, r]) && sw[x, r] > 0)
				add(x SUBSEP "ups", (iw[x, r] - iw["alone", r]) * 1e6 / sw[x, r])
		}
		g = x SUBSEP
		printf "R\t9\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x,
			m(g "rt", "%d"), tri(L[g "rtr"]), tri(L[g "iwr"]), m(g "iw", "%.3f"), m(g "ow", "%.3f"), m(g "cpu", "%.3f"),
			m(g "sw", "%d"), m(g "lost", "%d"), m(g "by", "%d"), m(g "bps", "%.1f"), m(g "ups", "%.2f"), x == "alone" ? "n/a" : "-", c[x]
	}
}' "$W/switch.tsv" >"$W/rows9"
tsv S 9 "9. Switch recording (issue 8)"
tsv T 9 "none set by issue 8: the cost of recording every context switch with its stack, against perf on the same switch-heavy program" "n/a"
tsv C 9 recorder:s "round trips/s:n" "rate/alone:r" "wall/alone:r" "wall s:n" "total s:n" "cpu s:n" switches:n lost:n bytes:n "bytes/switch:n" "us/switch:n" verdict:s command:s
cat "$W/rows9" >>"$TSV"
tsv N 9 "Workload: $PP $PP_N (two threads, one byte each way over two pipes per round trip). round trips/s: what pingpong prints; rate/alone and wall/alone: against the workload alone in the same repetition (a rate below 1 and a wall above 1 are the recorder's cost); wall: the workload's own wall time (inner benchrun); total: the whole command; cpu: user+system time of recorder and workload. Medians [min-max] over $REPS_SW interleaved repetitions."
tsv N 9 "switches: stax, the off-CPU intervals in its closing summary (its file also holds the default 999 Hz cpu-clock samples); perf, the sched:sched_switch samples in perf report --stats. lost: stax's lost records from its summary; perf's LOST_SAMPLES from perf report --stats. bytes/switch: file size / switches. us/switch: the cost per switch, (wall - wall alone) / switches in microseconds. stax-offcpu records who woke each wait (sched:sched_waking, a stack per wake-up); stax-nowakers is the same with --no-wakers, as before wakers existed. perf record -e sched:sched_switch -g writes the kernel and frame-pointer user chain of each switch-out; perf sched record records the whole machine (perf sched adds -a) with several sched events and no stacks, so its switches include other processes'."
fi # switch

# --- 10: a long recording: bounded memory (issue 16) -----------------------
# Three recordings of LONG_S seconds (60; QUICK 2): one program (spin-fp)
# at the defaults, and the whole machine (-a) at the defaults and at 99
# Hz while spin-fp spins and short programs (callgraph-fp 0.01) start and
# exit all along. The recorder's resident memory (VmRSS) and CPU time
# (utime + stime of /proc/PID/stat, all its threads) are read every 0.2
# s: after a quarter of the run (start-up done: /proc seeded, the first
# tables built) and at the last reading before the recording stops (the
# symbols written at stop come after). Targets: flat memory (issue 16);
# -a at 99 Hz under 1% of one CPU (issue 22).
if want long; then
: >"$W/rows10"
for mode in one all all99; do
	out=$W/long.$mode.data
	rm -f "$out" "$out.old" "$W/long.$mode.rss" "$W/long.churn"
	lf=999
	[ "$mode" = all99 ] && lf=99
	case $mode in
	one) c="$STAX record -o $out -- $PROG/spin-fp $LONG_S" ;;
	all*) c="$STAX record -a -F $lf --duration $LONG_S -o $out"
	     "$PROG/spin-fp" $((LONG_S + 10)) >/dev/null 2>&1 &
	     lspin=$!
	     : >"$W/long.run"
	     ( n=0; while [ -e "$W/long.run" ]; do "$PROG/callgraph-fp" 0.01 >/dev/null 2>&1; n=$((n + 1)); echo "$n" >"$W/long.churn"; done ) &
	     lchurn=$! ;;
	esac
	say "long recording: $c"
	t0=$(date +%s%N)
	# not through eval: $! must be stax itself, whose memory is read
	if [ "$mode" = one ]; then
		"$STAX" record -o "$out" -- "$PROG/spin-fp" "$LONG_S" >/dev/null 2>"$W/long.$mode.err" &
	else
		"$STAX" record -a -F "$lf" --duration "$LONG_S" -o "$out" >/dev/null 2>"$W/long.$mode.err" &
	fi
	lrec=$!
	while kill -0 "$lrec" 2>/dev/null; do
		r=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$lrec/status" 2>/dev/null)
		# utime + stime in clock ticks (fields 14 and 15; the name in
		# field 2 is "stax", without spaces)
		k=$(awk '{ print $14 + $15 }' "/proc/$lrec/stat" 2>/dev/null)
		[ -n "$r" ] && [ -n "$k" ] && echo "$((($(date +%s%N) - t0) / 1000000)) $r $k" >>"$W/long.$mode.rss"
		sleep 0.2
	done
	wait "$lrec"
	lst=$?
	if [ "$mode" != one ]; then
		rm -f "$W/long.run"
		wait "$lchurn" 2>/dev/null
		kill "$lspin" 2>/dev/null
		wait "$lspin" 2>/dev/null
	fi
	[ "$lst" = 0 ] || say "long recording failed ($lst): $(tail -n 1 "$W/long.$mode.err")"
	lsamples=$(samples_of "$W/long.$mode.err")
	llost=$(sed -n 's/^stax: recorded .* samples .*, \([0-9]*\) lost,.*/\1/p' "$W/long.$mode.err" | tail -n 1 | grep . || echo -)
	lprocs=1
	[ "$mode" != one ] && lprocs=$(cat "$W/long.churn" 2>/dev/null || echo -)
	case $mode in
	one) what="one program" ;;
	all) what="the whole machine (-a), $lf Hz" ;;
	*) what="the whole machine (-a), $lf Hz (CPU target)" ;;
	esac
	awk -v d="$LONG_S" -v st="$lst" -v n="$lsamples" -v lost="$llost" -v procs="$lprocs" \
	    -v what="$what" -v c="$c" -v tck="$(getconf CLK_TCK)" -v cput="$([ "$mode" = all99 ] && echo 1 || echo 0)" '
	{ t[NR] = $1 / 1000; r[NR] = $2; k[NR] = $3 }
	END {
		for (i = 1; i <= NR; i++) {
			if (first == "" && t[i] >= d / 4) { first = r[i]; ft = t[i]; fk = k[i] }
			if (t[i] <= d) { last = r[i]; lt = t[i]; lk = k[i]; if (r[i] > peak) peak = r[i] }
		}
		# a loaded machine can leave fewer than two readings inside the
		# nominal duration (slow start-up): measure over the observed life
		if (NR >= 2 && (first == "" || last == "" || lt <= ft)) {
			first = ""; peak = 0
			for (i = 1; i <= NR; i++) {
				if (first == "" && t[i] >= t[NR] / 4) { first = r[i]; ft = t[i]; fk = k[i] }
				last = r[i]; lt = t[i]; lk = k[i]; if (r[i] > peak) peak = r[i]
			}
		}
		if (st != 0 || first == "" || last == "" || lt <= ft) {
			printf "R\t10\t%s\t%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\tnot met (no readings)\t%s\n", what, d, n, lost, procs, c
			exit
		}
		grow = (last - first) / 1024
		cpu = 100 * (lk - fk) / tck / (lt - ft)
		ok = last <= first * 1.1 + 4096
		why = ok ? "" : ", memory grows"
		if (cput && cpu >= 1) { ok = 0; why = why ", cpu >= 1% of one CPU" }
		printf "R\t10\t%s\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%s\t%s\n", what, d, n, lost, procs,
			first / 1024, last / 1024, grow, grow / ((lt - ft) / 60), peak / 1024, cpu,
			ok ? "met" : "not met (" substr(why, 3) ")", c
	}' "$W/long.$mode.rss" >>"$W/rows10"
	rm -f "$out" "$out.old"
done
m10=$(grep -c '	met	' "$W/rows10")
tsv S 10 "10. Long recording: bounded memory (issue 16)"
tsv T 10 "flat memory while recording: the recorder's resident memory at the end of a $LONG_S s recording within 10% (+4 MiB) of what it was after a quarter of it; the whole machine at 99 Hz under 1% of one CPU from a quarter of the run to its end" "$(verdict "$m10" 3)"
tsv C 10 recording:s "seconds:n" samples:n lost:n "programs:n" "RSS MiB at 1/4:n" "RSS MiB at end:n" "growth MiB:n" "MiB per minute:n" "peak RSS MiB:n" "cpu % of one CPU:n" verdict:s command:s
cat "$W/rows10" >>"$TSV"
tsv N 10 "one program: $PROG/spin-fp $LONG_S. cpu %: the recorder's user and system time (all its threads, /proc/PID/stat) from the first reading after a quarter of the run to the last before it stopped, over that time (the start-up and the symbols written at stop are not in it). The whole machine: while recording, spin-fp spins and a loop runs $PROG/callgraph-fp 0.01 again and again (programs: how many ran), so processes, mappings and stacks keep coming; every other process of the machine is recorded too, so samples and memory depend on the load. RSS: VmRSS of the recorder (the ring buffers are not in it) read every 0.5 s; at 1/4: the first reading after a quarter of the run; at end: the last reading before it stopped; peak: the largest reading while recording (the symbols written after the stop are not in it). What a recording keeps grows with what it sees: each new process image has its mappings and its own stack nodes."
fi # long

# --- 11: crash safety -------------------------------------------------------
# The recording file is flushed in chunks at least every 250 ms (README,
# docs/FORMAT.md), so a SIGKILL of the recorder loses at most about that
# much. The tests check that chunks are written while recording and that
# a killed recording reads (tests/e2e/sigkill.sh); how often, in time, is
# measured here: bench/chunkwatch.py watches the file of a recording of
# spin-fp grow (every 2 ms), then SIGKILLs the recorder and compares the
# program's CPU time at that moment with the samples the file kept.
if want crash; then
CW_SECS=10
[ "$QUICK" = 1 ] && CW_SECS=1
tsv S 11 "11. Crash safety"
tsv C 11 what:s value:n unit:s verdict:s command:s
m11=0 n11=0
cwc="python3 bench/chunkwatch.py $STAX $PROG/spin-fp $W/cw.data $CW_SECS"
say "crash safety: watching a recording's chunks for $CW_SECS s"
if command -v python3 >/dev/null 2>&1 && $cwc >"$W/cw.out" 2>"$W/cw.err"; then
	read -r _ ngaps maxgap medgap <<EOS
$(grep '^gaps ' "$W/cw.out")
EOS
	cpu=$(sed -n 's/^cpu_ms_at_kill //p' "$W/cw.out")
	kept=$($STAX flame --folded -i "$W/cw.data" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }')
	# cpu-clock at 999 Hz: one sample per 1.001 ms of CPU time
	lossms=$(awk -v c="$cpu" -v k="$kept" 'BEGIN { printf "%.1f", c - k * 1000 / 999 }')
	n11=$((n11 + 2))
	if awk -v v="$maxgap" 'BEGIN { exit !(v >= 0 && v <= 260) }'; then vd=met; m11=$((m11 + 1)); else vd="not met"; fi
	tsv R 11 "longest time between two chunk writes while recording spin-fp ($ngaps gaps in $CW_SECS s; the file polled every 2 ms)" "$maxgap" ms "$vd" "$cwc"
	tsv R 11 "median time between two chunk writes" "$medgap" ms - "$cwc"
	if awk -v v="$lossms" 'BEGIN { exit !(v <= 300) }'; then vd=met; m11=$((m11 + 1)); else vd="not met"; fi
	tsv R 11 "CPU time of spin-fp missing from the recording after SIGKILL of the recorder ($kept samples kept of $cpu ms of CPU time)" "$lossms" ms "$vd" "$cwc"
else
	say "chunkwatch failed: $(tail -n 2 "$W/cw.err" 2>/dev/null | tr '\n' ' ')"
	tsv R 11 "longest time between two chunk writes: bench/chunkwatch.py did not run" - ms "not met" "$cwc"
	tsv R 11 "median time between two chunk writes: bench/chunkwatch.py did not run" - ms - "$cwc"
	tsv R 11 "CPU time missing after SIGKILL: bench/chunkwatch.py did not run" - ms "not met" "$cwc"
	n11=2
fi
tsv T 11 "chunks written at most 250 ms apart (260 ms allows for the 2 ms polling and the scheduler), so a SIGKILL of the recorder loses at most about 250 ms of samples (300 ms allowed)" "$(verdict "$m11" "$n11")"
tsv N 11 "$cwc: stax record -o FILE -- spin-fp, the file's size read every 2 ms for $CW_SECS s after its first chunk; each change is a chunk written. Then SIGKILL to the recorder; the program's CPU time at that moment from /proc/PID/schedstat, against the samples the killed file holds (stax flame --folded) at 1.001 ms of CPU time each."
rm -f "$W/cw.data" "$W/cw.data.old"
fi # crash

# --- 12: real programs ------------------------------------------------------
# rustc, Go, Java, node and CPython, each bare, under perf record -g, perf
# --call-graph dwarf,8192 and stax record (hybrid, defaults), interleaved
# within each repetition. A program this machine lacks is one row saying
# why, never a pass.
if want real; then
say "real programs"
if [ "$QUICK" = 1 ]; then RS_N=1 GO_N=50 JAVA_N=50 NODE_N=50 PY12_N=300000; else RS_N=40 GO_N=1500 JAVA_N=3000 NODE_N=3000 PY12_N=15000000; fi
RD=$W/real
mkdir -p "$RD"
: >"$W/raw12"
: >"$W/rows12"
PY12=$(ls -d "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.12*/bin/python3.12 2>/dev/null | tail -n 1)
# real_cmd NAME: the workload's command, or "skip REASON"
real_cmd() {
	case $1 in
	rustc)
		command -v rustc >/dev/null || { echo "skip rustc is not installed"; return; }
		[ -s "$RD/crate$RS_N.rs" ] || sh bench/real/crate.sh "$RS_N" >"$RD/crate$RS_N.rs"
		echo "rustc -O -C codegen-units=2 -o $RD/crate.out $RD/crate$RS_N.rs" ;;
	go)
		command -v go >/dev/null || { echo "skip go is not installed"; return; }
		[ -x "$RD/work-go" ] || GOFLAGS= go build -o "$RD/work-go" bench/real/work.go >"$RD/go-build.err" 2>&1 ||
			{ echo "skip go build of bench/real/work.go failed"; return; }
		echo "$RD/work-go $GO_N" ;;
	java)
		command -v java >/dev/null && command -v javac >/dev/null || { echo "skip java or javac is not installed"; return; }
		java -version 2>&1 | grep -q 'version "17' || { echo "skip java is not Java 17"; return; }
		[ -s "$RD/Work.class" ] || javac -d "$RD" bench/real/Work.java >/dev/null 2>&1 || { echo "skip javac of bench/real/Work.java failed"; return; }
		echo "java -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp $RD Work $JAVA_N" ;;
	node)
		command -v node >/dev/null || { echo "skip node is not installed"; return; }
		echo "node --perf-basic-prof --no-logfile-per-isolate --logfile=$RD/node-v8.log bench/real/work.js $NODE_N" ;;
	python3.12)
		[ -n "$PY12" ] && [ -x "$PY12" ] || { echo "skip no CPython 3.12 under pyenv root"; return; }
		echo "$PY12 -c 'sum(i*i for i in range($PY12_N))'" ;;
	esac
}
# the modes of this section: bare, perf-g, perf-dwarf8 (rec_cmd) and stax-hybrid
for prog in rustc go java node python3.12; do
	wcmd=$(real_cmd "$prog")
	case $wcmd in skip*)
		say "real programs: $prog skipped: ${wcmd#skip }"
		printf 'R\t12\t%s\tskipped: %s\t-\t-\t-\t-\t-\t-\t-\t-\t-\tn/a\t%s\n' "$prog" "${wcmd#skip }" "(none)" >>"$W/rows12"
		continue ;;
	esac
	rep=1
	while [ "$rep" -le "$REPS12" ]; do
		for mode in bare perf-g perf-dwarf8 stax-hybrid; do
			say "real programs: $prog, $mode, repetition $rep of $REPS12"
			key=s12.$prog.$mode
			out=$W/$key.data
			rm -f "$out" "$out.old" "$W/$key.in" /tmp/perf-*.map
			cmd=$(rec_cmd "$mode" 999 "$out" "$W/$key.in" "$wcmd")
			timed "$key" "$cmd"
			iw=$(field "$W/$key.in" 1)
			cpu=$(awk '{ if ($2 ~ /^[0-9.]+$/) printf "%.6f", $2 + $3; else print "-" }' "$W/$key.t")
			# the program's own CPU time (inner benchrun): the rest is the profiler's
			icpu=$(awk '{ if ($2 ~ /^[0-9.]+$/) printf "%.6f", $2 + $3; else print "-" }' "$W/$key.in" 2>/dev/null)
			st=$(field "$W/$key.t" 5)
			n=- bytes=- lost=- rooted=-
			if [ "$mode" != bare ]; then
				n=$(samples_of "$W/$key.err")
				bytes=$(fsize "$out")
				case $mode in
				perf-*)
					lost=$(perf report --stats -i "$out" 2>/dev/null | awk '/LOST(_SAMPLES)? events:/ { n += $3 } END { print n + 0 }')
					rc="perf script --no-inline -F comm,ip,sym -i $out | awk -v fmt=script -f bench/roots.awk" ;;
				*)
					lost=$(sed -n 's/^stax: recorded .*, \([0-9][0-9]*\) lost,.*/\1/p' "$W/$key.err" | tail -n 1)
					rc="$STAX flame --folded -i $out | awk -v fmt=folded -f bench/roots.awk" ;;
				esac
				[ "$rep" = "$REPS12" ] && rooted=$(eval "$rc" 2>/dev/null | tail -n 1 | awk '{ print $3 }')
			fi
			[ "$st" = 0 ] || { say "failed ($st): $cmd"; sed 's/^/#   /' "$W/$key.err" | tail -n 3 >&2; iw=- cpu=-; }
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$mode" "$rep" "$iw" "$cpu" "$n" "$bytes" "${lost:--}" "${rooted:--}" "${icpu:--}" "$cmd" >>"$W/raw12"
			rm -f "$out" "$out.old"
		done
		rep=$((rep + 1))
	done
done
awk -F '\t' -v reps="$REPS12" '
function med(list,    a, n, i, j, t) {
	n = split(list, a, " ")
	if (!n) return "-"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(list,    a, n, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 < m) m = a[i] + 0; return m }
function hi(list,    a, n, i, m) { n = split(list, a, " "); m = a[1] + 0; for (i = 2; i <= n; i++) if (a[i] + 0 > m) m = a[i] + 0; return m }
function triple(list) { return list == "" ? "-" : sprintf("%.3f %.3f %.3f", med(list), lo(list), hi(list)) }
function isn(v) { return v ~ /^[0-9.]+$/ }
function add(k, v) { L[k] = L[k] (L[k] == "" ? "" : " ") v }
{
	k = $1 SUBSEP $2 SUBSEP $3
	iw[k] = $4; cpu[k] = $5; smp[k] = $6; by[k] = $7; lost[k] = $8; icpu[k] = $10; cmd[$1 SUBSEP $2] = $11
	if (isn($9)) root[$1 SUBSEP $2] = $9
	if (!($1 in seen)) { seen[$1] = 1; order[++no] = $1 }
}
END {
	nm = split("perf-g perf-dwarf8 stax-hybrid", modes, " ")
	for (o = 1; o <= no; o++) {
		p = order[o]
		for (m = 1; m <= nm; m++) {
			g = p SUBSEP modes[m]
			for (r = 1; r <= reps; r++) {
				k = g SUBSEP r; kb = p SUBSEP "bare" SUBSEP r; kg = p SUBSEP "perf-g" SUBSEP r
				if (isn(iw[k]) && isn(iw[kb]) && iw[kb] > 0) add(g SUBSEP "iwb", iw[k] / iw[kb])
				if (isn(cpu[k]) && isn(cpu[kb]) && cpu[kb] > 0) { add(g SUBSEP "cpub", cpu[k] / cpu[kb]); add(g SUBSEP "ovh", 100 * (cpu[k] - cpu[kb]) / cpu[kb]) }
				if (isn(cpu[k]) && isn(cpu[kg]) && cpu[kg] > 0) add(g SUBSEP "cpug", cpu[k] / cpu[kg])
				if (isn(cpu[k]) && isn(icpu[k])) add(g SUBSEP "prof", cpu[k] - icpu[k])
				if (isn(lost[k])) tl[g] += lost[k]
				if (isn(smp[k]) && smp[k] > 0 && isn(by[k])) add(g SUBSEP "bps", by[k] / smp[k])
				if (isn(smp[k])) add(g SUBSEP "smp", smp[k])
			}
		}
		bg = med(L[p SUBSEP "perf-g" SUBSEP "bps"])
		for (m = 1; m <= nm; m++) {
			g = p SUBSEP modes[m]; v = "-"
			b = L[g SUBSEP "bps"] == "" ? "-" : med(L[g SUBSEP "bps"])
			if (modes[m] == "stax-hybrid") {
				why = ""
				if (tl[g] > 0) why = why ", lost " tl[g]
				if (L[g SUBSEP "cpug"] == "" || med(L[g SUBSEP "cpug"]) > 1.05) why = why ", cpu > 1.05x perf -g"
				if (b == "-" || bg == "-" || b > 0.5 * bg) why = why ", bytes/sample > half of perf -g"
				v = why == "" ? "met" : "not met (" substr(why, 3) ")"
				nv++; if (why == "") mv++
			}
			printf "R\t12\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p, modes[m],
				triple(L[g SUBSEP "iwb"]), triple(L[g SUBSEP "cpub"]), triple(L[g SUBSEP "cpug"]),
				L[g SUBSEP "ovh"] == "" ? "-" : sprintf("%.1f", med(L[g SUBSEP "ovh"])),
				triple(L[g SUBSEP "prof"]),
				(g in tl) ? tl[g] + 0 : "-", b == "-" ? "-" : sprintf("%.1f", b),
				(g in root) ? root[g] : "-", L[g SUBSEP "smp"] == "" ? "-" : sprintf("%d", med(L[g SUBSEP "smp"])), v, cmd[g]
		}
	}
	printf "%d %d\n", mv, nv > "/dev/stderr"
}' "$W/raw12" >>"$W/rows12" 2>"$W/verdicts12b"
read -r m12 n12 <"$W/verdicts12b"
tsv S 12 "12. Real programs"
tsv T 12 "stax record (defaults) on each program: 0 records lost, CPU time of program and profiler at most 1.05x perf record -g's, bytes per sample at most half of perf record -g's" "$(verdict "${m12:-0}" "${n12:-0}")"
tsv C 12 program:s recorder:s "wall/bare:r" "cpu/bare:r" "cpu/perf-g:r" "cpu overhead %:n" "profiler cpu s:r" lost:n "bytes/sample:n" "rooted %:n" samples:n verdict:s command:s
cat "$W/rows12" >>"$TSV"
tsv N 12 "All at 999 Hz, cpu-clock, in the same run: the program bare, under perf record -g, perf record --call-graph dwarf,8192 and stax record, interleaved in each of $REPS12 repetitions. wall: the program's own wall time (inner benchrun); cpu: user+system time of program and profiler together; profiler cpu s: that less the program's own (inner benchrun), the profiler's part, much steadier than the program's (on this VM a bare run's CPU time moves by 10-30% between repetitions, which the 1.05x target cannot see through); ratios are median [min-max] over the repetitions, against the bare run or perf -g of the same repetition; cpu overhead %: (cpu - bare cpu) / bare cpu, median. lost: records lost, summed over the repetitions (perf: LOST and LOST_SAMPLES events of perf report --stats; stax: its summary, which counts the kernel's losses and its own). rooted %: samples whose stack reaches main, a thread start, _start or clone (bench/roots.awk), last repetition. Programs: rustc compiling bench/real/crate.sh $RS_N (-O, 2 codegen units; about 5 s bare here: a recording of rustc holds a symbol table of 120-200 KiB, one entry per distinct frame address, written once at stop, which is most of the file of a recording of 1-2 s (crate 12: 65% of it) and a small part of a longer one); Go bench/real/work.go (2 goroutines); Java 17 bench/real/Work.java with -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit; node --perf-basic-prof bench/real/work.js; CPython 3.12 from pyenv. stax reads its unwind tables from the table cache (stax/unwind/ under XDG_CACHE_HOME) where an earlier recording compiled them: with an empty cache the first repetition compiles them (section 12b: what that costs). On a 2-CPU machine shared with other work these timings are noisy: read the spread."

# 12b: the unwind table of librustc_driver, the biggest module here
tsv S 12b "12b. Unwind table of a big library"
tsv C 12b what:s value:n unit:s verdict:s command:s
RSD=$(rustc --print sysroot 2>/dev/null)
LRD=$(ls "$RSD"/lib/librustc_driver-*.so 2>/dev/null | head -n 1)
tb12="cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE -o $W/bench_tables bench/bench_tables.c src/unwind/*.c src/module/*.c src/lib/*.c -lelf -lz -ldw -lzstd -lxxhash -llzma -lpthread"
if [ -z "$LRD" ]; then
	tsv R 12b "librustc_driver: not found (rustc --print sysroot)" - - n/a "rustc --print sysroot"
	tsv R 12b "librustc_driver: not found" - - n/a "rustc --print sysroot"
	tsv R 12b "librustc_driver: not found" - - n/a "rustc --print sysroot"
elif [ -x "$W/bench_tables" ] || eval "$tb12" 2>/dev/null; then
	$BR -o "$W/tables12.t" -- "$W/bench_tables" "$LRD" >"$W/tables12.out" 2>"$W/tables12.err"
	read -r _ first medms rows fdes <"$W/tables12.out"
	rss=$(awk '{ printf "%.1f", $4 / 1024 }' "$W/tables12.t")
	cpu5=$(awk '{ printf "%.0f", ($2 + $3) * 1000 / 5 }' "$W/tables12.t")
	tsv R 12b "$(basename "$LRD") ($(($(wc -c <"$LRD") >> 20)) MiB, ${fdes:-?} FDEs, ${rows:-?} rows): compiled (cache off), median of 5 (wall)" "${medms:--}" ms - "$W/bench_tables $LRD"
	tsv R 12b "the same: CPU time per build (user+system of 5 builds / 5)" "${cpu5:--}" ms - "$BR -o T -- $W/bench_tables $LRD"
	tsv R 12b "the same: peak resident memory of the process (the file's pages it touched and the table)" "${rss:--}" MiB - "$BR -o T -- $W/bench_tables $LRD"
	# the table cache (src/unwind/tcache.c): an entry written once, then
	# 5 loads that must all read it
	TC=$W/tcache12
	rm -rf "$TC"
	mkdir -p "$TC"
	chmod 700 "$TC"
	cmed=- ccpu=- crss=- cbytes=- cvd="not met"
	if "$W/bench_tables" --cache "$TC" --fill "$LRD" >/dev/null 2>&1 &&
	   $BR -o "$W/tables12c.t" -- "$W/bench_tables" --cache "$TC" "$LRD" >"$W/tables12c.out" 2>"$W/tables12c.err"; then
		read -r _ _ cmed _ _ cbytes <"$W/tables12c.out"
		ccpu=$(awk '{ printf "%.0f", ($2 + $3) * 1000 / 5 }' "$W/tables12c.t")
		crss=$(awk '{ printf "%.1f", $4 / 1024 }' "$W/tables12c.t")
		[ "$(field "$W/tables12c.t" 5)" = 0 ] && cvd=-
	fi
	tsv R 12b "the same table read from the cache (stax/unwind/ in XDG_CACHE_HOME), median of 5 (wall)" "${cmed:--}" ms "$cvd" "$W/bench_tables --cache DIR $LRD"
	tsv R 12b "the same: CPU time per load (user+system of 5 loads / 5)" "${ccpu:--}" ms "$cvd" "$BR -o T -- $W/bench_tables --cache DIR $LRD"
	tsv R 12b "the same: peak resident memory of the process" "${crss:--}" MiB "$cvd" "$BR -o T -- $W/bench_tables --cache DIR $LRD"
	tsv R 12b "the same: size of the cache entry" "$(awk -v b="$cbytes" 'BEGIN { if (b ~ /^[0-9]+$/) printf "%.1f", b / 1048576; else print "-" }')" MiB "$cvd" "ls -l DIR/stax/unwind"
	rm -rf "$TC"
else
	tsv R 12b "bench/bench_tables.c did not build" - ms "not met" "$tb12"
	tsv R 12b "bench/bench_tables.c did not build" - ms "not met" "$tb12"
	tsv R 12b "bench/bench_tables.c did not build" - MiB "not met" "$tb12"
fi
tsv T 12b "measured (no target): what the unwind table of the largest module costs a recording that samples it: compiled (the first recording, or STAX_NO_CACHE=1), or read from the table cache (every later one)" "n/a"
tsv N 12b "bench/bench_tables.c loads the library with utable_load() 5 times, as the recorder does the first time a sample lands in it: with the cache off (STAX_NO_CACHE=1) each load compiles the CFI; with --cache DIR (an empty directory as XDG_CACHE_HOME, filled by one load in another process first) each load reads the cache entry, checks it and rebuilds the page index, and every one must come from the cache (else not met)."
fi # real

# --- 13: the page: time to first draw ------------------------------------
# stax serve's page on a recording of 1,000 threads (manythreads-fp) at
# PAGE_HZ for PAGE_S seconds: about two million samples at full scale on
# two idle cores (cpu-clock samples the CPU time the threads got: a busy
# machine gives fewer; the count is in the rows; stax wait cannot stop it
# at a count, as the recorder writes its chunks behind when it is this
# busy). Each repetition starts
# a fresh server twice: once for the server's /api/profile alone (build
# and send, curl), once for the page in headless chromium (node
# tests/e2e/browser.js draw: fetch, parse, compute, draw, then a third of
# the recording selected on the timeline, every panel recomputed).
if want page; then
say "page"
PG=$W/page.data
rm -f "$PG" "$PG.old" "$W/page.tsv"
$STAX record -q --unwind fp -m 64M -F "$PAGE_HZ" -o "$PG" -- "$PROG/manythreads-fp" 1000 "$PAGE_S" >/dev/null 2>"$W/page.rec.err"
PGN=$($STAX info --json -i "$PG" 2>/dev/null | grep -o '"samples":[0-9]*' | head -n 1 | cut -d: -f2)
NPMD=node_modules
pg_why=""
command -v node >/dev/null 2>&1 || pg_why="node is not installed"
[ -z "$pg_why" ] && [ ! -f "build/npm/$NPMD/playwright-core/package.json" ] && pg_why="playwright-core is not in build/npm (make test-deps)"
[ -z "$pg_why" ] && [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ] && pg_why="chromium is not installed"
[ -z "$pg_why" ] && [ -z "$PGN" ] && pg_why="the recording failed: $(head -n 1 "$W/page.rec.err")"
# (a network namespace of its own, unshare -n, starts with lo down)
[ -z "$pg_why" ] && ! python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
socket.create_connection(s.getsockname(), 5).close()' 2>/dev/null &&
	pg_why="nothing can connect to 127.0.0.1 (the loopback interface is down, as in unshare -n)"
# pg_serve: a fresh server on $PG; sets PGP (its port) and PGPID
pg_serve() {
	: >"$W/page.serve.err"
	$STAX serve -i "$PG" --port 0 </dev/null >/dev/null 2>"$W/page.serve.err" &
	PGPID=$!
	PGP=""
	k=0
	while [ -z "$PGP" ] && [ "$k" -lt 600 ] && kill -0 "$PGPID" 2>/dev/null; do
		sleep 0.1
		PGP=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$W/page.serve.err")
		k=$((k + 1))
	done
}
rep=1
while [ -z "$pg_why" ] && [ "$rep" -le "$REPS_PAGE" ]; do
	pg_serve
	api=$(curl -s -o /dev/null -w '%{time_total}' "http://127.0.0.1:$PGP/api/profile" 2>/dev/null)
	kill "$PGPID" 2>/dev/null; wait "$PGPID" 2>/dev/null
	pg_serve
	js=$(timeout 300 node tests/e2e/browser.js draw "http://127.0.0.1:$PGP/" 2>/dev/null | tail -n 1)
	kill "$PGPID" 2>/dev/null; wait "$PGPID" 2>/dev/null
	first=$(echo "$js" | sed -n 's/.*"firstDraw":\([0-9.]*\).*/\1/p')
	range=$(echo "$js" | sed -n 's/.*"range":\([0-9.]*\).*/\1/p')
	thr=$(echo "$js" | sed -n 's/.*"threads":\([0-9]*\).*/\1/p')
	printf '%s\t%s\t%s\t%s\t%s\n' "$rep" "$(awk -v t="${api:-}" 'BEGIN { print (t ~ /^[0-9.]+$/ && t > 0) ? t * 1000 : "-" }')" "${first:--}" "${range:--}" "${thr:--}" >>"$W/page.tsv"
	rep=$((rep + 1))
done
tsv S 13 "13. The page: time to first draw"
if [ -n "$pg_why" ]; then
	tsv T 13 "the page's first draw of 1,000 threads and a million or more samples under 3 s (median)" "n/a"
	tsv C 13 what:s samples:n threads:n ms:r verdict:s command:s
	for w in "/api/profile (build and send)" "first draw" "a time range selected"; do
		tsv R 13 "$w" "${PGN:--}" - - "n/a" "skipped: $pg_why"
	done
else
	awk -F '\t' -v n="$PGN" -v W="$W" -v rec="stax record --unwind fp -F $PAGE_HZ -- manythreads-fp 1000 $PAGE_S" '
function sortl(list, a,    k, i, j, t) { k = split(list, a, " "); for (i = 2; i <= k; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }; return k }
function med(list,    a, k) { k = sortl(list, a); return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
function tri(list,    a, k) { if (list == "") return "-"; k = sortl(list, a); return sprintf("%.0f %.0f %.0f", med(list), a[1], a[k]) }
{ for (c = 2; c <= 4; c++) if ($c ~ /^[0-9.]+$/) v[c] = v[c] " " $c; if ($5 ~ /^[0-9]+$/) th = $5 }
END {
	verdict = v[3] == "" ? "not met" : (med(v[3]) < 3000 ? "met" : "not met")
	print verdict > (W "/verdict13")
	printf "R\t13\t/api/profile (build and send, a fresh server)\t%s\t%s\t%s\t-\tcurl 127.0.0.1:PORT/api/profile (%s)\n", n, th == "" ? "-" : th, tri(v[2]), rec
	printf "R\t13\tfirst draw (fetch, parse, compute, draw)\t%s\t%s\t%s\t%s\tnode tests/e2e/browser.js draw URL\n", n, th == "" ? "-" : th, tri(v[3]), verdict
	printf "R\t13\ta third of the timeline selected: every panel recomputed\t%s\t%s\t%s\t-\tnode tests/e2e/browser.js draw URL\n", n, th == "" ? "-" : th, tri(v[4])
}' "$W/page.tsv" >"$W/rows13"
	tsv T 13 "the page's first draw of 1,000 threads and a million or more samples under 3 s (median)" "$(cat "$W/verdict13" 2>/dev/null || echo "not met")"
	tsv C 13 what:s samples:n threads:n ms:r verdict:s command:s
	cat "$W/rows13" >>"$TSV"
fi
tsv N 13 "Median [min-max] of $REPS_PAGE runs, each with a fresh stax serve. The first draw counts from the page's script start: fetching /api/profile (the server builds it on first request), parsing it, the model, the first pass and drawing every panel. Samples is the recording's count, threads the page's (the recorder's thread too)."
rm -f "$PG" "$PG.old"
fi # page

# --- 14: the in-kernel reader (issue 30) ------------------------------------
# What the reader (src/bpf/moment.bpf.c) costs per sample, beside perf -g:
# its own run time per sample (the kernel's BPF statistics, turned on for
# the recording by STAX_BPF_STATS=1), and the profiler's CPU time per
# sample with it, without it (--no-bpf) and of perf record -g, on a
# Python program that calls into C in short calls (the reader reads its
# frame chain), a program whose stacks are 100 KiB deep (it reads the
# slots past the copy) and one it reads nothing of.
if want moment; then
tsv S 14 "14. The in-kernel reader (issue 30)"
tsv C 14 workload:s recorder:s samples:n "reader ns/sample:n" "profiler cpu us/sample:n" "vs perf -g:n" verdict:s command:s
if [ "$QUICK" = 1 ]; then MO_S=0.5 MO_REPS=1; else MO_S=3 MO_REPS=3; fi
# the workload of tests/e2e/moment.sh (json.dumps and re.findall in short
# calls, 2/3 and 1/3 of the time; it prints its own split)
cp tests/python/work.py "$W/moment.py"
MO_WLS="deep callgraph-nofp"
[ -n "$PY" ] && MO_WLS="python $MO_WLS"
mo_cmd() {
	case $1 in
	python) echo "$PY $W/moment.py $MO_S" ;;
	deep) echo "$PROG/moment_deep-nofp $MO_S $W/moment-deep.log" ;;
	*) echo "$PROG/$1 $SCALE" ;;
	esac
}
: >"$W/raw14"
for wl in $MO_WLS; do
	rep=1
	while [ "$rep" -le "$MO_REPS" ]; do
		for mode in perf-g stax-nobpf stax; do
			say "in-kernel reader: $wl, $mode, repetition $rep of $MO_REPS"
			key=s14.$wl.$mode
			out=$W/$key.data
			rm -f "$out" "$out.old" "$W/$key.in"
			inner="$BR -o $W/$key.in -- $(mo_cmd "$wl")"
			case $mode in
			perf-g) cmd="perf record --no-bpf-event -e cpu-clock -F 999 -g -o $out -- $inner" ;;
			stax-nobpf) cmd="$STAX record --no-bpf -o $out -- $inner" ;;
			stax) cmd="env STAX_BPF_STATS=1 $STAX record -o $out -- $inner" ;;
			esac
			timed "$key" "$cmd"
			n=$(samples_of "$W/$key.err")
			prof=$(awk -v a="$(field "$W/$key.t" 2)" -v b="$(field "$W/$key.t" 3)" \
				-v c="$(field "$W/$key.in" 2)" -v d="$(field "$W/$key.in" 3)" \
				'BEGIN { if (a ~ /^[0-9.]+$/ && c ~ /^[0-9.]+$/) printf "%.6f", a + b - c - d; else print "-" }')
			rns=-
			if [ "$mode" = stax ] && [ -s "$out" ]; then
				$STAX info --json -i "$out" 2>/dev/null | python3 -c 'import json, sys
m = json.load(sys.stdin).get("moment") or {}
print(m.get("ns_per_sample", "-"), m.get("records", "-") if m.get("path") == "bpf" else "-", m.get("path") or "-", m.get("why") or "")' >"$W/$key.mo" 2>/dev/null || echo "- - - -" >"$W/$key.mo"
				read -r rns _ mpath mwhy <"$W/$key.mo"
				[ "${mpath:-}" = bpf ] || rns=-
				echo "${mwhy:-}" >"$W/$key.why"
			fi
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$mode" "$rep" "${n:--}" "$prof" "${rns:--}" "$cmd" >>"$W/raw14"
			rm -f "$out" "$out.old"
		done
		rep=$((rep + 1))
	done
done
awk -F '\t' '
function med(list,    a, n, i, j, t) {
	n = split(list, a, " ")
	if (!n) return "-"
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function isn(v) { return v ~ /^[0-9.]+$/ }
function add(k, v) { L[k] = L[k] (L[k] == "" ? "" : " ") v }
{
	g = $1 SUBSEP $2
	if (!($1 in seen)) { seen[$1] = 1; order[++no] = $1 }
	cmd[g] = $7
	if (isn($4)) add(g SUBSEP "n", $4)
	if (isn($4) && $4 > 0 && isn($5)) add(g SUBSEP "us", 1e6 * $5 / $4)
	if (isn($6)) add(g SUBSEP "ns", $6)
}
END {
	nm = split("perf-g stax-nobpf stax", modes, " ")
	for (o = 1; o <= no; o++) {
		p = order[o]
		pg = L[p SUBSEP "perf-g" SUBSEP "us"] == "" ? "-" : med(L[p SUBSEP "perf-g" SUBSEP "us"])
		for (m = 1; m <= nm; m++) {
			g = p SUBSEP modes[m]
			n = L[g SUBSEP "n"] == "" ? "-" : sprintf("%d", med(L[g SUBSEP "n"]))
			us = L[g SUBSEP "us"] == "" ? "-" : sprintf("%.1f", med(L[g SUBSEP "us"]))
			vs = (us != "-" && pg != "-" && pg > 0) ? sprintf("%.2f", us / pg) : "-"
			ns = "-"; v = "n/a"
			if (modes[m] == "stax") {
				ns = L[g SUBSEP "ns"] == "" ? "-" : sprintf("%.0f", med(L[g SUBSEP "ns"]))
				if (ns == "-") v = "n/a" # the reader did not load: the note says why
				else if (p == "callgraph-nofp") v = "-"
				else { v = ns + 0 <= 10000 ? "met" : "not met"; nv++; if (v == "met") mv++ }
			}
			printf "R\t14\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p, modes[m], n, ns, us, vs, v, cmd[g]
		}
	}
	printf "%d %d\n", mv, nv > "/dev/stderr"
}' "$W/raw14" >"$W/rows14" 2>"$W/verdicts14"
read -r m14 n14 <"$W/verdicts14"
tsv T 14 "the in-kernel reader at most 10 us per sample of a thread it reads (a Python frame chain, the window past the copy and the stack slots of a deep stack), measured by the kernel's BPF statistics" "$(verdict "${m14:-0}" "${n14:-0}")"
cat "$W/rows14" >>"$TSV"
why14=$(cat "$W"/s14.*.stax.why 2>/dev/null | grep . | head -n 1)
tsv N 14 "At 999 Hz, cpu-clock, $MO_REPS interleaved repetitions of $MO_S s (medians). reader ns/sample: the BPF program's run time over its runs (kernel.bpf_stats through BPF_ENABLE_STATS, turned on by STAX_BPF_STATS=1 for that recording: it adds a clock read to every BPF program's run, which the stax row's CPU time includes); it runs at every sample of the recorded threads and reads only for the threads there is something to read for: a Python process's, a thread with slots, a process whose stacks went past the copy (callgraph-nofp: nothing, the cost of the lookups alone). profiler cpu us/sample: user+system CPU time of the whole command less the workload's own (inner benchrun), per sample: the recorder's whole cost (unwinding, the reader's user side, writing), and for perf record -g its own; vs perf -g: that against perf record -g on the same workload. Workloads: python: $PY $W/moment.py (json.dumps and re.findall in a loop: the reader reads its frame chain at each sample); deep: moment_deep-nofp (two call paths 100 KiB deep: the reader reads the 16 KiB window past the 32 KiB copy and the stack slots past that); callgraph-nofp.${why14:+ The reader did not load: $why14.}"
fi # moment

# --- 15: arm64 ----------------------------------------------------------------
# In the arm64 guest (make arm64: scripts/arm64-guest.sh, Debian 12's
# arm64 kernel under qemu-system-aarch64 -cpu max, which has pointer
# authentication), bench/arm64.sh records the same programs with stax,
# perf -g and perf --call-graph dwarf, one after the other, in one boot.
# (QUICK=1 leaves it out unless BENCH_ONLY names it: make check's quick
# bench builds no guest)
if want arm64 && { [ "$QUICK" = 0 ] || [ -n "$ONLY" ]; }; then
say "arm64: the guest and the arm64 build (make arm64)"
tsv S 15 "15. arm64 (issue 31)"
A64_SC=1
[ "$QUICK" = 1 ] && A64_SC=0.2
: >"$W/arm64.out"
if make --no-print-directory arm64 >"$W/arm64.build.log" 2>&1; then
	say "arm64: recording in the guest (about 5 minutes)"
	sh scripts/arm64-guest.sh run -t 3600 "sh bench/arm64.sh $(pwd)/build-arm64/stax $(pwd)/tests/programs/build-arm64 /tmp/bench-arm64 $A64_SC" \
		>"$W/arm64.out" 2>"$W/arm64.err" || say "arm64: the guest run failed: $(tail -n 2 "$W/arm64.err" | tr '\n' ' ')"
else
	say "arm64: make arm64 failed: $(tail -n 2 "$W/arm64.build.log" | tr '\n' ' ')"
fi
m15=0 n15=0
for wl in callgraph-nofp callgraph-cc callgraph-pac unwind_twopaths-cc unwind_recurse-nofp; do
	# a64 TOOL FIELD: the field (4 good %, 5 samples, 6 bytes/sample) of TOOL's row
	a64() { awk -F '\t' -v w="$wl" -v t="$1" -v f="$2" '$1 == "R" && $2 == w && $3 == t { print $f }' "$W/arm64.out"; }
	st=$(a64 stax 4) v=-
	n15=$((n15 + 1))
	if awk -v p="${st:-0}" 'BEGIN { exit !(p + 0 >= 99) }'; then v=met; m15=$((m15 + 1)); else v="not met (< 99%)"; fi
	tsv R 15 "$wl" "${st:--}" "$(a64 perf-g 4)" "$(a64 perf-dw 4)" "$(a64 stax-on-dw 4)" "$(a64 stax 5)" \
		"$(a64 stax 6)" "$(a64 perf-g 6)" "$(a64 perf-dw 6)" "$v"
done
tsv T 15 "stax record (defaults) in an arm64 kernel: at least 99% of the hot samples carry the known stack, root to leaf, on every program (frame pointers or not, pac-ret+leaf, two alternating 100 KiB paths, a 71 KiB recursion without frame pointers)" "$(verdict "$m15" "$n15")"
tsv C 15 workload:s "stax %:n" "perf -g %:n" "perf dwarf %:n" "stax on perf dwarf %:n" "stax samples:n" "stax B/sample:n" "perf -g B/sample:n" "perf dwarf B/sample:n" verdict:s
tsv N 15 "Recorded in the arm64 guest of make check-arm64 (Debian 12's $(ls build/arm64/root/lib/modules 2>/dev/null | head -n 1) kernel, qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on, TCG on this machine, 2 vCPUs) by bench/arm64.sh at scale $A64_SC, one after the other in one boot: stax record; perf record -e cpu-clock -F 999 -g; perf record -e cycles -F 999 --call-graph dwarf (perf 6.1 asks for the SVE VG register with dwarf, which software events refuse on this cpu: EOPNOTSUPP). The % columns: of the samples whose leaf is the program's hot function, those with the known stack from _start to the leaf (callgraph: main;a;b;leaf_b or main;a;c;leaf_c; twopaths: main;path_X;deep x97;leaf_X, the path of its leaf; recurse: main;recurse x71;leaf), as perf script unwinds them (perf's own: libdw for dwarf) and as stax reads them (stax on perf dwarf: stax's unwinder on perf's 8 KiB copies, which perf records without the user frame chain to splice). Times under TCG say nothing of a real arm64 machine: none are given."
fi # arm64

# --- 16: stax agent under process churn (issue 33) ---------------------------
# stax agent --rotate 20s --keep 60s (the issue's check) and, in the same
# run, stax record -a -F 19 (the agent's rate, one file: the memory the
# agent's files let go of) while tests/programs/churn.c starts 50 new
# processes a second (fork and exec: a new image with its mappings each,
# ~2 ms of CPU) for AGENT_S seconds (600; QUICK 12, with --rotate 3s
# --keep 6s). Each recorder's resident memory (VmRSS) and CPU time
# (utime + stime, all its threads) and the agent's files in its
# directory are read every second; the table shows them every 30 s.
# Targets (16b): the agent's RSS held (the lowest reading in the
# --rotate before a time) grows at most 4 MiB between 30 s and 150 s,
# and from 150 s to the end; it takes under 1% of one CPU (from 30 s to
# the end); 2 to 5 files are kept from the first --keep + --rotate on;
# every file reads.
if want agent; then
say "agent: stax agent and stax record -a, $AGENT_S s under churn of 50 processes a second"
AD=$W/agent.d
rm -rf "$AD" "$W/agent.rec.data" "$W/agent.samples"
"$STAX" agent --dir "$AD" --rotate "${AGENT_ROT}s" --keep "${AGENT_KEEP}s" -q >/dev/null 2>"$W/agent.err" &
ag=$!
"$STAX" record -a -F 19 -q -o "$W/agent.rec.data" >/dev/null 2>"$W/agent.rec.err" &
arec=$!
sleep 2
t0=$(date +%s%N)
"$PROG/churn-fp" 50 "$AGENT_S" >"$W/agent.churn" 2>&1 &
ach=$!
while kill -0 "$ach" 2>/dev/null; do
	ra=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$ag/status" 2>/dev/null)
	ka=$(awk '{ print $14 + $15 }' "/proc/$ag/stat" 2>/dev/null)
	rr=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$arec/status" 2>/dev/null)
	kr=$(awk '{ print $14 + $15 }' "/proc/$arec/stat" 2>/dev/null)
	nf=$(ls "$AD" 2>/dev/null | grep -c '^stax-[0-9]\{8\}-[0-9]\{6\}\.data$')
	[ -n "$ra" ] && [ -n "$ka" ] && echo "$((($(date +%s%N) - t0) / 1000000)) $ra $ka ${rr:--} ${kr:--} $nf" >>"$W/agent.samples"
	sleep 1
done
wait "$ach"
kill -TERM "$ag"
kill -INT "$arec"
wait "$ag"
agst=$?
wait "$arec"
started=$(awk '{ print $1 }' "$W/agent.churn")
# every file of the agent reads (and holds samples)
nread=0 nfiles=0 bad=""
for f in $(ls "$AD" | grep '^stax-[0-9]\{8\}-[0-9]\{6\}\.data$'); do
	nfiles=$((nfiles + 1))
	if "$STAX" info --json -i "$AD/$f" 2>/dev/null | grep -q '"state": *"finished"' &&
		"$STAX" top -n 1 -i "$AD/$f" >/dev/null 2>&1; then
		nread=$((nread + 1))
	else
		bad="$bad $f"
	fi
done
tck=$(getconf CLK_TCK)
tsv S 16 "16. stax agent under process churn (issue 33)"
tsv T 16 "the agent's memory and CPU over $AGENT_S s of 50 new processes a second, beside stax record -a at the same rate (the rows every $AGENT_EVERY s; targets in 16b)" "n/a"
acmd="stax agent --dir DIR --rotate ${AGENT_ROT}s --keep ${AGENT_KEEP}s -q; stax record -a -F 19 -q -o FILE; churn-fp 50 $AGENT_S"
tsv C 16 "time s:n" "agent RSS MiB:n" "agent cpu %:n" "agent files:n" "record -a RSS MiB:n" "record -a cpu %:n" command:s
awk -v every="$AGENT_EVERY" -v tck="$tck" -v c="$acmd" '
{ t = $1 / 1000; if (t >= next_at) { if (nr) {
	ca = 100 * ($3 - pka) / tck / (t - pt); cr = ($5 ~ /^[0-9]+$/ && pkr ~ /^[0-9]+$/) ? sprintf("%.2f", 100 * ($5 - pkr) / tck / (t - pt)) : "-"
	printf "R\t16\t%.0f\t%.1f\t%.2f\t%d\t%s\t%s\t%s\n", t, $2 / 1024, ca, $6, $4 ~ /^[0-9]+$/ ? sprintf("%.1f", $4 / 1024) : "-", cr, c }
	nr++; pt = t; pka = $3; pkr = $5; next_at = (int(t / every) + 1) * every } }' "$W/agent.samples" >>"$TSV"
tsv N 16 "$PROG/churn-fp 50 $AGENT_S started $started processes (fork and exec, ~2 ms of CPU each) while both recorders ran: stax agent --dir DIR --rotate ${AGENT_ROT}s --keep ${AGENT_KEEP}s -q (defaults otherwise: 19 Hz, hybrid unwinding) and stax record -a -F 19 -q -o FILE. RSS: VmRSS (the ring buffers are not in it); cpu %: utime + stime of all the recorder's threads over the $AGENT_EVERY s before the row, in % of one CPU (the agent's includes each file's end: its symbols; record -a writes its symbols after the stop, which is not in it); files: the agent's files in DIR then. Every other process of the machine is recorded too: the numbers depend on the load."
# the targets. RSS "held" at a time: the lowest reading of the --rotate
# before it, which leaves out the peak of a file's end (its symbols
# looked up, then let go) but not memory kept from one file to the next
awk -v at="$AGENT_AT" -v to="$AGENT_TO" -v tck="$tck" -v keep="$AGENT_KEEP" -v rot="$AGENT_ROT" \
    -v nread="$nread" -v nfiles="$nfiles" -v bad="$bad" -v st="$agst" -v c="$acmd" '
function held(t,    i, m) {
	m = ""
	for (i = 1; i <= NR; i++)
		if (T[i] > t - rot && T[i] <= t && (m == "" || R[i] < m))
			m = R[i]
	return m
}
{ t = $1 / 1000; T[NR] = t; R[NR] = $2; K[NR] = $3; F[NR] = $6 }
END {
	for (i = 1; i <= NR; i++) {
		if (a == "" && T[i] >= at) { a = i }
		if (T[i] <= to) b = i
		if (T[i] >= keep + rot) { if (fmin == "" || F[i] < fmin) fmin = F[i]; if (F[i] > fmax) fmax = F[i] }
		if (R[i] > peak) peak = R[i]
	}
	if (a == "" || b == "" || b <= a) { a = 1; b = NR }
	ha = held(T[a]); hb = held(T[b]); he = held(T[NR])
	grow = (hb - ha) / 1024
	late = (he - hb) / 1024
	cpu = NR > 1 && a < NR ? 100 * (K[NR] - K[a]) / tck / (T[NR] - T[a]) : -1
	printf "R\t16b\tRSS held, from %.0f s to %.0f s\t%+.1f MiB (%.1f to %.1f)\tat most 4 MiB\t%s\t%s\n", T[a], T[b], grow, ha / 1024, hb / 1024, grow <= 4 ? "met" : "not met", c
	printf "R\t16b\tRSS held, from %.0f s to the end (%.0f s)\t%+.1f MiB (%.1f to %.1f); peak %.1f\tat most 4 MiB\t%s\t%s\n", T[b], T[NR], late, hb / 1024, he / 1024, peak / 1024, late <= 4 ? "met" : "not met", c
	printf "R\t16b\tCPU from %.0f s to the end\t%.2f%% of one CPU\tunder 1%%\t%s\t%s\n", T[a], cpu, (cpu >= 0 && cpu < 1) ? "met" : "not met", c
	printf "R\t16b\tfiles kept (from %d s on)\t%s to %s\t2 to 5\t%s\t%s\n", keep + rot, fmin == "" ? "-" : fmin, fmax == "" ? "-" : fmax, (fmin != "" && fmin >= 2 && fmax <= 5) ? "met" : "not met", c
	printf "R\t16b\tfiles that read (finished, stax top)\t%d of %d\tall\t%s\t%s\n", nread, nfiles, (nfiles > 0 && nread == nfiles && st == 0) ? "met" : "not met" (bad != "" ? " (" bad " )" : ""), c
}' "$W/agent.samples" >"$W/rows16b"
m16=$(grep -c '	met	' "$W/rows16b")
tsv S 16b "16b. stax agent: the targets (issue 33)"
tsv T 16b "over $AGENT_S s of 50 new processes a second with --rotate ${AGENT_ROT}s --keep ${AGENT_KEEP}s: RSS grows at most 4 MiB between $AGENT_AT s and $AGENT_TO s (and from there to the end); under 1% of one CPU; 2 to 5 files kept; every file reads" "$(verdict "$m16" 5)"
tsv C 16b check:s measured:s target:s verdict:s command:s
cat "$W/rows16b" >>"$TSV"
tsv N 16b "From the readings of section 16 (every second). RSS held at a time: the lowest reading in the --rotate before it (a file's end looks up its symbols, which takes memory for a moment: the peak is the largest reading of all). The agent exited with status $agst after SIGTERM. Files kept: the agent's files in its directory at each reading from --keep + --rotate on (the first file is removed once its last write is --keep old)."
rm -rf "$AD" "$W/agent.rec.data" "$W/agent.rec.data.old"
fi # agent

# --- render ---------------------------------------------------------------
tsv M "bench run time" "$(($(date +%s) - START)) s"
awk -F '\t' -v fmt=md -f bench/report.awk "$TSV" >"$OUT/report.md" || die "cannot write $OUT/report.md"
awk -F '\t' -v fmt=json -f bench/report.awk "$TSV" >"$OUT/report.json" || die "cannot write $OUT/report.json"
rm -f "$W"/big.perf.data* "$W"/big.stax.data* "$W"/dwarf.perf.data* "$W"/sb.*.data* "$W"/pp.*.data* "$W"/unwind.*.perf.data* "$W"/long.*.data*
cat "$OUT/report.md"
echo
echo "wrote $OUT/report.md and $OUT/report.json"
