/* ref.h - where a module is mapped: the one mapping reference that the
 * unwinder (unwind_find_fn), the symbolizer (sym_lookup and friends) and
 * the views are handed for a process's mapping of a file.
 *
 * Every pointer is borrowed from the mapping it was made from (the
 * ingester's state, a profile's mappings), which must outlive the ref.
 */
#ifndef STAX_MODULE_REF_H
#define STAX_MODULE_REF_H

#include <stddef.h>
#include <stdint.h>

struct module_ref {
	const char *path;          /* file path from MMAP2, "[vdso]", "//anon" or "" */
	const uint8_t *build_id;   /* NULL when not known */
	size_t build_id_size;
	uint64_t start, end;       /* the mapping's virtual address range */
	uint64_t pgoff;            /* file offset of start */
};

/* The ref of a mapping whose build-id is build_id[0..build_id_size) (a
 * size of 0: not known, and build_id is NULL in the ref). */
static inline struct module_ref module_ref_make(const char *path, const uint8_t *build_id,
						size_t build_id_size, uint64_t start, uint64_t end,
						uint64_t pgoff)
{
	struct module_ref r = { path, build_id_size ? build_id : NULL, build_id_size, start, end, pgoff };
	return r;
}

#endif
