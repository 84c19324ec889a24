/* pyline.h - CPython's line tables: an instruction offset to its line.
 *
 * A code object's co_linetable maps its bytecode to source lines. Two
 * formats, both read here from bytes of a process stax does not trust
 * (every read is checked against end; corruption is reported with the
 * offset in the table where it was found):
 *
 * 3.11, 3.12, 3.13: the location table (CPython's Objects/locations.md).
 *   Entries, each starting with a byte whose bit 7 is set: bits 3-6 are
 *   its code, bits 0-2 its length in code units minus one (an entry
 *   covers 1-8 units of 2 bytes). Codes 0-9: short forms, same line, one
 *   byte of columns follows; 10-12: one-line forms, the line advances by
 *   code - 10, two bytes of columns follow; 13: no columns, a signed
 *   varint line delta follows; 14: long form, a signed varint line delta
 *   then three varints (end line delta, column + 1, end column + 1); 15:
 *   no location (the line is none; the running line is unchanged).
 *   Varints are 6-bit groups, least significant first, bit 6 set when
 *   another follows; a signed one keeps its sign in bit 0.
 * 3.10: pairs of bytes (bytes of code covered, unsigned; line delta,
 *   signed, -128: no line).
 *
 * Lines start at co_firstlineno. Offsets are in bytes from the code's
 * first instruction (a frame's instruction pointer less its code's
 * co_code_adaptive, as record/moment.h gives them).
 */
#ifndef STAX_SYMBOL_PYLINE_H
#define STAX_SYMBOL_PYLINE_H

#include <stddef.h>
#include <stdint.h>

#define PYLINE_NONE (-1)     /* the instruction has no line */
#define PYLINE_BEYOND (-2)   /* the offset is past the table's end */
#define PYLINE_CORRUPT (-3)  /* the table is not well formed (*bad_at: where) */

/* A walk over the table's ranges. */
struct pyline_iter {
	const uint8_t *start, *p, *end;
	uint32_t version;     /* major << 8 | minor: 0x030a .. 0x030d */
	int64_t line;         /* the running line */
	uint64_t addr;        /* bytes covered so far */
};

/* Start a walk over table[0..end) of a code object whose first line is
 * firstlineno, of CPython version (0x030a-0x030d). */
void pyline_init(struct pyline_iter *it, const uint8_t *table, const uint8_t *end, int firstlineno,
		 uint32_t version);
/* The next range: [*lo, *hi) bytes of code on line *line (PYLINE_NONE:
 * none). Returns 1, 0 at the table's end, or PYLINE_CORRUPT with *bad_at
 * (when not NULL) the offset in the table of the entry at fault. */
int pyline_next(struct pyline_iter *it, uint64_t *lo, uint64_t *hi, int *line, size_t *bad_at);

/* The line of the instruction at offset bytes: >= 0, PYLINE_NONE,
 * PYLINE_BEYOND, or PYLINE_CORRUPT (with *bad_at when not NULL). An
 * unknown version is PYLINE_CORRUPT at 0. */
int pyline_find(const uint8_t *table, const uint8_t *end, int firstlineno, uint32_t version,
		uint32_t offset, size_t *bad_at);

#endif
