/* table.h - a module's CFI compiled into compact rows (internal to unwind/).
 *
 * A table maps an address (in the module's ELF vaddr space) to a rule:
 *
 *   rows:  addr[i]  u32  offset of the row's first byte from base
 *          rule[i]  u16  index into rules[] (sorted by addr, no two equal
 *                        neighbours, the last row is always a gap row)
 *   page:  page[p]  u32  index of the row covering base + (p << PAGE_SHIFT);
 *                        a lookup searches rows page[p]..page[p+1] only
 *   rules: a small dictionary (libc: a few hundred entries). Entries 0..3
 *          are the commands FP (no CFI here: use the frame pointer), STOP
 *          (undefined return address: _start, clone), SIGNAL (a signal
 *          return trampoline: registers come from the ucontext on the
 *          stack) and SLOW (run the CFI interpreter for this pc); the rest
 *          are PLT and NORMAL rules (aarch64: LEAF and PAC, NORMAL
 *          with the return address in the link register, or signed):
 *          CFA = sp|fp + cfa_off, RA at CFA + ra_off, fp (and x86-64's
 *          rbx) unchanged / at CFA + off / undefined.
 *
 * A lookup is a page index load, a binary search over a few rows and a
 * rule load: no allocation, no interpretation. Tables are immutable after
 * utable_load(), so they may be shared by unwinders on several threads.
 */
#ifndef STAX_UNWIND_TABLE_H
#define STAX_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi.h"
#include "unwind/unwind.h"

enum urule_kind {
	UR_FP = 0,      /* no CFI covers the pc */
	UR_STOP,        /* outermost frame: complete */
	UR_SIGNAL,      /* signal trampoline */
	UR_SLOW,        /* interpret the FDE at unwind time */
	UR_PLT,         /* CFA = rsp + cfa_off + ((pc & 15) >= plt_thresh ? 8 : 0) */
	UR_NORMAL,
	UR_LEAF,        /* aarch64: NORMAL, the return address in the link register */
	UR_PAC,         /* aarch64: NORMAL, the return address signed (stripped) */
};

enum { URBP_SAME = 0, URBP_CFA, URBP_UNDEF };

struct urule {
	uint8_t kind;       /* enum urule_kind */
	uint8_t cfa_reg;    /* UNW_SP or UNW_FP */
	uint8_t rbp;        /* URBP_* */
	uint8_t plt_thresh;
	int32_t cfa_off;
	int16_t ra_off;
	int16_t rbp_off;
	/* rbx, as rbp (URBP_*): the fast walk ignores it; a walk that needs
	 * rbx (ld.so's lazy-binding trampoline defines its CFA by rbx) is
	 * redone keeping it (unwind.c) */
	uint8_t rbx;
	uint8_t flags;      /* UR_F_* (aarch64; 0 on x86-64) */
	int16_t rbx_off;
};

/* The return address is in the link register (UNW_LR), not at CFA +
 * ra_off: a leaf, a prologue before the store, a PLT stub (aarch64; kind
 * UR_LEAF). */
#define UR_F_RA_LR 1u
/* The return address is signed (pointer authentication) here: the CFI's
 * DW_CFA_AARCH64_negate_ra_state (kind UR_PAC, or UR_LEAF, whose link
 * register is stripped whatever the CFI says). */
#define UR_F_RA_SIGNED 2u
_Static_assert(sizeof(struct urule) == 16, "urule is packed in 16 bytes");

#define UTABLE_MAX_SECS 3
#define UR_NCOMMANDS 4   /* rules[0..3] are FP, STOP, SIGNAL, SLOW */
#define UTABLE_PAGE_SHIFT 8

/* An FDE with SLOW rows, with copies of its CIE and FDE instructions so
 * the interpreter can run after the ELF file is closed. */
struct uslow {
	uint64_t pc_begin, pc_end;
	uint64_t fde_insn_vaddr;    /* for DW_CFA_set_loc with pcrel */
	uint32_t cie_insn, cie_len; /* offsets into blob */
	uint32_t fde_insn, fde_len;
	struct cfi_cie cie;         /* insn pointers unset; see utable_slow_row */
};

struct utable {
	enum unwind_arch arch;  /* the machine of the rules: the ELF file's */
	uint64_t base;
	uint32_t nrows;
	uint32_t *addr;
	uint16_t *rule;
	uint32_t *page;
	uint32_t npages;
	struct urule *rules;
	uint32_t nrules;
	struct uslow *slow;
	uint32_t nslow;
	uint8_t *blob;
	size_t blob_len;

	/* PT_LOAD segments, to map (mapping start, file offset) to vaddr. */
	struct { uint64_t vaddr, off, filesz; bool exec; } load[16];
	int nload;
	uint64_t entry;         /* ELF e_entry (vaddr), 0 when none */
	/* Functions that call main or a thread's start routine (found by
	 * name in the symbol table, or the debug file's): a kernel chain
	 * that ends in one of them has reached the root. */
	/* functions of roots.h's list: roots and stack switches */
	struct { uint64_t start, end; int kind; } roots[24];
	int nroots;

	/* Facts for reports and tests. */
	const char *source;     /* ".eh_frame", ".debug_frame", "mixed", ... or NULL */
	char *path;             /* the file the CFI came from */
	int err;                /* 0, or -errno why there is no (or partial) CFI */
	int err_sec;            /* index of the damaged section */
	uint32_t nfde, nslow_rows, nsignal_tramp;
	uint32_t nfde_sec[UTABLE_MAX_SECS];    /* FDEs used from each section */
	uint64_t build_ns;      /* time to compile it, or to read it from the cache */
	bool cached;            /* read from the cache (tcache.c), not compiled */
	/* A provisional table (utable_build_quick()): its .eh_frame and
	 * .eh_frame_hdr's search table, copied out of the file; rows say
	 * UR_SLOW over its code, and utable_slow_row() finds and runs the FDE
	 * of each frame. NULL in a compiled table. */
	struct ulazy *lazy;
	void *map;              /* the cache file mapped, which addr and rule point
				 * into (utable_free unmaps it), or NULL */
	size_t map_size;
	uint8_t build_id[20];
	size_t build_id_size;
};

/* Compile the CFI of module m's binary (module/module.h opens it and its
 * debug files; "[vdso]" means this process's vDSO, which is the same
 * image as every process's on this kernel):
 * .eh_frame, else .debug_frame from the file, else from the separate debug
 * file (/usr/lib/debug/.build-id/xx/rest.debug, then .gnu_debuglink).
 * A regular file is looked up in the table cache first (tcache.c)
 * and a table compiled without complaint is written there.
 * Never fails: a file without usable CFI gives an empty table with err
 * set, so every lookup says UR_FP. Caller frees with utable_free(). */
struct module;
struct utable *utable_build(struct module *m);
/* A provisional table of module m, made in a millisecond or two where
 * utable_build() takes 200 ms (a large library: unwind.c uses it while
 * that runs in its prefetch thread): the file's .eh_frame and the search
 * table of its .eh_frame_hdr, each frame's FDE found and run when a walk
 * needs it (UR_SLOW); its roots and stack switches; nothing else (no
 * .debug_frame, PLT rows, trampolines without CFI, _init/_fini), never
 * cached. NULL when the file has no .eh_frame_hdr search table of the
 * usual encodings (then there is nothing quick to make). */
struct utable *utable_build_quick(struct module *m);
/* The same for the file at path (its module taken and let go). */
struct utable *utable_load(const char *path);
void utable_free(struct utable *t);

/* Compile the CFI sections secs[0..nsecs) (.eh_frame or .debug_frame, in
 * order of preference: an FDE of a later section is used only where the
 * earlier ones have none) into t, which holds no rows yet, by the rules of
 * machine t->arch (NONE: the host's, which t->arch then says). Damage in a
 * section keeps what precedes it and sets t->err / t->err_sec (the
 * section's err_line/err_off say where). Returns 0, or <0 when no table
 * could be made. Exposed for tests and fuzzing. */
int utable_compile(struct utable *t, struct cfi_section *secs, int nsecs);

/* The rule for the ELF vaddr. Never fails: UR_FP outside the table. */
static inline const struct urule *utable_find(const struct utable *t, uint64_t vaddr)
{
	uint64_t off = vaddr - t->base;
	if (vaddr < t->base || t->nrows == 0 || off >= t->addr[t->nrows - 1])
		return &t->rules[UR_FP];
	uint32_t p = (uint32_t)(off >> UTABLE_PAGE_SHIFT);
	uint32_t lo = t->page[p], hi = t->page[p + 1];
	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) >> 1;
		if (t->addr[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &t->rules[t->rule[lo]];
}

/* (Re)build t->page from the rows (t->nrows > 0). */
void utable_build_pages(struct utable *t);

/* The index of the row containing vaddr, or -1 (for tests). */
long utable_row_index(const struct utable *t, uint64_t vaddr);

/* Run the interpreter for a SLOW row: fills *row and *cie (whose
 * instruction pointers point into t->blob). Returns 0, -ENOENT when no
 * SLOW FDE covers vaddr, -EINVAL on bad CFI. */
int utable_slow_row(const struct utable *t, uint64_t vaddr, struct cfi_row *row,
		    struct cfi_cie *cie);

/* Load bias of an executable mapping of this file at start with file
 * offset pgoff: vaddr = pc - bias. Where segments share a file page (lld
 * starts the code segment mid-page, right after the read-only one), the
 * executable segment is the one mapped. Returns false when pgoff is in no
 * PT_LOAD segment. */
bool utable_bias(const struct utable *t, uint64_t start, uint64_t pgoff, uint64_t *bias);

/* The kind (enum root_kind of unwind/roots.h) of the function of the
 * list containing vaddr, 0 when none does. */
static inline int utable_root_kind(const struct utable *t, uint64_t vaddr)
{
	for (int i = 0; i < t->nroots; i++)
		if (vaddr >= t->roots[i].start && vaddr < t->roots[i].end)
			return t->roots[i].kind;
	return 0;
}

/* Is vaddr inside a root function (main, __libc_start_call_main,
 * start_thread, clone3, runtime.goexit, ...: roots.h)? */
static inline bool utable_in_root_caller(const struct utable *t, uint64_t vaddr)
{
	return utable_root_kind(t, vaddr) == 1;
}

#endif
