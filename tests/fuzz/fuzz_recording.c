/* fuzz_recording.c - libFuzzer target for the recording-file reader.
 *
 * Loads arbitrary bytes as a recording and runs every view over what
 * loaded. Binaries named in the input are never opened. Build and run
 * with tests/fuzz/run.sh. */
#include "profile/profile.h"
#include "view/view.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[512];
	struct view_filter f = { -1, -1, NULL };
	struct top_opts to = { 10, false, false };
	struct flame_opts fo = { true, false, 0, 0 };
	static FILE *null;

	if (!null)
		null = fopen("/dev/null", "w");
	if (profile_load_mem(&p, "fuzz", data, size, err, sizeof(err)) == 0) {
		p.no_live_symbols = true;
		profile_symbolize(&p, false);
		view_top(&p, &f, &to, null);
		view_flame(&p, &f, &fo, null);
		fo.folded = false;
		view_flame(&p, &f, &fo, null);
		view_threads(&p, &f, true, null);
		view_info(&p, &f, false, null);
		view_script(&p, &f, false, null);
	}
	profile_release(&p);
	return 0;
}
