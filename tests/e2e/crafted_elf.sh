#!/bin/sh
# crafted_elf.sh - programs whose ELF files are damaged where nothing runs
# (section headers only, so each still runs) do not crash stax: the
# recorder exits with the program's status and the recording reads; a
# perf.data file recorded with DWARF stacks (perf record --call-graph
# dwarf) of the program imports and shows without a crash.
#
# The program is tests/programs/build/exitcode-nofp (main;burn_before_exit
# for ~0.3 s, then exit 3), copied and damaged with tests/fuzz/elf-craft.c:
#   nobits-debuglink   .gnu_debuglink of type SHT_NOBITS (the recorder
#                      segfaulted on this one: exit 139, recording lost)
#   debuglink-past-end .gnu_debuglink's bytes past the end of the file
#   eh_frame_hdr-trunc .eh_frame_hdr cut to 4 bytes
#   eh_frame-trunc     .eh_frame cut in the middle of an entry
#   eh_frame-past-end  .eh_frame past the end of the file: a warning
#                      names the file, frames fall back to frame pointers
#   debug-cfi          CFI only in .debug_frame of the debug file: used
#   debug-other        the same with the debug file's build-id changed:
#                      not used
#   debug-zlib         the debug file's .debug_frame compressed: used;
#                      with its deflate stream damaged: a warning
# stax-test: seconds=12
. "$(dirname "$0")/lib.sh"
require_stax
ulimit -c 0 2>/dev/null

if ! cc -O2 -o "$T/elf-craft" "$ROOT/tests/fuzz/elf-craft.c" 2>"$T/cc.err"; then
	fail "setup" "cannot build tests/fuzz/elf-craft.c: $(first_line "$T/cc.err")"
	done_testing
fi
src=$PROG/exitcode-nofp
# a debug file, for the debuglink (objcopy records its name and CRC)
objcopy --only-keep-debug "$src" "$T/exitcode.debug" &&
	objcopy --add-gnu-debuglink="$T/exitcode.debug" "$src" "$T/linked" ||
	{ fail "setup" "objcopy cannot add a debuglink"; done_testing; }

# make NAME BASE OP...: $T/NAME, the file BASE damaged by OP...
make_case() {
	_n=$1 _b=$2
	shift 2
	mkdir -p "$T/$_n"
	if ! "$T/elf-craft" "$_b" "$T/$_n/exitcode" "$@" 2>"$T/$_n.craft.err"; then
		fail "$_n: craft" "$(first_line "$T/$_n.craft.err")"
		return 1
	fi
	chmod 755 "$T/$_n/exitcode"
}

# record NAME [MIN_SHARE]: record $T/NAME/exitcode 3; stax must exit 3,
# the recording must read (info, top, doctor), and with MIN_SHARE at
# least that share of samples must have main;burn_before_exit.
record() {
	_n=$1 _min=${2:-}
	_f=$T/$_n.data
	stax record -o "$_f" -- "$T/$_n/exitcode" 3 >/dev/null 2>"$T/$_n.rec.err"
	_rc=$?
	if [ "$_rc" -eq 3 ]; then
		ok "$_n: stax record exits with the program's status 3"
	else
		fail "$_n: stax record exits with the program's status 3" \
			"exited $_rc: $(grep -v '^stax: recorded' "$T/$_n.rec.err" | head -n 3 | tr '\n' '|')"
		return 1
	fi
	for v in info top doctor; do
		stax "$v" -i "$_f" >"$T/$_n.$v" 2>"$T/$_n.$v.err"
		_rc=$?
		if [ "$_rc" -ne 0 ] || crashed "$T/$_n.$v.err" "$_rc"; then
			fail "$_n: stax $v reads the recording" "exit $_rc: $(first_line "$T/$_n.$v.err")"
			return 1
		fi
	done
	ok "$_n: the recording reads (info, top, doctor)"
	[ -n "$_min" ] || return 0
	stax flame --folded -i "$_f" >"$T/$_n.folded" 2>/dev/null
	_s=$(share "$T/$_n.folded" ";main;burn_before_exit$K")
	_t=$(samples "$T/$_n.folded")
	if [ "$_t" -ge 50 ] && between "$_s" "$_min" 100; then
		ok "$_n: $_s% of $_t samples in main;burn_before_exit"
	else
		fail "$_n: >= $_min% of >= 50 samples in main;burn_before_exit" \
			"$_s% of $_t; top: $(sort -k2 -nr -t' ' "$T/$_n.folded" | head -n 2 | tr '\n' '|')"
	fi
}

# perf.data of the program with DWARF stacks: import and top must not crash
perf_ok=1
if ! command -v perf >/dev/null 2>&1; then
	perf_ok=0 why="perf is not installed"
elif ! perf record -q -e cpu-clock -o "$T/probe.data" -- true >/dev/null 2>"$T/probe.err"; then
	perf_ok=0 why="perf record cannot sample here: $(first_line "$T/probe.err")"
fi
perfdata() {
	_n=$1
	if [ "$perf_ok" -eq 0 ]; then
		skip "$_n: perf.data" "$why"
		return
	fi
	if ! perf record -q -e cpu-clock --call-graph dwarf -o "$T/$_n.perf" -- \
		"$T/$_n/exitcode" 3 >/dev/null 2>"$T/$_n.perr" && [ ! -s "$T/$_n.perf" ]; then
		fail "$_n: perf record" "$(first_line "$T/$_n.perr")"
		return
	fi
	stax top -i "$T/$_n.perf" >"$T/$_n.ptop" 2>"$T/$_n.ptop.err"
	_rc=$?
	if [ "$_rc" -eq 0 ] && ! crashed "$T/$_n.ptop.err" "$_rc" &&
		grep -q burn_before_exit "$T/$_n.ptop"; then
		ok "$_n: stax top of a perf.data file (DWARF stacks) shows burn_before_exit"
	else
		fail "$_n: stax top of a perf.data file (DWARF stacks)" \
			"exit $_rc: $(first_line "$T/$_n.ptop.err")"
	fi
	stax import -o "$T/$_n.imported" "$T/$_n.perf" >/dev/null 2>"$T/$_n.imp.err"
	_rc=$?
	if [ "$_rc" -eq 0 ] && ! crashed "$T/$_n.imp.err" "$_rc" &&
		stax info -i "$T/$_n.imported" >/dev/null 2>&1; then
		ok "$_n: stax import of the perf.data file, and the result reads"
	else
		fail "$_n: stax import of the perf.data file" "exit $_rc: $(first_line "$T/$_n.imp.err")"
	fi
}

make_case nobits-debuglink "$T/linked" sec .gnu_debuglink type 8 &&
	record nobits-debuglink 90 && perfdata nobits-debuglink
make_case debuglink-past-end "$T/linked" sec .gnu_debuglink offset 0x7ffffff0 &&
	record debuglink-past-end 90
make_case eh_frame_hdr-trunc "$T/linked" sec .eh_frame_hdr size 4 &&
	record eh_frame_hdr-trunc 90 && perfdata eh_frame_hdr-trunc
make_case eh_frame-trunc "$T/linked" sec .eh_frame size .eh_frame:size-30 &&
	record eh_frame-trunc && perfdata eh_frame-trunc
if make_case eh_frame-past-end "$T/linked" sec .eh_frame offset 0x7ffffff0 &&
	record eh_frame-past-end; then
	if grep -q "^stax: warning: cannot read .eh_frame of $T/eh_frame-past-end/exitcode: " \
		"$T/eh_frame-past-end.rec.err"; then
		ok "eh_frame-past-end: a warning names the file"
	else
		fail "eh_frame-past-end: a warning names the file" \
			"stderr: $(head -n 3 "$T/eh_frame-past-end.rec.err" | tr '\n' '|')"
	fi
fi

# CFI only in the debug file: exitcode.c built without unwind tables
# (so its CFI is in .debug_frame), split into a binary with a debuglink
# and a debug file. With its debug file, the stacks are whole; with the
# same debug file but another build-id (4 bytes of the note changed),
# it is not used (its CFI would give the same whole stacks), and the
# binary's frames fall back to frame pointers, which it has none of.
if gcc -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -I"$ROOT/tests/programs" \
	-o "$T/dcfi.g" "$ROOT/tests/programs/exitcode.c" 2>"$T/dcfi.err" &&
	mkdir -p "$T/debug-cfi" "$T/debug-other" &&
	objcopy --only-keep-debug "$T/dcfi.g" "$T/debug-cfi/exitcode.debug" &&
	objcopy --strip-debug --add-gnu-debuglink="$T/debug-cfi/exitcode.debug" \
		"$T/dcfi.g" "$T/debug-cfi/exitcode" 2>>"$T/dcfi.err" &&
	cp "$T/debug-cfi/exitcode" "$T/debug-other/exitcode" &&
	"$T/elf-craft" "$T/debug-cfi/exitcode.debug" "$T/debug-other/exitcode.debug" \
		poke .note.gnu.build-id 16 deadbeef 2>>"$T/dcfi.err"; then
	record debug-cfi 90
	# its .debug_frame compressed (zlib): inflated and used; with the
	# deflate stream damaged: a warning names the debug file
	mkdir -p "$T/debug-zlib" "$T/debug-zlib-bad"
	if objcopy --compress-debug-sections=zlib "$T/debug-cfi/exitcode.debug" \
		"$T/debug-zlib/exitcode.debug" 2>>"$T/dcfi.err" &&
		cp "$T/debug-cfi/exitcode" "$T/debug-zlib/exitcode" &&
		cp "$T/debug-cfi/exitcode" "$T/debug-zlib-bad/exitcode" &&
		"$T/elf-craft" "$T/debug-zlib/exitcode.debug" "$T/debug-zlib-bad/exitcode.debug" \
			poke .debug_frame 24 00ff00ff00ff00ff 2>>"$T/dcfi.err"; then
		record debug-zlib 90
		if record debug-zlib-bad; then
			if grep -q "^stax: warning: cannot read .debug_frame of $T/debug-zlib-bad/exitcode.debug: " \
				"$T/debug-zlib-bad.rec.err"; then
				ok "debug-zlib-bad: a warning names the debug file"
			else
				fail "debug-zlib-bad: a warning names the debug file" \
					"stderr: $(head -n 3 "$T/debug-zlib-bad.rec.err" | tr '\n' '|')"
			fi
		fi
	else
		fail "debug-zlib: setup" "$(first_line "$T/dcfi.err")"
	fi
	if record debug-other; then
		stax flame --folded -i "$T/debug-other.data" >"$T/debug-other.folded" 2>/dev/null
		s=$(share "$T/debug-other.folded" ";main;burn_before_exit$K")
		if between "$s" 0 50; then
			ok "debug-other: a debug file of another build-id is not used ($s% whole stacks)"
		else
			fail "debug-other: a debug file of another build-id is not used" \
				"$s% of the samples have main;burn_before_exit, as with its CFI"
		fi
	fi
else
	fail "debug-cfi: setup" "$(first_line "$T/dcfi.err")"
fi
done_testing
