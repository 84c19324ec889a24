# roots.awk - share of samples whose stack reaches its root (bench helper).
#
#   stax flame --folded -i FILE       | awk -v fmt=folded -f bench/roots.awk
#   perf script -F comm,ip,sym -i FILE | awk -v fmt=script -f bench/roots.awk
#
# Prints "SAMPLES ROOTED PERCENT". A stack reaches its root when one of its
# frames is main or the libc frames that call it, a thread or process start
# function, CPython's Py_BytesMain, ld.so's _dl_start_user (running the
# libraries' constructors) or Go's runtime roots: the list stax info uses
# (src/unwind/roots.c). Samples of
# bench/work/benchrun (the timer that wraps each workload) are left out.
# folded: "comm;root;...;leaf COUNT" lines. script: one block per sample,
# a "comm" line then "ip sym" lines, blocks separated by blank lines.

BEGIN {
	# src/unwind/roots.c's list (Go's ".abi0" names are stripped below)
	split("main __libc_start_call_main __libc_start_main _start __start start_thread " \
	      "clone clone3 __clone __clone3 Py_BytesMain _dl_start_user __start_context " \
	      "runtime.goexit runtime.mstart runtime.rt0_go runtime.clone _rt0_amd64 _rt0_amd64_linux " \
	      "_rt0_arm64 _rt0_arm64_linux", r, " ")
	for (i in r)
		root[r[i]] = 1
	n = 0; m = 0
}

fmt == "folded" && NF {
	c = $NF
	s = $0
	sub(/[ \t]+[0-9]+[ \t]*$/, "", s)
	k = split(s, f, ";")
	if (f[1] == "benchrun")
		next
	hit = 0
	for (i = 2; i <= k; i++) {
		sub(/\.abi0$/, "", f[i])
		if (f[i] in root) { hit = 1; break }
	}
	n += c
	if (hit)
		m += c
}

fmt == "script" {
	if (!NF) { flush(); next }
	if (!inblock) {
		inblock = 1; hit = 0
		comm = $1
		next
	}
	sym = $2
	sub(/\.abi0$/, "", sym)
	if (sym in root)
		hit = 1
}

function flush() {
	if (inblock && comm != "benchrun") {
		n++
		if (hit)
			m++
	}
	inblock = 0
}

END {
	if (fmt == "script")
		flush()
	printf "%d %d %.2f\n", n, m, n ? 100 * m / n : 0
}
