#!/bin/sh
# make-elf-corpus.sh - (re)make the crafted ELF seeds of the fuzz corpus,
# tests/fuzz/corpus/*/crafted-*: small ELF files (a few KB) built from
# tests/fuzz/elf-prog.c and damaged on purpose with tests/fuzz/elf-craft.c
# (sections of type SHT_NOBITS where data is expected, offsets past the
# end, huge or overlapping sizes, truncated .eh_frame and .eh_frame_hdr,
# bad compressed sections, bad MiniDebugInfo, debug files of another
# build), plus intact ones for the targets to start from.
#
#   sh tests/fuzz/make-elf-corpus.sh
#
# Needs cc, objcopy, strip and xz. The seeds are committed, so fuzzing
# and replaying do not need this; rerun it after changing the cases.
# Each seed goes to the targets whose code it reaches:
#   unwind_elf, debuginfo  "\000" + binary, or "\001"/"\003" + le32 size
#                          + binary + debug file (tests/fuzz/fuzz-files.h)
#   fpcheck                the binary
#   elf                    "\000" + binary (fuzz_elf's mode 0), others
#   cfi                    "\000" + .eh_frame, "\001" + .debug_frame
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
corpus=$top/tests/fuzz/corpus
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
cd "$w"

cc -O2 -o elf-craft "$top/tests/fuzz/elf-craft.c"
craft() { ./elf-craft "$@"; }
for t in unwind_elf debuginfo fpcheck elf cfi; do
	mkdir -p "$corpus/$t"
	rm -f "$corpus/$t"/crafted-*
done

# small files: no C start files, sections packed (max-page-size=16: the
# seeds are never run)
src=$top/tests/fuzz/elf-prog.c
ld="-nostartfiles -Wl,-z,max-page-size=16 -Wl,-z,noseparate-code -Wl,-z,norelro"
# DT_INIT and DT_FINI name elf-prog.c's crti-style functions
ld="$ld -Wl,-init=prog_init -Wl,-fini=prog_fini"
# the same bytes (and build-ids) from every run: no temporary paths
repro="-ffile-prefix-map=$w=/build -ffile-prefix-map=$top=/stax"
# debug: the program with DWARF; prog: stripped of it, with a debuglink
# to its debug file prog.debug (in dbg/)
build() { # build NAME CFLAGS...: NAME-g, NAME (debuglink) and dbg-NAME/prog.debug
	n=$1
	shift
	cc -O1 -g "$@" $ld $repro -o "$n-g" "$src"
	mkdir -p "dbg-$n"
	objcopy -R .comment --only-keep-debug "$n-g" "dbg-$n/prog.debug"
	objcopy -R .comment --strip-debug --add-gnu-debuglink="dbg-$n/prog.debug" "$n-g" "$n"
}
build prog -Wl,--build-id
# CFI in .debug_frame, which only the debug file keeps
build nocfi -Wl,--build-id -fno-asynchronous-unwind-tables
# no build-ids: a debug file is matched by the debuglink's CRC
build nobid -Wl,--build-id=none -fno-asynchronous-unwind-tables
# another build (other code, other build-id and CRC)
build other -Wl,--build-id -fno-asynchronous-unwind-tables -O2
build othernobid -Wl,--build-id=none -fno-asynchronous-unwind-tables -O2

le32() {
	n=$1
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((n & 255)) $((n >> 8 & 255)) \
		$((n >> 16 & 255)) $((n >> 24 & 255)))"
}
# one NAME TARGETS BIN: the binary alone
one() {
	for t in $2; do
		case $t in
		fpcheck) cp "$3" "$corpus/$t/crafted-$1" ;;
		*) { printf '\000'; cat "$3"; } >"$corpus/$t/crafted-$1" ;;
		esac
	done
}
# pair NAME TARGETS BIN DEBUG [sub]: a binary and its debug file (in
# .debug/ beside it with sub)
pair() {
	flags='\001'
	[ $# -lt 5 ] || flags='\003'
	for t in $2; do
		{ printf "$flags"; le32 "$(wc -c <"$3")"; cat "$3" "$4"; } >"$corpus/$t/crafted-$1"
	done
}
# case NAME TARGETS OP...: the binary prog damaged by OP...
case_() {
	n=$1 ts=$2
	shift 2
	craft prog "c-$n" "$@"
	one "$n" "$ts" "c-$n"
}

all="unwind_elf debuginfo fpcheck elf"
unw="unwind_elf"
sym="elf"
one plain "$all" prog
# .gnu_debuglink (the recorder crashed on the first one)
case_ nobits-debuglink "$unw debuginfo elf" sec .gnu_debuglink type 8
case_ debuglink-past-end "$unw debuginfo" sec .gnu_debuglink offset 0x7ffffff0
case_ debuglink-huge "$unw debuginfo" sec .gnu_debuglink size 0x7fffffffffffffff
case_ debuglink-no-nul "$unw debuginfo" sec .gnu_debuglink size 10
case_ debuglink-overlap "$unw debuginfo" sec .gnu_debuglink offset .dynstr:offset
# .eh_frame and .eh_frame_hdr
case_ nobits-eh_frame "$unw" sec .eh_frame type 8
case_ eh_frame-past-end "$unw" sec .eh_frame offset 0x7ffffff0
case_ eh_frame-huge "$unw" sec .eh_frame size 0x7fffffffffffffff
case_ eh_frame-truncated "$unw" sec .eh_frame size .eh_frame:size-20
case_ eh_frame-truncated-12 "$unw" sec .eh_frame size 12
case_ eh_frame-overlap-text "$unw" sec .eh_frame offset .text:offset
case_ eh_frame-overlap-hdr "$unw" sec .eh_frame offset .eh_frame_hdr:offset
case_ eh_frame-compressed-flag "$unw" sec .eh_frame flags 0x802
case_ eh_frame-addr-wrap "$unw" sec .eh_frame addr 0xfffffffffffff000
case_ eh_frame_hdr-truncated "$unw" sec .eh_frame_hdr size 4
case_ nobits-eh_frame_hdr "$unw" sec .eh_frame_hdr type 8
case_ eh_frame_hdr-past-end "$unw" sec .eh_frame_hdr offset 0x7ffffff0
# symbol tables (root callers, symbols, the frame-pointer check)
case_ nobits-symtab "$unw fpcheck $sym" sec .symtab type 8
case_ symtab-past-end "$unw fpcheck $sym" sec .symtab offset 0x7ffffff0
case_ symtab-entsize "$unw fpcheck $sym" sec .symtab entsize 1
case_ symtab-link "$unw fpcheck $sym" sec .symtab link 0xffff
case_ nobits-strtab "$unw fpcheck $sym" sec .strtab type 8
case_ strtab-huge "$unw $sym" sec .strtab size 0x7fffffffffffffff
case_ dynsym-past-end "$sym" sec .dynsym offset 0x7ffffff0
case_ nobits-dynstr "$sym" sec .dynstr type 8
# code (the frame-pointer check, trampolines, PLT names)
case_ nobits-text "$unw fpcheck $sym" sec .text type 8
case_ text-past-end "$unw fpcheck" sec .text offset 0x7ffffff0
case_ text-addr-wrap "fpcheck $sym" sec .text addr 0 sym mid 0xfffffffffffffffc
case_ nobits-plt "$sym" sec .plt type 8
case_ nobits-rela-plt "$sym" sec .rela.plt type 8
case_ rela-plt-link "$sym" sec .rela.plt link 0xffff
# notes (build-id)
case_ note-huge "$unw $sym" poke .note.gnu.build-id 4 ffffff7f
case_ nobits-note "$unw $sym" sec .note.gnu.build-id type 8
# headers
case_ shoff-past-end "$all" ehdr shoff 0x7ffffff0
case_ shnum-huge "$all" ehdr shnum 0xffff
case_ shstrndx-bad "$all" ehdr shstrndx 0xfff0
case_ nobits-shstrtab "$unw fpcheck $sym" sec .shstrtab type 8
case_ phoff-past-end "$unw $sym" ehdr phoff 0x7ffffff0
case_ load-huge "$unw $sym" phdr 1 filesz 0x7fffffffffffffff
case_ no-sections-note-past-end "$unw $sym" ehdr shoff 0 ehdr shnum 0 ehdr shstrndx 0 \
	phdr 4 offset 0x7ffffff0
case_ dynamic-past-end "$sym" phdr 2 offset 0x7ffffff0
# signal trampolines without CFI (section tramp: two back to back) where
# a crafted file may put them: at address 0 (their rows would start at
# -1; alone, without CFI, the recorder crashed on one), onto .text (sections
# out of address order, overlapping), running into go_sigreturn's CFI
# (.text: hlt, restore_rt, go_sigreturn), at the top of the address space
case_ tramp-addr-0 "$unw" sec tramp addr 0
case_ tramp-addr-0-only "$unw" sec tramp addr 0 sec .eh_frame type 8 sec .text type 8
case_ tramp-on-text "$unw" sec tramp addr .text:addr
case_ tramp-into-cfi "$unw" sec tramp addr .text:addr+2
case_ tramp-addr-top "$unw" sec tramp addr 0xffffffffffffffe0
# a Go binary (.go.buildinfo): the trampolines are searched in all code,
# go_sigreturn's (CFI of a plain function after int3) too
printf '\377 Go buildinf:\010\002' >buildinfo
objcopy --add-section .go.buildinfo=buildinfo prog go
one go "$unw" go
craft go c-go-top sec tramp addr 0xfffffffffffffff0
one go-tramp-addr-top "$unw" c-go-top
craft go c-go-0 sec tramp addr 0
one go-tramp-addr-0 "$unw" c-go-0
# .eh_frame and .debug_frame in one file: .debug_frame fills only what
# .eh_frame leaves uncovered
objcopy --dump-section .debug_frame=df-nocfi dbg-nocfi/prog.debug
objcopy --add-section .debug_frame=df-nocfi prog both
one eh_frame-and-debug_frame "$unw" both
craft prog c-trunc truncate 1500
one truncated "$all" c-trunc

# MiniDebugInfo: .gnu_debugdata holds an xz-compressed ELF file with
# the symbol table (as Fedora and others ship binaries)
nm -f posix --defined-only prog-g | awk '$2 ~ /[Tt]/ {print $1}' >keep
objcopy -S -R .comment --keep-symbols=keep dbg-prog/prog.debug mini-elf
xz -k mini-elf
strip -R .comment --strip-all -o stripped prog-g
objcopy --add-section .gnu_debugdata=mini-elf.xz stripped mini
xz -c "$src" >notelf.xz
head -c 300 "$src" >garbage
objcopy --add-section .gnu_debugdata=notelf.xz stripped mini-notelf
objcopy --add-section .gnu_debugdata=garbage stripped mini-garbage
one mini "debuginfo $sym" mini
one mini-notelf "debuginfo $sym" mini-notelf
one mini-garbage "debuginfo $sym" mini-garbage
craft mini c-mini-nobits sec .gnu_debugdata type 8
one nobits-debugdata "debuginfo $sym" c-mini-nobits
craft mini c-mini-trunc sec .gnu_debugdata size .gnu_debugdata:size-16
one debugdata-truncated "debuginfo $sym" c-mini-trunc
craft mini c-mini-past sec .gnu_debugdata offset 0x7ffffff0
one debugdata-past-end "debuginfo $sym" c-mini-past
{ printf '\001'; cat mini-elf.xz; } >"$corpus/elf/crafted-xz"
{ printf '\002'; cat mini-elf; } >"$corpus/elf/crafted-xz-inner"

# DWARF: in the binary, compressed, and a DWARF cache image
{ printf '\000'; cat prog-g; } >"$corpus/elf/crafted-dwarf"
objcopy --compress-debug-sections=zlib prog-g prog-z
{ printf '\000'; cat prog-z; } >"$corpus/elf/crafted-dwarf-zlib"
craft prog-z c-z-bad poke .debug_info 24 00ff00ff00ff00ff
{ printf '\000'; cat c-z-bad; } >"$corpus/elf/crafted-dwarf-zlib-bad"
craft prog-g c-info-nobits sec .debug_info type 8
{ printf '\000'; cat c-info-nobits; } >"$corpus/elf/crafted-nobits-debug_info"
{ printf '\003'; cat dbg-prog/prog.debug; } >"$corpus/elf/crafted-cache-image"

# a binary and its debug file
pd="$unw debuginfo"
pair debug "$pd" prog dbg-prog/prog.debug
pair debug-cfi "$pd" nocfi dbg-nocfi/prog.debug
pair debug-cfi-sub "$pd" nocfi dbg-nocfi/prog.debug sub
pair debug-crc "$pd" nobid dbg-nobid/prog.debug
pair debug-other-build "$pd" nocfi dbg-other/prog.debug
pair debug-other-crc "$pd" nobid dbg-othernobid/prog.debug
pair debug-is-binary "$pd" nobid nobid
d=dbg-nocfi/prog.debug
craft $d c-d1 sec .debug_frame type 8
pair debug-nobits-debug_frame "$pd" nocfi c-d1
craft $d c-d2 sec .debug_frame offset 0x7ffffff0
pair debug-debug_frame-past-end "$pd" nocfi c-d2
craft $d c-d3 sec .debug_frame size .debug_frame:size-10
pair debug-debug_frame-truncated "$pd" nocfi c-d3
craft $d c-d4 sec .debug_frame offset .debug_info:offset
pair debug-debug_frame-overlap "$pd" nocfi c-d4
objcopy --compress-debug-sections=zlib $d dz
pair debug-zlib "$pd" nocfi dz
# the deflate stream after the 24-byte compression header
craft dz c-d5 poke .debug_frame 24 00ff00ff00ff00ff
pair debug-debug_frame-zlib-bad "$pd" nocfi c-d5
# ch_size (the inflated size): 2^63 - 1
craft dz c-d6 poke .debug_frame 8 ffffffffffffff7f
pair debug-debug_frame-zlib-huge "$pd" nocfi c-d6
craft dz c-d7 poke .debug_info 24 00ff00ff00ff00ff
pair debug-debug_info-zlib-bad "debuginfo" nocfi c-d7
craft $d c-d8 sec .symtab type 8
pair debug-nobits-symtab "$pd" nocfi c-d8
craft $d c-d9 truncate 1200
pair debug-truncated "$pd" nocfi c-d9

# the CFI sections alone, for fuzz_cfi
objcopy --dump-section .eh_frame=eh prog
objcopy --dump-section .debug_frame=df dbg-nocfi/prog.debug
{ printf '\000'; cat eh; } >"$corpus/cfi/crafted-eh_frame"
{ printf '\001'; cat df; } >"$corpus/cfi/crafted-debug_frame"

echo "make-elf-corpus: $(ls "$corpus"/*/crafted-* | wc -l) seeds," \
	"$(cat "$corpus"/*/crafted-* | wc -c) bytes"
