/* fuzz_maps.c - fuzz target for the /proc/PID/maps parser (attaching
 * with -p or -a seeds every process's executable mappings from it).
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: the text of a maps file. It is parsed into the ingest state
 * (files named in it are never opened), written as a recording, loaded
 * back and shown by stax info, so odd paths travel the whole way.
 */
#include "ingest/ingest.h"
#include "profile/profile.h"
#include "view/view.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void remove_temp(void)
{
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct store_writer w;
	struct ingest g;
	struct profile p;
	struct view_filter vf = { -1, -1, NULL };
	char err[512];
	FILE *f;
	uint64_t a;
	size_t i;

	if (!size)
		return 0;
	if (!path[0]) {
		int fd;
		snprintf(path, sizeof(path), "/tmp/stax-fuzz-maps.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		null = fopen("/dev/null", "w");
		atexit(remove_temp);
	}
	if (store_writer_open(&w, path))
		abort();
	ingest_init(&g, &w, UNWIND_MODE_FP);
	f = fmemopen((void *)data, size, "r");
	if (!f)
		abort();
	ingest_seed_maps(&g, 1234, 1000, f, false);
	fclose(f);
	for (i = 0; i + 8 <= size && i < 512; i += 8) {
		memcpy(&a, data + i, 8);
		state_find(&g.st, 1234, a);
	}
	ingest_release(&g);
	if (store_writer_close(&w))
		abort();
	if (profile_load_err(&p, path, NULL) == 0) {
		p.no_live_symbols = true;
		profile_symbolize(&p, false);
		view_info(&p, &vf, false, null);
		view_info(&p, &vf, true, null);
	}
	profile_release(&p);
	(void)err;
	return 0;
}
