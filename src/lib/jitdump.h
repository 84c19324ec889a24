/* jitdump.h - the jitdump file a JIT writes for perf
 * (/tmp/jit-PID.dump; perf's tools/perf/util/jitdump.h): a header, then
 * records of a 16-byte header (id, total size, timestamp) and a body.
 * The one reader of the format: symbol/jit.c takes the code loads and
 * moves (names), unwind/jitcfi.c the unwinding info (tables).
 *
 * Little-endian files only, versions 1 and 2. The file is untrusted and may still be
 * written while it is read: a record that runs past the end is torn, and
 * reading stops before it (to be read again when the file has grown).
 */
#ifndef STAX_LIB_JITDUMP_H
#define STAX_LIB_JITDUMP_H

#include "lib/cursor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct err; /* lib/err.h */

enum {
	JITDUMP_CODE_LOAD = 0,
	JITDUMP_CODE_MOVE = 1,
	JITDUMP_CODE_DEBUG_INFO = 2,
	JITDUMP_CODE_CLOSE = 3,
	JITDUMP_CODE_UNWINDING_INFO = 4,
};

/* The header of data[0..size): the offset of the first record, or
 * -EINVAL with the reason in err (not a jitdump file, another byte
 * order, an unsupported version or header size). */
int jitdump_header(const void *data, size_t size, struct err *err);

struct jitdump_rec {
	uint32_t id;             /* JITDUMP_CODE_* (others are skipped by callers) */
	uint64_t time;
	size_t off;              /* of its header in the file */
	struct cursor body;      /* the bytes after the 16-byte header */
};

/* The record at *pos: 1 (and *pos moved past it), 0 at the end (no whole
 * record left, or JITDUMP_CODE_CLOSE, which *pos moves past), -EINVAL
 * when its size is impossible (err says where; *pos stays). */
int jitdump_next(const void *data, size_t size, size_t *pos, struct jitdump_rec *r,
		 struct err *err);

/* JITDUMP_CODE_LOAD's body: false when it is cut short or its name is not
 * terminated inside the record. */
struct jitdump_load {
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	const char *name;
	size_t name_len;
};
bool jitdump_load(const struct jitdump_rec *r, struct jitdump_load *l);

/* JITDUMP_CODE_MOVE's body. */
struct jitdump_move {
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};
bool jitdump_move(const struct jitdump_rec *r, struct jitdump_move *m);

/* JITDUMP_CODE_UNWINDING_INFO's body: .eh_frame_hdr and .eh_frame bytes
 * (eh_frame: the first eh_frame_size of them), for the next code load. */
struct jitdump_unwind {
	uint64_t mapped_size;
	const uint8_t *eh_frame;
	size_t eh_frame_size;
};
bool jitdump_unwind(const struct jitdump_rec *r, struct jitdump_unwind *u);

#endif
