/* reader.h - read a recording file chunk by chunk, as it stands.
 *
 * The file may still be growing (a recording in progress) or end in a
 * partial chunk (the recorder was killed): the reader stops cleanly at
 * the last complete chunk and sets partial. A damaged chunk (its header
 * or payload fails a check: magic, header check, checksum, sizes,
 * sequence, zstd) is skipped and counted in r->damage, and reading goes
 * on from the next chunk header found after it, so one flipped bit
 * costs one chunk, not the file.
 *
 * Errors: functions return -1 after formatting a message into r->err
 * for what cannot be read at all: not a recording, another version, a
 * chunk kind this stax does not know whose checksum holds (a newer stax
 * wrote it).
 */
#ifndef STAX_STORE_READER_H
#define STAX_STORE_READER_H

#include "lib/buf.h"
#include "lib/err.h"
#include "store/format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a reader skipped as damaged. */
struct store_damage {
	uint64_t chunks;      /* chunks lost (by their sequence numbers where known) */
	uint64_t regions;     /* places where reading had to skip */
	uint64_t bytes;       /* file bytes skipped */
	uint64_t first;       /* file offset of the first one */
	uint64_t lost_raw;    /* an upper bound of the record bytes they held */
	char why[160];        /* what was wrong with the first one */
};

struct store_reader {
	const char *path;
	const uint8_t *map;   /* whole file as it stood at open */
	size_t size;
	size_t off;           /* next chunk header */
	uint32_t seq;
	void *dctx;           /* ZSTD_DCtx */
	struct buf raw;
	bool partial;         /* ended in an incomplete chunk or without END */
	bool ended;           /* saw the END chunk */
	bool owned;           /* map is ours to unmap */
	bool live;            /* a writer held the file's lock at open: still recording */
	uint64_t tail;        /* bytes after the last complete chunk (a chunk being written, or cut) */
	uint64_t data_bytes;  /* file bytes of the data chunks read */
	struct store_damage damage;
	struct err err;       /* why the last call failed ("PATH: what") */
};

struct store_chunk {
	enum chunk_kind kind; /* CHUNK_DATA_LATE is read as CHUNK_DATA, with late set */
	bool late;            /* written as CHUNK_DATA_LATE: it holds late stacks */
	const uint8_t *data;  /* decompressed records, valid until next call */
	size_t size;
	uint64_t offset;      /* file offset of the chunk header */
	uint64_t file_size;   /* its bytes in the file, header included */
};

struct store_record {
	uint16_t type;
	uint16_t flags;
	const uint8_t *payload;
	size_t size;          /* payload bytes (record size - 8) */
	uint64_t chunk_offset;
	size_t offset;        /* offset of the record inside the chunk */
};

/* Open path; checks magic and version. */
int store_reader_open(struct store_reader *r, const char *path);
/* Open bytes already in memory (fuzzing, tests); data must outlive r. */
int store_reader_open_mem(struct store_reader *r, const char *name,
			  const void *data, size_t size);
void store_reader_close(struct store_reader *r);
/* 1: *c holds the next chunk; 0: no more chunks; -1: corruption. */
int store_reader_next(struct store_reader *r, struct store_chunk *c);

struct store_record_iter {
	const struct store_chunk *chunk;
	size_t off;
};
/* 1: *rec is the next record; 0: end of chunk; -1: corruption (r->err). */
int store_chunk_next_record(struct store_reader *r, struct store_record_iter *it,
			    struct store_record *rec);
/* Count chunk c as damaged from raw offset at on (its records there do
 * not parse); why says what was wrong, for the first damage. */
void store_reader_damaged(struct store_reader *r, const struct store_chunk *c, size_t at,
			  const char *why);

/* True when the first bytes look like a stax recording. */
bool store_is_recording(const void *head, size_t n);

#endif
