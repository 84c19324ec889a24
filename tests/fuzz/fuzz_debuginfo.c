/* fuzz_debuginfo.c - fuzz target for finding and reading a binary's
 * separate debug information (src/symbol/debuginfo.c): the
 * .gnu_debuglink section, the candidates it names (beside the binary and
 * in its .debug/), the build-id or CRC check of a candidate, the debug
 * file's symbols and DWARF (dwarf.c, and dwcache.c for compressed debug
 * sections), and MiniDebugInfo (.gnu_debugdata, xz) of the binary. Then
 * the whole module, as the symbolizer loads it, looked up with lines.
 * fuzz_elf fuzzes one ELF file alone; here the pair is what varies.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: a binary and optionally its debug file (tests/fuzz/fuzz-files.h).
 * Check: a debug file is used only when it belongs to the binary.
 * Seeds: tests/fuzz/make-elf-corpus.sh (crafted ELF files).
 */
#include "fuzz-files.h"

#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "module/module.h"
#include "lib/elffile.h"
#include "lib/debugfile.h"
#include "lib/elffile.h"

/* sym_dwarf_open() of the file at path (opened as module_open() does). */
static struct sym_dwarf *dwarf_open_path(const char *path, const uint8_t *bid, size_t n)
{
	int fd;
	Elf *e = elf_file_open(path, &fd);
	return sym_dwarf_open(e, fd, bid, n);
}

static uint64_t word(const uint8_t *p, size_t n, size_t i)
{
	uint64_t v = 0;
	if (i + 8 <= n)
		memcpy(&v, p + i, 8);
	return v;
}

/* The symbols of e, looked up at addresses the input names. */
static void symbols(Elf *e, const struct fuzz_pair *p)
{
	struct sym_table t = { 0 };
	struct sym_arena a = { 0 };
	size_t i;

	sym_elf_add_symbols(e, SHT_SYMTAB, &t, &a);
	sym_elf_add_symbols(e, SHT_DYNSYM, &t, &a);
	sym_table_finish(&t);
	for (i = 0; i < 32; i++) {
		struct sym_entry *s = sym_table_find(&t, word(p->bin, p->nbin, i * 8) % 0x10000);
		if (s)
			sym_entry_name(s, &a, true);
	}
	sym_table_release(&t);
	sym_arena_release(&a);
}

static void as_module(const struct fuzz_files *f, const struct fuzz_pair *p)
{
	struct sym_session *s = sym_session_new();
	struct module_ref ref = { 0 };
	struct sym_result r;
	const char *src, *file;
	uint32_t line;
	size_t nsyms, i;

	sym_set_debuginfod(s, false);
	ref.path = f->bin;
	ref.start = 0x400000;
	ref.end = 0x400000 + p->nbin + 0x1000;
	sym_module_info(s, &ref, &src, &nsyms);
	sym_module_dwarf_source(s, &ref);
	for (i = 0; i < 64; i++) {
		uint64_t off = p->nbin * i / 64;
		sym_lookup(s, &ref, ref.start + off, &r);
		sym_source_line(s, &ref, off, &file, &line);
	}
	for (i = 0; i < 16; i++) {
		uint64_t w = word(p->bin, p->nbin, 32 + i * 8);
		sym_lookup(s, &ref, ref.start + w % (p->nbin + 1), &r);
		sym_source_line(s, &ref, w, &file, &line);
	}
	sym_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool cache_set;
	struct fuzz_files *f = fuzz_files_init("debuginfo");
	struct fuzz_pair p;
	uint8_t bid[64];
	size_t bidlen;
	char *found = NULL;
	void *mini_buf;
	Elf *e, *d, *m;
	int fd, dfd;

	if (size < 2)
		return 0;
	if (!cache_set) {
		/* the DWARF cache (compressed debug sections) in our directory */
		char cache[128];
		snprintf(cache, sizeof(cache), "%s/cache", f->dir);
		setenv("XDG_CACHE_HOME", cache, 1);
		unsetenv("STAX_NO_CACHE");
		unsetenv("DEBUGINFOD_URLS");
		cache_set = true;
	}
	fuzz_pair_write(f, data, size, &p);
	e = elf_file_open(f->bin, &fd);
	if (!e)
		return 0;
	bidlen = elf_file_build_id(e, bid, sizeof(bid));
	d = debug_file_by_link(e, f->bin, bid, bidlen, &dfd, &found);
	if (d) {
		if (!p.dbg || !found || strcmp(found, p.dbg_path) ||
		    !fuzz_debug_may_match(&p, bid, bidlen)) {
			fprintf(stderr, "fuzz_debuginfo: a debug file that does not belong (%s)\n",
				found ? found : "?");
			abort();
		}
		symbols(d, &p);
		if (module_elf_has_dwarf(d)) {
			struct sym_dwarf *dw = dwarf_open_path(found, bidlen ? bid : NULL, bidlen);
			struct sym_frame fr[SYM_MAX_INLINE + 1];
			struct sym_arena a = { 0 };
			for (size_t i = 0; dw && i < 32; i++)
				sym_dwarf_frames(dw, word(p.bin, p.nbin, i * 8) % 0x10000, fr,
						 SYM_MAX_INLINE + 1, &a, true);
			sym_dwarf_free(dw);
			sym_arena_release(&a);
		}
		elf_file_close(d, dfd);
	}
	free(found);
	m = module_mini_debuginfo(e, &mini_buf);
	if (m) {
		symbols(m, &p);
		elf_end(m);
		free(mini_buf);
	}
	elf_file_close(e, fd);
	as_module(f, &p);
	return 0;
}
