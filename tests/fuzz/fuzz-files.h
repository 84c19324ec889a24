/* fuzz-files.h - for fuzz targets whose parsers take a path, not bytes:
 * the input is written to files in a private temporary directory
 * (removed at exit), so lookups next to the file (a debuglink's
 * candidates) find only what the input put there.
 *
 * Input layout shared by fuzz_unwind_elf and fuzz_debuginfo:
 *   byte 0     flags: bit 0 a debug file follows the binary, bit 1 it
 *              goes in .debug/ beside the binary rather than beside it
 *   bytes 1-4  with bit 0: the binary's size N, little-endian
 *   then       the binary (N bytes, or all the rest), then the debug file
 * The binary is DIR/prog and the debug file DIR/prog.debug (or
 * DIR/.debug/prog.debug): a debuglink naming prog.debug finds it. */
#ifndef STAX_FUZZ_FILES_H
#define STAX_FUZZ_FILES_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct fuzz_files {
	char dir[64];
	char bin[96], dbg[96], dbg_sub[112], sub[80];
};

static struct fuzz_files fuzz_files;

static int fuzz_rm(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(p) < 0 ? 0 : 0;
}

static void fuzz_files_remove(void)
{
	if (fuzz_files.dir[0])
		nftw(fuzz_files.dir, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* Makes the directory on the first call. */
static struct fuzz_files *fuzz_files_init(const char *name)
{
	struct fuzz_files *f = &fuzz_files;
	if (f->dir[0])
		return f;
	snprintf(f->dir, sizeof(f->dir), "/tmp/stax-fuzz-%s.XXXXXX", name);
	if (!mkdtemp(f->dir))
		abort();
	snprintf(f->bin, sizeof(f->bin), "%s/prog", f->dir);
	snprintf(f->dbg, sizeof(f->dbg), "%s/prog.debug", f->dir);
	snprintf(f->sub, sizeof(f->sub), "%s/.debug", f->dir);
	snprintf(f->dbg_sub, sizeof(f->dbg_sub), "%s/.debug/prog.debug", f->dir);
	if (mkdir(f->sub, 0700))
		abort();
	atexit(fuzz_files_remove);
	return f;
}

static void fuzz_write(const char *path, const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n) || close(fd))
		abort();
}

struct fuzz_pair {
	const uint8_t *bin, *dbg;  /* dbg NULL: no debug file */
	size_t nbin, ndbg;
	const char *dbg_path;      /* where the debug file was written */
};

/* Split the input and write the files (removing the previous input's). */
static void fuzz_pair_write(struct fuzz_files *f, const uint8_t *data, size_t size,
			    struct fuzz_pair *p)
{
	memset(p, 0, sizeof(*p));
	unlink(f->dbg);
	unlink(f->dbg_sub);
	if (size < 1)
		return;
	p->bin = data + 1;
	p->nbin = size - 1;
	if ((data[0] & 1) && size >= 5) {
		uint32_t n = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
			     (uint32_t)data[4] << 24;
		p->bin = data + 5;
		p->nbin = n < size - 5 ? n : size - 5;
		p->dbg = p->bin + p->nbin;
		p->ndbg = size - 5 - p->nbin;
		p->dbg_path = data[0] & 2 ? f->dbg_sub : f->dbg;
		fuzz_write(p->dbg_path, p->dbg, p->ndbg);
	}
	fuzz_write(f->bin, p->bin, p->nbin);
}

/* Could debug file p->dbg belong to the binary? A necessary condition
 * that needs no ELF parsing: the binary's build-id (bid) appears in it
 * after "GNU\0", or its CRC32 appears in the binary (the debuglink's). */
static int fuzz_debug_may_match(const struct fuzz_pair *p, const uint8_t *bid, size_t bidlen)
{
	uint8_t pat[4 + 64], le[4];
	uint32_t crc;
	if (bidlen && bidlen <= 64) {
		memcpy(pat, "GNU", 4);
		memcpy(pat + 4, bid, bidlen);
		if (memmem(p->dbg, p->ndbg, pat, 4 + bidlen))
			return 1;
	}
	crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), p->dbg, (uInt)p->ndbg);
	le[0] = (uint8_t)crc, le[1] = (uint8_t)(crc >> 8), le[2] = (uint8_t)(crc >> 16),
	le[3] = (uint8_t)(crc >> 24);
	return memmem(p->bin, p->nbin, le, 4) != NULL;
}

#endif
