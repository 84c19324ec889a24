# lib.sh - helpers for the end-to-end tests (POSIX sh; dash is fine).
#
# Each tests/e2e/NAME.sh starts with
#     . "$(dirname "$0")/lib.sh"
# and prints one line per check, counted by tests/run.sh:
#     ok - NAME: check            not ok - NAME: check: why
#     skip - NAME: check: why     (only for what the machine lacks)
# It exits 1 when a check failed. Sampling is statistical: assert shares
# with honest margins, and retry once with a longer run before failing.

set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# STAX=PATH runs the tests against another build of stax (make
# check-sanitize: build-san/stax); an absolute path
STAX=${STAX:-$ROOT/stax}
# STAX_PROG=DIR: the test programs of another build (the arm64 guest's:
# tests/programs/build-arm64)
PROG=${STAX_PROG:-$ROOT/tests/programs/build}
TEST=$(basename "$0" .sh)
FAILED=0
BG_PIDS=""

# A private temp dir, removed on exit. 755 so tests may run programs as
# another user from inside it.
T=$(mktemp -d "${TMPDIR:-/tmp}/stax-e2e-$TEST.XXXXXX") || exit 1
chmod 755 "$T"

cleanup() {
	for p in $BG_PIDS; do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap 'cleanup' EXIT
trap 'exit 130' INT TERM HUP

ok() { echo "ok - $TEST: $1"; }
fail() { echo "not ok - $TEST: $1: $2"; FAILED=1; }
skip() { echo "skip - $TEST: $1: $2"; }
done_testing() { exit "$FAILED"; }

# Remember a background pid so cleanup kills it (only ones we started).
bg_add() { BG_PIDS="$BG_PIDS $1"; }

# The test cannot run at all without $STAX and the programs: one failure
# (not a skip: make check builds both, so their absence is a bug).
require_stax() {
	if [ ! -x "$STAX" ]; then
		fail "setup" "$STAX is missing (run make)"
		exit 1
	fi
	if [ ! -x "$PROG/callgraph-fp" ]; then
		fail "setup" "$PROG is missing (run make -C tests/programs)"
		exit 1
	fi
}

# stax with a time limit, so a hang fails one check, not the whole file.
stax() { timeout 120 "$STAX" "$@"; }

# share FOLDED PATTERN: percent (one decimal) of the samples in the folded
# file ("comm;root;...;leaf COUNT" lines) whose stack matches the awk ERE
# PATTERN. The pattern goes through the environment: no escape processing.
# Kernel frames end in "_[k]"; $K matches any run of them at the leaf end,
# so ";b;leaf_b$K" ends in leaf_b after stripping kernel frames.
K='(;[^;]*_[[]k[]])*$'
share() {
	PAT=$2 awk '
	NF { n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s); t += n; if (s ~ ENVIRON["PAT"]) m += n }
	END { if (t == 0) print "0.0"; else printf "%.1f\n", 100 * m / t }' "$1"
}

# samples FOLDED [PATTERN]: the number of samples (matching PATTERN).
samples() {
	PAT=${2:-} awk '
	NF { n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s); if (ENVIRON["PAT"] == "" || s ~ ENVIRON["PAT"]) t += n }
	END { print t + 0 }' "$1"
}

# user_stacks FOLDED: for a recording read on two machines
# (tests/arm64/x86data.sh, tests/arm64-host/perfdata.sh), whose kernel
# symbols and debug files differ: the stacks without the command and the
# kernel frames, as "N:STACK FROM main" (N frames above main: libc's local
# functions are named where its debug file is, and numbered elsewhere),
# counts added up; the stacks that do not reach main (ld.so starting the
# program, named the same way) counted as one.
user_stacks() {
	awk '{ n = $NF; s = $0; sub(/[ \t]+[0-9]+[ \t]*$/, "", s); sub(/^[^;]*;/, "", s)
	       k = split(s, f, ";"); o = ""; above = -1
	       for (i = 1; i <= k; i++) {
		       if (f[i] ~ /_\[k\]$/) continue
		       if (above < 0 && f[i] == "main") above = i - 1
		       if (above >= 0) o = o (o == "" ? "" : ";") f[i]
	       }
	       if (above < 0) { o = "(not-reaching-main)"; above = "-" }
	       c[above ":" o] += n }
	     END { for (o in c) print o, c[o] }' "$1" | sort
}

# pct PART ALL: PART's share of ALL in percent, one decimal ("0.0" when
# ALL is 0).
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "0.0"; else printf "%.1f\n", 100 * a / b }'; }

# between VALUE LO HI: true when LO <= VALUE <= HI (decimals allowed).
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v + 0 >= lo + 0 && v + 0 <= hi + 0) }'; }

# col_values FILE HEADER: the values of the column titled HEADER in a text
# table (the first line that has HEADER as a word is the header; every
# later line with as many fields is a row). Works for stax top/threads.
col_values() {
	H=$2 awk '
	!hdr { for (i = 1; i <= NF; i++) if ($i == ENVIRON["H"]) { hdr = NR; col = i; nf = NF }; next }
	NF >= nf && $0 !~ /^\.\.\./ { print $col }' "$1"
}

# row_where FILE HEADER VALUE WANT: in a text table, the WANT column of
# the first row whose HEADER column equals VALUE.
row_where() {
	H=$2 V=$3 W=$4 awk '
	!hdr { for (i = 1; i <= NF; i++) { if ($i == ENVIRON["H"]) hc = i; if ($i == ENVIRON["W"]) wc = i }
	       if (hc && wc) hdr = NR; next }
	$hc == ENVIRON["V"] { print $wc; exit }' "$1"
}

# one_line_error STDERR_FILE: true when the file is exactly one line that
# starts with "stax: error: " (the error style every failure must follow).
one_line_error() {
	[ "$(wc -l <"$1")" -eq 1 ] && head -n 1 "$1" | grep -q '^stax: error: '
}

# crashed STDERR_FILE STATUS: true when the status or stderr shows a crash
# (signal, sanitizer report, abort) rather than a handled error.
crashed() {
	[ "$2" -ge 128 ] && return 0
	grep -Eq 'Segmentation|AddressSanitizer|UndefinedBehavior|runtime error:|Aborted|core dumped|double free|malloc\(\)|stack smashing' "$1"
}

# first_line FILE: a file's first line, for failure messages.
# svg_frames SVG: one line per frame of a stax flamegraph SVG: what its
# details line and tooltip say ("NAME [inlined] (N samples, P%)", time as
# "X ms" or "X s", a diff's "(...; base N samples, P%; change +X points)"),
# then a tab, "t=KIND" (the t attribute, "-" for user code), a tab and
# "fill=rgb(...)". Read from the frames' c, n, t, k and b attributes and
# the names table, as the SVG's script does.
svg_frames() {
	awk '
	function attr(s, a) {
		if (!match(s, " " a "=\"[^\"]*\""))
			return ""
		return substr(s, RSTART + length(a) + 3, RLENGTH - length(a) - 4)
	}
	function amount(n) {
		if (!timed)
			return n " samples"
		return n >= 1e7 ? sprintf("%.2f s", n / 1e6) : sprintf("%.2f ms", n / 1e3)
	}
	function pct(n, t) { return sprintf("%.2f%%", t ? 100 * n / t : 0) }
	/^<g class="f" / { g[++nf] = $0; next }
	/^var data = / {
		total = $0; sub(/.*"total": /, "", total); sub(/,.*/, "", total)
		base = $0; sub(/.*"base": /, "", base); sub(/,.*/, "", base)
		timed = $0 ~ /"time": true/
		innames = 1
		next
	}
	innames && /^"/ {
		s = $0; sub(/,$/, "", s); s = substr(s, 2, length(s) - 2)
		gsub(/\\u003c/, "<", s); gsub(/\\u003e/, ">", s); gsub(/\\u0026/, "\\&", s)
		gsub(/\\"/, "\"", s); gsub(/\\\\/, "\\", s)
		names[nn++] = s
		next
	}
	innames && /^\]/ { innames = 0 }
	END {
		for (i = 1; i <= nf; i++) {
			t = attr(g[i], "t"); c = attr(g[i], "c") + 0; b = attr(g[i], "b")
			s = names[attr(g[i], "n") + 0]
			if (t == "k" || attr(g[i], "k") != "")
				s = s " [kernel]"
			if (t == "i")
				s = s " [inlined]"
			if (b == "") {
				s = s " (" amount(c) ", " pct(c, total) ")"
			} else {
				d = (total ? 100 * c / total : 0) - (base ? 100 * b / base : 0)
				s = s " (" c " samples, " pct(c, total) "; base " b " samples, " pct(b, base) \
				    "; change " sprintf("%+.2f", d) " points)"
			}
			printf "%s\tt=%s\tfill=%s\n", s, t == "" ? "-" : t, attr(g[i], "fill")
		}
	}' "$1"
}

first_line() { head -n 1 "$1" 2>/dev/null | cut -c1-200; }

# loopback_why: why nothing here can connect to 127.0.0.1 (empty when
# something can): a network namespace of its own (unshare -n) starts with
# its loopback interface down, so the tests that talk to stax serve or a
# local debuginfod cannot run there (stax itself is not at fault).
loopback_why() {
	python3 -c '
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
socket.create_connection(s.getsockname(), 5).close()' 2>/dev/null && return 0
	echo "nothing can connect to 127.0.0.1 (the loopback interface is down, as in unshare -n: ip link set lo up)"
}

# wait_for COND SECONDS: poll the shell command COND every 0.1 s.
wait_for() {
	_w=0
	while ! eval "$1"; do
		_w=$((_w + 1))
		[ "$_w" -ge $(($2 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

# browser_check NAME OUT ARGS...: run node "$BROWSER" ARGS (a check in
# tests/e2e/browser.js) with its output in OUT: ok "NAME (first line)" on
# status 0, skip on 2 (no usable browser), fail otherwise. Call after a
# successful browser_setup.
browser_check() {
	_bn=$1 _bo=$2
	shift 2
	timeout 60 node "$BROWSER" "$@" >"$_bo" 2>&1
	_brc=$?
	if [ "$_brc" -eq 0 ]; then
		ok "$_bn ($(first_line "$_bo"))"
	elif [ "$_brc" -eq 2 ]; then
		skip "$_bn" "$(first_line "$_bo")"
	else
		fail "$_bn" "$(head -n 3 "$_bo" | tr '\n' '|')"
	fi
}

# browser_setup: node, the npm packages (speedscope, playwright-core,
# ajv: tests/npm/package-lock.json, installed into build/npm by make
# test-deps, which make check runs first; tests never download anything)
# and chromium for tests/e2e/browser.js. Returns 1 with the reason in
# $BROWSER_WHY when something is missing (the caller skips).
NPM_DIR=$ROOT/build/npm
BROWSER=$ROOT/tests/e2e/browser.js
browser_setup() {
	BROWSER_WHY=""
	command -v node >/dev/null 2>&1 || { BROWSER_WHY="node is not installed (apt-get install nodejs npm)"; return 1; }
	for _p in playwright-core speedscope ajv; do
		[ -f "$NPM_DIR/node_modules/$_p/package.json" ] ||
			{ BROWSER_WHY="the npm package $_p is not in $NPM_DIR (run make test-deps)"; return 1; }
	done
	[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || { BROWSER_WHY="chromium is not installed (apt-get install chromium)"; return 1; }
	return 0
}
