/* fuzz-recording.h - for fuzz targets that read recordings: a recording
 * made from the "chunk form" of an input (each chunk a u16 kind, a u32
 * length and that many bytes of records, uncompressed), compressed here
 * into a well-formed file so that mutations reach the records rather
 * than fail zstd's checksum (see fuzz_recording.c). */
#ifndef STAX_FUZZ_RECORDING_H
#define STAX_FUZZ_RECORDING_H

#include "store/format.h"
#include "lib/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* The file for the chunks in [p, end) (the odd form). */
static inline void build_file(const uint8_t *p, const uint8_t *end, struct buf *out)
{
	static ZSTD_CCtx *cctx;
	struct store_file_header fh;
	uint32_t seq = 0;
	static uint8_t *comp;
	static size_t compcap;

	if (!cctx) {
		cctx = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	}
	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, STORE_MAGIC, 8);
	fh.version = STORE_VERSION;
	fh.header_size = sizeof(fh);
	buf_add(out, &fh, sizeof(fh));
	while (end - p >= 6) {
		struct store_chunk_header h;
		uint16_t kind;
		uint32_t len;
		size_t bound, n;

		memcpy(&kind, p, 2);
		memcpy(&len, p + 2, 4);
		p += 6;
		if (len > (size_t)(end - p))
			len = (uint32_t)(end - p);
		bound = ZSTD_compressBound(len);
		if (bound > compcap) {
			compcap = bound;
			comp = realloc(comp, compcap);
		}
		n = ZSTD_compress2(cctx, comp, bound, p, len);
		if (ZSTD_isError(n))
			return;
		p += len;
		memset(&h, 0, sizeof(h));
		h.magic = STORE_CHUNK_MAGIC;
		h.kind = kind;
		h.seq = seq++;
		h.raw_size = len;
		h.comp_size = (uint32_t)n;
		h.check = h.raw_size ^ h.comp_size ^ h.seq ^ STORE_CHECK_XOR;
		buf_add(out, &h, sizeof(h));
		buf_add(out, comp, n);
	}
}

#endif
