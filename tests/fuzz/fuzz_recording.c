/* fuzz_recording.c - libFuzzer target for the recording-file reader, the
 * profile loader, the symbolizer's use of the symbols chunk, and every
 * view over what loaded.
 *
 * Input, in one of two forms:
 *   - a recording file as is (it starts with the magic "STAXREC").
 *     Mutations of chunk payloads mostly fail zstd's checksum, so this
 *     form tests the chunk layer;
 *   - anything else: chunks with their records uncompressed, each a u16
 *     kind, a u32 length and that many bytes of records; this target
 *     compresses them into a well-formed file, so mutations reach the
 *     records (nodes, samples, mappings, symbols, perf maps...).
 * Seeds: committed recordings in corpus/recording; tests/fuzz/seeds.sh
 * writes the chunk form of each.
 * Binaries named in the input are never opened. Build and run with
 * tests/fuzz/run.sh. */
#include "profile/profile.h"
#include "store/format.h"
#include "view/view.h"
#include "lib/buf.h"
#include "fuzz-recording.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	struct err err = { 0 };
	struct view_filter f = { -1, -1, NULL };
	struct top_opts to = { 10, false, false };
	struct flame_opts fo = { true, false, 0, 0 };
	struct buf file = BUF_INIT;
	static FILE *null;
	const uint8_t *bytes = data;
	size_t n = size;

	if (!null)
		null = fopen("/dev/null", "w");
	if (size < 8 || memcmp(data, STORE_MAGIC, 8)) {
		build_file(data, data + size, &file);
		bytes = file.data;
		n = file.len;
	}
	if (profile_load_mem(&p, "fuzz", bytes, n, &err) == 0) {
		struct prof_warning w[PROF_WARNINGS_MAX];
		profile_warnings(&p, w);
		p.no_live_symbols = true;
		profile_symbolize(&p, false);
		view_top(&p, &f, &to, null);
		view_flame(&p, &f, &fo, null);
		fo.folded = false;
		view_flame(&p, &f, &fo, null);
		view_threads(&p, &f, true, null);
		view_threads(&p, &f, false, null);
		view_info(&p, &f, false, null);
		view_info(&p, &f, true, null);
		view_script(&p, &f, false, null);
		view_script(&p, &f, true, null);
	}
	profile_release(&p);
	buf_release(&file);
	return 0;
}
