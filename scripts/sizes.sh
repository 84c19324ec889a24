#!/bin/sh
# sizes.sh [ROOT] - the room sizes of src/: no source file over 1200
# lines, no C function over 200 (the CFI opcode interpreter, exec() in
# src/unwind/cfi.c, aside: one switch over DWARF's opcodes). Prints each
# breach as FILE: N lines, or FILE:LINE: FUNCTION: N lines; exit 1 when
# there is one. A function is counted from its opening brace at the start
# of a line to the closing brace at the start of a line (STYLE.md's form).
root=${1:-.}
cd "$root" || exit 2
files=$(find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.js' -o -name '*.html' -o -name '*.sh' \) | sort)
[ -n "$files" ] || { echo "sizes.sh: no sources under $root/src" >&2; exit 2; }
awk -v max_file=1200 -v max_func=200 '
FNR == 1 {
	if (prev_file != "" && prev_lines > max_file) {
		print prev_file ": " prev_lines " lines (at most " max_file ")"
		bad = 1
	}
	in_fn = 0
	is_c = FILENAME ~ /\.c$/
}
{ prev_file = FILENAME; prev_lines = FNR }
is_c && /^\{/ { in_fn = 1; start = FNR; name = last }
is_c && /^\}/ && in_fn {
	n = FNR - start - 1
	fn = name
	sub(/\(.*/, "", fn)
	sub(/.*[ *]/, "", fn)
	if (n > max_func && !(FILENAME == "src/unwind/cfi.c" && fn == "exec")) {
		print FILENAME ":" start ": " fn ": " n " lines (at most " max_func ")"
		bad = 1
	}
	in_fn = 0
}
# the line that names a function: the last line before its brace that
# starts with a letter (a multi-line parameter list continues indented)
/^[A-Za-z_]/ { last = $0 }
END {
	if (prev_lines > max_file) {
		print prev_file ": " prev_lines " lines (at most " max_file ")"
		bad = 1
	}
	exit bad
}' $files
