#!/bin/sh
# export.sh - stax flame --svg and stax export (pprof, speedscope, folded,
# chrome) on a recording of callgraph-fp, checked by the tools that read
# those formats: xmllint, go tool pprof, speedscope's JSON schema and
# speedscope itself in headless chromium.
#
# callgraph-fp (tests/programs/callgraph.c): main;a;b;leaf_b 75%,
# main;a;c;leaf_c 25%.
# stax-test: seconds=10
. "$(dirname "$0")/lib.sh"
require_stax

D=$T/cg.data
stax record -o "$D" -- "$PROG/callgraph-fp" 1 >/dev/null 2>"$T/rec.err" || {
	fail "record callgraph-fp" "$(first_line "$T/rec.err")"
	done_testing
}

# ---- flame --svg ----
if stax flame -i "$D" --svg -o "$T/f.svg" 2>"$T/svg.err"; then
	if ! command -v xmllint >/dev/null 2>&1; then
		skip "flame --svg is well-formed XML" "xmllint is not installed (apt-get install libxml2-utils)"
	elif xmllint --noout "$T/f.svg" 2>"$T/xml.err"; then
		ok "flame --svg is well-formed XML ($(wc -c <"$T/f.svg") bytes)"
	else
		fail "flame --svg is well-formed XML" "$(first_line "$T/xml.err")"
	fi
	svg_frames "$T/f.svg" >"$T/f.frames"
	if grep -q '^leaf_b (' "$T/f.frames" && grep -q '<script' "$T/f.svg" &&
	   ! grep -Eq '(href|src)="?https?:' "$T/f.svg"; then
		ok "flame --svg has frames, its script and no outside assets"
	else
		fail "flame --svg has frames, its script and no outside assets" "leaf_b frame: $(grep -c '^leaf_b (' "$T/f.frames")"
	fi
	# leaf_b's frame: "leaf_b (N samples, P%)"
	pct=$(sed -n 's/^leaf_b ([0-9]* samples, \([0-9.]*\)%).*/\1/p' "$T/f.frames" | head -n 1)
	if [ -n "$pct" ] && between "$pct" 65 85; then
		ok "flame --svg: leaf_b is $pct% (expected 75)"
	else
		fail "flame --svg: leaf_b share" "got '$pct', expected 65-85"
	fi
	# Per-frame markup is small: no <title> (one per frame made Chromium
	# take 8-13 s instead of 1 s to open 16,700 frames; the details come
	# from the names table), and a <text> label only in frames wide
	# enough for 3 characters (6 + 3 * 6.6 pixels)
	# (a frame within rounding of that width may go either way)
	labels=$(awk '/^<g class="f" / { w = $0; sub(/.* width="/, "", w); sub(/".*/, "", w)
		if (w + 0 > 25.78 && w + 0 < 25.82) next
		if ((w + 0 >= 25.8) != /<text /) bad++; else good++ } END { print good + 0, bad + 0 }' "$T/f.svg")
	if ! grep -q '<title' "$T/f.svg" && [ "${labels#* }" = 0 ] && [ "${labels% *}" -ge 5 ]; then
		ok "flame --svg: no <title> elements, labels only where they fit (${labels% *} frames)"
	else
		fail "flame --svg: compact frames" "$(grep -c '<title' "$T/f.svg") <title> elements; frames labelled right, wrong: $labels"
	fi
	# the script: hovering leaf_b shows the details svg_frames reads from
	# the file, in the details line and a tooltip; zoom and search work
	if browser_setup; then
		want=$(grep '^leaf_b (' "$T/f.frames" | head -n 1 | cut -f1)
		browser_check "flame --svg in headless chromium" "$T/sv.out" svg "$T/f.svg" leaf_b "$want"
	else
		skip "flame --svg in headless chromium" "$BROWSER_WHY"
	fi
else
	fail "flame --svg -o" "$(first_line "$T/svg.err")"
fi
# merging: at a 30% threshold leaf_c (25%) and its callers fold away
stax flame -i "$D" --svg --threshold 30 >"$T/m.svg" 2>/dev/null
merged=$(sed -n 's/.* \([0-9]*\) merged (narrower than.*/\1/p' "$T/m.svg")
svg_frames "$T/m.svg" >"$T/m.frames"
if [ -n "$merged" ] && [ "$merged" -ge 2 ] && ! grep -q '^leaf_c (' "$T/m.frames" && grep -q '^leaf_b (' "$T/m.frames"; then
	ok "flame --svg --threshold 30 merges leaf_c's subtree ($merged frames merged)"
else
	fail "flame --svg --threshold 30 merges narrow frames" "merged '$merged', leaf_c frames $(grep -c '^leaf_c (' "$T/m.frames")"
fi

# ---- pprof ----
if stax export -i "$D" --format pprof -o "$T/p.pb.gz" 2>"$T/pp.err"; then
	if [ "$(head -c 2 "$T/p.pb.gz" | od -An -tx1 | tr -d ' ')" = "1f8b" ]; then
		ok "export pprof is gzip"
	else
		fail "export pprof is gzip" "no gzip magic"
	fi
	if ! command -v go >/dev/null 2>&1; then
		skip "go tool pprof -top reads it" "go is not installed (apt-get install golang-go)"
	elif HOME=$T GOCACHE=$T/gocache timeout 60 go tool pprof -top "$T/p.pb.gz" >"$T/top.txt" 2>"$T/top.err"; then
		# the first row after the "flat flat% ..." header
		first=$(awk 'h { print $NF; exit } /flat%/ { h = 1 }' "$T/top.txt")
		flat=$(awk 'h { sub(/%/, "", $2); print $2; exit } /flat%/ { h = 1 }' "$T/top.txt")
		if [ "$first" = "leaf_b" ] && between "$flat" 65 85; then
			ok "go tool pprof -top: leaf_b first with $flat% flat"
		else
			fail "go tool pprof -top: leaf_b first" "first '$first' at '$flat'%"
		fi
		if grep -q "Type: cpu" "$T/top.txt" && grep -q "leaf_c" "$T/top.txt"; then
			ok "go tool pprof -top: cpu time type, leaf_c listed"
		else
			fail "go tool pprof -top: cpu type and leaf_c" "$(head -n 3 "$T/top.txt" | tr '\n' '|')"
		fi
	else
		fail "go tool pprof -top reads it" "$(first_line "$T/top.err")"
	fi
else
	fail "export --format pprof" "$(first_line "$T/pp.err")"
fi

# pprof: each mapping's build-id is its own file's (a system-wide
# recording carries them; the writer once gave every mapping the last one's)
if [ "$(id -u)" -eq 0 ] && command -v go >/dev/null 2>&1 &&
	stax record -q -a --duration 0.5 -o "$T/a.data" >/dev/null 2>"$T/a.err" &&
	stax export -i "$T/a.data" --format pprof -o "$T/a.pb.gz" 2>>"$T/a.err" &&
	HOME=$T GOCACHE=$T/gocache timeout 60 go tool pprof -raw "$T/a.pb.gz" >"$T/a.raw" 2>>"$T/a.err"; then
	good=0 bad=""
	for m in $(awk '/^Mappings/ { on = 1; next } on && NF >= 4 && $3 ~ /^\// && $4 ~ /^[0-9a-f]+$/ { print $3 "=" $4 }' "$T/a.raw"); do
		f=${m%=*} id=${m#*=}
		[ -f "$f" ] || continue
		want=$(readelf -n "$f" 2>/dev/null | sed -n 's/^ *Build ID: *//p' | head -n 1)
		[ -n "$want" ] || continue
		if [ "$want" = "$id" ]; then good=$((good + 1)); else bad="$bad $f: $id, readelf $want;"; fi
	done
	if [ "$good" -ge 3 ] && [ -z "$bad" ]; then
		ok "pprof: $good mappings of a system-wide recording, each with its own file's build-id"
	else
		fail "pprof: each mapping's build-id is its file's" "$good right;$bad"
	fi
fi

# ---- inline frames and source lines (tests/programs/inline.c) ----
# gcc -O2 -g -no-pie -o inline inline.c: main;outer_work;mix_step;hot_kernel
# with mix_step and hot_kernel inlined into outer_work (~75% of samples)
PP() { HOME=$T GOCACHE=$T/gocache timeout 60 go tool pprof "$@"; }
if ! gcc -O2 -g -no-pie -I"$ROOT/tests/programs" -o "$T/inline" "$ROOT/tests/programs/inline.c" 2>"$T/cc.err"; then
	skip "inline frames in exports" "cannot build inline.c: $(first_line "$T/cc.err")"
elif ! stax record -q -o "$T/i.data" -- "$T/inline" 1 >/dev/null 2>"$T/irec.err"; then
	fail "record inline" "$(first_line "$T/irec.err")"
else
	# the SVG: inlined frames in their own colour, marked, in the legend
	stax flame -i "$T/i.data" --svg -o "$T/i.svg" 2>/dev/null
	svg_frames "$T/i.svg" >"$T/i.frames"
	fill_of() { sed -n "s/^$1 .*fill=rgb(\([0-9,]*\))\$/\1/p" "$T/i.frames" | head -n 1; }
	hk=$(fill_of 'hot_kernel \[inlined\]')
	ow=$(fill_of 'outer_work')
	# inlined: yellow-green (G >= 200, B 60-100); user code: B <= 55
	if grep -q '^hot_kernel \[inlined\] (.*[[:space:]]t=i[[:space:]]' "$T/i.frames" &&
	   grep -q '^mix_step \[inlined\] (.*[[:space:]]t=i[[:space:]]' "$T/i.frames" &&
	   echo "$hk" | awk -F, '{ exit !($2 >= 200 && $3 >= 60 && $3 <= 100) }' &&
	   echo "$ow" | awk -F, '{ exit !($3 <= 55) }' && grep -q '<text x="[0-9]*" y="57">inlined</text>' "$T/i.svg"; then
		ok "flame --svg: inlined hot_kernel and mix_step marked, own colour (rgb($hk) vs outer_work rgb($ow)), in the legend"
	else
		fail "flame --svg: inlined frames in their own colour" "hot_kernel '$hk', outer_work '$ow', legend $(grep -c '>inlined</text>' "$T/i.svg")"
	fi
	# pprof: one Location for the inlined chain, Lines innermost first,
	# with the lines addr2line -i gives for that address
	stax export -i "$T/i.data" --format pprof -o "$T/i.pb.gz" 2>"$T/ipp.err"
	if ! command -v go >/dev/null 2>&1; then
		skip "pprof inline frames" "go is not installed (apt-get install golang-go)"
	elif PP -raw "$T/i.pb.gz" >"$T/raw.txt" 2>"$T/raw.err" && PP -traces "$T/i.pb.gz" >"$T/tr.txt" 2>>"$T/raw.err" &&
	     PP -top -lines "$T/i.pb.gz" >"$T/lines.txt" 2>>"$T/raw.err"; then
		# "N: 0xADDR M=1 hot_kernel FILE:LINE s=0" then indented Lines
		addr=$(sed -n 's/^ *[0-9]*: \(0x[0-9a-f]*\) M=[0-9]* hot_kernel .*/\1/p' "$T/raw.txt" | head -n 1)
		chain=$(awk -v a="$addr" '$2 == a { on = 1; print $4, $5; next } on && /^  +[^ 0-9]/ && NF == 3 { print $1, $2; next } { on = 0 }' "$T/raw.txt" |
			sed 's|[^ ]*/||' | tr '\n' ';')
		want=$(addr2line -i -f -e "$T/inline" "$addr" 2>/dev/null | paste - - | awk '{ sub(/.*\//, "", $2); sub(/ .*/, "", $2); print $1, $2 }' | tr '\n' ';')
		if [ -n "$addr" ] && [ "$chain" = "$want" ] && echo "$chain" | grep -q '^hot_kernel inline.c:[0-9]*;mix_step inline.c:[0-9]*;outer_work inline.c:[0-9]*;$'; then
			ok "pprof: the Location at $addr has Lines $chain as addr2line -i"
		else
			fail "pprof: inline Lines of one Location" "at '$addr': '$chain', addr2line -i: '$want'"
		fi
		first=$(awk 'h { print $6, $7, $8; exit } /flat%/ { h = 1 }' "$T/lines.txt")
		if grep -q 'mix_step (inline)' "$T/tr.txt" && echo "$first" | grep -q '^hot_kernel .*/inline.c:[0-9]* (inline)$'; then
			ok "go tool pprof -traces shows mix_step (inline); -top -lines puts '$first' first"
		else
			fail "go tool pprof -traces/-lines inline frames" "first '$first', traces: $(grep -c '(inline)' "$T/tr.txt") inline lines"
		fi
	else
		fail "go tool pprof -raw/-traces/-lines read the inline profile" "$(first_line "$T/raw.err")"
	fi
	# speedscope: frames name their source file, and lines with --lines
	# (one frame per line of hot_kernel: one of them is the hot address's)
	wl=""
	[ -n "${addr:-}" ] && wl=$(addr2line -e "$T/inline" "$addr" 2>/dev/null | sed 's/.*://; s/ .*//')
	stax export -i "$T/i.data" --format speedscope -o "$T/is.json" 2>/dev/null
	stax export -i "$T/i.data" --format speedscope --lines -o "$T/isl.json" 2>/dev/null
	r=$(node -e '
	const fs = require("fs");
	const a = JSON.parse(fs.readFileSync(process.argv[1], "utf8")), b = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
	const f = a.shared.frames.find((x) => x.name === "hot_kernel") || {};
	const l = b.shared.frames.filter((x) => x.name === "hot_kernel" && x.line > 0).map((x) => String(x.line));
	const w = process.argv[3];
	console.log(/\/inline\.c$/.test(f.file || "") ? "file" : "nofile:" + f.file,
	  !l.length ? "noline" : "line:" + (l.includes(w) ? w : w === "?" ? l[0] : l.join(",")));
	' "$T/is.json" "$T/isl.json" "${wl:-?}" 2>&1)
	if [ "$r" = "file line:$wl" ] || { [ -z "$wl" ] && echo "$r" | grep -q '^file line:[0-9]'; }; then
		ok "speedscope frames: hot_kernel's file is inline.c; with --lines its line ($r)"
	else
		fail "speedscope frames with file and line" "got '$r'"
	fi
fi

# ---- folded = flame --folded ----
stax export -i "$D" --format folded -o "$T/e.folded" 2>/dev/null
stax flame -i "$D" --folded >"$T/f.folded" 2>/dev/null
if [ -s "$T/e.folded" ] && cmp -s "$T/e.folded" "$T/f.folded"; then
	ok "export folded = flame --folded ($(wc -l <"$T/e.folded") stacks)"
else
	fail "export folded = flame --folded" "files differ or are empty"
fi

# ---- chrome trace ----
if stax export -i "$D" --format chrome -o "$T/c.json" 2>"$T/c.err"; then
	# share of leaf_b time among the leaves, from the X slices
	s=$(node -e '
	const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	let b = 0, c = 0, m = 0;
	for (const e of d.traceEvents) {
	  if (e.ph !== "X") continue;
	  if (e.name === "leaf_b") b += e.dur; else if (e.name === "leaf_c") c += e.dur; else if (e.name === "main") m += e.dur;
	}
	console.log((100 * b / (b + c)).toFixed(1), m > 0 && d.traceEvents.some((e) => e.ph === "M") ? 1 : 0);' "$T/c.json" 2>&1)
	set -- $s
	if [ "${2:-0}" = 1 ] && between "$1" 65 85; then
		ok "export chrome: valid JSON, leaf_b $1% of leaf time, thread names"
	else
		fail "export chrome" "got '$s'"
	fi
else
	fail "export --format chrome" "$(first_line "$T/c.err")"
fi

# ---- speedscope ----
stax export -i "$D" --format speedscope -o "$T/s.json" 2>"$T/s.err" || fail "export --format speedscope" "$(first_line "$T/s.err")"
if browser_setup; then
	SCHEMA=$NPM_DIR/node_modules/speedscope/dist/release/file-format-schema.json
	if [ ! -f "$SCHEMA" ]; then
		fail "speedscope file matches the published schema" "the speedscope package has no $SCHEMA"
	elif node "$BROWSER" schema "$SCHEMA" "$T/s.json" >"$T/v.out" 2>&1; then
		ok "speedscope file matches speedscope's file-format-schema.json"
	else
		fail "speedscope file matches the published schema" "$(first_line "$T/v.out")"
	fi
	# the page is served over 127.0.0.1 (tests/e2e/browser.js)
	why=$(loopback_why)
	if [ -n "$why" ]; then
		skip "speedscope loads the file in headless chromium" "$why"
	else
		browser_check "speedscope loads the file in headless chromium without errors" "$T/ss.out" \
			speedscope "$NPM_DIR/node_modules/speedscope/dist/release" "$T/s.json" "callgraph-fp (pid"
	fi
else
	skip "speedscope schema and browser checks" "$BROWSER_WHY"
fi

# ---- errors ----
stax export -i "$D" --format svgz >/dev/null 2>"$T/e1.err"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/e1.err"; then
	ok "export --format svgz: one-line error"
else
	fail "export --format svgz: one-line error" "status $rc: $(first_line "$T/e1.err")"
fi
stax export -i "$T/missing.data" --format pprof -o "$T/x.pb.gz" >/dev/null 2>"$T/e2.err"
rc=$?
if [ "$rc" -eq 1 ] && one_line_error "$T/e2.err" && ! crashed "$T/e2.err" "$rc"; then
	ok "export of a missing file: one-line error"
else
	fail "export of a missing file: one-line error" "status $rc: $(first_line "$T/e2.err")"
fi

done_testing
