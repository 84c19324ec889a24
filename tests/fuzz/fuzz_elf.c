/* fuzz_elf.c - fuzz target for symbolization from ELF files: program
 * headers, .symtab/.dynsym, build-id notes, .gnu_debuglink, MiniDebugInfo
 * (.gnu_debugdata, xz), the names made up for PLT entries (relocations,
 * PLT code) and the entry point (ELF header, PT_DYNAMIC), and DWARF lines
 * and inline chains (libdw). libelf
 * and libdw parse; this checks that our code survives what they return.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: byte 0 picks what the rest is.
 *   0: an ELF file, written to a temp file and opened as a module of a
 *      symbol session; looked up at file offsets spread over the file and
 *      at offsets the input names, with lines and inline chains on.
 *   1: the xz bytes of a .gnu_debugdata section.
 *   2: an ELF file that this target compresses with xz first, so the
 *      ELF inside MiniDebugInfo is mutated, not the compressed bytes.
 *   3: the image of a DWARF cache entry (symbol/dwcache.c), stored with
 *      a valid header for a stand-in source file, so the image is what
 *      is mutated, not the checksum; then opened as a cache hit and
 *      looked up.
 * Everything lives in one private directory (mkdtemp, mode 0700, removed
 * at exit): the ELF file DIR/input.elf, so a debuglink's lookups beside
 * it find nothing another process put in /tmp, and the DWARF cache,
 * XDG_CACHE_HOME=DIR/cache: mode 0 writes entries for ELF files with
 * compressed debug sections and a build-id.
 * Seeds (tests/fuzz/seeds.sh): test programs with DWARF, a stripped one
 * with MiniDebugInfo, its .gnu_debugdata section, a cache image.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "module/module.h"
#include "lib/elffile.h"

#include <fcntl.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* sym_dwarf_open() of the file at path (opened as module_open() does). */
static struct sym_dwarf *dwarf_open_path(const char *path, const uint8_t *bid, size_t n)
{
	int fd;
	Elf *e = elf_file_open(path, &fd);
	return sym_dwarf_open(e, fd, bid, n);
}

static char dir[64], path[96], cache_dir[96], stand_in[128];

static void remove_temp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return;
}

static uint64_t word(const uint8_t *data, size_t size, size_t i)
{
	uint64_t v = 0;
	if (i + 8 <= size)
		memcpy(&v, data + i, 8);
	return v;
}

/* Symbols of an in-memory ELF, as MiniDebugInfo uses them. */
static void mini_symbols(Elf *m, const uint8_t *data, size_t size)
{
	struct sym_table t = { 0 };
	struct sym_arena a = { 0 };
	size_t i;

	sym_elf_add_symbols(m, SHT_SYMTAB, &t, &a);
	sym_elf_add_symbols(m, SHT_DYNSYM, &t, &a);
	sym_table_finish(&t);
	for (i = 0; i < 64; i++) {
		struct sym_entry *e = sym_table_find(&t, word(data, size, i * 8) % 0x100000);
		if (e)
			sym_entry_name(e, &a, true);
	}
	for (i = 0; i < t.nsyms; i++)
		if (sym_table_find(&t, t.syms[i].start) == NULL) {
			fprintf(stderr, "fuzz_elf: symbol %zu does not cover its own start\n", i);
			abort();
		}
	sym_table_release(&t);
	sym_arena_release(&a);
}

static void from_xz(const void *xz, size_t n, const uint8_t *data, size_t size)
{
	void *buf;
	Elf *m = module_elf_from_xz(xz, n, &buf);
	if (!m)
		return;
	mini_symbols(m, data, size);
	elf_end(m);
	free(buf);
}

static void as_module(const uint8_t *data, size_t size)
{
	struct sym_session *s;
	struct module_ref ref;
	struct sym_result r;
	const char *src, *file;
	uint64_t va, sz, fo;
	uint32_t line;
	size_t nsyms, i;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);

	s = sym_session_new();
	sym_set_debuginfod(s, false);
	memset(&ref, 0, sizeof(ref));
	ref.path = path;
	ref.start = 0x400000;
	ref.end = 0x400000 + size + 0x1000;
	ref.pgoff = 0;
	sym_module_info(s, &ref, &src, &nsyms);
	sym_module_dwarf_source(s, &ref);
	for (i = 0; i < 128; i++) {
		uint64_t off = size * i / 128;
		sym_lookup(s, &ref, ref.start + off, &r);
		sym_lookup(s, &ref, ref.start + off + 1, &r);
	}
	for (i = 0; i < 32; i++) {
		uint64_t w = word(data, size, 64 + i * 8);
		sym_lookup(s, &ref, ref.start + w % (size + 1), &r);
		sym_function_range(s, &ref, ref.start + w % (size + 1), &va, &sz, &fo);
		sym_source_line(s, &ref, w, &file, &line);
		sym_source_line(s, &ref, w % 0x10000 + 0x1000, &file, &line);
	}
	sym_session_free(s);
}

/* A cache hit on an arbitrary image: an empty file stands in for the
 * debug file the image was made from (so libdw can only have opened the
 * image). */
static void as_cache_image(const uint8_t *data, size_t size)
{
	static const uint8_t bid[4] = { 0xfa, 0xce, 0xb0, 0x0c };
	struct sym_dwcache_key k;
	struct sym_dwarf *d;
	struct sym_frame fr[SYM_MAX_INLINE + 1];
	struct sym_arena a = { 0 };
	size_t i;
	int fd = open(stand_in, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		abort();
	if (sym_dwcache_key_of(fd, bid, sizeof(bid), &k)) {
		close(fd);
		return;
	}
	close(fd);
	if (sym_dwcache_store(&k, data, size))
		return;
	d = dwarf_open_path(stand_in, bid, sizeof(bid));
	if (!d)
		return;
	if (!sym_dwarf_from_cache(d)) {
		fprintf(stderr, "fuzz_elf: a stored cache image was not used\n");
		abort();
	}
	for (i = 0; i < 64; i++) {
		sym_dwarf_frames(d, word(data, size, i * 8), fr, SYM_MAX_INLINE + 1, &a, true);
		sym_dwarf_frames(d, 0x1000 + i * 0x40, fr, SYM_MAX_INLINE + 1, &a, false);
	}
	sym_dwarf_free(d);
	sym_arena_release(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	if (!dir[0]) {
		int fd;
		snprintf(dir, sizeof(dir), "/tmp/stax-fuzz-elf.XXXXXX");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_temp);
		snprintf(path, sizeof(path), "%s/input.elf", dir);
		snprintf(cache_dir, sizeof(cache_dir), "%s/cache", dir);
		if (mkdir(cache_dir, 0700))
			abort();
		setenv("XDG_CACHE_HOME", cache_dir, 1);
		snprintf(stand_in, sizeof(stand_in), "%s/stand-in.debug", cache_dir);
		fd = open(stand_in, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0)
			abort();
		close(fd);
		unsetenv("STAX_NO_CACHE");
		unsetenv("DEBUGINFOD_URLS");
	}
	switch (data[0] % 4) {
	case 0:
		as_module(data + 1, size - 1);
		break;
	case 1:
		from_xz(data + 1, size - 1, data, size);
		break;
	case 3:
		as_cache_image(data + 1, size - 1);
		break;
	default: {
		size_t cap = lzma_stream_buffer_bound(size - 1), n = 0;
		uint8_t *xz = malloc(cap);
		if (lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, data + 1, size - 1, xz, &n,
					    cap) == LZMA_OK)
			from_xz(xz, n, data, size);
		free(xz);
		break;
	}
	}
	return 0;
}
