/* fuzz_unwind_elf.c - fuzz target for the unwinder's loading of a module
 * from its ELF file (src/unwind/table.c, utable_load): section lookup,
 * .eh_frame and .debug_frame (compressed or not), the build-id, the
 * separate debug file by .gnu_debuglink (and its build-id or CRC check),
 * the PT_LOAD segments, the root callers from .symtab/.dynsym and the
 * signal trampolines found by their bytes. fuzz_cfi fuzzes CFI bytes
 * alone; here the ELF around them is what varies.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: a binary and optionally its debug file (tests/fuzz/fuzz-files.h).
 * The table is then queried at every row and around it (SLOW rows run the
 * interpreter again), for load biases the input names and root callers.
 * Check: the rows keep table.h's invariants (sorted, no two equal
 * neighbours, the last a gap row); a debug file the table's CFI came
 * from belongs to the binary. The provisional table of the same file
 * (utable_build_quick: its .eh_frame_hdr search table, each FDE found and
 * run at lookup) is queried at the same addresses.
 * Seeds: tests/fuzz/make-elf-corpus.sh (crafted ELF files).
 */
#include "fuzz-files.h"
#include "fuzz-rows.h"

#include "unwind/table.h"
#include "unwind/arch.h"
#include "module/module.h"

static uint64_t word(const uint8_t *p, size_t n, size_t i)
{
	uint64_t v = 0;
	if (i + 8 <= n)
		memcpy(&v, p + i, 8);
	return v;
}

/* table.h's invariants of the rows (sorted, no two equal neighbours,
 * the last a gap row, rules in the dictionary), which the lookups rely
 * on: a table that breaks them answers lookups wrongly, silently. */
static void check_rows(const struct utable *t)
{
	const char *why = NULL;
	uint32_t i = 0;

	if (t->nrows && t->addr[0] != 0)
		why = "the first row is not at offset 0";
	for (i = 0; !why && i < t->nrows; i++) {
		if (t->rule[i] >= t->nrules)
			why = "a rule outside the dictionary";
		else if (i && t->addr[i] <= t->addr[i - 1])
			why = "rows out of order";
		else if (i && t->rule[i] == t->rule[i - 1])
			why = "two neighbouring rows with the same rule";
		else if (i + 1 < t->nrows && utable_find(t, t->base + t->addr[i]) != &t->rules[t->rule[i]])
			why = "a lookup at a row's address finds another rule";
	}
	if (!why && t->nrows && t->rule[t->nrows - 1] != UR_FP)
		why = "the last row is not a gap row";
	if (why) {
		fprintf(stderr, "fuzz_unwind_elf: %s (row %u of %u)\n", why, i ? i - 1 : 0, t->nrows);
		abort();
	}
}

/* The provisional table of f's binary, at t's rows and the input's words. */
static void query_quick(const char *bin, const struct utable *t, const uint8_t *data, size_t size)
{
	struct module *m = module_get(bin, NULL, 0);
	struct utable *q = utable_build_quick(m);
	if (q) {
		check_rows(q);
		if (!q->lazy) {
			fprintf(stderr, "fuzz_unwind_elf: a provisional table without its CFI\n");
			abort();
		}
		for (uint32_t i = 0; i < t->nrows && i < 4096; i++) {
			apply_slow_row(q, t->base + t->addr[i]);
			apply_slow_row(q, t->base + t->addr[i] - 1);
		}
		for (uint32_t i = 0; i < 16; i++)
			apply_slow_row(q, word(data, size, 16 + 8 * i));
		utable_free(q);
	}
	module_put(m);
}

static void query(const struct utable *t, const uint8_t *data, size_t size)
{
	uint64_t bias;
	uint32_t i;

	check_rows(t);
	for (i = 0; i < t->nrows; i++) {
		uint64_t a = t->base + t->addr[i];
		const struct urule *r = utable_find(t, a);
		(void)utable_find(t, a - 1);
		(void)utable_row_index(t, a + 1);
		(void)utable_in_root_caller(t, a);
		if (r->kind == UR_SLOW)
			apply_slow_row(t, a);
	}
	for (i = 0; i < 16; i++) {
		uint64_t w = word(data, size, 16 + 8 * i);
		(void)utable_find(t, w);
		(void)utable_bias(t, 0x7f0000000000ull, w & 0xfffff000, &bias);
		(void)utable_bias(t, w, w & 0xfff, &bias);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_files *f = fuzz_files_init("unwind-elf");
	struct fuzz_pair p;
	struct utable *t;

	if (size < 2)
		return 0;
	/* compile every time, and leave no entries in the user's table
	 * cache (its files have a target of their own: fuzz_tcache) */
	setenv("STAX_NO_CACHE", "1", 1);
	fuzz_pair_write(f, data, size, &p);
	t = utable_load(f->bin);
	if (!t)
		abort();
	query(t, p.bin, p.nbin);
	query_quick(f->bin, t, p.bin, p.nbin);
	if (p.dbg && t->path && !strcmp(t->path, p.dbg_path) &&
	    !fuzz_debug_may_match(&p, t->build_id, t->build_id_size)) {
		fprintf(stderr, "fuzz_unwind_elf: CFI from a debug file of another build\n");
		abort();
	}
	utable_free(t);
	return 0;
}
