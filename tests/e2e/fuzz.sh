#!/bin/sh
# fuzz.sh - every fuzz target runs briefly on seeds made from real files:
# a stax recording, a perf.data file, a test program's .eh_frame, /proc
# maps and kallsyms text, test programs (with DWARF, with MiniDebugInfo).
# Longer campaigns: make fuzz FUZZ_SECONDS=300.
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v clang >/dev/null 2>&1; then
	skip "fuzz targets" "clang is not installed (libFuzzer needs it)"
	done_testing
fi
out=$ROOT/build/fuzz
for t in recording perfdata cfi maps kallsyms elf; do
	mkdir -p "$out/fuzz_$t.corpus"
done

# seeds: small real inputs, so the fuzzer starts from valid structure
if stax record -q -o "$T/seed.data" -- "$PROG/spin-fp" 0.2 >/dev/null 2>&1; then
	cp "$T/seed.data" "$out/fuzz_recording.corpus/seed-stax"
else
	fail "seed recording" "stax record failed"
fi
# the same recording with its chunks uncompressed (fuzz_recording's other
# form: u16 kind, u32 length, records), so mutations reach the records
le() { # le N BYTES: N as BYTES little-endian bytes
	n=$1 i=0
	while [ $i -lt "$2" ]; do
		printf "$(printf '\\%03o' $((n & 255)))"
		n=$((n >> 8)) i=$((i + 1))
	done
}
raw_chunks() {
	size=$(wc -c <"$1") o=16
	while [ $((o + 24)) -le "$size" ]; do
		kind=$(od -An -tu2 -j $((o + 4)) -N2 "$1" | tr -d ' ')
		comp=$(od -An -tu4 -j $((o + 16)) -N4 "$1" | tr -d ' ')
		tail -c +$((o + 25)) "$1" | head -c "$comp" | zstd -q -d -c >"$T/chunk" || return 1
		le "$kind" 2
		le "$(wc -c <"$T/chunk")" 4
		cat "$T/chunk"
		o=$((o + 24 + comp))
	done
}
if [ -s "$T/seed.data" ] && command -v zstd >/dev/null 2>&1; then
	raw_chunks "$T/seed.data" >"$out/fuzz_recording.corpus/seed-chunks" ||
		fail "recording seed in chunk form" "zstd could not decompress a chunk"
	stax record -q --off-cpu -o "$T/off.data" -- "$PROG/pipewait-fp" 0.2 >/dev/null 2>&1 &&
		raw_chunks "$T/off.data" >"$out/fuzz_recording.corpus/seed-chunks-offcpu"
else
	skip "recording seed in chunk form" "zstd (the command) is not installed"
fi
if command -v perf >/dev/null 2>&1 &&
	perf record -q -g -o "$T/perf.data" -- "$PROG/spin-fp" 0.2 >/dev/null 2>&1; then
	cp "$T/perf.data" "$out/fuzz_perfdata.corpus/seed-perf"
else
	skip "perf.data seed" "perf record did not run here"
fi
if objcopy -O binary --only-section=.eh_frame "$PROG/callgraph-nofp" "$T/eh" 2>/dev/null; then
	{ printf '\000'; cat "$T/eh"; } >"$out/fuzz_cfi.corpus/seed-eh_frame"
fi

cp /proc/self/maps "$out/fuzz_maps.corpus/seed-self"
# kallsyms text (empty when kptr_restrict hides it) and a module of our own
{
	printf '\000'
	head -n 300 /proc/kallsyms
	printf 'ffffffffc0a00000 t mod_a\t[mymod]\nffffffffc0a00100 T mod_b\t[mymod]\n'
	printf '\000mymod 16384 0 - Live 0xffffffffc0a00000\n'
} >"$out/fuzz_kallsyms.corpus/seed-proc"
# ELF: a program with DWARF, and one stripped with MiniDebugInfo (then its
# .gnu_debugdata alone, and the ELF inside it), and for the DWARF cache
# (symbol/dwcache.c) a copy with compressed sections and a cache image
if (cd "$T" && cc -O2 -g -I"$ROOT/tests/programs" -o inl "$ROOT/tests/programs/inline.c" &&
	cp inl mini && nm -f posix --defined-only mini | awk '$2 ~ /[Tt]/ {print $1}' >keep &&
	objcopy --only-keep-debug mini m && strip --strip-debug m &&
	objcopy -S --remove-section .comment --keep-symbols=keep m m2 && xz -k m2 &&
	strip --strip-all mini && objcopy --add-section .gnu_debugdata=m2.xz mini) >"$T/elf.err" 2>&1; then
	{ printf '\000'; cat "$T/inl"; } >"$out/fuzz_elf.corpus/seed-dwarf"
	{ printf '\000'; cat "$T/mini"; } >"$out/fuzz_elf.corpus/seed-mini"
	{ printf '\001'; cat "$T/m2.xz"; } >"$out/fuzz_elf.corpus/seed-xz"
	{ printf '\002'; cat "$T/m2"; } >"$out/fuzz_elf.corpus/seed-inner"
	# compressed debug sections (a DWARF cache entry is made of them), and
	# a cache image: an ELF file with uncompressed debug sections
	objcopy --compress-debug-sections=zlib "$T/inl" "$T/inl_z" 2>/dev/null &&
		{ printf '\000'; cat "$T/inl_z"; } >"$out/fuzz_elf.corpus/seed-dwarf-zlib"
	objcopy --only-keep-debug "$T/inl" "$T/inl.dbg" 2>/dev/null &&
		{ printf '\003'; cat "$T/inl.dbg"; } >"$out/fuzz_elf.corpus/seed-cache-image"
else
	skip "ELF seeds" "cannot build the MiniDebugInfo fixture: $(head -n 1 "$T/elf.err")"
fi
{ printf '\000'; cat "$PROG/callgraph-nofp"; } >"$out/fuzz_elf.corpus/seed-prog"

sh "$ROOT/tests/fuzz/run.sh" "${STAX_FUZZ_SECONDS:-6}" || FAILED=1
done_testing
