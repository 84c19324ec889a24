#!/bin/sh
# arm64-guest.sh - a real arm64 kernel to test stax in: Debian 12's arm64
# kernel under qemu-system-aarch64 (-M virt -cpu max: pointer
# authentication, BTI), with a Debian 12 arm64 userland made from Debian's
# packages alone, cached under build/arm64/.
#
#   sh scripts/arm64-guest.sh build
#       make build/arm64/root (mmdebstrap --variant=extract: the packages
#       are unpacked, no maintainer script runs, so no qemu-user is
#       needed), the kernel and a small initramfs (busybox and the 9p
#       modules). A second call with the same package list does nothing.
#       build/arm64/root is also the sysroot of the cross build:
#       make CC="aarch64-linux-gnu-gcc --sysroot=build/arm64/root"
#   sh scripts/arm64-guest.sh run [-t SECONDS] [-c CPUS] [-m MIB] CMD...
#       boot the guest, run CMD (words joined by spaces, run by sh) as
#       root in the directory it was called from, and power off. The
#       repository is shared read-write at the same path as on the host
#       (9p); the guest's root is build/arm64/root, read-only (with
#       tmpfs on /tmp, /root, /run and /var/tmp). CMD's standard output
#       and error come back as they were, and its exit status is this
#       script's. A guest that does not finish within SECONDS (default
#       1800) is stopped: exit status 124. A guest that never ran CMD
#       (a boot failure): 125, with the end of the console log.
#   sh scripts/arm64-guest.sh sysroot
#       print the sysroot's absolute path (after build)
#
# The guest runs under TCG (no KVM for arm64 on x86-64): its code runs
# 10-30 times slower than the host's; tests there assert shares, never
# times. ARM64_DIR=DIR keeps the cache elsewhere than build/arm64.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${ARM64_DIR:-$top/build/arm64}
case $dir in /*) ;; *) dir=$top/$dir ;; esac
root=$dir/root

# What the guest runs (busybox for its init, perf, libc's local symbols
# (start_thread, __libc_start_call_main: the roots of stacks), a shell,
# the tools the tests use and Debian's CPython 3.11 (the Python frames of
# tests/arm64/runtimes.sh) and what the cross build links against (the -dev
# packages of scripts/deps.sh, for arm64; libgcc-12-dev for clang's
# --target=aarch64-linux-gnu), in one tree.
packages="busybox-static linux-image-arm64 linux-perf libc6-dbg
bash dash coreutils grep sed gawk findutils diffutils procps util-linux binutils file
python3-minimal python3.11
libc6-dev libgcc-12-dev libelf-dev libdw-dev libzstd-dev libxxhash-dev libiberty-dev
zlib1g-dev liblzma-dev libmicrohttpd-dev libdebuginfod-dev libcapstone-dev libbpf-dev"
# Bumped when what build makes of the packages changes.
layout=5
mirror=${ARM64_MIRROR:-http://deb.debian.org/debian}
security=${ARM64_SECURITY_MIRROR:-http://deb.debian.org/debian-security}

die() {
	echo "arm64-guest: error: $*" >&2
	exit 1
}

need_tools() {
	for t in mmdebstrap:mmdebstrap qemu-system-aarch64:qemu-system-arm cpio:cpio; do
		command -v "${t%%:*}" >/dev/null 2>&1 ||
			die "${t%%:*} is missing (run: make test-deps, or apt-get install ${t#*:})"
	done
}

stamp_of() {
	printf '%s\n%s\n%s\n' "$packages" "$layout" "$mirror" | cksum | cut -d' ' -f1
}

# The modules NAME needs, dependencies first (from each .ko's modinfo;
# depmod has not run in an extracted tree).
moddeps() {
	f=$(find "$moddir" -name "$1.ko" | head -n 1)
	[ -n "$f" ] || die "kernel module $1 not found under $moddir"
	for d in $(tr '\0' '\n' <"$f" | sed -n 's/^depends=//p' | tr ',' ' '); do
		moddeps "$d"
	done
	case " $mods " in *" $1 "*) ;; *) mods="$mods $1" ;; esac
}

# The initramfs: busybox, the modules for virtio-pci and 9p, and init,
# which mounts the root and the repository, runs the command and powers
# off.
make_initrd() {
	kver=$(ls "$root/lib/modules" | head -n 1)
	moddir=$root/lib/modules/$kver
	ird=$dir/initrd.d
	rm -rf "$ird"
	mkdir -p "$ird/bin" "$ird/mod" || return 1
	cp "$root/bin/busybox" "$ird/bin/busybox" || return 1
	mods=""
	for m in virtio_pci 9pnet_virtio 9p; do
		moddeps "$m"
	done
	for m in $mods; do
		cp "$(find "$moddir" -name "$m.ko" | head -n 1)" "$ird/mod/" || return 1
	done
	echo "$mods" >"$ird/modules"
	cat >"$ird/init" <<'EOF'
#!/bin/busybox sh
# init of the stax arm64 guest (scripts/arm64-guest.sh)
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /newroot
mount -t proc proc /proc
mount -t devtmpfs dev /dev
for m in $(cat /modules); do
	insmod /mod/$m.ko || echo "guest: insmod $m failed"
done
run="" share=""
for w in $(cat /proc/cmdline); do
	case $w in
	stax.run=*) run=${w#stax.run=} ;;
	stax.share=*) share=${w#stax.share=} ;;
	esac
done
fail() {
	echo "guest: $*"
	poweroff -f
}
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=loose,ro root /newroot ||
	fail "cannot mount the root"
r=/newroot
mount -t proc proc $r/proc && mount -t sysfs sys $r/sys && mount -t devtmpfs dev $r/dev ||
	fail "cannot mount proc, sys or dev"
mount -t tracefs tracefs $r/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs $r/sys/kernel/debug 2>/dev/null
mkdir -p $r/dev/pts $r/dev/shm
mount -t devpts devpts $r/dev/pts
mount -t tmpfs shm $r/dev/shm
for d in tmp root run var/tmp; do
	mount -t tmpfs -o mode=1777 tmp $r/$d || fail "cannot mount a tmpfs on /$d"
done
chmod 700 $r/root
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000,cache=mmap work $r$share ||
	fail "cannot mount the repository on $share"
[ -f $r$run/cmd ] || fail "no command in $run"
# TCG makes the perf interrupt slow, and the kernel would lower
# kernel.perf_event_max_sample_rate as a test goes (to 250 Hz, under
# what the tests ask for): not here
echo 0 >$r/proc/sys/kernel/perf_cpu_time_max_percent
# the guest's clock starts at the epoch: the host's time, for make and
# for files compared by age
[ -f $r$run/time ] && date -s "@$(cat $r$run/time)" >/dev/null
echo "guest: running $run/cmd"
chroot $r /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME=/root \
	TERM=dumb LANG=C.UTF-8 STAX_GUEST=arm64 \
	/bin/sh -c "cd \"\$(cat $run/cwd)\" && exec /bin/sh $run/cmd" \
	>$r$run/stdout 2>$r$run/stderr </dev/null
echo $? >$r$run/rc
sync
echo "guest: done"
poweroff -f
EOF
	chmod 755 "$ird/init"
	(cd "$ird" && find . | cpio -o -H newc --quiet) | gzip -1 >"$dir/initrd.img.new" &&
		mv "$dir/initrd.img.new" "$dir/initrd.img" &&
		cp "$root/boot/vmlinuz-$kver" "$dir/vmlinuz" &&
		rm -rf "$ird"
}

cmd_build() {
	want=$(stamp_of)
	if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$want" ] &&
		[ -f "$dir/vmlinuz" ] && [ -f "$dir/initrd.img" ]; then
		return 0
	fi
	need_tools
	mkdir -p "$dir" || exit 1
	rm -f "$dir/stamp"
	rm -rf "$root.new"
	echo "arm64-guest: unpacking Debian 12 arm64 packages into $root (mmdebstrap)" >&2
	t0=$(date +%s)
	# shellcheck disable=SC2086
	if ! mmdebstrap --variant=extract --mode=root --architectures=arm64 \
		--include="$(echo $packages | tr ' ' ',')" bookworm "$root.new" \
		"deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
		"deb $security bookworm-security main" >"$dir/mmdebstrap.log" 2>&1; then
		tail -n 20 "$dir/mmdebstrap.log" >&2
		die "mmdebstrap failed (see $dir/mmdebstrap.log)"
	fi
	# what maintainer scripts would have made: /bin/sh, the users, the
	# mount points init uses
	r=$root.new
	ln -sf dash "$r/bin/sh"
	# update-alternatives' links
	ln -sf gawk "$r/usr/bin/awk"
	# absolute symlinks point into this machine's / when the tree is a
	# sysroot (libz.so -> /lib/aarch64-linux-gnu/libz.so.1.2.13: the
	# linker would take libz.a): relative ones work in both
	find "$r" -type l -lname '/*' | while read -r l; do
		ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$r$(readlink "$l")")" "$l"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' >"$r/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
	mkdir -p "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/root" "$r/run" "$r/var/tmp"
	ls "$r/boot"/vmlinuz-* >/dev/null 2>&1 || die "no kernel in $r/boot"
	rm -rf "$root"
	mv "$root.new" "$root" || exit 1
	make_initrd || die "cannot make the initramfs"
	echo "$want" >"$dir/stamp"
	echo "arm64-guest: built in $(($(date +%s) - t0)) s ($(du -sm "$root" | cut -f1) MiB)" >&2
}

cmd_run() {
	limit=1800 cpus=2 mem=2048
	while [ $# -gt 0 ]; do
		case $1 in
		-t) limit=$2; shift 2 ;;
		-c) cpus=$2; shift 2 ;;
		-m) mem=$2; shift 2 ;;
		--) shift; break ;;
		*) break ;;
		esac
	done
	[ $# -gt 0 ] || die "run: no command (usage: $0 run [-t SECONDS] [-c CPUS] [-m MIB] CMD...)"
	[ -f "$dir/stamp" ] || die "no guest in $dir (run: sh scripts/arm64-guest.sh build)"
	command -v qemu-system-aarch64 >/dev/null 2>&1 ||
		die "qemu-system-aarch64 is missing (run: make test-deps)"
	cwd=$(pwd)
	case $cwd/ in "$top"/*) ;; *) die "run: call it from inside $top (the guest sees only that)" ;; esac
	mkdir -p "$dir/run" "$root$top" || exit 1
	run=$(mktemp -d "$dir/run/XXXXXX") || exit 1
	echo "$*" >"$run/cmd"
	echo "$cwd" >"$run/cwd"
	date +%s >"$run/time"
	# pauth-impdef: QEMU's cheaper signing algorithm (the architecture's
	# QARMA5 costs TCG much more); programs see pointer authentication
	# all the same
	timeout "$limit" qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp "$cpus" -m "$mem" \
		-display none -monitor none -serial "file:$run/console.log" -no-reboot \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "console=ttyAMA0 quiet loglevel=3 panic=-1 stax.run=$run stax.share=$top" \
		-virtfs "local,path=$root,mount_tag=root,security_model=none,readonly=on" \
		-virtfs "local,path=$top,mount_tag=work,security_model=none" </dev/null
	q=$?
	if [ -f "$run/rc" ]; then
		cat "$run/stdout"
		cat "$run/stderr" >&2
		rc=$(cat "$run/rc")
		rm -rf "$run"
		exit "$rc"
	fi
	if [ "$q" = 124 ]; then
		echo "arm64-guest: error: the guest did not finish within $limit s (console: $run/console.log)" >&2
		tail -n 20 "$run/console.log" >&2
		exit 124
	fi
	echo "arm64-guest: error: the guest did not run the command (qemu exited $q; console: $run/console.log)" >&2
	tail -n 30 "$run/console.log" >&2
	exit 125
}

case ${1:-} in
build) cmd_build ;;
run) shift; cmd_run "$@" ;;
sysroot) echo "$root" ;;
*) echo "usage: sh scripts/arm64-guest.sh build | run [-t SECONDS] [-c CPUS] [-m MIB] CMD... | sysroot" >&2; exit 2 ;;
esac
