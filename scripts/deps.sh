#!/bin/sh
# deps.sh - install the Debian packages stax needs to build and test.
# As root: apt-get installs what is missing. Otherwise: print the exact
# command and fail, so `make` stops with something to do.
#   sh scripts/deps.sh --check  only check the build dependencies (plain
#                               make): print the exact apt-get install
#                               line and fail when one is missing, even
#                               as root (a build never installs packages)
#   sh scripts/deps.sh          build dependencies (make run, make fuzz)
#   sh scripts/deps.sh --test   and what the tests use (make test-deps,
#                               which make check runs first): Debian
#                               packages, then the npm packages of
#                               tests/npm/package-lock.json (exact
#                               versions) into build/npm with npm ci
#   sh scripts/deps.sh --bench  and what make bench uses
# Does nothing (and needs no network) when everything is present, so the
# tests themselves never download or install anything.
set -u
cd "$(dirname "$0")/.." || exit 1
# package:file-that-proves-it-is-installed
need="
pkg-config:/usr/bin/pkg-config
gcc:/usr/bin/gcc
clang:/usr/bin/clang
libelf-dev:/usr/include/libelf.h
libdw-dev:/usr/include/elfutils/libdw.h
libzstd-dev:/usr/include/zstd.h
libxxhash-dev:/usr/include/xxhash.h
libiberty-dev:/usr/include/libiberty/demangle.h
zlib1g-dev:/usr/include/zlib.h
liblzma-dev:/usr/include/lzma.h
libmicrohttpd-dev:/usr/include/microhttpd.h
libdebuginfod-dev:/usr/include/elfutils/debuginfod.h
libcapstone-dev:/usr/include/capstone/capstone.h
libbpf-dev:/usr/include/bpf/libbpf.h
bpftool:/usr/sbin/bpftool
libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
"
# --test: the last five are for make check-arm64 (scripts/arm64-guest.sh:
# the arm64 guest under qemu, its userland unpacked by mmdebstrap, its
# init in a cpio initramfs; the cross compiler). qemu-user-static is for
# running an arm64 binary here by hand (qemu-aarch64-static -L
# build/arm64/root ...): no test needs it, as the guest's packages are
# unpacked, not configured (no binfmt_misc needed)
[ "${1:-}" = "--test" ] && need="$need
lintian:/usr/bin/lintian
cppcheck:/usr/bin/cppcheck
dpkg-dev:/usr/bin/dpkg-shlibdeps
linux-perf:/usr/bin/perf
util-linux:/usr/bin/setpriv
binutils:/usr/bin/objdump
debuginfod:/usr/bin/debuginfod
golang-go:/usr/bin/go
chromium:/usr/bin/chromium
libxml2-utils:/usr/bin/xmllint
npm:/usr/bin/npm
libc6-dbg:/usr/share/doc/libc6-dbg
lld:/usr/bin/ld.lld
g++:/usr/bin/g++
python3:/usr/bin/python3
curl:/usr/bin/curl
zstd:/usr/bin/zstd
xz-utils:/usr/bin/xz
iproute2:/bin/ss
groff-base:/usr/bin/groff
zsh:/usr/bin/zsh
strace:/usr/bin/strace
qemu-system-arm:/usr/bin/qemu-system-aarch64
mmdebstrap:/usr/bin/mmdebstrap
cpio:/usr/bin/cpio
gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc
qemu-user-static:/usr/bin/qemu-aarch64-static
"
# make bench: perf is the reference, libunwind the unwinder to compare
# with; section 13 runs in the arm64 guest (as make check-arm64)
[ "${1:-}" = "--bench" ] && need="$need
linux-perf:/usr/bin/perf
xz-utils:/usr/bin/xz
libunwind-dev:/usr/include/x86_64-linux-gnu/libunwind.h
qemu-system-arm:/usr/bin/qemu-system-aarch64
mmdebstrap:/usr/bin/mmdebstrap
cpio:/usr/bin/cpio
gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc
"
# A cross build (make CC="aarch64-linux-gnu-gcc --sysroot=DIR"): --check
# looks for the headers in the compiler's sysroot, and names the packages
# for its machine (the host's tools are not the build's business then).
sysroot=""
if [ "${1:-}" = "--check" ] && [ -n "${CC:-}" ]; then
	sysroot=$($CC -print-sysroot 2>/dev/null)
	[ "$sysroot" = / ] && sysroot=""
fi
if [ -n "$sysroot" ]; then
	march=$($CC -dumpmachine 2>/dev/null)
	case $march in aarch64*) darch=arm64 ;; x86_64*) darch=amd64 ;; *) darch=${march%%-*} ;; esac
	need=$(echo "$need" | grep '/include/' | sed "s|:|:$darch:$sysroot|")
fi
missing=""
for item in $need; do
	pkg=${item%%:*}
	file=${item#*:}
	if [ -n "$sysroot" ]; then
		pkg=$pkg:${file%%:*}
		file=${file#*:}
	fi
	[ -e "$file" ] || missing="$missing $pkg"
done
if [ -n "$missing" ] && [ -n "$sysroot" ]; then
	echo "stax: error: missing build dependencies in the sysroot $sysroot (install them there:$missing; sh scripts/arm64-guest.sh build makes one with them)" >&2
	exit 1
fi
if [ -n "$missing" ]; then
	if [ "${1:-}" = "--check" ]; then
		sudo=sudo
		[ "$(id -u)" = 0 ] && sudo=
		echo "stax: error: missing build dependencies (run: ${sudo:+sudo }apt-get install -y$missing; or make run, which installs them as root)" >&2
		exit 1
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "stax: error: missing build dependencies (run: sudo apt-get install -y$missing)" >&2
		exit 1
	fi
	echo "stax: installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || true
	apt-get install -y -qq $missing >&2 || {
		echo "stax: error: apt-get install failed:$missing (check the apt sources and run it by hand)" >&2
		exit 1
	}
fi
[ "${1:-}" = "--test" ] || exit 0

# npm packages of the browser checks (tests/e2e/browser.js): installed
# when build/npm does not hold exactly tests/npm/package-lock.json's
npm_dir=build/npm
npm_ok() {
	cmp -s tests/npm/package-lock.json "$npm_dir/package-lock.json" || return 1
	for p in ajv playwright-core speedscope; do
		[ -f "$npm_dir/node_modules/$p/package.json" ] || return 1
	done
}
npm_ok && exit 0
echo "stax: installing the tests' npm packages into $npm_dir (npm ci)" >&2
mkdir -p "$npm_dir" && cp tests/npm/package.json tests/npm/package-lock.json "$npm_dir/" || exit 1
if ! (cd "$npm_dir" && npm ci --no-audit --no-fund --silent) >"$npm_dir/npm.log" 2>&1 || ! npm_ok; then
	rm -f "$npm_dir/package-lock.json"
	echo "stax: error: npm ci in $npm_dir failed: $(tail -n 1 "$npm_dir/npm.log") (it needs the npm registry once; see $npm_dir/npm.log)" >&2
	exit 1
fi
exit 0
