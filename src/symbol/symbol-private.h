/* symbol-private.h - internals shared by the files of src/symbol/.
 *
 * A module is parsed once: its PT_LOAD segments (to turn file offsets into
 * ELF addresses) and one sorted, de-duplicated table of function symbols
 * whose names live in the module's arena. The ELF file is closed again
 * after parsing, so an open module costs no file descriptor.
 */
#ifndef STAX_SYMBOL_PRIVATE_H
#define STAX_SYMBOL_PRIVATE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bump allocator for strings; everything is freed at once. */
struct sym_arena_chunk;
struct sym_arena {
	struct sym_arena_chunk *head;
};

void sym_arena_release(struct sym_arena *a);
char *sym_arena_strdup(struct sym_arena *a, const char *s);
char *sym_arena_strndup(struct sym_arena *a, const char *s, size_t n);

/* One function symbol: covers [start, end). The name is the raw (mangled)
 * name; dname caches its demangled form (NULL until first asked for). */
struct sym_entry {
	uint64_t start, end;
	const char *name;
	const char *dname;
};

/* A symbol table being built: candidates are added in any order and then
 * sym_table_finish() sorts them, picks one name per address, and computes
 * each symbol's end. */
struct sym_cand {
	uint64_t start, size;
	uint64_t sec_start, sec_end; /* section bounds; sec_end == 0: unknown */
	const char *name;            /* in the owner's arena */
	uint8_t bind_rank;           /* 0 global, 1 weak, 2 local, 3 a fallback
					(the entry point's "_start") */
	uint8_t has_size;
	uint32_t max_len;            /* size 0: extent at most this (0: no cap) */
};

struct sym_table {
	struct sym_entry *syms;
	size_t nsyms;
	/* For nested symbols: cover[i] = max end over syms[0..i]. */
	uint64_t *cover;
	/* while building */
	struct sym_cand *cand;
	size_t ncand, cap_cand;
};

void sym_table_release(struct sym_table *t);
/* A symbol of size 0 covers the addresses from its start up to the next
 * symbol (or its section's end, or start + max_len), unless it starts
 * inside a sized symbol, which then names those addresses. */
void sym_table_finish(struct sym_table *t);
/* While building: sort the candidates added so far (more may be added
 * after); then sym_table_cand_name() gives the name sym_table_finish()
 * would pick among those starting exactly at addr, or NULL for none. */
void sym_table_sort(struct sym_table *t);
const char *sym_table_cand_name(const struct sym_table *t, uint64_t addr);
/* Never fails; NULL when no symbol covers addr. */
struct sym_entry *sym_table_find(const struct sym_table *t, uint64_t addr);

/* The name to show for e: demangled (cached in e, copy in arena a) unless
 * demangle is false. */
const char *sym_entry_name(struct sym_entry *e, struct sym_arena *a, bool demangle);

/* A PT_LOAD segment of a module's main file. */
struct sym_seg {
	uint64_t offset, filesz, vaddr;
};

/* Sources, as reported in sym_result.source. */
#define SYM_SRC_SYMTAB "symtab"
#define SYM_SRC_DEBUG_FILE "debug-file"
#define SYM_SRC_DEBUGLINK "debuglink"
#define SYM_SRC_MINIDEBUGINFO "minidebuginfo"
#define SYM_SRC_DYNSYM "dynsym"
#define SYM_SRC_DEBUGINFOD "debuginfod"
#define SYM_SRC_KALLSYMS "kallsyms"
#define SYM_SRC_NONE "none"

/* An address range [start, end) of a function from the unwind tables. */
struct sym_range {
	uint64_t start, end;
};

/* A module's symbol part (module/module.h: MODULE_SYMBOLS), built once
 * for every session that asks. */
struct module;
struct sym_module {
	struct module *mod; /* the module it is a part of */
	const char *name;   /* base name for sym_result.module */
	const char *source; /* one of SYM_SRC_* */
	bool opened;        /* the file was found and is an ELF file */
	struct sym_seg *segs;
	size_t nsegs;
	struct sym_table table;
	struct sym_arena strings;
	uint8_t build_id[64];     /* the recording's, else the file's (DWARF cache key) */
	size_t build_id_size;     /* 0: unknown */
	char *dwarf_path;         /* file with .debug_info, NULL none found */
	int dwarf_kind;           /* which of mod's files: -1 the binary, else
				   * its debug file (enum module_debug) */
	const char *dwarf_source; /* one of SYM_DW_* */
	struct sym_dwarf *dwarf;  /* opened on first use */
	bool dwarf_tried;
	/* Without a full symbol table: the FDEs' function ranges (ELF
	 * virtual addresses, sorted, not overlapping), which name unknown
	 * code MODULE+0xSTART by its function. */
	struct sym_range *fdes;
	size_t nfdes;
	/* A table from the symbol cache (symcache.c): its names are in
	 * this mapping of the entry. */
	void *map;
	size_t map_size;
};

#define SYM_DW_BINARY "binary"
#define SYM_DW_DEBUG_FILE "debug-file"
#define SYM_DW_DEBUGLINK "debuglink"
#define SYM_DW_DEBUGINFOD "debuginfod"
#define SYM_DW_NONE "none"

/* dwarf.c */
struct sym_frame;
struct sym_dwarf;
/* The DWARF of e (open on fd, from module/module.h, which it takes over
 * whatever the result); NULL when it has no usable DWARF. bid (may be
 * NULL) is the module's build-id: with one, compressed debug sections
 * are read through the DWARF cache (dwcache.c). */
struct sym_dwarf *sym_dwarf_open(Elf *e, int fd, const uint8_t *bid, size_t bidlen);
/* True when d was opened from the DWARF cache (tests). */
bool sym_dwarf_from_cache(const struct sym_dwarf *d);
void sym_dwarf_free(struct sym_dwarf *d);
/* The inline chain at ELF address addr, innermost first, the function
 * holding the code last (inlined == false). Returns the number of frames
 * (0 when DWARF does not cover addr). Names borrowed from libdw or put in
 * arena a. */
/* ELF addresses in [lo, hi) where rows of the line table of the CU
 * holding lo start (instruction boundaries the compiler wrote down), at
 * most max into out; returns the count. */
size_t sym_dwarf_line_addrs(struct sym_dwarf *d, uint64_t lo, uint64_t hi, uint64_t *out, size_t max);
size_t sym_dwarf_frames(struct sym_dwarf *d, uint64_t addr, struct sym_frame *out,
			size_t max, struct sym_arena *a, bool demangle);

/* elf.c */
void sym_elf_init(void);
/* A module's files are opened by module/module.h (module_open,
 * module_open_debug) and read with lib/elffile.h's accessors. */
/* Whether e's file (from elf_file_open()) was cut short while it was read
 * (lib/elfguard.h): what was read past its new end was zeros. */
bool sym_elf_changed(Elf *e);
/* Collect PT_LOAD segments into m. */
void sym_elf_segments(Elf *e, struct sym_module *m);
/* Add function symbols of the section of type shtype (SHT_SYMTAB or
 * SHT_DYNSYM) to t, names copied into arena. Returns the number added. */
size_t sym_elf_add_symbols(Elf *e, int shtype, struct sym_table *t,
			   struct sym_arena *arena);
/* The function ranges of e's .eh_frame FDEs (or, without any, of its
 * .debug_frame), sorted, a range starting inside another dropped; *out
 * is malloc'd (NULL for none). Returns the count; never fails (damage
 * ends the walk). */
size_t sym_elf_fde_ranges(Elf *e, struct sym_range **out);
/* Add "NAME@plt" for the entries of e's x86-64 PLT sections (.plt,
 * .plt.sec, .plt.got, .plt.bnd) and ".plt" for the lazy-binding header.
 * Each entry is named by the GOT slot its jmp *slot(%rip) goes through
 * (the JUMP_SLOT, GLOB_DAT or IRELATIVE relocation of that slot, named
 * by its dynamic symbol; IRELATIVE by the symbol at the resolver, from
 * t's candidates), or a lazy entry without a jmp by the .rela.plt index
 * it pushes. This fits every layout of GNU ld and lld, lazy or -z now,
 * with or without IBT, without knowing its entry sizes or order. Call
 * after the other symbols are added. Returns the number added. */
size_t sym_elf_add_plt(Elf *e, struct sym_table *t, struct sym_arena *arena);
/* Add "_start" at the entry point of an executable (ET_EXEC, or ET_DYN
 * with PT_INTERP or without DT_NEEDED: PIE, ld.so, static-pie) as a
 * fallback candidate: any other symbol at that address wins, and it
 * covers at most SYM_ENTRY_MAX_LEN bytes, as a stripped binary has no
 * symbol after it to stop at. glibc's x86-64 _start is 38 bytes (47 in
 * older releases) and the next function starts 16-byte aligned at 48;
 * ld.so's _start and _dl_start_user, which it falls into, call out
 * within their first 48 bytes too. Returns 1 when added. */
#define SYM_ENTRY_MAX_LEN 48
size_t sym_elf_add_entry(Elf *e, struct sym_table *t, struct sym_arena *arena);
/* Add "__start_context" (module_elf_start_context(): glibc's makecontext
 * trampoline, whose local symbol distributions strip) as a fallback
 * candidate. Returns 1 when added. */
size_t sym_elf_add_start_context(Elf *e, struct sym_table *t, struct sym_arena *arena);

/* dwcache.c: decompressed DWARF on disk, by build-id (layout there) */
struct buf;
/* What a cache entry must match: the module's build-id and the identity
 * of the file the image was made from. */
struct sym_dwcache_key {
	uint8_t build_id[64];
	size_t build_id_size;
	uint64_t dev, ino, size, mtime_ns;
};
/* A mapped, checked entry: image points to an ELF file in memory. */
struct sym_dwcache_map {
	void *map;
	size_t map_size;
	void *image;
	size_t image_size;
};
/* The cache directory $XDG_CACHE_HOME/stax (else ~/.cache/stax), or its
 * subdirectory sub ("dwarf"), opened without following links planted by
 * anyone else and only when it is the user's own (see dwcache.c); create
 * makes what is missing (0700). Its descriptor (the caller closes it), or
 * -1 when STAX_NO_CACHE is set (and not "0"), there is no absolute home,
 * it is not there (and not create), or it cannot be used: then a warning
 * says why, once, when the reason is that it is not safe. Files in it are
 * opened with openat(O_NOFOLLOW) and written with safe_replace_begin(...,
 * SAFE_REPLACE_OWN_DIR). */
int sym_cache_dir(const char *sub, bool create);
/* The key of the open file fd for build-id bid; -EINVAL when bid is
 * empty or too long or fd is not a regular file. */
int sym_dwcache_key_of(int fd, const uint8_t *bid, size_t bidlen, struct sym_dwcache_key *k);
/* True when e is a 64-bit little-endian ELF file with compressed debug
 * sections that an entry would hold (then one is worth having). */
bool sym_dwcache_wanted(Elf *e);
/* Map the entry for k and check it; 0, or -ENOENT (none, or the cache
 * is off) / -EINVAL (not usable: stale, corrupt, not ours). Release with
 * sym_dwcache_unmap() after the ELF on it is closed. */
int sym_dwcache_open(const struct sym_dwcache_key *k, struct sym_dwcache_map *out);
void sym_dwcache_unmap(struct sym_dwcache_map *m);
/* Write the entry for k from e (decompressing what libdw has not yet);
 * best effort: 0 or -errno, and a failure only costs time later. */
int sym_dwcache_save(const struct sym_dwcache_key *k, Elf *e);
/* Write image (an ELF file's bytes) as the entry for k: what
 * sym_dwcache_save() does after building the image (and fuzzing, to put
 * any image behind a valid header). */
int sym_dwcache_store(const struct sym_dwcache_key *k, const void *image, size_t size);
/* The parts, for tests and fuzzing: the image of e appended to b (0, or
 * -EINVAL when e cannot be copied); the image inside a cache file's
 * bytes when they are a valid entry for k (else NULL); the checksum. */
int sym_dwcache_image(Elf *e, struct buf *b);
const void *sym_dwcache_check(const void *data, size_t size, const struct sym_dwcache_key *k,
			      size_t *image_size);
uint64_t sym_dwcache_sum(const void *p, size_t n);

/* kallsyms.c */
struct sym_kallsyms;
struct sym_kallsyms *sym_kallsyms_load(void);
/* The parsers of sym_kallsyms_load() over bytes in memory (fuzzing and
 * tests): the text of /proc/kallsyms and /proc/modules; the cache file
 * (NULL when it is malformed or its key is not key). */
struct sym_kallsyms *sym_kallsyms_from_text(const char *text, size_t len, const char *modules,
					    size_t mlen);
struct sym_kallsyms *sym_kallsyms_from_cache(const void *data, size_t size, uint64_t key);
/* Append k as cache file bytes to b (a struct buf of lib/buf.h). */
struct buf;
void sym_kallsyms_to_cache(const struct sym_kallsyms *k, uint64_t key, struct buf *b);
void sym_kallsyms_free(struct sym_kallsyms *k);
bool sym_kallsyms_empty(const struct sym_kallsyms *k);
const char *sym_kallsyms_name(struct sym_kallsyms *k, struct sym_entry *e, bool demangle);
/* Returns the entry covering addr or NULL; *module is always set. */
struct sym_entry *sym_kallsyms_find(struct sym_kallsyms *k, uint64_t addr,
				    const char **module);

#endif
