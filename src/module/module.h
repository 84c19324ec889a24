/* module.h - one mapped binary and everything derived from it.
 *
 * A module is a file a process maps (an executable, a shared library,
 * the vDSO) as the pipeline knows it: its path, its build-id, how to
 * open it and its separate debug files (each found once), and the parts
 * its users derive from it: the unwinder's compiled table (unwind/), the
 * symbolizer's symbol table (symbol/), doctor's frame-pointer verdict
 * (symbol/fpcheck.c). This is the one place that opens a mapped binary
 * or its debug files for the pipeline (through lib/elffile.h).
 *
 * Modules live in one cache for the whole process, keyed by build-id,
 * else by the file's device, inode, size and mtime, else (no such file:
 * "[vdso]", "//anon", a deleted file) by path. Everyone asking for the
 * same binary gets the same module and shares its parts: the recorder's
 * unwind thread and the symbolizer at the end of a recording, the two
 * recordings `stax diff` reads, doctor and annotate.
 *
 * Lifetimes: module_get() returns a reference, module_put() drops it;
 * the module is freed with the last one. A part taken with module_part()
 * is held until module_part_put() (while a reference to its module is
 * held) and freed when its last holder puts it: the symbolizer lets go of
 * a module's symbols after its last address while the unwinder keeps its
 * table.
 *
 * Threads: the cache and each module have a lock; a part is built once
 * even when two threads ask for it at the same time (the second waits).
 * What a part allows concurrently is its own business: unwind tables and
 * the frame-pointer verdict are immutable once built; a symbol table
 * caches demangled names and DWARF as it is asked, so one thread at a
 * time uses it.
 */
#ifndef STAX_MODULE_MODULE_H
#define STAX_MODULE_MODULE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MODULE_VDSO "[vdso]"
#define MODULE_MAX_BUILD_ID 64

enum module_part {
	MODULE_UNWIND,   /* struct utable (unwind/table.h) */
	MODULE_SYMBOLS,  /* struct sym_module (symbol/symbol-private.h) */
	MODULE_FP,       /* struct fp_report (symbol/fpcheck.h) */
	MODULE_NPARTS
};

/* Where a separate debug file comes from, in the order it is looked for
 * (lib/debugfile.h for the first two). */
enum module_debug {
	MODULE_DEBUG_BUILD_ID,   /* /usr/lib/debug/.build-id/xx/rest.debug */
	MODULE_DEBUG_LINK,       /* .gnu_debuglink, its CRC or build-id checked */
	MODULE_DEBUG_DEBUGINFOD, /* asked of $DEBUGINFOD_URLS' servers */
	MODULE_NDEBUG
};

struct module;

/* The module of the file at path (MODULE_VDSO: this process's vDSO)
 * with build-id bid (bid_size 0: the caller does not know it, and the
 * file's is used). A build-id given is the module's identity: a file
 * now at path with another one is another binary, and module_open()
 * refuses it. Never fails. */
struct module *module_get(const char *path, const uint8_t *bid, size_t bid_size);
/* Another reference to m. */
struct module *module_ref(struct module *m);
void module_put(struct module *m);

/* The path it was first asked for by. */
const char *module_path(const struct module *m);
/* Whether it is a file (false for the vDSO, which lives in memory). */
bool module_is_file(const struct module *m);
/* Its build-id: the one given to module_get(), else the file's (read
 * once). Returns the size (0: none known) and points *bid at it. */
size_t module_build_id(struct module *m, const uint8_t **bid);

/* The binary itself opened as ELF, or NULL when it is missing, is not a
 * regular ELF file, or is another build than the module's build-id. Where
 * the path does not hold that build (a perf.data file recorded on another
 * machine, or the vDSO of another kernel), perf's build-id cache is looked
 * in: $PERF_BUILDID_DIR, else ~/.debug (.build-id/XX/REST/elf, or vdso),
 * which perf record fills and perf archive packs. *fd is its descriptor
 * (-1 for this process's vDSO image in memory). Close with
 * module_close(). */
Elf *module_open(struct module *m, int *fd);
/* Its separate debug file of kind k, or NULL: looked for once per
 * module (later calls open what was found), only when the file belongs
 * to the binary. *path (may be NULL) gets its path, valid while m is
 * held. MODULE_DEBUG_DEBUGINFOD asks only when $DEBUGINFOD_URLS is
 * set. */
Elf *module_open_debug(struct module *m, enum module_debug k, int *fd, const char **path);
/* Ends an Elf from module_open() or module_open_debug(). */
void module_close(Elf *e, int fd);

/* The module's part p, built by build(m, arg) when no one holds it
 * (build never fails: it returns what to keep, perhaps an empty object;
 * free_fn frees it). The caller holds it until module_part_put(). */
typedef void *(*module_build_fn)(struct module *m, void *arg);
typedef void (*module_free_fn)(void *part);
void *module_part(struct module *m, enum module_part p, module_build_fn build,
		  module_free_fn free_fn, void *arg);
void module_part_put(struct module *m, enum module_part p);
/* Part p when it is built already (held as module_part() holds it), else
 * NULL at once: not built, or being built by another thread. */
void *module_part_try(struct module *m, enum module_part p);
/* Is part p built (not being built)? Never waits. */
bool module_part_ready(struct module *m, enum module_part p);

/* glibc's __start_context, the function makecontext() makes a context's
 * function return into (so its "return address" is the function's first
 * byte, not the end of a call): found by name where a symbol table has
 * it, else by its code (x86-64 glibc 2.x: mov %rbx,%rsp; mov (%rsp),%rdi;
 * test %rdi,%rdi) in a library that defines makecontext, since
 * distributions strip its local symbol. Its ELF address and size, or 0. */
uint64_t module_elf_start_context(Elf *e, uint64_t *size);

/* Modules alive now (for tests). */
size_t module_count(void);

/* debuginfo.c: what a module's debug files are made of. */
/* The MiniDebugInfo of e (.gnu_debugdata, an xz-compressed ELF with
 * the symbols .dynsym lacks) as an in-memory ELF, or NULL. *buf owns
 * its bytes: free it after elf_end(). */
Elf *module_mini_debuginfo(Elf *e, void **buf);
/* The same from the bytes of an xz stream (the section's contents). */
Elf *module_elf_from_xz(const void *xz, size_t size, void **buf);
/* True when e has DWARF (a .debug_info section with contents). */
bool module_elf_has_dwarf(Elf *e);
/* Ask debuginfod (when $DEBUGINFOD_URLS is set) for the debug file of
 * build-id bid: its malloc'd path in the client's cache, or NULL. */
char *module_debuginfod_find(const uint8_t *bid, size_t len);

#endif
