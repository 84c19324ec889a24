/* kcode.c - the running kernel's code, for annotate and the page's
 * assembly view of kernel functions: from /proc/kcore where the kernel
 * has it (as perf annotate reads it), else with a small BPF program that
 * copies it with bpf_probe_read_kernel (bpf/kread.bpf.c). Either needs
 * root (CAP_PERFMON, and CAP_BPF for the program).
 */
#include "symbol/symbol.h"
#include "lib/err.h"
#include "lib/kcore.h"
#include "lib/perm.h"
#include "lib/util.h"

#include <stdint.h>
#include "bpf/kread_abi.h"
#include "kread.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#define KCORE_PATH "/proc/kcore"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* the program, loaded on first use and kept (serve asks many times) */
static pthread_mutex_t kread_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kread_bpf *kread_skel;

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

static int bpf_read(uint64_t addr, uint8_t *buf, size_t len, struct err *err)
{
	uint32_t key = 0;
	size_t at;
	int ret = 0;

	if (geteuid() != 0 && !(perm_has_cap(CAP_BPF) && perm_has_cap(CAP_PERFMON)))
		return err_set(err, -EPERM, "cannot read the kernel's code: it needs root, or CAP_BPF and "
			       "CAP_PERFMON");
	pthread_mutex_lock(&kread_lock);
	if (!kread_skel) {
		libbpf_set_print(quiet);
		kread_skel = kread_bpf__open_and_load();
		if (!kread_skel) {
			ret = errno ? -errno : -EINVAL;
			pthread_mutex_unlock(&kread_lock);
			return err_set(err, ret, "cannot read the kernel's code: there is no %s, and its BPF "
				       "reader did not load: %s (a lockdown or seccomp policy may refuse BPF)",
				       KCORE_PATH, strerror(-ret));
		}
	}
	for (at = 0; at < len && !ret; at += KREAD_CHUNK) {
		struct kread_args a = { addr + at, (uint32_t)MIN(len - at, (size_t)KREAD_CHUNK), 0 };
		struct kread_chunk *c = xmalloc(sizeof(*c));
		/* a syscall program's context is written back to ctx_in */
		struct bpf_test_run_opts o = { .sz = sizeof(o), .ctx_in = &a, .ctx_size_in = sizeof(a) };
		if ((ret = bpf_prog_test_run_opts(bpf_program__fd(kread_skel->progs.kread), &o)))
			ret = errno ? -errno : -EINVAL;
		else if (a.ret)
			ret = a.ret;
		else if (bpf_map_lookup_elem(bpf_map__fd(kread_skel->maps.chunk), &key, c))
			ret = errno ? -errno : -EIO;
		else
			memcpy(buf + at, c->b, a.len);
		free(c);
	}
	pthread_mutex_unlock(&kread_lock);
	if (ret)
		return err_set(err, ret, "cannot read %zu bytes of the kernel at 0x%llx: %s", len,
			       (unsigned long long)addr, strerror(-ret));
	return 0;
}

int sym_kernel_code(uint64_t addr, void *buf, size_t len, const char **from, struct err *err)
{
	int ret;

	*from = KCORE_PATH;
	if (access(KCORE_PATH, F_OK) == 0 || errno != ENOENT)
		return kcore_read(KCORE_PATH, addr, buf, len, err);
	*from = "the running kernel, read by BPF";
	ret = bpf_read(addr, buf, len, err);
	return ret;
}
