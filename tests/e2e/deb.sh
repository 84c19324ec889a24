#!/bin/sh
# deb.sh - make deb builds a Debian package holding exactly the stripped
# binary, the gzipped man page, bash and zsh completion, copyright and
# both changelogs, stax agent's systemd unit (systemd-analyze verify
# accepts it), with the version of scripts/version.sh, Depends from
# dpkg-shlibdeps, Recommends/Suggests for the libraries opened on use,
# and no lintian errors.
# stax-test: no-sanitize, seconds=40 (make deb builds stax anew with Debian's flags: the sanitizer build is not what it packages)
. "$(dirname "$0")/lib.sh"
require_stax

if ! command -v dpkg-deb >/dev/null 2>&1 || ! command -v dpkg-shlibdeps >/dev/null 2>&1; then
	skip "make deb" "dpkg-deb or dpkg-shlibdeps is not installed (apt-get install dpkg-dev)"
	done_testing
fi
want=$(sh "$ROOT/scripts/version.sh")
arch=$(dpkg --print-architecture)
deb=$ROOT/build/deb/stax_$want-1_$arch.deb
if make -s -C "$ROOT" deb >"$T/deb.out" 2>&1 && [ -f "$deb" ]; then
	ok "make deb builds stax_$want-1_$arch.deb"
else
	fail "make deb builds stax_$want-1_$arch.deb" "$(grep -v '^cc ' "$T/deb.out" | tail -n 4 | tr '\n' '|')"
	done_testing
fi
if command -v lintian >/dev/null 2>&1; then
	if grep -q "lintian found no errors" "$T/deb.out" && ! grep -q '^E: ' "$T/deb.out"; then
		ok "lintian reports no errors ($(grep -c '^W: ' "$T/deb.out") warnings)"
	else
		fail "lintian reports no errors" "$(grep '^E: ' "$T/deb.out" | head -n 3 | tr '\n' '|')"
	fi
else
	skip "lintian reports no errors" "lintian is not installed (make test-deps installs it)"
fi

field() { dpkg-deb -f "$deb" "$1" 2>/dev/null; }
[ "$(field Package)" = stax ] && [ "$(field Version)" = "$want-1" ] && [ "$(field Architecture)" = "$arch" ] &&
	ok "control: stax $want-1 $arch" || fail "control: stax $want-1 $arch" "$(field Package) $(field Version) $(field Architecture)"
dep=$(field Depends)
missing=""
for lib in libc6 libdw1 libelf1 libzstd1 libxxhash0 zlib1g liblzma5; do
	echo "$dep" | grep -Eq "(^|, )$lib( \\(|,|\$)" || missing="$missing $lib"
done
[ -z "$missing" ] && ok "Depends (dpkg-shlibdeps) has the linked libraries" ||
	fail "Depends (dpkg-shlibdeps) has the linked libraries" "missing$missing in '$dep'"
echo "$dep" | grep -Eq 'capstone|microhttpd|debuginfod' &&
	fail "Depends leaves out the libraries opened on use" "$dep" ||
	ok "Depends leaves out the libraries opened on use"
rec=$(field Recommends)
sug=$(field Suggests)
case "$rec" in *libcapstone*libmicrohttpd* | *libmicrohttpd*libcapstone*) ok "Recommends capstone and libmicrohttpd ($rec)" ;;
*) fail "Recommends capstone and libmicrohttpd" "'$rec'" ;; esac
case "$sug" in *libdebuginfod*) ok "Suggests libdebuginfod ($sug)" ;;
*) fail "Suggests libdebuginfod" "'$sug'" ;; esac

dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { sub(/^\.\//, "", $NF); print $NF }' | sort >"$T/files"
cat >"$T/expected" <<EOX
lib/systemd/system/stax-agent.service
usr/bin/stax
usr/share/bash-completion/completions/stax
usr/share/doc/stax/changelog.Debian.gz
usr/share/doc/stax/changelog.gz
usr/share/doc/stax/copyright
usr/share/lintian/overrides/stax
usr/share/man/man1/stax.1.gz
usr/share/zsh/vendor-completions/_stax
EOX
if cmp -s "$T/files" "$T/expected"; then
	ok "the package holds exactly the expected files"
else
	fail "the package holds exactly the expected files" "$(diff "$T/expected" "$T/files" | grep '^[<>]' | tr '\n' ' ')"
fi
x=$T/x
dpkg-deb -x "$deb" "$x"
if readelf -S "$x/usr/bin/stax" 2>/dev/null | grep -q '\.symtab\|\.debug_'; then
	fail "usr/bin/stax is stripped" "it has .symtab or .debug_ sections"
else
	ok "usr/bin/stax is stripped"
fi
got=$("$x/usr/bin/stax" --version 2>&1)
[ "$got" = "stax $want" ] && ok "the packaged stax is version $want" || fail "the packaged stax is version $want" "$got"
th=$(gzip -dc "$x/usr/share/man/man1/stax.1.gz" 2>/dev/null | head -n 1)
case $th in *"\"stax $want\""*) ok "the man page is gzipped and names $want" ;;
*) fail "the man page is gzipped and names $want" "'$th'" ;; esac
grep -q '^License: GPL-2+' "$x/usr/share/doc/stax/copyright" && grep -q '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$x/usr/share/doc/stax/copyright" &&
	ok "copyright: machine-readable, GPL-2+" || fail "copyright: machine-readable, GPL-2+" "$(head -n 1 "$x/usr/share/doc/stax/copyright")"
first=$(gzip -dc "$x/usr/share/doc/stax/changelog.Debian.gz" 2>/dev/null | head -n 1)
[ "$first" = "stax ($want-1) unstable; urgency=medium" ] && ok "changelog.Debian.gz names $want-1" ||
	fail "changelog.Debian.gz names $want-1" "'$first'"
gzip -dc "$x/usr/share/doc/stax/changelog.gz" 2>/dev/null | cmp -s - "$ROOT/CHANGELOG.md" &&
	ok "changelog.gz is CHANGELOG.md" || fail "changelog.gz is CHANGELOG.md" "differs"
cmp -s "$x/usr/share/bash-completion/completions/stax" "$ROOT/completion/stax.bash" &&
	cmp -s "$x/usr/share/zsh/vendor-completions/_stax" "$ROOT/completion/_stax" &&
	ok "the completion files are the checkout's" || fail "the completion files are the checkout's" "differ"
unit=$x/lib/systemd/system/stax-agent.service
if grep -qx 'ExecStart=/usr/bin/stax agent --dir /var/lib/stax' "$unit" 2>/dev/null; then
	ok "the agent's unit starts /usr/bin/stax agent --dir /var/lib/stax"
else
	fail "the agent's unit starts /usr/bin/stax" "$(grep ExecStart "$unit" 2>&1)"
fi
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$T/unit"
	sed "s|=/usr/bin/stax|=$x/usr/bin/stax|" "$unit" >"$T/unit/stax-agent.service"
	if systemd-analyze verify --man=no "$T/unit/stax-agent.service" >"$T/verify.out" 2>&1 &&
		[ ! -s "$T/verify.out" ]; then
		ok "systemd-analyze verify: the packaged unit has no errors or warnings"
	else
		fail "systemd-analyze verify accepts the packaged unit" "$(head -n 3 "$T/verify.out" | tr '\n' '|')"
	fi
else
	skip "systemd-analyze verify of the packaged unit" "systemd-analyze is not installed (apt-get install systemd)"
fi
done_testing
