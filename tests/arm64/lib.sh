# lib.sh - helpers of the arm64 guest's tests (tests/arm64/*.sh, run
# inside the guest by make check-arm64: scripts/arm64-guest.sh). They are
# tests/e2e/lib.sh's (ok, fail, share, samples, pct, ...) with STAX and
# STAX_PROG set by make check-arm64 to the cross-built stax and programs
# (build-arm64/), and:
. "$(dirname "$0")/../e2e/lib.sh"
require_stax
if [ "$(uname -m)" != aarch64 ]; then
	fail "setup" "this is $(uname -m), not aarch64 (make check-arm64 runs these tests in the arm64 guest)"
	exit 1
fi

# rec NAME PROG [ARGS...]: record with default options (REC_OPTS: more)
# into $T/NAME.data, then $T/NAME.folded and $T/NAME.info.
rec() {
	_n=$1
	shift
	# shellcheck disable=SC2086
	stax record -q ${REC_OPTS:-} -o "$T/$_n.data" -- "$@" >"$T/$_n.out" 2>"$T/$_n.err" &&
		stax flame -i "$T/$_n.data" --folded >"$T/$_n.folded" 2>>"$T/$_n.err" &&
		stax info -i "$T/$_n.data" >"$T/$_n.info" 2>>"$T/$_n.err"
}

# leaf_check NAME LEAF_ERE FULL_ERE WHAT: of the samples whose leaf
# matches LEAF_ERE (kernel frames stripped), >= 99% must match FULL_ERE,
# of at least MIN (default 100) such samples.
leaf_check() {
	_n=$1 _leaf=$2 _full=$3 _what=$4
	_tot=$(samples "$T/$_n.folded" "$_leaf$K")
	_good=$(samples "$T/$_n.folded" "$_full$K")
	_pct=$(pct "$_good" "$_tot")
	if [ "$_tot" -ge "${MIN:-100}" ] && between "$_pct" 99 100; then
		ok "$_what: $_pct% of $_tot samples"
		return 0
	fi
	return 1
}

# check NAME PROG LEAF FULL WHAT [ARGS]: record PROG ARGS, check, retry
# once at twice the scale.
check() {
	_n=$1 _p=$2 _leaf=$3 _full=$4 _what=$5 _sc=${6:-1}
	if [ ! -x "$PROG/$_p" ]; then
		fail "$_what" "$PROG/$_p is missing (make check-arm64 builds it)"
		return
	fi
	rec "$_n" "$PROG/$_p" "$_sc" && leaf_check "$_n" "$_leaf" "$_full" "$_what" && return
	rec "$_n" "$PROG/$_p" "$(awk -v s="$_sc" 'BEGIN { print 2 * s }')" &&
		leaf_check "$_n" "$_leaf" "$_full" "$_what" && return
	fail "$_what" "$_pct% of $_tot samples have the full stack (want >= 99% of >= ${MIN:-100}); $(first_line "$T/$_n.err") top: $(sort -k2 -nr -t' ' "$T/$_n.folded" | head -n 2 | sed 's/\(deep;\)\{1,\}/deep;...;/g' | cut -c1-300 | tr '\n' '|')"
}

# rep WORD N: "WORD;" N times (awk ERE intervals are not everywhere)
rep() { _r=; _i=0; while [ $_i -lt "$2" ]; do _r="$_r$1;"; _i=$((_i + 1)); done; echo "$_r"; }

# A stack from its root to main
START=';_start;(.*;)?main;'
