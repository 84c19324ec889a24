#!/bin/sh
# deb.sh - build the Debian package of stax (make deb runs it).
#   sh scripts/deb.sh BIN MANPAGE VERSION OUTDIR
# BIN is a stax built with dpkg-buildflags' flags (make deb does that in
# build/deb/obj), MANPAGE the man page with its version (build/stax.1),
# VERSION scripts/version.sh's string. Writes OUTDIR/stax_VERSION-1_ARCH.deb
# from the tree OUTDIR/root:
#   usr/bin/stax                                  stripped as dh_strip does
#   usr/share/man/man1/stax.1.gz                  gzip -9n
#   usr/share/bash-completion/completions/stax
#   usr/share/zsh/vendor-completions/_stax        (Debian's place for zsh)
#   usr/share/doc/stax/copyright                  machine-readable
#   usr/share/doc/stax/changelog.gz               CHANGELOG.md
#   usr/share/doc/stax/changelog.Debian.gz
#   lib/systemd/system/stax-agent.service         ExecStart /usr/bin/stax; not
#                                                 enabled (no maintainer scripts)
# The Debian version is VERSION-1 (VERSION is already a valid upstream
# version: 0.1+git12.gabc1234), so the package is not "native" and its own
# changelog is changelog.Debian.gz. Depends comes from dpkg-shlibdeps;
# the libraries stax opens only when a command needs them (dlopen) are
# Recommends (capstone: annotate; libmicrohttpd: serve) and Suggests
# (libdebuginfod: only with DEBUGINFOD_URLS), by the packages that hold
# their sonames here. Then lintian, when it is installed: an error fails.
# A binary for another architecture (make deb with a cross compiler):
# DEB_HOST_ARCH names it (arm64), its strip is the cross binutils', and
# SHLIBS_BIN is the same sources built for this machine, which
# dpkg-shlibdeps reads instead (this machine's dpkg knows none of the
# other architecture's libraries; both must need the same ones).
set -eu
bin=$1 man=$2 version=$3 out=$4
top=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$out" && cd "$out" && pwd)
for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture; do
	command -v $tool >/dev/null 2>&1 || {
		echo "stax: error: make deb needs $tool (apt-get install -y dpkg-dev)" >&2
		exit 1
	}
done
debver=$version-1
arch=${DEB_HOST_ARCH:-$(dpkg-architecture -qDEB_HOST_ARCH)}
strip=strip
if [ "$arch" != "$(dpkg-architecture -qDEB_BUILD_ARCH)" ]; then
	strip=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)-strip
	command -v "$strip" >/dev/null 2>&1 || {
		echo "stax: error: make deb for $arch needs $strip (apt-get install -y binutils-$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null | tr _ -))" >&2
		exit 1
	}
	[ -n "${SHLIBS_BIN:-}" ] || {
		echo "stax: error: deb.sh for $arch needs SHLIBS_BIN, the same sources built for this machine (make deb sets it)" >&2
		exit 1
	}
fi
maint="stax maintainers <maintainers@users.noreply.a-seed-b2ff89ce.example>"
root=$out/root
rm -rf "$root" "$out/src"
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/lib/systemd/system" \
	"$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
	"$root/usr/share/doc/stax"

install -m 755 "$bin" "$root/usr/bin/stax"
"$strip" --remove-section=.comment --remove-section=.note --strip-unneeded "$root/usr/bin/stax"
gzip -9n <"$man" >"$root/usr/share/man/man1/stax.1.gz"
install -m 644 "$top/completion/stax.bash" "$root/usr/share/bash-completion/completions/stax"
install -m 644 "$top/completion/_stax" "$root/usr/share/zsh/vendor-completions/_stax"
sed 's|@BINDIR@|/usr/bin|g' "$top/scripts/stax-agent.service" >"$root/lib/systemd/system/stax-agent.service"
chmod 644 "$root/lib/systemd/system/stax-agent.service"
gzip -9n <"$top/CHANGELOG.md" >"$root/usr/share/doc/stax/changelog.gz"
# lintian's warnings that do not apply, each with its reason
mkdir -p "$root/usr/share/lintian/overrides"
cat >"$root/usr/share/lintian/overrides/stax" <<'EOC'
# built by make deb from a checkout, not uploaded to Debian: no bug to close
stax: initial-upload-closes-no-bugs
EOC
chmod 644 "$root/usr/share/lintian/overrides/stax"

# the date of the commit when built from git (the same bytes every build)
date=$(git -C "$top" log -1 --format=%aD 2>/dev/null || true)
[ -n "$date" ] || date=$(date -R)
commit=$(git -C "$top" rev-parse --short=7 HEAD 2>/dev/null || echo "none")
{
	echo "stax ($debver) unstable; urgency=medium"
	echo
	echo "  * stax $version (git commit $commit), packaged by make deb."
	echo "    What changed: /usr/share/doc/stax/changelog.gz."
	echo
	echo " -- $maint  $date"
} | gzip -9n >"$root/usr/share/doc/stax/changelog.Debian.gz"

{
	cat <<EOC
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: stax
Upstream-Contact: $maint

Files: *
Copyright: 2026 the stax authors
License: GPL-2+
 This program is free software; you can redistribute it and/or modify
 it under the terms of the GNU General Public License as published by
 the Free Software Foundation; either version 2 of the License, or (at
 your option) any later version.
 .
 This program is distributed in the hope that it will be useful, but
 WITHOUT ANY WARRANTY; without even the implied warranty of
 MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the GNU
 General Public License for more details.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 2 can be found in "/usr/share/common-licenses/GPL-2".
 .
 The stax binary includes libiberty (LGPL-2.1+), linked statically;
 see /usr/share/doc/libiberty-dev/copyright.
EOC
} >"$root/usr/share/doc/stax/copyright"
chmod 644 "$root/usr/share/doc/stax/copyright"

# Depends: dpkg-shlibdeps wants a debian/control beside it
mkdir -p "$out/src/debian"
printf 'Source: stax\n\nPackage: stax\nArchitecture: any\n' >"$out/src/debian/control"
shbin=$root/usr/bin/stax
if [ -n "${SHLIBS_BIN:-}" ]; then
	# (ld.so is libc6's, which every binary depends on)
	needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | grep -v '^ld-linux' | sort; }
	if [ "$(needed "$shbin")" != "$(needed "$SHLIBS_BIN")" ]; then
		echo "stax: error: $bin and $SHLIBS_BIN do not need the same libraries: no Depends for $arch" >&2
		exit 1
	fi
	shbin=$(cd "$(dirname "$SHLIBS_BIN")" && pwd)/$(basename "$SHLIBS_BIN")
fi
depends=$(cd "$out/src" && dpkg-shlibdeps -O "$shbin" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || {
	echo "stax: error: dpkg-shlibdeps gave no Depends for $bin" >&2
	exit 1
}
# the packages holding the libraries opened on use, by the names the
# binary opens them by (the strings load_library() is given)
pkg_of() {
	so=$(strings "$bin" | grep -m1 "^$1\.so\.[0-9]*\$")
	[ -n "$so" ] && dpkg -S "*/$so" 2>/dev/null | sed -n '1s/:.*//p'
}
cs=$(pkg_of libcapstone)
mhd=$(pkg_of libmicrohttpd)
dfd=$(pkg_of libdebuginfod)
for p in "$cs" "$mhd" "$dfd"; do
	[ -n "$p" ] || {
		echo "stax: error: cannot tell the packages of the libraries $bin opens on use (capstone: '$cs', libmicrohttpd: '$mhd', libdebuginfod: '$dfd')" >&2
		exit 1
	}
done
recommends="$cs, $mhd"
suggests="$dfd, linux-perf"

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOC
Package: stax
Version: $debver
Architecture: $arch
Maintainer: $maint
Installed-Size: $size
Depends: $depends
Recommends: $recommends
Suggests: $suggests
Section: devel
Priority: optional
Description: sampling CPU profiler with correct call stacks
 stax records a program's call stacks with perf_event_open and answers
 where its time went: top functions, call trees, flamegraphs, per-thread
 and off-CPU time. It unwinds with DWARF CFI while recording and splices
 the kernel's frame-pointer chain, so code built without frame pointers
 keeps its callers, and writes small, crash-safe recording files that
 can be read while they grow. It also reads perf.data files.
EOC
(cd "$root" && find lib usr -type f | LC_ALL=C sort | xargs md5sum) >"$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
deb=$out/stax_${debver}_$arch.deb
rm -f "$out"/stax_*.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "stax: built $deb"
if command -v lintian >/dev/null 2>&1; then
	lintian --fail-on error --suppress-tags-from-file /dev/null "$deb" || {
		echo "stax: error: lintian found errors in $deb (above)" >&2
		exit 1
	}
	echo "stax: lintian found no errors in $deb"
else
	echo "stax: lintian is not installed: $deb not checked (make test-deps installs it)"
fi
