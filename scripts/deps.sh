#!/bin/sh
# deps.sh - install the Debian packages stax needs to build and test.
# As root: apt-get installs what is missing. Otherwise: print the exact
# command and fail, so `make` stops with something to do.
set -u
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
libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
"
[ "${1:-}" = "--test" ] && need="$need
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
"
# make bench: perf is the reference, libunwind the unwinder to compare with
[ "${1:-}" = "--bench" ] && need="$need
linux-perf:/usr/bin/perf
xz-utils:/usr/bin/xz
libunwind-dev:/usr/include/x86_64-linux-gnu/libunwind.h
"
missing=""
for item in $need; do
	pkg=${item%%:*}
	file=${item#*:}
	[ -e "$file" ] || missing="$missing $pkg"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
	echo "stax: installing missing packages:$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || true
	apt-get install -y -qq $missing >&2 || {
		echo "stax: error: apt-get install failed:$missing (check the apt sources and run it by hand)" >&2
		exit 1
	}
	exit 0
fi
echo "stax: error: missing build dependencies (run: sudo apt-get install -y$missing)" >&2
exit 1
