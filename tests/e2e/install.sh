#!/bin/sh
# install.sh - make install DESTDIR=DIR puts exactly the binary, the man
# page, the bash and zsh completion and stax agent's systemd unit under
# DIR (and nothing anywhere else), BINDIR and MANDIR move them, make
# uninstall removes them; systemd-analyze verify accepts the unit; the
# completion offers what stax help lists.
# stax-test: no-sanitize, seconds=15 (make install copies ./stax, the normal build: the sanitizer build is not what it installs)
. "$(dirname "$0")/lib.sh"
require_stax

want=$(sh "$ROOT/scripts/version.sh" 2>/dev/null)
paths="/usr/local/bin/stax /usr/local/share/man/man1/stax.1 /usr/local/share/bash-completion/completions/stax /usr/local/share/zsh/site-functions/_stax /usr/local/lib/systemd/system/stax-agent.service"
# what exists at the real paths now (they must be the same afterwards)
outside() {
	for p in $paths; do
		if [ -e "$p" ]; then echo "$p $(stat -c '%s %Y' "$p")"; else echo "$p none"; fi
	done
	git -C "$ROOT" status --porcelain 2>/dev/null
}
outside >"$T/before"
touch "$T/stamp"
sleep 1

D=$T/root
if make -s -C "$ROOT" install DESTDIR="$D" >"$T/install.out" 2>&1; then
	ok "make install DESTDIR=DIR"
else
	fail "make install DESTDIR=DIR" "$(tail -n 3 "$T/install.out" | tr '\n' '|')"
fi
(cd "$D" 2>/dev/null && find . ! -type d | sed 's|^\.||' | sort) >"$T/files"
printf '%s\n' $paths | sort >"$T/expected"
if cmp -s "$T/files" "$T/expected"; then
	ok "DESTDIR holds exactly the binary, man page, completion and the agent's unit"
else
	fail "DESTDIR holds exactly the binary, man page, completion and the agent's unit" \
		"got: $(tr '\n' ' ' <"$T/files")"
fi
outside >"$T/after"
new=$(find /usr/local -newer "$T/stamp" ! -type d 2>/dev/null | head -n 3)
if cmp -s "$T/before" "$T/after" && [ -z "$new" ]; then
	ok "make install DESTDIR=DIR touched nothing outside DIR"
else
	fail "make install DESTDIR=DIR touched nothing outside DIR" \
		"$(diff "$T/before" "$T/after" | tr '\n' '|') $new"
fi
modes=$(cd "$D" && stat -c '%a %n' usr/local/bin/stax usr/local/share/man/man1/stax.1 \
	usr/local/share/bash-completion/completions/stax usr/local/share/zsh/site-functions/_stax \
	usr/local/lib/systemd/system/stax-agent.service 2>&1 | awk '{ print $1 }' | tr '\n' ' ')
if [ "$modes" = "755 644 644 644 644 " ]; then
	ok "modes 755 for the binary, 644 for the rest"
else
	fail "modes 755 for the binary, 644 for the rest" "$modes"
fi
got=$("$D/usr/local/bin/stax" --version 2>&1)
if [ "$got" = "stax $want" ]; then
	ok "the installed stax is version $want"
else
	fail "the installed stax is version $want" "$got"
fi
th=$(head -n 1 "$D/usr/local/share/man/man1/stax.1")
case $th in
*"\"stax $want\""*) ok "the installed man page names version $want" ;;
*) fail "the installed man page names version $want" "$th" ;;
esac
if command -v groff >/dev/null 2>&1; then
	w=$(groff -man -Tutf8 -ww -z "$D/usr/local/share/man/man1/stax.1" 2>&1 | head -n 3)
	if [ -z "$w" ]; then ok "the installed man page renders"; else fail "the installed man page renders" "$w"; fi
fi

# the agent's unit: ExecStart is the installed stax; systemd-analyze
# verify (the man page it names is checked above: --man=no) with the
# path as installed under DESTDIR
unit=$D/usr/local/lib/systemd/system/stax-agent.service
if grep -qx 'ExecStart=/usr/local/bin/stax agent --dir /var/lib/stax' "$unit"; then
	ok "the unit starts /usr/local/bin/stax agent --dir /var/lib/stax"
else
	fail "the unit starts the installed stax" "$(grep ExecStart "$unit")"
fi
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/unit"
	sed "s|=/usr/local/bin/stax|=$D/usr/local/bin/stax|" "$unit" >"$T/unit/stax-agent.service"
	if systemd-analyze verify --man=no "$T/unit/stax-agent.service" >"$T/verify.out" 2>&1 &&
		[ ! -s "$T/verify.out" ]; then
		ok "systemd-analyze verify: the unit has no errors or warnings"
	else
		fail "systemd-analyze verify accepts the unit" "$(head -n 3 "$T/verify.out" | tr '\n' '|')"
	fi
else
	skip "systemd-analyze verify of the agent's unit" "systemd-analyze is not installed (apt-get install systemd)"
fi

if make -s -C "$ROOT" uninstall DESTDIR="$D" >"$T/un.out" 2>&1 && [ -z "$(find "$D" ! -type d)" ]; then
	ok "make uninstall DESTDIR=DIR removes every file"
else
	fail "make uninstall DESTDIR=DIR removes every file" "$(find "$D" ! -type d | tr '\n' ' ') $(first_line "$T/un.out")"
fi

# BINDIR, MANDIR and PREFIX
A=$T/alt
if make -s -C "$ROOT" install DESTDIR="$A" PREFIX=/usr BINDIR=/opt/x/bin MANDIR=/opt/x/man >"$T/alt.out" 2>&1 &&
	[ -x "$A/opt/x/bin/stax" ] && [ -f "$A/opt/x/man/man1/stax.1" ] &&
	[ -f "$A/usr/share/bash-completion/completions/stax" ] && [ -f "$A/usr/share/zsh/site-functions/_stax" ] &&
	grep -qx 'ExecStart=/opt/x/bin/stax agent --dir /var/lib/stax' "$A/usr/lib/systemd/system/stax-agent.service" &&
	[ "$(find "$A" ! -type d | wc -l)" -eq 5 ]; then
	ok "BINDIR, MANDIR and PREFIX move the files"
else
	fail "BINDIR, MANDIR and PREFIX move the files" "$(cd "$A" 2>/dev/null && find . ! -type d | tr '\n' ' ') $(first_line "$T/alt.out")"
fi
make -s -C "$ROOT" uninstall DESTDIR="$A" PREFIX=/usr BINDIR=/opt/x/bin MANDIR=/opt/x/man >/dev/null 2>&1
[ -z "$(find "$A" ! -type d)" ] || fail "make uninstall with BINDIR, MANDIR" "left $(find "$A" ! -type d)"

# bash completion, as bash calls it: COMP_WORDS, COMP_CWORD, COMPREPLY
if ! command -v bash >/dev/null 2>&1; then
	skip "bash completion" "bash is not installed"
	done_testing
fi
comp=$ROOT/completion/stax.bash
# complete WORD...: the candidates for the last word, sorted, one a line
complete_words() {
	STAX_BIN=$STAX bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		_stax "$STAX_BIN" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
		printf "%s\n" "${COMPREPLY[@]}"' sh "$comp" "$@" 2>/dev/null | sort -u
}
cmds=$(stax help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }' | sort)
got=$(complete_words stax "")
if [ -n "$cmds" ] && [ "$got" = "$cmds" ]; then
	ok "bash: stax TAB offers the $(echo $cmds | wc -w) commands of stax help"
else
	fail "bash: stax TAB offers the commands of stax help" "got: $(echo $got)"
fi
got=$(complete_words stax rec)
[ "$got" = record ] && ok "bash: stax rec TAB is record" || fail "bash: stax rec TAB is record" "got: $(echo $got)"
for c in $cmds; do
	[ "$c" = help ] && continue
	stax help "$c" >"$T/help.$c" 2>/dev/null
	got=$(complete_words stax "$c" -)
	# every option of the option lines ("  -x, --long ARG   text") is offered
	need=$(awk '/^  -/ { s = $0; sub(/^ +/, "", s); sub(/  .*/, "", s); n = split(s, a, /, */)
		for (i = 1; i <= n; i++) { split(a[i], w, " "); if (w[1] ~ /^-/) print w[1] } }' "$T/help.$c" | sort -u)
	missing=""
	for o in $need; do
		echo "$got" | grep -qxe "$o" || missing="$missing $o"
	done
	# and every option offered is in the help (or is --help)
	extra=""
	for o in $got; do
		[ "$o" = --help ] && continue
		grep -qe "$o\\([^a-z-]\\|\$\\)" "$T/help.$c" || extra="$extra $o"
	done
	if [ -n "$got" ] && [ -z "$missing$extra" ]; then
		ok "bash: stax $c - offers the options of stax help $c ($(echo $got | wc -w))"
	else
		fail "bash: stax $c - offers the options of stax help $c" "missing:$missing; not in the help:$extra"
	fi
done
got=$(complete_words stax record --unwind "")
[ "$(echo $got)" = "dwarf fp hybrid" ] && ok "bash: record --unwind TAB offers hybrid, dwarf, fp" ||
	fail "bash: record --unwind TAB offers hybrid, dwarf, fp" "got: $(echo $got)"
mkdir -p "$T/cwd/sub" && : >"$T/cwd/a.data" && : >"$T/cwd/a.txt" && : >"$T/cwd/b.txt"
got=$(cd "$T/cwd" && complete_words stax top -i "")
[ "$(echo $got)" = "a.data sub" ] && ok "bash: top -i TAB offers recordings and directories" ||
	fail "bash: top -i TAB offers recordings and directories" "got: $(echo $got)"
got=$(cd "$T/cwd" && complete_words stax flame "")
[ "$(echo $got)" = "a.data sub" ] && ok "bash: flame TAB offers recordings as FILE" ||
	fail "bash: flame TAB offers recordings as FILE" "got: $(echo $got)"
# an option's values, by its short name too; a value to type offers no
# recordings
for case in "record --call-graph|dwarf fp hybrid" "export -f|chrome folded pprof speedscope" \
	"top --sort|self total" "top -n|" "record -e|" "callers --pid|"; do
	words=${case%%|*} want=${case#*|}
	# shellcheck disable=SC2086
	got=$(cd "$T/cwd" && complete_words stax $words "")
	if [ "$(echo $got)" = "$want" ]; then
		ok "bash: $words TAB offers '${want:-nothing}'"
	else
		fail "bash: $words TAB offers '${want:-nothing}'" "got: $(echo $got)"
	fi
done
got=$(complete_words stax record -F 99 -- ech)
echo "$got" | grep -qx echo && ok "bash: record -- ech TAB completes commands" ||
	fail "bash: record -- ech TAB completes commands" "got: $(echo $got | cut -c1-100)"

# zsh: the function parses, compinit binds it to stax, and TAB in a real
# interactive zsh (zpty) completes commands, options, values and files
# (recordings first: with a.data and a.txt, "a" completes to a.data)
if command -v zsh >/dev/null 2>&1; then
	if zsh -n "$ROOT/completion/_stax" 2>"$T/zsh.err" &&
		[ "$(zsh -fc 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2"; print -r -- $_comps[stax]' \
			sh "$ROOT/completion" "$T/zcompdump" 2>>"$T/zsh.err")" = _stax ]; then
		ok "zsh: _stax parses and compinit binds it to stax"
	else
		fail "zsh: _stax parses and compinit binds it to stax" "$(first_line "$T/zsh.err")"
	fi
	# a directory with only the stax under test, first in PATH
	mkdir -p "$T/zbin" "$T/zwork" && ln -s "$STAX" "$T/zbin/stax"
	zcomplete() {
		timeout 120 zsh -f "$ROOT/tests/e2e/zsh-complete.zsh" "$ROOT/completion" "$T/zwork" "$T/zbin" "$T/cwd" "$1" 2>/dev/null
	}
	for pair in 'stax rec|stax record ' 'stax record --unw|stax record --unwind ' \
		'stax record --unwind hy|stax record --unwind hybrid ' 'stax info --js|stax info --json ' \
		'stax top -i a|stax top -i a.data ' 'stax flame a|stax flame a.data ' \
		'stax export --format pp|stax export --format pprof ' 'stax export -f sp|stax export -f speedscope ' \
		'stax record --call-graph dw|stax record --call-graph dwarf ' 'stax top -n a|stax top -n a'; do
		line=${pair%%|*}
		want_line=${pair#*|}
		got=$(zcomplete "$line")
		if [ "$got" = "[$want_line]" ]; then
			ok "zsh: '$line' TAB gives '$want_line'"
		else
			fail "zsh: '$line' TAB gives '$want_line'" "got '$got'"
		fi
	done
else
	skip "zsh completion" "zsh is not installed (make test-deps installs it)"
fi
done_testing
