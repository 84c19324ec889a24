/* fuzz_cfi.c - fuzz target for the CFI parser, interpreter and table
 * compiler.
 *
 * libFuzzer:  clang -g -O1 -fsanitize=fuzzer,address -Isrc -D_GNU_SOURCE \
 *               tests/fuzz/fuzz_cfi.c src/unwind/?*.c src/lib/?*.c -lelf -lz
 * standalone (mutates a real .eh_frame N times, no libFuzzer needed):
 *   cc -g -O1 -fsanitize=address,undefined -DSTANDALONE -Isrc -D_GNU_SOURCE -o /tmp/fuzz_cfi \
 *      tests/fuzz/fuzz_cfi.c src/unwind/?*.c src/lib/?*.c -lelf -lz
 *   /tmp/fuzz_cfi /lib/x86_64-linux-gnu/libc.so.6 20000
 *
 * Input: byte 0 picks .eh_frame or .debug_frame (bit 0), an expression
 * run (bit 1, bit 2 pushing a CFA) and the machine whose rules compile
 * the rows (bit 3: aarch64, else x86-64); the rest is the section.
 * Every table built is then queried at many addresses, including SLOW
 * rows (the interpreter again) and the expression evaluator.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	struct cfi_section sec = {
		.data = data + 1, .size = size - 1, .vaddr = 0x10000,
		.is_eh = !(data[0] & 1),
	};
	if (data[0] & 2) {
		/* the bytes as a DWARF expression */
		uint64_t regs[CFI_NREGS] = { 0 }, out;
		cfi_eval_expr(data + 1, size - 1, regs, (1ull << CFI_NREGS) - 1, data[0] & 4, 0x1000,
			      fake_read, NULL, &out);
	}
	struct utable *t = calloc(1, sizeof(*t));
	/* bit 3: the rules of aarch64, else x86-64's */
	t->arch = data[0] & 8 ? UNWIND_ARCH_AARCH64 : UNWIND_ARCH_X86_64;
	utable_compile(t, &sec, 1);
	for (uint32_t i = 0; i < t->nrows; i++) {
		uint64_t a = t->base + t->addr[i];
		const struct urule *r = utable_find(t, a);
		if (r->kind == UR_SLOW)
			apply_slow_row(t, a);
	}
	free(t->addr);
	free(t->rule);
	free(t->page);
	free(t->rules);
	free(t->slow);
	free(t->blob);
	free(t);
	return 0;
}

#ifdef STANDALONE
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	elf_version(EV_CURRENT);
	int fd = open(argv[1], O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	elf_getshdrstrndx(elf, &shstrndx);
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf_Data *d = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".eh_frame") == 0)
			d = elf_getdata(scn, NULL);
	}
	if (!d)
		return 2;
	size_t n = d->d_size + 1;
	uint8_t *buf = malloc(n);
	long iters = atol(argv[2]);
	srand(1);
	for (long it = 0; it < iters; it++) {
		buf[0] = (uint8_t)(rand() & 6);
		memcpy(buf + 1, d->d_buf, d->d_size);
		/* a few random byte flips in a window, so damage is local */
		size_t len = n;
		size_t at = 1 + (size_t)rand() % (n - 1);
		int flips = 1 + rand() % 8;
		for (int f = 0; f < flips; f++)
			buf[1 + (at + (size_t)(rand() % 64)) % (n - 1)] = (uint8_t)rand();
		if (rand() % 4 == 0)
			len = 1 + (size_t)rand() % (n - 1); /* truncate */
		/* keep it fast: fuzz a slice around the damage */
		size_t lo = at > 4096 ? at - 4096 : 1;
		lo = 1; /* entries must start at offset 0: keep the whole prefix */
		(void)lo;
		LLVMFuzzerTestOneInput(buf, len > 65536 + at ? at + 65536 : len);
	}
	printf("fuzz_cfi: %ld inputs, no crash\n", iters);
	return 0;
}
#endif
