#!/bin/sh
# seeds.sh OUT - write the fuzz targets' generated seeds into OUT/NAME/
# (NAME as in tests/fuzz/fuzz_NAME.c), beside the committed corpus in
# tests/fuzz/corpus/NAME/. The same bytes every run on one toolchain:
# built from the test programs' sources and from committed files only
# (nothing from /proc, no recording made now), so make check's replay
# (tests/fuzz/run.sh --replay) tests the same inputs every time.
#   cfi        a test program's .eh_frame (byte 0: 0 = .eh_frame)
#   elf        tests/programs/inline.c built with DWARF, with compressed
#              DWARF, stripped with MiniDebugInfo, its .gnu_debugdata
#              alone and the ELF inside it, a DWARF cache image, and a
#              test program (byte 0 picks the form, see fuzz_elf.c)
#   recording  every committed recording in corpus/recording/ (the
#              *.data files, not the inputs libFuzzer found) in the
#              target's other form: its chunks uncompressed
# Needs make programs (tests/programs/build), cc, objcopy, strip, nm, xz,
# zstd. Prints "# " lines for what it could not make; exits 0.
set -u
out=${1:?usage: seeds.sh OUT}
top=$(cd "$(dirname "$0")/../.." && pwd)
prog=$top/tests/programs/build
corpus=$top/tests/fuzz/corpus
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stax-seeds.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out/cfi" "$out/elf" "$out/recording" || exit 1

# with: BYTE then a file's bytes
with() { printf "\\$1"; cat "$2"; }

# --- cfi: .eh_frame of a program built without frame pointers -------------
if objcopy -O binary --only-section=.eh_frame "$prog/callgraph-nofp" "$tmp/eh" 2>/dev/null; then
	with 000 "$tmp/eh" >"$out/cfi/seed-eh_frame"
else
	echo "# seeds: no .eh_frame seed ($prog/callgraph-nofp: run make programs)"
fi

# --- elf ----------------------------------------------------------------
# (the temporary and checkout directories are mapped to fixed names, so
# the DWARF does not change with them)
if (cd "$tmp" && cc -O2 -g -fdebug-prefix-map="$tmp"=/seeds -fdebug-prefix-map="$top"=/stax \
	-I"$top/tests/programs" -o inl "$top/tests/programs/inline.c" &&
	cp inl mini && nm -f posix --defined-only mini | awk '$2 ~ /[Tt]/ {print $1}' >keep &&
	objcopy --only-keep-debug mini m && strip --strip-debug m &&
	objcopy -S --remove-section .comment --keep-symbols=keep m m2 && xz -k m2 &&
	strip --strip-all mini && objcopy --add-section .gnu_debugdata=m2.xz mini) >"$tmp/elf.err" 2>&1; then
	with 000 "$tmp/inl" >"$out/elf/seed-dwarf"
	with 000 "$tmp/mini" >"$out/elf/seed-mini"
	with 001 "$tmp/m2.xz" >"$out/elf/seed-xz"
	with 002 "$tmp/m2" >"$out/elf/seed-inner"
	# compressed debug sections (a DWARF cache entry is made of them),
	# and a cache image: an ELF file with uncompressed debug sections
	objcopy --compress-debug-sections=zlib "$tmp/inl" "$tmp/inl_z" 2>/dev/null &&
		with 000 "$tmp/inl_z" >"$out/elf/seed-dwarf-zlib"
	objcopy --only-keep-debug "$tmp/inl" "$tmp/inl.dbg" 2>/dev/null &&
		with 003 "$tmp/inl.dbg" >"$out/elf/seed-cache-image"
else
	echo "# seeds: no ELF seeds from inline.c: $(head -n 1 "$tmp/elf.err")"
fi
[ -f "$prog/callgraph-nofp" ] && with 000 "$prog/callgraph-nofp" >"$out/elf/seed-prog"

# --- recording: chunks uncompressed (u16 kind, u32 length, records) --------
# le N BYTES: N as BYTES little-endian bytes
le() {
	n=$1 i=0
	while [ $i -lt "$2" ]; do
		printf "$(printf '\\%03o' $((n & 255)))"
		n=$((n >> 8)) i=$((i + 1))
	done
}
# raw_chunks FILE: a recording's chunks (16-byte file header, 24-byte
# chunk headers: u16 kind at +4, u32 compressed size at +16; FORMAT.md)
raw_chunks() {
	size=$(wc -c <"$1") o=16
	while [ $((o + 24)) -le "$size" ]; do
		kind=$(od -An -tu2 -j $((o + 4)) -N2 "$1" | tr -d ' ')
		comp=$(od -An -tu4 -j $((o + 16)) -N4 "$1" | tr -d ' ')
		tail -c +$((o + 25)) "$1" | head -c "$comp" | zstd -q -d -c >"$tmp/chunk" 2>/dev/null || return 1
		le "$kind" 2
		le "$(wc -c <"$tmp/chunk")" 4
		cat "$tmp/chunk"
		o=$((o + 24 + comp))
	done
}
if command -v zstd >/dev/null 2>&1; then
	for f in "$corpus"/recording/*.data; do
		[ -f "$f" ] && [ "$(head -c 7 "$f")" = STAXREC ] || continue
		raw_chunks "$f" >"$out/recording/chunks-$(basename "$f")" ||
			{ echo "# seeds: $f: a chunk did not decompress"; rm -f "$out/recording/chunks-$(basename "$f")"; }
	done
else
	echo "# seeds: no recording seeds in chunk form (zstd is not installed)"
fi
exit 0
