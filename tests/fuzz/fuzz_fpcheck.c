/* fuzz_fpcheck.c - fuzz target for the frame-pointer check of a binary
 * (src/symbol/fpcheck.c, used by stax doctor): its sections, symbol
 * tables and the first bytes of every function symbol's code.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: an ELF file (written to a temporary file: the check takes a
 * path). Check: no more functions with frame pointers than functions.
 * Seeds: tests/fuzz/make-elf-corpus.sh (crafted ELF files).
 */
#include "fuzz-files.h"

#include "symbol/fpcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_files *f = fuzz_files_init("fpcheck");
	struct fp_report r;

	fuzz_write(f->bin, data, size);
	if (fp_check_file(f->bin, &r) == 0 && r.with_fp > r.functions) {
		fprintf(stderr, "fuzz_fpcheck: %zu of %zu functions keep frame pointers\n",
			r.with_fp, r.functions);
		abort();
	}
	return 0;
}
