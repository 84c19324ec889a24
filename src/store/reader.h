/* reader.h - read a recording file chunk by chunk, as it stands.
 *
 * The file may still be growing (a recording in progress) or end in a
 * partial chunk (the recorder was killed): the reader stops cleanly at
 * the last complete chunk and sets partial. Anything else that does not
 * parse is corruption, reported with the file offset.
 *
 * Errors: functions return -1 after formatting a message into r->err
 * ("stax.data: corrupt chunk at offset 1234: bad checksum").
 */
#ifndef STAX_STORE_READER_H
#define STAX_STORE_READER_H

#include "lib/buf.h"
#include "store/format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	char err[512];
};

struct store_chunk {
	enum chunk_kind kind;
	const uint8_t *data;  /* decompressed records, valid until next call */
	size_t size;
	uint64_t offset;      /* file offset of the chunk header */
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

/* True when the first bytes look like a stax recording. */
bool store_is_recording(const void *head, size_t n);

#endif
