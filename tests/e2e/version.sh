#!/bin/sh
# version.sh - one version string: scripts/version.sh (the VERSION file,
# plus git's commit when built from a checkout) is what stax --version
# and stax version print, what record and import store in the recording
# (META stax_version), and what stax info shows; a recording from before
# the key existed still reads, and says it does not know.
. "$(dirname "$0")/lib.sh"
require_stax

want=$(sh "$ROOT/scripts/version.sh" 2>"$T/v.err")
base=$(sed -n 1p "$ROOT/VERSION" 2>/dev/null)
case $want in
"$base" | "$base"+git[0-9]*.g[0-9a-f]*) ok "scripts/version.sh starts with VERSION ($want)" ;;
*) fail "scripts/version.sh starts with VERSION" "VERSION '$base', version.sh '$want' $(first_line "$T/v.err")" ;;
esac
# a Debian version: digits first, then alphanumerics and . + ~ only
if echo "$want" | grep -Eq '^[0-9][A-Za-z0-9.+~]*$'; then
	ok "the version is a valid Debian version"
else
	fail "the version is a valid Debian version" "'$want'"
fi

for arg in --version version; do
	got=$(stax $arg 2>"$T/err")
	if [ "$got" = "stax $want" ]; then
		ok "stax $arg prints 'stax $want'"
	else
		fail "stax $arg prints 'stax $want'" "got '$got' $(first_line "$T/err")"
	fi
done

# record stores it; info shows it, as text and JSON
if stax record -q -o "$T/r.data" -- "$PROG/spin-fp" 0.2 >/dev/null 2>"$T/rec.err"; then
	line=$(stax info "$T/r.data" 2>/dev/null | grep '^written by:')
	if [ "$line" = "written by:  stax $want" ]; then
		ok "info shows the version record wrote"
	else
		fail "info shows the version record wrote" "'$line'"
	fi
	stax info --json "$T/r.data" >"$T/info.json" 2>/dev/null
	if grep -q "\"stax_version\":\"$want\"" "$T/info.json"; then
		ok "info --json has stax_version"
	else
		fail "info --json has stax_version" "$(head -c 300 "$T/info.json")"
	fi
else
	fail "record" "$(first_line "$T/rec.err")"
fi

# import stores it too
perf_data=$ROOT/tests/fuzz/corpus/perfdata/seed-perf-g.data
if stax import "$perf_data" -o "$T/imp.data" 2>"$T/imp.err"; then
	line=$(stax info "$T/imp.data" 2>/dev/null | grep '^written by:')
	if [ "$line" = "written by:  stax $want" ]; then
		ok "info shows the version import wrote"
	else
		fail "info shows the version import wrote" "'$line'"
	fi
else
	fail "import $perf_data" "$(first_line "$T/imp.err")"
fi

# a recording from before stax_version (committed fuzz seed) still reads
old=$ROOT/tests/fuzz/corpus/recording/seed-spin.data
if stax info "$old" >"$T/old.txt" 2>"$T/old.err" && grep -q '^written by:  not stored' "$T/old.txt" &&
	stax info --json "$old" 2>/dev/null | grep -q '"stax_version":null'; then
	ok "a recording without stax_version reads, version not stored"
else
	fail "a recording without stax_version reads, version not stored" \
		"$(grep '^written by' "$T/old.txt") $(first_line "$T/old.err")"
fi

# the exporters name the same version
if stax export --format speedscope "$T/r.data" 2>/dev/null | grep -q "\"exporter\":\"stax $want\""; then
	ok "speedscope export names stax $want"
else
	fail "speedscope export names stax $want" "no exporter field with it"
fi
done_testing
