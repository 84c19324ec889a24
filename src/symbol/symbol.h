/* symbol.h - turn (module, address) into function names.
 *
 * A sym_session owns every module it has opened (ELF data, symbol tables,
 * debug files) and every string it returns; those strings stay valid until
 * sym_session_free(). Modules are cached by build-id when one is known,
 * otherwise by path. Lookups never fail hard: a module that cannot be
 * opened, or an address without a covering symbol, yields name == NULL,
 * and the caller prints "module+0xoffset". A symbol is reported only when
 * the address lies inside it (st_value <= addr < st_value + st_size; for
 * size-0 symbols, before the next symbol and inside the same section), so
 * a neighbour's name is never returned for an address in an unnamed
 * function.
 *
 * Sources of symbols, in order: the binary's .symtab, a separate debug
 * file by build-id (/usr/lib/debug/.build-id/xx/rest.debug) or by
 * .gnu_debuglink (next to the binary, in .debug/, in /usr/lib/debug/DIR),
 * MiniDebugInfo (.gnu_debugdata), then .dynsym. Names are demangled (C++,
 * Rust) unless demangling is turned off.
 */
#ifndef STAX_SYMBOL_SYMBOL_H
#define STAX_SYMBOL_SYMBOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sym_session;

/* Where a module is mapped in one process. */
struct sym_module_ref {
	const char *path;          /* file path from MMAP2, or "[vdso]" */
	const uint8_t *build_id;   /* may be NULL */
	size_t build_id_size;
	uint64_t start, end;       /* mapping's virtual address range */
	uint64_t pgoff;            /* file offset of start */
};

struct sym_result {
	const char *name;    /* demangled function name; NULL if none covers addr */
	uint64_t sym_offset; /* addr - function start (valid when name != NULL) */
	const char *module;  /* module base name ("libc.so.6", "[kernel.kallsyms]") */
	uint64_t file_offset; /* addr's offset in the module file: addr - start + pgoff */
	const char *source;  /* where the symbols came from: "symtab", "debuglink", ... */
};

struct sym_session *sym_session_new(void);
void sym_session_free(struct sym_session *s);
void sym_set_demangle(struct sym_session *s, bool on);

/* Resolve a user-space address inside the mapping m. The [vdso] is read
 * from this process's own vDSO (same kernel), so it resolves after the
 * target exited. Never fails: *out is always filled. */
void sym_lookup(struct sym_session *s, const struct sym_module_ref *m,
		uint64_t addr, struct sym_result *out);

/* Resolve a kernel address from /proc/kallsyms (read once, lazily).
 * Never fails: name is NULL when kallsyms is unreadable or hides
 * addresses; module is "[kernel.kallsyms]" (or "[modname]"). */
void sym_lookup_kernel(struct sym_session *s, uint64_t addr, struct sym_result *out);

/* Start reading kernel symbols on a thread of its own, for the first
 * sym_lookup_kernel() of any session to take (call it where kernel
 * addresses are certain to come, before the long work). */
void sym_kernel_prefetch(void);

/* Build-id of an ELF file: returns its size (0 when none or unreadable),
 * copies at most max bytes into out. */
size_t sym_read_build_id(const char *path, uint8_t *out, size_t max);

/* Demangle a C++ or Rust symbol; returns a malloc'd string or NULL when
 * name is not mangled. */
char *sym_demangle(const char *name);

/* For "stax info": did the module opened for m have a symbol table at all,
 * and where did it come from. Returns false when the module cannot be
 * opened. */
bool sym_module_info(struct sym_session *s, const struct sym_module_ref *m,
		     const char **source, size_t *nsyms);

#endif
