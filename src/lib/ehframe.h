/* ehframe.h - read .eh_frame and .debug_frame: entries (CIEs and FDEs)
 * and the encodings DWARF call frame information uses.
 *
 * A parser of untrusted bytes shared by the unwinder (unwind/cfi.c runs
 * the CFA programs these entries hold) and the symbolizer (function
 * ranges of stripped binaries, symbol/elf.c). Every read carries an end
 * pointer; a failure is -EINVAL with the place of the first bad byte in
 * the cfi_section (err_off, and err_file/err_line of the check that
 * failed), never a crash. Nothing allocates. Pointers in struct cfi_cie
 * and cfi_fde point into the section bytes the caller passed in, valid as
 * long as those.
 */
#ifndef STAX_LIB_EHFRAME_H
#define STAX_LIB_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfi_section {
	const uint8_t *data;
	size_t size;
	uint64_t vaddr;       /* sh_addr of the section: base for pcrel */
	uint64_t datarel;     /* .eh_frame_hdr address (datarel base), or 0 */
	uint64_t textrel;     /* .text address (textrel base), or 0 */
	bool is_eh;           /* .eh_frame (true) or .debug_frame (false) */
	/* Columns cfi_run() tracks (0: CFI_NREGS): the machine's (x86-64
	 * 17, aarch64 33); a row's rules from reg[ncols] on are not set. */
	unsigned ncols;
	/* Where parsing failed (set on -EINVAL): the section offset of
	 * the first bad byte, and the reader's source file and line */
	const char *err_file;
	int err_line;
	size_t err_off;
};

struct cfi_cie {
	size_t off;                 /* section offset of the CIE */
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;
	uint8_t version;
	uint8_t fde_enc;            /* 'R' pointer encoding (absptr by default) */
	uint8_t lsda_enc;           /* 'L' */
	uint8_t addr_size;
	bool has_aug_data;          /* 'z' */
	bool signal;                /* 'S': the FDEs describe signal frames */
	const uint8_t *insn, *insn_end;
};

struct cfi_fde {
	size_t off;                 /* section offset of the FDE */
	size_t cie_off;
	uint64_t pc_begin, pc_end;
	const uint8_t *insn, *insn_end;
};

/* Parse the entry (CIE or FDE) at section offset off. On success sets
 * *next to the offset of the following entry and returns 1 for a CIE
 * (filled into *cie), 2 for an FDE (*fde filled, its CIE in *cie), 0 at
 * the end of the section (terminator or exact end). Returns -EINVAL on
 * corruption (sec->err_line/err_off say where). */
int cfi_parse_entry(struct cfi_section *sec, size_t off, size_t *next,
		    struct cfi_cie *cie, struct cfi_fde *fde);

/* Parse the CIE at offset off. */
int cfi_parse_cie(struct cfi_section *sec, size_t off, struct cfi_cie *cie);

/* Read an encoded pointer (DW_EH_PE_*) at *pp (< end); field_addr is the
 * address of the field for pcrel. Advances *pp. Returns 0 or -EINVAL;
 * indirect pointers are refused (there is no process memory here). */
int cfi_read_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc,
		     uint64_t field_addr, const struct cfi_section *sec,
		     uint64_t *out);

/* ---- the readers, for the CFA program interpreter (unwind/cfi.c) ---- */

/* Record where corruption was found (p inside sec's bytes, or not) and
 * return -EINVAL. */
int cfi_corrupt(struct cfi_section *sec, const uint8_t *p, const char *file, int line);
#define CFI_CORRUPT(sec, p) cfi_corrupt((sec), (p), __FILE__, __LINE__)

/* Each returns false when the value does not fit before end. */
bool cfi_rd_u8(const uint8_t **pp, const uint8_t *end, uint8_t *v);
bool cfi_rd_fixed(const uint8_t **pp, const uint8_t *end, size_t n, uint64_t *v);
bool cfi_rd_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *v);
bool cfi_rd_sleb(const uint8_t **pp, const uint8_t *end, int64_t *v);
/* The address of the byte p of sec (0 when p is outside it): the base of
 * a pc-relative pointer. */
uint64_t cfi_field_vaddr(const struct cfi_section *sec, const uint8_t *p);

#endif
