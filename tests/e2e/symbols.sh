#!/bin/sh
# symbols.sh - inline frames, source lines, split debug info, MiniDebugInfo,
# libc's debug package, and stax annotate, on tests/programs/inline.c.
#
# The fixture is built here (non-PIE, so runtime addresses are the ELF
# addresses addr2line takes):
#   gcc -O2 -g -no-pie -o inline tests/programs/inline.c
# then copied and split:
#   split: objcopy --only-keep-debug, strip --strip-all, --add-gnu-debuglink
#   mini:  strip --strip-all plus .gnu_debugdata (xz of the symbol table)
# stax-test: seconds=12
. "$(dirname "$0")/lib.sh"
require_stax

SRC=$ROOT/tests/programs/inline.c
HOTLINE=$(grep -n 'BURN_LOOP(x, 600000)' "$SRC" | cut -d: -f1)
if ! command -v python3 >/dev/null 2>&1; then
	skip "inline frames" "python3 is not installed"
	exit 0
fi
if ! gcc -O2 -g -no-pie -I"$ROOT/tests/programs" -o "$T/inline" "$SRC" 2>"$T/cc.err"; then
	fail "build the fixture" "$(first_line "$T/cc.err")"
	done_testing
fi
mkdir -p "$T/split" "$T/mini"
cp "$T/inline" "$T/split/inline"
(cd "$T/split" && objcopy --only-keep-debug inline inline.debug && strip --strip-all inline &&
	objcopy --add-gnu-debuglink=inline.debug inline) 2>"$T/split.err" ||
	fail "split debug fixture" "$(first_line "$T/split.err")"
cp "$T/inline" "$T/mini/inline"
command -v xz >/dev/null 2>&1 || MINI_SKIP="xz is not installed (apt-get install xz-utils)"
[ -n "${MINI_SKIP:-}" ] || (cd "$T/mini" && nm -f posix --defined-only inline | awk '$2 ~ /[Tt]/ {print $1}' | sort >keep &&
	objcopy --only-keep-debug inline mini && strip --strip-debug mini &&
	objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep mini mini2 &&
	xz -k mini2 && strip --strip-all inline && objcopy --add-section .gnu_debugdata=mini2.xz inline) \
	>"$T/mini.err" 2>&1 || fail "minidebuginfo fixture" "$(first_line "$T/mini.err")"

# record BIN OUT: a recording with enough samples (retry once, longer)
record() {
	stax record -o "$2" -- "$1" 1 >/dev/null 2>"$2.err" || { fail "record $1" "$(first_line "$2.err")"; return 1; }
	stax flame --folded -i "$2" >"$2.folded" 2>/dev/null
	if [ "$(samples "$2.folded")" -lt 200 ]; then
		stax record -o "$2" -- "$1" 3 >/dev/null 2>"$2.err"
		stax flame --folded -i "$2" >"$2.folded" 2>/dev/null
	fi
}

record "$T/inline" "$T/i.data" || done_testing
F=$T/i.data.folded
n=$(samples "$F")
s_hot=$(share "$F" ";main;outer_work;mix_step;hot_kernel$K")
s_leaf=$(share "$F" ";main;outer_work;mix_step;leaf_call$K")
if between "$s_hot" 55 95 && between "$s_leaf" 8 45; then
	ok "inlined helpers are frames between caller and callee (hot_kernel $s_hot%, leaf_call $s_leaf% of $n)"
else
	fail "inlined helpers are frames between caller and callee" "main;outer_work;mix_step;hot_kernel $s_hot%, ...;leaf_call $s_leaf% of $n (want ~74/~25)"
fi

stax flame --folded --no-inline -i "$T/i.data" >"$T/noinl.folded" 2>/dev/null
s_outer=$(share "$T/noinl.folded" ";main;outer_work$K")
s_mix=$(share "$T/noinl.folded" "mix_step|hot_kernel")
if between "$s_outer" 55 95 && [ "$s_mix" = "0.0" ]; then
	ok "--no-inline folds them into outer_work ($s_outer%)"
else
	fail "--no-inline folds them into outer_work" "outer_work leaf $s_outer%, inline names in $s_mix%"
fi

# script --json: every inline chain of a leaf equals addr2line -i -f
stax script --json -i "$T/i.data" >"$T/i.json" 2>"$T/script.err" || fail "script --json" "$(first_line "$T/script.err")"
cat >"$T/chains.py" <<'EOF'
import json, sys, subprocess, os
data = json.load(open(sys.argv[1]))
binary, module = sys.argv[2], os.path.basename(sys.argv[2])
# each chain starts at the leaf (its exact address; the first user frame
# after the kernel's is the leaf too: a sample taken in the kernel, such
# as the page fault of _start's first instruction) or right after a
# user frame that was not inlined (a return address: look up address - 1)
ours = {}
for s in data["samples"]:
    fr = s["frames"]
    k = 0
    while k < len(fr):
        start, chain = k, []
        while k < len(fr):
            f = fr[k]
            chain.append("%s %s:%s" % (f["name"], os.path.basename(f.get("file", "??")), f.get("line", "?")))
            k += 1
            if not f["inlined"]:
                break
        if fr[start]["module"] == module:
            ra = start > 0 and not fr[start - 1]["kernel"]
            ours.setdefault(int(fr[start]["addr"], 16) - (1 if ra else 0), chain)
addrs = sorted(ours)
out = subprocess.run(["addr2line", "-i", "-f", "-a", "-e", binary] + ["%x" % a for a in addrs],
                     capture_output=True, text=True).stdout.splitlines()
theirs, cur, i = {}, None, 0
while i < len(out):
    if out[i].startswith("0x"):
        cur = int(out[i], 16); theirs[cur] = []; i += 1; continue
    name, loc = out[i], out[i + 1].split(" (discriminator")[0]
    f, _, l = loc.rpartition(":")
    theirs[cur].append("%s %s:%s" % (name, os.path.basename(f), l))
    i += 2
bad = [a for a in addrs if ours[a] != theirs.get(a)]
inl = sum(1 for a in addrs if len(ours[a]) > 1)
print(len(addrs), inl, len(bad))
for a in bad[:3]:
    print("%x ours=%s addr2line=%s" % (a, ours[a], theirs.get(a)), file=sys.stderr)
EOF
set -- $(python3 "$T/chains.py" "$T/i.json" "$T/inline" 2>"$T/chains.err")
if [ "${1:-0}" -ge 2 ] && [ "${2:-0}" -ge 1 ] && [ "${3:-1}" -eq 0 ]; then
	ok "inline chains and lines at $1 addresses ($2 with inline frames) equal addr2line -i -f"
else
	fail "inline chains equal addr2line -i -f" "addresses ${1:-?}, inlined ${2:-?}, different ${3:-?}: $(first_line "$T/chains.err")"
fi
if grep -q "hot_kernel (inline) .*inline.c:$HOTLINE (inlined)" "$T/i.txt" 2>/dev/null ||
	{ stax script -i "$T/i.data" >"$T/i.txt" 2>/dev/null &&
		grep -q "hot_kernel (inline) .*inline.c:$HOTLINE (inlined)" "$T/i.txt"; }; then
	ok "script marks inlined frames and shows file:line"
else
	fail "script marks inlined frames and shows file:line" "no 'hot_kernel ... inline.c:$HOTLINE (inlined)' line"
fi
stax top --lines -n 5 -i "$T/i.data" >"$T/lines.txt" 2>&1
if grep -q "hot_kernel (inline.c:$HOTLINE)" "$T/lines.txt"; then
	ok "top --lines shows hot_kernel (inline.c:$HOTLINE)"
else
	fail "top --lines shows hot_kernel (inline.c:$HOTLINE)" "$(sed -n 2p "$T/lines.txt")"
fi

# split debug info: same chains at the same addresses
record "$T/split/inline" "$T/s.data" && stax script --json -i "$T/s.data" >"$T/s.json" 2>/dev/null
set -- $(python3 "$T/chains.py" "$T/s.json" "$T/inline" 2>"$T/chains.err")
if [ "${1:-0}" -ge 2 ] && [ "${2:-0}" -ge 1 ] && [ "${3:-1}" -eq 0 ]; then
	ok "stripped binary with a debuglink: the same names and lines ($1 addresses)"
else
	fail "stripped binary with a debuglink: the same names and lines" "addresses ${1:-?}, inlined ${2:-?}, different ${3:-?}: $(first_line "$T/chains.err")"
fi

# MiniDebugInfo only: function names, no lines
if [ -n "${MINI_SKIP:-}" ]; then
	skip "MiniDebugInfo only: names resolved" "$MINI_SKIP"
	skip "info: the module's symbols came from minidebuginfo" "$MINI_SKIP"
else
record "$T/mini/inline" "$T/m.data"
s_mini=$(share "$T/m.data.folded" ";main;outer_work$K")
s_leafm=$(share "$T/m.data.folded" ";main;outer_work;leaf_call$K")
if between "$s_mini" 55 95 && between "$s_leafm" 8 45; then
	ok "MiniDebugInfo only: outer_work ($s_mini%) and leaf_call ($s_leafm%) named"
else
	fail "MiniDebugInfo only: names resolved" "outer_work $s_mini%, leaf_call $s_leafm%"
fi
stax info -i "$T/m.data" >"$T/m.info" 2>&1
if grep -q "inline .*minidebuginfo, lines from none" "$T/m.info"; then
	ok "info: the module's symbols came from minidebuginfo"
else
	fail "info: the module's symbols came from minidebuginfo" "$(grep ' inline ' "$T/m.info")"
fi
fi

# line 0 (clang keeps tests/programs/line0.c's "#line 0" hot loop so):
# the file alone, as addr2line prints "line0.c:?", never "line0.c:0"
#   clang -O2 -g -no-pie -o line0 tests/programs/line0.c
if ! command -v clang >/dev/null 2>&1; then
	skip "line 0: the file without a line" "clang is not installed"
elif ! clang -O2 -g -no-pie -I"$ROOT/tests/programs" -o "$T/line0" "$ROOT/tests/programs/line0.c" 2>"$T/cc0.err"; then
	fail "line 0: build the fixture" "$(first_line "$T/cc0.err")"
elif record "$T/line0" "$T/z.data"; then
	stax script --json -i "$T/z.data" >"$T/z.json" 2>/dev/null
	stax script -i "$T/z.data" >"$T/z.txt" 2>/dev/null
	stax top --lines -n 5 -i "$T/z.data" >"$T/z.top" 2>&1
	set -- $(python3 - "$T/z.json" <<'PYEOF' 2>"$T/z.perr"
import json, sys
leaf = noline = zero = 0
for s in json.load(open(sys.argv[1]))["samples"]:
    for f in s["frames"]:
        zero += f.get("line") == 0
    f = s["frames"][0] if s["frames"] else {}
    if f.get("name") == "zero_line_loop":
        leaf += 1
        noline += f.get("file", "").endswith("line0.c") and "line" not in f
print(leaf, noline, zero)
PYEOF
)
	set -- ${1:-0} ${2:-0} ${3:-1} $(grep -c "line0\.c:0" "$T/z.txt") $(python3 "$T/chains.py" "$T/z.json" "$T/line0" 2>"$T/chains0.err")
	if [ "$1" -ge 100 ] && [ "$2" -ge $(($1 * 9 / 10)) ] && [ "$3" -eq 0 ] && [ "$4" -eq 0 ] &&
		grep -q "zero_line_loop (line0.c) " "$T/z.top" && [ "${7:-1}" -eq 0 ]; then
		ok "line 0: the file without a line in script, --json and top --lines ($2 of $1 leaf samples), as addr2line at ${5:-?} addresses"
	else
		fail "line 0: the file without a line" "leaf $1, file without line $2, line 0 in JSON $3, ':0' in script $4, addr2line differs at ${7:-?} of ${5:-?}: $(first_line "$T/chains0.err"); top: $(grep -m1 zero_line_loop "$T/z.top")"
	fi
fi

# PLT stubs are NAME@plt (tests/programs/unwind_plt.c spends a good part
# of its time in the stub of plt_tiny): the lazy .plt of the programs'
# build, and .plt.sec of an IBT build made here
#   gcc -O2 -g -fcf-protection -Wl,-z,ibtplt [-fPIC -shared] ...
# The stub's share of the samples is about 10% on an idle machine and far
# less on a busy one (0.2% was seen), so the check counts samples: at
# least 3 named plt_tiny@plt (longer runs, 4x then 12x, while there are
# fewer), and none of plt_loop's callees unnamed.
plt_check() {
	_bin=$1 _f=$T/$2.data _what=$3
	for _sc in 1 4 12; do
		stax record -o "$_f" -- "$_bin" "$_sc" >/dev/null 2>"$_f.err" || { fail "record $_bin" "$(first_line "$_f.err")"; return; }
		stax flame --folded -i "$_f" >"$_f.folded" 2>/dev/null
		_n=$(samples "$_f.folded" ";plt_loop;plt_tiny@plt$K")
		[ "$_n" -ge 3 ] && break
	done
	_s=$(share "$_f.folded" ";plt_loop;plt_tiny@plt$K")
	_u=$(samples "$_f.folded" ";plt_loop;[^;]*\\+0x[0-9a-f]*$K")
	if [ "$_n" -ge 3 ] && [ "$_u" -eq 0 ]; then
		ok "PLT stub named plt_tiny@plt ($_what): $_n samples ($_s%)"
	else
		fail "PLT stub named plt_tiny@plt ($_what)" "plt_loop;plt_tiny@plt $_n samples ($_s%), $_u samples in plt_loop's unnamed callees: $(grep -m1 'plt_loop;[^;]*+0x' "$_f.folded")"
	fi
}
plt_check "$PROG/unwind_plt-nofp" plt-lazy "lazy .plt"
mkdir -p "$T/ibt"
if (cd "$T/ibt" && gcc -O2 -g -fcf-protection -Wl,-z,ibtplt -fPIC -shared -o libunwind_plt.so \
	"$ROOT/tests/programs/unwind_plt_lib.c" &&
	gcc -O2 -g -fcf-protection -Wl,-z,ibtplt -I"$ROOT/tests/programs" -o unwind_plt-ibt \
		"$ROOT/tests/programs/unwind_plt.c" -L. -lunwind_plt -Wl,-rpath,'$ORIGIN') 2>"$T/ibt.err" &&
	readelf -SW "$T/ibt/unwind_plt-ibt" | grep -q '\.plt\.sec'; then
	plt_check "$T/ibt/unwind_plt-ibt" plt-sec ".plt.sec"
else
	fail "PLT stub named plt_tiny@plt (.plt.sec)" "no IBT build with .plt.sec: $(first_line "$T/ibt.err")"
fi

# lld writes no CFI for the PLT (GNU ld writes an expression): the
# unwinder makes rows for its stubs (table.c add_plt_x86); before, a
# sample in plt_tiny@plt had no caller (Rust's libLLVM, linked by lld:
# memmove@plt alone, "no unwind information")
mkdir -p "$T/lld"
if ! command -v ld.lld >/dev/null 2>&1; then
	fail "PLT stub named plt_tiny@plt (lld)" "ld.lld is not installed (make test-deps installs lld)"
elif (cd "$T/lld" && gcc -O2 -g -fomit-frame-pointer -fuse-ld=lld -fPIC -shared -o libunwind_plt.so \
	"$ROOT/tests/programs/unwind_plt_lib.c" &&
	gcc -O2 -g -fomit-frame-pointer -fuse-ld=lld -I"$ROOT/tests/programs" -o unwind_plt-lld \
		"$ROOT/tests/programs/unwind_plt.c" -L. -lunwind_plt -Wl,-rpath,'$ORIGIN') 2>"$T/lld.err"; then
	plt_check "$T/lld/unwind_plt-lld" plt-lld ".plt of lld, no CFI"
else
	fail "PLT stub named plt_tiny@plt (lld)" "no lld build: $(first_line "$T/lld.err")"
fi

# a binary stripped of every symbol: its entry point is _start, the root
cp "$T/inline" "$T/inline-stripped" && strip --strip-all "$T/inline-stripped"
if record "$T/inline-stripped" "$T/st.data"; then
	s_root=$(share "$T/st.data.folded" "^[^;]*;_start;__libc_start_main")
	if between "$s_root" 95 100; then
		ok "stripped binary: its entry point is the root _start ($s_root% of stacks)"
	else
		fail "stripped binary: its entry point is the root _start" "$s_root% of stacks begin _start;__libc_start_main: $(head -n 1 "$T/st.data.folded")"
	fi
fi

# the distribution's libc, stripped, with libc6-dbg installed
LIBC_BID=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ {print $3}')
if [ -z "$LIBC_BID" ] || ! ls /usr/lib/debug/.build-id/"$(echo "$LIBC_BID" | cut -c1-2)"/"$(echo "$LIBC_BID" | cut -c3-)".debug >/dev/null 2>&1; then
	skip "libc source lines" "no debug file for libc (apt-get install libc6-dbg)"
elif grep -q "__libc_start_call_main (libc.so.6) .*libc_start_call_main.h:[0-9]" "$T/i.txt"; then
	ok "stripped libc with libc6-dbg installed shows source lines"
else
	fail "stripped libc with libc6-dbg installed shows source lines" "$(grep -m1 'libc.so.6' "$T/i.txt")"
fi
stax info -i "$T/i.data" >"$T/i.info" 2>&1
if grep -q " inline .*symtab, lines from binary" "$T/i.info"; then
	ok "info: where each module's symbols came from"
else
	fail "info: where each module's symbols came from" "$(grep ' inline ' "$T/i.info")"
fi

# annotate: the hot loop's instructions and line carry the samples
stax annotate outer_work --json -i "$T/i.data" >"$T/ann.json" 2>"$T/ann.err"
set -- $(python3 - "$T/ann.json" "$HOTLINE" <<'EOF' 2>"$T/ann.perr"
import json, sys
a = json.load(open(sys.argv[1]))
hot = int(sys.argv[2])
tot = a["samples"]
top = a["lines"][0]
on_loop = sum(i["samples"] for i in a["instructions"] if i.get("line") == hot)
print(tot, top["line"], "%.1f" % (100.0 * on_loop / max(tot, 1)), "%s" % (top["source"] or "").strip().replace(" ", ""))
EOF
)
if [ "${1:-0}" -ge 100 ] && [ "${2:-0}" = "$HOTLINE" ] && between "${3:-0}" 90 100 && [ "${4:-}" = "BURN_LOOP(x,600000);" ]; then
	ok "annotate outer_work: the loop's instructions hold ${3}% of ${1} samples, hottest line $HOTLINE is the loop"
else
	fail "annotate outer_work: the hot loop holds the samples" "samples ${1:-?}, hottest line ${2:-?} (want $HOTLINE), on loop ${3:-?}%, source '${4:-}': $(first_line "$T/ann.err")"
fi
stax annotate no_such_function -i "$T/i.data" >/dev/null 2>"$T/ann2.err"
rc=$?
if [ "$rc" -ne 0 ] && one_line_error "$T/ann2.err"; then
	ok "annotate of an unknown function: one-line error"
else
	fail "annotate of an unknown function: one-line error" "status $rc: $(first_line "$T/ann2.err")"
fi
done_testing
