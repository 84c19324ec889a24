/* fuzz_unwind.c - fuzz target for stack unwinding over bytes from outside
 * (src/unwind/unwind.c, splice.c, x86_64.c): the registers and the copy
 * of the user stack of a sample, which the profiled program controls (and
 * a perf.data file carries), and the kernel's frame-pointer chain, with
 * the real CFI of this machine's libc, ld.so and vDSO.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * The modules are mapped at made-up addresses (module i's code at
 * 0x7f0000000000 + i * 2^40, bias so that pc - bias is its ELF address);
 * code bytes (for the unwinder's recognition of generated code) are read
 * from the modules as this process loaded them. Input:
 *   byte 0      mode: FP, DWARF or HYBRID (value % 3); bit 2: a code
 *               reader; bit 3: unwind a second time in the same space
 *   byte 1      frame limit (0: UNWIND_MAX_DEPTH)
 *   bytes 2-5   valid register mask (RIP and RSP are always valid)
 *   17 words    registers rax..r15, rip (rsp is the stack copy's start)
 *   byte        n: kernel chain length (% 64), then n words
 *   the rest    the stack copy
 * Every 8-byte word (registers, chain, each aligned word of the stack)
 * whose top byte is 0xaa becomes a code address: module (bits 48-55) and
 * offset in its code (low 32 bits); top byte 0xbb, a stack address: the
 * copy's start plus the low 16 bits. Other words are taken as they are.
 * Check: no more frames than the limit, no more found by CFI than found.
 */
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"

#define STACK_BASE 0x7ffc00001000ull
#define MAX_MODS 4

struct mod {
	const char *path;       /* as module_ref.path */
	char *owned;
	uint64_t real;          /* where this process has the ELF address 0 */
	uint64_t vaddr, size;   /* the executable PT_LOAD */
	uint64_t pgoff;
	uint64_t start, end;    /* the made-up mapping */
};

static struct mod mods[MAX_MODS];
static int nmods;
static struct unwinder *uw;

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name;
	struct mod *m;
	(void)size, (void)arg;
	if (nmods >= MAX_MODS || !name)
		return 0;
	/* libc, ld.so and the vDSO: stable on one machine */
	if (!strstr(name, "libc.so") && !strstr(name, "ld-linux") && !strstr(name, "linux-vdso"))
		return 0;
	m = &mods[nmods];
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		m->vaddr = ph->p_vaddr;
		m->size = ph->p_filesz;
		m->pgoff = ph->p_offset & ~0xfffull;
		break;
	}
	if (!m->size)
		return 0;
	if (strstr(name, "linux-vdso")) {
		m->path = "[vdso]";
	} else {
		m->owned = realpath(name, NULL);
		if (!m->owned)
			return 0;
		m->path = m->owned;
	}
	m->real = info->dlpi_addr;
	m->start = 0x7f0000000000ull + ((uint64_t)nmods << 40) + (m->vaddr & ~0xfffull);
	m->end = m->start + (m->vaddr & 0xfff) + m->size;
	nmods++;
	return 0;
}

static const struct mod *mod_of(uint64_t pc)
{
	for (int i = 0; i < nmods; i++)
		if (pc >= mods[i].start && pc < mods[i].end)
			return &mods[i];
	return NULL;
}

static bool find(void *arg, uint64_t pc, struct module_ref *out)
{
	const struct mod *m = mod_of(pc);
	(void)arg;
	if (!m)
		return false;
	memset(out, 0, sizeof(*out));
	out->path = m->path;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	return true;
}

static bool read_code(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct mod *m = mod_of(addr);
	(void)arg;
	if (!m || len > m->end - addr)
		return false;
	/* the same bytes in this process: ELF address = addr - (start - (vaddr & ~0xfff)) */
	memcpy(buf, (const void *)(uintptr_t)(m->real + (addr - m->start) + (m->vaddr & ~0xfffull)), len);
	return true;
}

static uint64_t decode(uint64_t w)
{
	uint8_t tag = (uint8_t)(w >> 56);
	if (tag == 0xaa && nmods) {
		const struct mod *m = &mods[((w >> 48) & 0xff) % (uint64_t)nmods];
		return m->start + (m->vaddr & 0xfff) + (uint32_t)w % m->size;
	}
	if (tag == 0xbb)
		return STACK_BASE + (w & 0xffff);
	return w;
}

static uint64_t take(const uint8_t **p, const uint8_t *end)
{
	uint64_t w = 0;
	size_t n = (size_t)(end - *p) < 8 ? (size_t)(end - *p) : 8;
	memcpy(&w, *p, n);
	*p += n;
	return w;
}

static void check(const struct unwind_result *res, size_t limit)
{
	if (res->n > limit || res->n > UNWIND_MAX_DEPTH || res->dwarf_frames > res->n) {
		fprintf(stderr, "fuzz_unwind: %zu frames (%zu by CFI) for a limit of %zu\n", res->n,
			res->dwarf_frames, limit);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct unwind_frame frames[UNWIND_MAX_DEPTH];
	static uint64_t chain[64], space;
	const uint8_t *p = data + 6, *end = data + size;
	struct unwind_input in;
	struct unwind_result res;
	uint8_t *stack;
	size_t limit, nchain, nstack, i;
	enum unwind_mode mode;

	if (!uw) {
		dl_iterate_phdr(add_module, NULL);
		uw = unwinder_new();
	}
	if (size < 6)
		return 0;
	memset(&in, 0, sizeof(in));
	mode = (enum unwind_mode)(data[0] % 3);
	limit = data[1] ? data[1] : UNWIND_MAX_DEPTH;
	memcpy(&in.regs.valid, data + 2, 4);
	in.regs.valid |= 1u << UNW_RIP | 1u << UNW_RSP;
	for (i = 0; i < UNW_NREGS; i++)
		in.regs.r[i] = decode(take(&p, end));
	in.regs.r[UNW_RSP] = STACK_BASE;
	nchain = p < end ? *p++ % 64 : 0;
	for (i = 0; i < nchain; i++)
		chain[i] = decode(take(&p, end));
	nstack = (size_t)(end - p);
	stack = malloc(nstack ? nstack : 1);
	memcpy(stack, p, nstack);
	for (i = 0; i + 8 <= nstack; i += 8) {
		uint64_t w;
		memcpy(&w, stack + i, 8);
		w = decode(w);
		memcpy(stack + i, &w, 8);
	}
	in.stack = stack;
	in.stack_size = nstack;
	in.fp_chain = chain;
	in.fp_chain_len = nchain;
	in.find = find;
	in.read_code = data[0] & 4 ? read_code : NULL;
	in.space = ++space;
	unwind_sample(uw, mode, &in, frames, limit, &res);
	check(&res, limit);
	if (data[0] & 8) {
		/* again in the same address space: the modules found are reused */
		unwind_sample(uw, mode, &in, frames, limit, &res);
		check(&res, limit);
	}
	free(stack);
	return 0;
}
