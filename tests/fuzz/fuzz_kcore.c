/* fuzz_kcore.c - fuzz target for lib/kcore.c's reading of an ELF core
 * file's headers (/proc/kcore: the kernel writes it, but the parser
 * checks it as any outside bytes).
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: bytes 0..7 an address, 8..15 a length, the rest the file's
 * first bytes (ELF header and program headers). An offset found must lie
 * in a PT_LOAD segment that holds the whole range (checked here).
 */
#include "lib/kcore.h"
#include "lib/err.h"

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addr, len, off;
	struct err e;
	Elf64_Ehdr eh;
	size_t i;

	if (size < 16)
		return 0;
	memcpy(&addr, data, 8);
	memcpy(&len, data + 8, 8);
	data += 16;
	size -= 16;
	if (kcore_offset(data, size, addr, len, &off, &e))
		return 0;
	/* the answer must come from a segment that holds the range */
	memcpy(&eh, data, sizeof(eh));
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, data + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr && addr - ph.p_vaddr <= ph.p_filesz &&
		    len <= ph.p_filesz - (addr - ph.p_vaddr) && off == ph.p_offset + (addr - ph.p_vaddr))
			return 0;
	}
	abort();
}
