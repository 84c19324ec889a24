#!/bin/sh
# filters.sh - --time, --focus, --exclude, --hide and --module.
# phases (tests/programs/phases.c) runs first_half for the first half of
# its CPU time and second_half for the second; peek (peek.c) has the
# stacks main;x|y|z;...;hub;leaf_p|leaf_q with z;rec;rec;rec;rec (x 50%,
# rec 33.3%, y 16.7% of hub; leaf_p 66.7%, leaf_q 33.3%).
# stax-test: seconds=12
. "$(dirname "$0")/lib.sh"
require_stax

# self share of function NAME in "stax top" output FILE, without '%'
self_pct() { row_where "$1" FUNCTION "$2" SELF% | tr -d '%'; }
total_pct() { row_where "$1" FUNCTION "$2" TOTAL% | tr -d '%'; }

# ---- --time on phases
record_phases() { stax record -o "$T/ph.data" -- "$PROG/phases-nofp" "$1" >/dev/null 2>"$T/ph.err"; }
check_time() {
	stax top "$T/ph.data" --time 0%,40% >"$T/t1.txt" 2>"$T/t1.err" &&
	stax top "$T/ph.data" --time 60%,100% >"$T/t2.txt" 2>"$T/t2.err" &&
	stax top "$T/ph.data" >"$T/t0.txt" 2>/dev/null &&
	between "$(self_pct "$T/t1.txt" first_half)" 85 100 && between "$(self_pct "$T/t2.txt" second_half)" 85 100
}
if ! record_phases 1; then
	fail "record phases-nofp" "$(first_line "$T/ph.err")"
	done_testing
fi
check_time || { record_phases 2 && check_time; }
if check_time; then
	ok "--time 0%,40%: first_half $(self_pct "$T/t1.txt" first_half)%; 60%,100%: second_half $(self_pct "$T/t2.txt" second_half)% (whole run: $(self_pct "$T/t0.txt" first_half)% / $(self_pct "$T/t0.txt" second_half)%)"
else
	fail "--time in percent" "$(tr '\n' '|' <"$T/t1.txt" | cut -c1-300) $(first_line "$T/t1.err")"
fi
# in seconds: 0.1 s to 0.4 s is first_half's (after the start-up), and the ranges split the samples
stax top "$T/ph.data" --time 0.1,0.4 >"$T/s1.txt" 2>"$T/s1.err"
n_all=$(stax top "$T/ph.data" --json 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).samples))')
n_a=$(stax top "$T/ph.data" --json --time ,1 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).samples))')
n_b=$(stax top "$T/ph.data" --json --time 1.000000001, 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).samples))')
if between "$(self_pct "$T/s1.txt" first_half)" 80 100 && [ -n "$n_all" ] && [ $((n_a + n_b)) -eq "$n_all" ] &&
   [ "$n_a" -gt 0 ]; then
	ok "--time 0.1,0.4 (seconds): first_half $(self_pct "$T/s1.txt" first_half)%; ,1 and 1.000000001, split $n_all samples ($n_a + $n_b)"
else
	fail "--time in seconds" "first_half '$(self_pct "$T/s1.txt" first_half)', $n_a + $n_b of $n_all: $(first_line "$T/s1.err")"
fi
# the filter reaches exports and flame
stax export --format folded "$T/ph.data" --time 60%,100% >"$T/ph.folded" 2>/dev/null
s=$(share "$T/ph.folded" ";second_half$K")
if between "$s" 85 100; then
	ok "export --format folded --time 60%,100%: second_half $s%"
else
	fail "export --format folded --time" "second_half $s%"
fi

# ---- --focus, --exclude, --hide, --module on peek
record_peek() { stax record -o "$T/p.data" -- "$PROG/peek-nofp" "$1" >/dev/null 2>"$T/p.err"; }
if ! record_peek 1; then
	fail "record peek-nofp" "$(first_line "$T/p.err")"
	done_testing
fi
check_peek() {
	stax flame --folded "$T/p.data" --focus '^rec$' >"$T/focus.folded" 2>"$T/focus.err" &&
	stax top "$T/p.data" --exclude '^rec$' >"$T/excl.txt" 2>"$T/excl.err" &&
	stax callers hub "$T/p.data" --hide '^rec$' >"$T/hide.txt" 2>"$T/hide.err" &&
	stax top "$T/p.data" --hide '^leaf_' >"$T/hide2.txt" 2>/dev/null &&
	between "$(share "$T/focus.folded" '^peek-nofp;rec;rec;rec;rec;hub;leaf_p')" 58 75 &&
	between "$(row_where "$T/hide.txt" CALLER z SHARE | tr -d %)" 25 42 &&
	between "$(self_pct "$T/hide2.txt" hub)" 90 100
}
check_peek || { record_peek 2 && check_peek; }
# focus: every stack starts at rec (the outermost match), under the thread name
other=$(awk 'NF { split($1, f, ";"); if (f[2] != "rec") n++ } END { print n + 0 }' "$T/focus.folded")
if [ -s "$T/focus.folded" ] && [ "$other" -eq 0 ] &&
   between "$(share "$T/focus.folded" '^peek-nofp;rec;rec;rec;rec;hub;leaf_p')" 58 75; then
	ok "--focus '^rec\$': every stack re-rooted at the outermost rec; leaf_p $(share "$T/focus.folded" '^peek-nofp;rec;rec;rec;rec;hub;leaf_p')% of them (66.7)"
else
	fail "--focus" "$other stacks not rooted at rec: $(head -n 2 "$T/focus.folded" | tr '\n' '|') $(first_line "$T/focus.err")"
fi
# exclude: no rec, no z; hub is then called by x and y only (3:1)
if [ -z "$(total_pct "$T/excl.txt" rec)" ] && [ -z "$(total_pct "$T/excl.txt" z)" ] &&
   between "$(total_pct "$T/excl.txt" hub)" 95 100 &&
   stax callers hub "$T/p.data" --exclude '^rec$' >"$T/excl2.txt" 2>/dev/null &&
   between "$(row_where "$T/excl2.txt" CALLER x SHARE | tr -d %)" 67 83; then
	ok "--exclude '^rec\$': no rec or z; hub's caller x $(row_where "$T/excl2.txt" CALLER x SHARE) (75)"
else
	fail "--exclude" "$(tr '\n' '|' <"$T/excl.txt" | cut -c1-300) $(first_line "$T/excl.err")"
fi
# hide: rec's frames gone, so z calls hub directly; hidden leaves give their samples to hub
if between "$(row_where "$T/hide.txt" CALLER z SHARE | tr -d %)" 25 42 && [ -z "$(row_where "$T/hide.txt" CALLER rec SHARE)" ] &&
   between "$(self_pct "$T/hide2.txt" hub)" 90 100 && [ -z "$(self_pct "$T/hide2.txt" leaf_p)" ]; then
	ok "--hide '^rec\$': z calls hub ($(row_where "$T/hide.txt" CALLER z SHARE)); --hide '^leaf_': hub self $(self_pct "$T/hide2.txt" hub)%"
else
	fail "--hide" "$(tr '\n' '|' <"$T/hide.txt") / hub self '$(self_pct "$T/hide2.txt" hub)'"
fi
# module: only leaves in peek-nofp
stax top "$T/p.data" --module peek-nofp -n 0 >"$T/mod.txt" 2>"$T/mod.err"
others=$(awk '/^ *SELF%/ { h = 1; next } h && $2 > 0 && $NF != "peek-nofp" { n++ } END { print n + 0 }' "$T/mod.txt")
kern=$(stax top "$T/p.data" --module '[kernel.kallsyms]' -n 0 2>/dev/null |
	awk '/^ *SELF%/ { h = 1; next } h && $2 > 0 && $NF != "[kernel.kallsyms]" { n++ } END { print n + 0 }')
if [ "$others" -eq 0 ] && between "$(self_pct "$T/mod.txt" leaf_p)" 60 75 && [ "$kern" -eq 0 ]; then
	ok "--module peek-nofp: every row with self samples is in peek-nofp (leaf_p $(self_pct "$T/mod.txt" leaf_p)%)"
else
	fail "--module" "$others rows of other modules, $kern for the kernel: $(first_line "$T/mod.err")"
fi

# top --by: peek-nofp's own code has ~97% self; libc is on every stack
# (its __libc_start_call_main) with almost no self; one process and thread
stax top "$T/p.data" --by module >"$T/bymod.txt" 2>"$T/bymod.err"
own=$(awk '$NF == "peek-nofp" { print $1; exit }' "$T/bymod.txt" | tr -d %)
libc=$(awk '$NF == "libc.so.6" { print $3; exit }' "$T/bymod.txt" | tr -d %)
nproc=$(stax top "$T/p.data" --by process 2>/dev/null | awk '/^ *SELF%/ { h = 1; next } h && /peek-nofp\// { n++ } END { print n + 0 }')
bythr=$(stax top "$T/p.data" --by thread 2>/dev/null | awk '/peek-nofp\// { print $1; exit }' | tr -d %)
if between "$own" 90 100 && between "$libc" 95 100 && [ "$nproc" -eq 1 ] && between "$bythr" 95 100; then
	ok "top --by module: peek-nofp self $own%, libc.so.6 total $libc%; --by process/thread: one peek-nofp row ($bythr%)"
else
	fail "top --by" "peek-nofp '$own', libc '$libc', $nproc process rows, thread '$bythr': $(first_line "$T/bymod.err")"
fi

# serve applies the filters to what it serves
why=$(loopback_why)
if [ -n "$why" ]; then
	skip "serve --exclude" "$why"
elif command -v curl >/dev/null 2>&1; then
	"$STAX" serve -i "$T/p.data" --port 0 --exclude '^rec$' 2>"$T/serve.err" &
	spid=$!
	bg_add "$spid"
	port=""
	wait_for 'port=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/serve.err"); [ -n "$port" ]' 60
	curl -s -m 20 "http://127.0.0.1:$port/api/top" >"$T/serve.json"
	kill "$spid" 2>/dev/null
	if [ -n "$port" ] && grep -q '"hub"' "$T/serve.json" && ! grep -q '"rec"' "$T/serve.json" && ! grep -q '"z"' "$T/serve.json"; then
		ok "serve --exclude '^rec\$': /api/top has hub, no rec or z"
	else
		fail "serve --exclude" "port '$port': $(head -c 200 "$T/serve.json") $(first_line "$T/serve.err")"
	fi
else
	skip "serve --exclude" "curl is not installed (apt-get install curl)"
fi

# bad values: one-line errors, exit 1
for bad in "--time 5" "--time 3,1" "--time 10%,2" "--focus (" "--hide [z" "--time x,y" "--by file" "--by module --off-cpu"; do
	# shellcheck disable=SC2086
	stax top "$T/p.data" $bad >/dev/null 2>"$T/bad.err"
	rc=$?
	if [ "$rc" -eq 1 ] && one_line_error "$T/bad.err"; then
		ok "top $bad: one-line error, exit 1"
	else
		fail "top $bad: one-line error, exit 1" "status $rc: $(first_line "$T/bad.err")"
	fi
done

# a filter that keeps nothing: exit 1, one error line that names it
# (and what there is: the recording's length, its modules), no answer
nothing() {
	name=$1 want=$2
	shift 2
	stax "$@" >"$T/none.out" 2>"$T/none.err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ ! -s "$T/none.out" ] && one_line_error "$T/none.err" &&
	   grep -q -- "$want" "$T/none.err"; then
		ok "$name: exit 1, one error line: $(cut -c1-110 "$T/none.err")"
	else
		fail "$name: exit 1 naming the filter" "status $rc, $(wc -l <"$T/none.out") lines out: $(first_line "$T/none.err")"
	fi
}
len=$(stax info "$T/ph.data" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["duration_s"])')
past=$(awk -v l="$len" 'BEGIN { printf "%d", l + 5 }')
nothing "top --time past the end" "--time $past,$((past + 5)) (the recording is" top "$T/ph.data" --time "$past,$((past + 5))"
nothing "flame --module that no frame is in" "--module liblzma (modules with samples:" flame "$T/p.data" --module liblzma
nothing "threads --comm that no thread has" "--comm nobody-runs-this" threads "$T/p.data" --comm nobody-runs-this

# --module takes a shared object's name without .so and its version
# (liblzma for liblzma.so.5.4.1), as the modules column shows it
if command -v xz >/dev/null 2>&1; then
	head -c 8000000 /dev/urandom >"$T/rand"
	stax record -o "$T/xz.data" -- xz -6 -T1 -c "$T/rand" >/dev/null 2>"$T/xz.err"
	lz=$(stax top "$T/xz.data" -n 0 2>/dev/null | awk '$NF ~ /^liblzma\.so/ { print $NF; exit }')
	stax top "$T/xz.data" --module liblzma -n 0 >"$T/lz.txt" 2>"$T/lz.err"
	rc=$?
	other=$(awk 'NR > 1 && $NF !~ /^liblzma\.so/ && $1 ~ /%$/ && $2 > 0' "$T/lz.txt" | wc -l)
	if [ -n "$lz" ] && [ "$rc" -eq 0 ] && grep -q " $lz\$" "$T/lz.txt" && [ "$other" -eq 0 ]; then
		ok "--module liblzma keeps the samples whose leaf is in $lz, and only those"
	else
		fail "--module liblzma for $lz" "status $rc, $other rows of other modules: $(first_line "$T/lz.err")"
	fi
else
	skip "--module liblzma" "xz is not installed (apt-get install xz-utils)"
fi

done_testing
