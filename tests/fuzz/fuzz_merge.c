/* fuzz_merge.c - libFuzzer target for several recordings read as one
 * (profile/merge.c): the head of each file read for its wall-clock start
 * (META records of its first chunks), the files interned into one
 * profile (mappings, nodes, names, symbols of each), the window, and
 * the views over what loaded.
 *
 * Input: byte 0 picks the window (bit 0: --since, bit 1: --until, from
 * bytes 1-8 and 9-16 as seconds after the first file's wall_start, when
 * there are that many bytes), then up to 4 recordings, each a u32
 * little-endian length and that many bytes: a recording as is (it starts
 * with STAXREC), or its chunk form (fuzz-recording.h). They are written
 * as a.data, b.data, ... in a private directory (fuzz-files.h) that
 * profile_load_dir() reads; binaries named in them are never opened.
 * Seeds: corpus/merge (two copies of corpus/recording's seed-spin.data,
 * one cut, one with junk, with and without a window, and what 240 s of
 * fuzzing added, merged). Build and run with tests/fuzz/run.sh. */
#include "profile/profile.h"
#include "view/view.h"
#include "lib/buf.h"
#include "fuzz-files.h"
#include "fuzz-recording.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_files *ff = fuzz_files_init("merge");
	struct profile p;
	struct err err;
	struct prof_window w = { 0, 0, 0 };
	struct view_filter f = { -1, -1, NULL, 0, 0 };
	struct top_opts to = { 10, false, false };
	static FILE *null;
	const uint8_t *q = data, *end = data + size;
	uint64_t since = 0, until = 0;
	int flags = 0, i;
	char path[160];

	if (!null)
		null = fopen("/dev/null", "w");
	if (size >= 17) {
		flags = data[0];
		memcpy(&since, data + 1, 8);
		memcpy(&until, data + 9, 8);
		q = data + 17;
	}
	for (i = 0; i < MAX_FILES; i++) {
		snprintf(path, sizeof(path), "%s/%c.data", ff->dir, 'a' + i);
		unlink(path);
	}
	for (i = 0; i < MAX_FILES && end - q >= 4; i++) {
		uint32_t n;
		struct buf file = BUF_INIT;
		memcpy(&n, q, 4);
		q += 4;
		if (n > (size_t)(end - q))
			n = (uint32_t)(end - q);
		snprintf(path, sizeof(path), "%s/%c.data", ff->dir, 'a' + i);
		if (n >= 8 && !memcmp(q, STORE_MAGIC, 8)) {
			fuzz_write(path, q, n);
		} else {
			build_file(q, q + n, &file);
			fuzz_write(path, file.data, file.len);
		}
		buf_release(&file);
		q += n;
	}
	/* a window in seconds from an arbitrary wall time: mutations of
	 * wall_start_ns in the files move them in and out of it */
	if (flags & 1)
		w.since_ns = since % (1ull << 62);
	if (flags & 2)
		w.until_ns = until % (1ull << 62);
	if (profile_load_dir(&p, ff->dir, flags & 3 ? &w : NULL, &err) == 0) {
		struct prof_warning pw[PROF_WARNINGS_MAX];
		profile_warnings(&p, pw);
		p.no_live_symbols = true;
		profile_symbolize(&p, false);
		view_top(&p, &f, &to, null);
		view_info(&p, &f, false, null);
		view_info(&p, &f, true, null);
		view_threads(&p, &f, false, null);
	}
	profile_release(&p);
	return 0;
}
