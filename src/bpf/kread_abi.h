/* kread_abi.h - what the kernel-code reader (bpf/kread.bpf.c) and its
 * user-space side (symbol/kcode.c) share. Fixed-width types only, defined
 * by the includer (see moment_abi.h).
 *
 * User space runs the program with BPF_PROG_TEST_RUN, the context in and
 * out being struct kread_args: it copies len bytes (at most
 * KREAD_CHUNK) of kernel memory at addr into the one value of the map
 * "chunk" and says in ret what bpf_probe_read_kernel returned.
 */
#ifndef STAX_BPF_KREAD_ABI_H
#define STAX_BPF_KREAD_ABI_H

#define KREAD_CHUNK 32768

struct kread_args {
	uint64_t addr;
	uint32_t len;
	int32_t ret;
};

struct kread_chunk {
	uint8_t b[KREAD_CHUNK];
};

#ifndef __bpf__
_Static_assert(sizeof(struct kread_args) == 16, "kread_args layout");
#endif

#endif
