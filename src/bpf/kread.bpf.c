/* kread.bpf.c - read the running kernel's code, for annotate and the
 * page's assembly view of a kernel function where /proc/kcore is not
 * there (a kernel built without CONFIG_PROC_KCORE). A BPF_PROG_TYPE_SYSCALL
 * program, run only on request (BPF_PROG_TEST_RUN), never attached to
 * anything: it copies one chunk of kernel memory into a map with
 * bpf_probe_read_kernel (which needs CAP_PERFMON and is refused under a
 * lockdown that keeps kernel memory confidential). See kread_abi.h.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

typedef __u8 uint8_t;
typedef __u32 uint32_t;
typedef __u64 uint64_t;
typedef __s32 int32_t;

#include "kread_abi.h"

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, uint32_t);
	__type(value, struct kread_chunk);
} chunk SEC(".maps");

SEC("syscall")
int kread(struct kread_args *a)
{
	uint32_t key = 0, len = a->len;
	struct kread_chunk *c = bpf_map_lookup_elem(&chunk, &key);

	if (!c)
		return 0;
	if (len > KREAD_CHUNK)
		len = KREAD_CHUNK;
	if (!len) {
		a->ret = 0;
		return 0;
	}
	a->ret = bpf_probe_read_kernel(c->b, len, (const void *)a->addr);
	return 0;
}
