/* symbol.h - turn (module, address) into function names.
 *
 * A sym_session owns every module it has opened (ELF data, symbol tables,
 * debug files) and every string it returns; those strings stay valid until
 * sym_session_free(). Modules are cached by build-id when one is known,
 * otherwise by path. Lookups never fail hard: a module that cannot be
 * opened, or an address without a covering symbol, yields name == NULL,
 * and the caller prints "module+0xoffset". A symbol is reported only when
 * the address lies inside it (st_value <= addr < st_value + st_size; for
 * size-0 function and NOTYPE symbols of executable sections, before the
 * next symbol, inside the same section and outside any sized symbol), so
 * a neighbour's name is never returned for an address in an unnamed
 * function.
 *
 * Sources of symbols, in order: the binary's .symtab, a separate debug
 * file by build-id (/usr/lib/debug/.build-id/xx/rest.debug) or by
 * .gnu_debuglink (next to the binary, in .debug/, in /usr/lib/debug/DIR),
 * MiniDebugInfo (.gnu_debugdata), then .dynsym. To those the binary's
 * own bytes add "NAME@plt" for x86-64 PLT entries and "_start" for an
 * executable's entry point when nothing else names it (elf.c). Names are
 * demangled (C++, Rust; "NAME@plt" too) unless demangling is turned off.
 *
 * Inline chains and source lines come from DWARF, found in the same order
 * (the binary, /usr/lib/debug/.build-id, .gnu_debuglink) and last from
 * debuginfod when DEBUGINFOD_URLS is set (sym_set_debuginfod; a build-id
 * that failed is not asked again in the session).
 */
#ifndef STAX_SYMBOL_SYMBOL_H
#define STAX_SYMBOL_SYMBOL_H

#include "module/ref.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */
struct sym_session;

/* One frame of an address's inline chain. */
struct sym_frame {
	const char *name;    /* function (demangled unless turned off); may be NULL */
	const char *file;    /* source file (path as DWARF has it); NULL unknown */
	uint32_t line;       /* 0 unknown */
	bool inlined;        /* code of this function was inlined into the next frame */
};

#define SYM_MAX_INLINE 32

struct sym_result {
	const char *name;    /* demangled function name; NULL if none covers addr */
	uint64_t sym_offset; /* addr - function start (valid when name != NULL) */
	const char *module;  /* module base name ("libc.so.6", "[kernel.kallsyms]") */
	uint64_t file_offset; /* addr's offset in the module file: addr - start + pgoff */
	/* When name is NULL and the module's ELF address of addr is known
	 * (has_vaddr): the ELF virtual address of the function holding it,
	 * from the unwind tables' FDE covering it (fde true), else of addr
	 * itself. Unknown frames are named MODULE+0xFUNC_VADDR. */
	uint64_t func_vaddr;
	bool has_vaddr, fde;
	const char *source;  /* where the symbols came from: "symtab", "debuglink", ... */
	/* From DWARF, when the module has it (else NULL / 0 / 0): the source
	 * line of addr in the function name (the call site when code was
	 * inlined there), and the inlined functions at addr, innermost first;
	 * inlined[0].line is addr's own line. inlined points into the session
	 * and is valid until the next lookup. */
	const char *file;
	uint32_t line;
	const struct sym_frame *inlined;
	size_t ninlined;
};

struct sym_session *sym_session_new(void);
void sym_session_free(struct sym_session *s);
/* Free what the session loaded for ref's module (symbol table, DWARF,
 * debug files) and every string its lookups returned; a later lookup in
 * it loads it again. For a caller that resolves one module at a time:
 * the session then holds one module's tables, not all of them. */
void sym_session_release(struct sym_session *s, const struct module_ref *ref);
void sym_set_demangle(struct sym_session *s, bool on);
/* Look up DWARF lines and inline chains (default on). */
void sym_set_lines(struct sym_session *s, bool on);
/* Ask debuginfod for missing debug info (default: on when
 * DEBUGINFOD_URLS is set and not empty). */
void sym_set_debuginfod(struct sym_session *s, bool on);

/* Resolve a user-space address inside the mapping m. The [vdso] is read
 * from this process's own vDSO (same kernel), so it resolves after the
 * target exited. Never fails: *out is always filled. */
void sym_lookup(struct sym_session *s, const struct module_ref *m,
		uint64_t addr, struct sym_result *out);

/* Resolve a kernel address from /proc/kallsyms (read once, lazily).
 * Never fails: name is NULL when kallsyms is unreadable or hides
 * addresses; module is "[kernel.kallsyms]" (or "[modname]"). */
void sym_lookup_kernel(struct sym_session *s, uint64_t addr, struct sym_result *out);
/* The kernel function holding addr in this boot's /proc/kallsyms: its
 * name (demangled as the session says), start and end (the next symbol's
 * start). false when kallsyms names nothing there. */
bool sym_kernel_function(struct sym_session *s, uint64_t addr, const char **name, uint64_t *start,
			 uint64_t *end);
/* len bytes of the running kernel's code at addr into buf (kcode.c):
 * from /proc/kcore, or where the kernel has none, read by a BPF program
 * (bpf_probe_read_kernel). *from says which ("/proc/kcore" or
 * "the running kernel, read by BPF"). 0, or a negative code with err saying why
 * (it needs root). */
int sym_kernel_code(uint64_t addr, void *buf, size_t len, const char **from, struct err *err);

/* Start reading kernel symbols on a thread of its own, for the first
 * sym_lookup_kernel() of any session to take (call it where kernel
 * addresses are certain to come, before the long work). */
void sym_kernel_prefetch(void);

/* Build-id of an ELF file: returns its size and copies it into out (0
 * when none, unreadable, or longer than max). */
size_t sym_read_build_id(const char *path, uint8_t *out, size_t max);

/* Demangle a C++ or Rust symbol; returns a malloc'd string or NULL when
 * name is not mangled. */
char *sym_demangle(const char *name);

/* For "stax info": did the module opened for m have a symbol table at all,
 * and where did it come from. Returns false when the module cannot be
 * opened. */
bool sym_module_info(struct sym_session *s, const struct module_ref *m,
		     const char **source, size_t *nsyms);
/* Where the module's DWARF (lines, inlines) comes from: "binary",
 * "debug-file", "debuglink", "debuginfod", or "none". */
const char *sym_module_dwarf_source(struct sym_session *s, const struct module_ref *m);
/* Both, as the recording's META "symbols:MODULE" value says them
 * (docs/FORMAT.md): "SOURCE, lines from DWSOURCE", SOURCE "not found"
 * when the module cannot be opened. Written by the recorder
 * (ingest/symbols.c) and stax symbolize (profile/resymbolize.c). */
void sym_module_sources(struct sym_session *s, const struct module_ref *m, char *out,
			size_t outlen);

/* Function covering addr in module m, for annotate: its ELF start address
 * and size, and the file offset of its first byte. False when unknown. */
bool sym_function_range(struct sym_session *s, const struct module_ref *m, uint64_t addr,
			uint64_t *vaddr, uint64_t *size, uint64_t *file_offset);
/* Known instruction boundaries in the ELF address range [lo, hi) of
 * module m, for a disassembler to resume at after bytes it cannot
 * decode: starts of line-table rows, of symbols and of FDEs. Up to max
 * into out, unsorted, possibly repeated; returns the count. */
size_t sym_boundaries(struct sym_session *s, const struct module_ref *m, uint64_t lo, uint64_t hi,
		      uint64_t *out, size_t max);
/* Source line of an ELF virtual address of module m (innermost frame). */
bool sym_source_line(struct sym_session *s, const struct module_ref *m, uint64_t vaddr,
		     const char **file, uint32_t *line);

/* ---- JIT code: /tmp/perf-PID.map and jitdump (jit.c) ---- */

#define SYM_JIT_MAX_FILE (32u << 20)

/* A table of JIT symbols: fill with sym_jit_add_*(), then find. The adds
 * return the number of functions added, or -EINVAL with a message in err
 * (what names the input in it) when nothing in data could be read. */
struct sym_jit;
struct sym_jit *sym_jit_new(void);
void sym_jit_free(struct sym_jit *j);
int sym_jit_add_perfmap(struct sym_jit *j, const char *data, size_t size, const char *what,
			struct err *err);
int sym_jit_add_jitdump(struct sym_jit *j, const void *data, size_t size, const char *what,
			struct err *err);
/* Name covering addr (raw, as the JIT wrote it) or NULL. The first find
 * freezes the table: later adds are ignored. */
const char *sym_jit_find(struct sym_jit *j, uint64_t addr, uint64_t *offset);
/* "perf-PID.map", "jit-PID.dump" or both, comma-separated. */
const char *sym_jit_source(const struct sym_jit *j);
/* Read a JIT file the profiled program wrote, only when it is a regular
 * file owned by the caller or root and not writable by group or others
 * (perf's rule). Returns 0 with a malloc'd *data, -ENOENT and friends when
 * missing, or -EPERM / -EFBIG / -EINVAL with the reason in err. */
int sym_jit_read_file(const char *path, void **data, size_t *size, struct err *err);
/* The rule of sym_jit_read_file() for an open file's fstat: 0, or -EINVAL
 * (not a regular file), -EPERM (owner, or writable by others), -EFBIG,
 * with the reason in err. also_uid (>= 0) is one more trusted owner: the
 * user of the process the file describes (so `sudo stax -p` of a user's
 * JIT reads that user's map). */
struct stat;
int sym_jit_check_file(const char *path, const struct stat *st, long also_uid, struct err *err);
/* Add a jitdump's bytes (a copy kept while the file existed) to pid's
 * JIT symbols, as sym_jit_add_dump() does with the file; name is the
 * file's name. */
void sym_jit_add_dump_data(struct sym_session *s, uint32_t pid, const void *data, size_t size,
			   const char *name);

/* Session-level JIT symbols of process pid. Sources: a perf map given
 * with sym_jit_set_perfmap() (the copy in a recording), else
 * /tmp/perf-PID.map read on first use; plus every jitdump file given with
 * sym_jit_add_dump(). A file that fails the ownership rule is skipped with
 * one warning on stderr. Returns true and fills out (module is the
 * source, e.g. "perf-123.map") when a JIT symbol covers addr. */
void sym_jit_set_perfmap(struct sym_session *s, uint32_t pid, const void *data, size_t size);
/* Read /tmp/perf-PID.map now and use it (as sym_jit_set_perfmap); true
 * with its bytes in *data (malloc'd, the caller frees) when it was read.
 * A skipped file is warned about once per pid in a session, however
 * often it is read. */
bool sym_jit_read_perfmap(struct sym_session *s, uint32_t pid, void **data, size_t *size);
void sym_jit_add_dump(struct sym_session *s, uint32_t pid, const char *path);
bool sym_lookup_jit(struct sym_session *s, uint32_t pid, uint64_t addr, struct sym_result *out);
/* A user-space address addr of process pid in mapping m (NULL: in no
 * known mapping; map_pid: m's process): the file's symbols when m is a
 * file; else JIT code of map_pid (of pid without m), then of pid; else
 * only the module (m's file name, or "[unknown]") and the file offset.
 * The one way the recorder (ingest/symbols.c), the query side
 * (profile/symbolize.c) and stax symbolize resolve a user address. */
void sym_lookup_user(struct sym_session *s, const struct module_ref *m, uint32_t map_pid,
		     uint32_t pid, uint64_t addr, struct sym_result *out);
/* True when a mapping path is anonymous memory where JIT code lives. */
bool sym_path_is_anon(const char *path);
/* True when path names a jitdump file ("jit-PID.dump"). */
bool sym_path_is_jitdump(const char *path);

#endif
