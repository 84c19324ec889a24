/* fuzz_pyframes.c - fuzz target for the readers of a CPython process's
 * bytes (src/ingest/pyframes.c): the 3.13 _Py_DebugOffsets block and str
 * objects, which the recorder reads from processes it does not trust.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: a memory image at address 0x10000: its first bytes as a
 * _Py_DebugOffsets block, then as a str object under each layout (the
 * one the block gave, 3.11's and 3.12's). Check: a str read is
 * NUL-terminated within the buffer.
 * Seeds: tests/fuzz/corpus/pyframes (3.13.0's block; str objects).
 */
#include "ingest/pyframes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct image {
	const uint8_t *data;
	size_t size;
};

#define BASE 0x10000u

static int image_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct image *m = arg;
	if (addr < BASE || addr - BASE > m->size || len > m->size - (addr - BASE))
		return -EFAULT;
	memcpy(buf, m->data + (addr - BASE), len);
	return 0;
}

static void read_str(const struct pyf_layout *l, const struct image *m)
{
	char out[PYF_MAX_NAME];
	if (pyf_unicode(l, image_read, (void *)m, BASE, out, sizeof(out)) == 0 &&
	    strnlen(out, sizeof(out)) == sizeof(out))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct image m = { data, size };
	struct pyf_layout l;

	if (pyf_layout_from_debug(data, size, &l) == 0)
		read_str(&l, &m);
	if (pyf_layout_builtin(0x030b, &l))
		read_str(&l, &m);
	if (pyf_layout_builtin(0x030c, &l))
		read_str(&l, &m);
	return 0;
}
