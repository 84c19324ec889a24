#!/bin/sh
# damage.sh - honest partial data: every view of a recording that is
# damaged (a flipped bit in a chunk's payload, header or kind byte), cut,
# still being written, killed, or that lost or throttled more than 1% of
# its samples still answers and prints "stax: warning: ..." saying so;
# a file that is not a recording gets one error line from every command.
#
# callgraph-fp (tests/programs/callgraph.c): leaf_b has ~75% of samples.
# Chunks (docs/FORMAT.md): a 24-byte header (u16 kind at +4, u32
# comp_size at +16) and comp_size bytes of payload, the last 16 of them
# the checksum frame.
# stax-test: seconds=12
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v python3 >/dev/null 2>&1; then
	skip "damaged recordings" "python3 is not installed (it edits the files)"
	done_testing
fi

G=$T/good.data
stax record -q -o "$G" -- "$PROG/callgraph-fp" 2 >/dev/null 2>"$T/rec.err" || {
	fail "record callgraph-fp" "$(first_line "$T/rec.err")"
	done_testing
}
good_n=$(stax flame --folded "$G" 2>/dev/null | samples /dev/stdin)

# chunks FILE: "offset kind comp_size flags" per chunk
cat >"$T/chunks.py" <<'EOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 16
while off + 24 <= len(d):
    magic, kind, flags, seq, raw, comp, check = struct.unpack_from("<IHHIIII", d, off)
    print(off, kind, comp, flags)
    off += 24 + comp
EOF
python3 "$T/chunks.py" "$G" >"$T/chunks"
nchunks=$(wc -l <"$T/chunks")
unsummed=$(awk '$4 % 2 == 0' "$T/chunks" | wc -l)
if [ "$nchunks" -ge 5 ] && [ "$unsummed" -eq 0 ]; then
	ok "the recording has $nchunks chunks, each with a checksum (flags bit 0)"
else
	fail "every chunk has a checksum" "$nchunks chunks, $unsummed without: $(tr '\n' '|' <"$T/chunks")"
fi
# the data chunk in the middle
set -- $(awk '$2 == 1' "$T/chunks" | sed -n "$(( $(awk '$2 == 1' "$T/chunks" | wc -l) / 2 + 1 ))p")
MID=$1 MIDCOMP=$3

# flip FILE OUT AT XOR: OUT is FILE with byte AT xor XOR
flip() {
	python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[int(sys.argv[3])] ^= int(sys.argv[4])
open(sys.argv[2], "wb").write(d)' "$@"
}

# views FILE PATTERN LABEL: every view of FILE exits 0, answers, and warns
# (a "stax: warning: " line matching the ERE PATTERN on stderr)
# serve is one of the views, where something can connect to it
LOOPBACK_WHY=$(loopback_why)
[ -z "$LOOPBACK_WHY" ] || skip "serve of the damaged recordings" "$LOOPBACK_WHY"
views() {
	_f=$1 _pat=$2 _label=$3 _bad=""
	for v in top "flame --folded" threads info script doctor "export --format folded" \
		"annotate leaf_b" "diff $G" "wait --for-samples 1"; do
		# shellcheck disable=SC2086
		stax $v "$_f" >"$T/v.out" 2>"$T/v.err"
		rc=$?
		if crashed "$T/v.err" "$rc" || [ "$rc" -ne 0 ]; then
			_bad="$_bad [$v: status $rc: $(first_line "$T/v.err")]"
		elif [ "$v" != "wait --for-samples 1" ] && [ ! -s "$T/v.out" ]; then
			_bad="$_bad [$v: no answer]"
		elif ! grep -E "^stax: warning: .*$_pat" "$T/v.err" >/dev/null; then
			_bad="$_bad [$v: no warning /$_pat/: $(tr '\n' '|' <"$T/v.err" | cut -c1-200)]"
		elif grep -q 'newer stax' "$T/v.err"; then
			_bad="$_bad [$v: blames a newer stax: $(first_line "$T/v.err")]"
		fi
	done
	if [ -n "$LOOPBACK_WHY" ]; then
		: # serve is left out, said once below
	elif ! command -v curl >/dev/null 2>&1; then
		_bad="$_bad [serve: curl is missing]"
	else
		: >"$T/s.err"
		"$STAX" serve "$_f" --port 0 2>"$T/s.err" &
		_spid=$!
		bg_add "$_spid"
		_port=""
		wait_for '_port=$(sed -n "s/.*127\.0\.0\.1:\([0-9]*\).*/\1/p" "$T/s.err"); [ -n "$_port" ]' 10
		if [ -z "$_port" ]; then
			_bad="$_bad [serve: did not start: $(first_line "$T/s.err")]"
		else
			curl -s -m 20 "http://127.0.0.1:$_port/api/info" >"$T/s.json"
			if ! PAT=$_pat python3 -c '
import json, os, re, sys
d = json.load(open(sys.argv[1]))
assert any(re.search(os.environ["PAT"], w) for w in d["warnings"]), d["warnings"]
assert d["info"]["samples"] > 0' "$T/s.json" 2>"$T/s.perr"; then
				_bad="$_bad [serve /api/info: $(tail -n 1 "$T/s.perr" | cut -c1-200)]"
			elif ! grep -Eq "^stax: warning: .*$_pat" "$T/s.err"; then
				_bad="$_bad [serve: no warning on its terminal: $(first_line "$T/s.err")]"
			fi
		fi
		kill "$_spid" 2>/dev/null
		wait "$_spid" 2>/dev/null
	fi
	if [ -z "$_bad" ]; then
		ok "$_label: every view answers and warns"
	else
		fail "$_label: every view answers and warns" "$_bad"
	fi
}

# top_samples FILE: the samples top counts (its first row's share and count)
folded_n() { stax flame --folded "$1" 2>/dev/null | samples /dev/stdin; }

# --- one flipped bit in the middle of a data chunk's payload ----------------
flip "$G" "$T/payload.data" $((MID + 24 + MIDCOMP / 2)) 1
views "$T/payload.data" "1 damaged chunk at offset $MID " "a bit flipped in a chunk's payload"
n=$(folded_n "$T/payload.data")
if [ "$n" -lt "$good_n" ] && [ "$n" -ge $((good_n * 3 / 4)) ]; then
	ok "a flipped payload bit costs one chunk: $n of $good_n samples read"
else
	fail "a flipped payload bit costs one chunk" "$n of $good_n samples read"
fi
stax info "$T/payload.data" >"$T/info.txt" 2>/dev/null
if grep -q "^damaged: *1 chunk .*offset $MID" "$T/info.txt"; then
	ok "info counts the damaged chunk"
else
	fail "info counts the damaged chunk" "$(grep -m1 '^damaged' "$T/info.txt")"
fi

# --- the chunk header: its size field and its kind byte ---------------------
flip "$G" "$T/size.data" $((MID + 17)) 4
views "$T/size.data" "damaged chunk at offset $MID " "a bit flipped in a chunk header's size"
flip "$G" "$T/kind.data" $((MID + 4)) 2
views "$T/kind.data" "damaged chunk at offset $MID .*checksum" "a bit flipped in a chunk's kind byte (damage, not a newer format)"
# the symbols chunk: the rest reads, symbols come from the binaries
set -- $(awk '$2 == 2' "$T/chunks" | head -n 1)
flip "$G" "$T/sym.data" $(($1 + 24 + $3 / 2)) 8
views "$T/sym.data" "damaged chunk at offset $1 " "a bit flipped in the symbols chunk"

# --- cut inside a chunk -------------------------------------------------------
head -c $((MID + 24 + MIDCOMP / 2)) "$G" >"$T/cut.data"
views "$T/cut.data" "truncated.*incomplete chunk" "a recording cut inside a chunk"

# --- not a recording -----------------------------------------------------------
head -c 4096 /dev/urandom >"$T/garbage.data"
printf 'STAXREC\000' >"$T/hdronly.data" # the magic, then nothing
bad=""
for v in top "flame --folded" threads info script doctor "export --format folded" "annotate leaf_b" \
	"diff $G" serve "import -o $T/imp.data" "wait --for-samples 1"; do
	# shellcheck disable=SC2086
	stax $v "$T/garbage.data" >/dev/null 2>"$T/g.err"
	rc=$?
	if [ "$rc" -eq 0 ] || crashed "$T/g.err" "$rc" || ! one_line_error "$T/g.err" ||
		! grep -q "garbage.data is not a stax recording or perf.data (" "$T/g.err"; then
		bad="$bad [$v: status $rc: $(tr '\n' '|' <"$T/g.err" | cut -c1-160)]"
	fi
done
stax info "$T/hdronly.data" >/dev/null 2>"$T/g.err"
rc=$?
if [ "$rc" -eq 0 ] || ! one_line_error "$T/g.err" || ! grep -q "is not a stax recording or perf.data (" "$T/g.err"; then
	bad="$bad [8 bytes of magic: status $rc: $(first_line "$T/g.err")]"
fi
if [ -z "$bad" ]; then
	ok "a file that is not a recording: 'FILE is not a stax recording or perf.data (...)' from every command"
else
	fail "a file that is not a recording: one error line from every command" "$bad"
fi

# --- a recording that lost (or throttled away) more than 1% of its samples ----
# Its END chunk is replaced by a data chunk with a LOST record (type 8:
# time, count, kind 1 = samples) of 10% of the samples, or a THROTTLE
# and an UNTHROTTLE record (type 9: time, 1 or 0) at the first and the
# last sample and a cpu_ns META of twice the CPU time (so the rate would
# have taken as many samples again), then END again: chunks as stax wrote
# them before checksums (flags 0), compressed with the libzstd stax uses.
cat >"$T/append.py" <<'EOF'
import ctypes, ctypes.util, struct, sys
src, dst, what, n = sys.argv[1], sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4:]]
d = open(src, "rb").read()
z = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
z.ZSTD_compressBound.restype = ctypes.c_size_t
z.ZSTD_compress.restype = ctypes.c_size_t
z.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int]
def chunk(kind, seq, raw):
    cap = z.ZSTD_compressBound(len(raw))
    buf = ctypes.create_string_buffer(cap)
    c = z.ZSTD_compress(buf, cap, raw, len(raw), 3)
    return struct.pack("<IHHIIII", 0x4b4e4843, kind, 0, seq, len(raw), c,
                       len(raw) ^ c ^ seq ^ 0x5354aa55) + buf.raw[:c]
def rec(t, payload):
    payload += b"\0" * (-len(payload) % 8)
    return struct.pack("<HHI", t, 0, 8 + len(payload)) + payload
def meta(k, v):
    k, v = k.encode(), v.encode()
    return rec(1, struct.pack("<H", len(k)) + k + struct.pack("<H", len(v)) + v)
off, seq, end = 16, 0, None
while off + 24 <= len(d):
    _, kind, _, s, raw, comp, _ = struct.unpack_from("<IHHIIII", d, off)
    if kind == 3:
        end, seq = off, s
    off += 24 + comp
if what == "lost":
    recs = rec(8, struct.pack("<QQII", 1, n[0], 1, 0))
else:
    recs = (rec(9, struct.pack("<QII", n[0], 1, 0)) + rec(9, struct.pack("<QII", n[1], 0, 0)) +
            meta("cpu_ns", str(n[2])))
open(dst, "wb").write(d[:end] + chunk(1, seq, recs) + chunk(3, seq + 1, b""))
EOF
span=$(stax script "$G" --json 2>/dev/null | python3 -c '
import json, sys
t = [int(s["time_ns"]) for s in json.load(sys.stdin)["samples"]]
print(min(t), max(t))')
cpu2=$(stax info "$G" --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(int(2e9 * d["samples"] / d["effective_hz"]))')
# shellcheck disable=SC2086
if python3 "$T/append.py" "$G" "$T/lost.data" lost $((good_n / 10)) 2>"$T/py.err" &&
	python3 "$T/append.py" "$G" "$T/throttled.data" throttle $span "$cpu2" 2>>"$T/py.err"; then
	views "$T/lost.data" "$((good_n / 10)) samples or other records were lost \(9\.[0-9]%" \
		"a recording that lost 10% of its samples"
	views "$T/throttled.data" "throttled sampling 1 time, for [0-9.]+ ms in all: about [0-9]+ samples \((4[5-9]|5[0-5])\.[0-9]%\) were not taken" \
		"a recording that throttling cost half its samples"
	python3 "$T/append.py" "$G" "$T/lost1.data" lost $((good_n / 200)) 2>>"$T/py.err"
	stax top "$T/lost1.data" >/dev/null 2>"$T/l1.err"
	if [ -s "$T/l1.err" ]; then
		fail "0.5% lost: no warning" "$(first_line "$T/l1.err")"
	else
		ok "0.5% lost: no warning (the limit is 1%)"
	fi
else
	fail "lost and throttled recordings: setup" "$(tail -n 1 "$T/py.err")"
fi

# --- still being written, then killed -------------------------------------------
L=$T/live.data
"$STAX" record -o "$L" -- "$PROG/spin-fp" 30 >"$T/spin.pid" 2>"$T/live.err" &
REC=$!
bg_add "$REC"
wait_for "[ -s '$T/spin.pid' ]" 10
SPIN=$(cat "$T/spin.pid" 2>/dev/null)
[ -n "$SPIN" ] && bg_add "$SPIN"
if ! stax wait "$L" --for-samples 100 --timeout 60 2>"$T/w.err"; then
	fail "a recording being written" "wait failed: $(first_line "$T/w.err")"
else
	if grep -q warning "$T/w.err"; then
		fail "wait on a growing recording: no warning (that is what it waits for)" "$(first_line "$T/w.err")"
	else
		ok "wait on a growing recording: no warning (that is what it waits for)"
	fi
	stax top "$L" >"$T/l.out" 2>"$T/l.err"
	stax info "$L" >"$T/li.out" 2>/dev/null
	if grep -q "^stax: warning: .*live.data is still being recorded" "$T/l.err" && grep -q spin_loop "$T/l.out" &&
		grep -q "^file: .*still being recorded" "$T/li.out"; then
		ok "a recording being written: top answers and warns it is still being recorded"
	else
		fail "a recording being written: top warns it is still being recorded" "$(first_line "$T/l.err") / $(head -n 1 "$T/li.out")"
	fi
	kill -9 "$REC" 2>/dev/null
	wait "$REC" 2>/dev/null
	stax top "$L" >"$T/k.out" 2>"$T/k.err"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q "^stax: warning: .*live.data is truncated" "$T/k.err" && grep -q spin_loop "$T/k.out"; then
		ok "the recorder killed: top answers and warns the recording is truncated"
	else
		fail "the recorder killed: top warns the recording is truncated" "status $rc: $(first_line "$T/k.err")"
	fi
	stax wait "$L" --for-samples 100000000 --timeout 60 >/dev/null 2>"$T/kw.err"
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q "stopped growing" "$T/kw.err" && grep -q "^stax: warning: .*truncated" "$T/kw.err"; then
		ok "wait on a killed recording: gives up (its recorder is gone) and warns"
	else
		fail "wait on a killed recording gives up" "status $rc: $(tr '\n' '|' <"$T/kw.err" | cut -c1-200)"
	fi
fi
[ -n "$SPIN" ] && kill -9 "$SPIN" 2>/dev/null

done_testing
