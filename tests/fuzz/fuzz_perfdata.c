/* fuzz_perfdata.c - libFuzzer target for the perf.data reader.
 *
 * Imports arbitrary bytes as perf.data (file or pipe format) through the
 * whole ingest path into a recording written to /dev/null. Files named
 * in the input are never opened (no DWARF unwinding, no symbols chunk).
 * Build and run with tests/fuzz/run.sh; seeds in corpus/perfdata are
 * small files from perf record (file, pipe, dwarf, zstd-compressed). */
#include "lib/err.h"
#include "source/perfdata.h"
#include "store/writer.h"

#include <stdint.h>
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_writer w;
	struct perfdata_opts o = { 0 };
	struct perfdata_stats st;
	struct err err = { 0 };

	o.quiet = true;
	o.no_binaries = true;
	if (store_writer_open(&w, "/dev/null"))
		return 0;
	perfdata_import_mem(data, size, "fuzz", &w, &o, &st, &err);
	store_writer_close(&w);
	return 0;
}
