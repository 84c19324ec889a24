#!/bin/sh
# import_meta.sh - stax import ends its recording as stax record does
# (docs/FORMAT.md, META keys): every META of the first chunk is written
# again in the last chunk before END, so a damaged first chunk does not
# take the command, the event and the version with it.
#
# A perf.data of callgraph-fp (perf record -g), imported; then one bit
# flipped in the middle of the first chunk's payload (its checksum
# fails, readers skip it): stax info must still name the command
# (callgraph-fp), the event (cpu-clock), the stax that wrote it, and a
# duration.
# stax-test: seconds=9
. "$(dirname "$0")/lib.sh"
require_stax
if ! command -v perf >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	skip "import repeats META at the end" "needs perf and python3"
	done_testing
fi
if ! perf record -q -e cpu-clock -g -o "$T/p.data" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/perf.err"; then
	skip "import repeats META at the end" "perf record failed: $(first_line "$T/perf.err")"
	done_testing
fi
if ! stax import -q "$T/p.data" -o "$T/i.data" 2>"$T/err"; then
	fail "import a perf.data" "$(first_line "$T/err")"
	done_testing
fi
stax info "$T/i.data" >"$T/good.info" 2>&1
python3 -c '
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
magic, kind, flags, seq, raw, comp, check = struct.unpack_from("<IHHIIII", d, 16)
d[16 + 24 + comp // 2] ^= 1
open(sys.argv[2], "wb").write(d)' "$T/i.data" "$T/flip.data"
stax info "$T/flip.data" >"$T/flip.info" 2>"$T/flip.err"
if grep -q 'damaged chunk at offset 16 ' "$T/flip.err"; then
	ok "the first chunk, one bit flipped, is reported damaged and skipped"
else
	fail "the first chunk, one bit flipped, is reported damaged" "$(first_line "$T/flip.err")"
fi
for key in command event; do
	want=$(grep "^$key:" "$T/good.info" | sed 's/,.*//')
	got=$(grep "^$key:" "$T/flip.info" | sed 's/,.*//')
	case $key in command) pat=callgraph-fp ;; event) pat=cpu-clock ;; esac
	if [ -n "$got" ] && [ "$got" = "$want" ] && printf '%s' "$got" | grep -q "$pat"; then
		ok "with the first chunk damaged, info still has the $key ($(printf "%s" "$got" | sed "s/^[a-z]*: *//" | cut -c1-60))"
	else
		fail "with the first chunk damaged, info still has the $key" "got '$got', intact file '$want'"
	fi
done
if grep -q '^written by: *stax ' "$T/flip.info"; then
	ok "with the first chunk damaged, info still names the stax that wrote it"
else
	fail "with the first chunk damaged, info still names the stax that wrote it" "$(grep '^written by' "$T/flip.info")"
fi
d=$(grep '^duration:' "$T/flip.info" | awk '{print $2}')
if between "${d:-0}" 0.001 100000; then
	ok "with the first chunk damaged, info still has the duration ($d s)"
else
	fail "with the first chunk damaged, info still has the duration" "'$(grep '^duration:' "$T/flip.info")'"
fi
done_testing
