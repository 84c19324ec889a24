/* dwcache.c - decompressed DWARF kept on disk, by build-id.
 *
 * Distribution debug files (Debian's libc6-dbg, every -dbgsym package)
 * have zlib-compressed .debug_* sections, and libdw inflates all of them
 * when it opens the file: ~40 ms for libc, more than the rest of a
 * `stax top -i perf.data` together. So the first time a compressed file
 * is opened, the sections stax reads are written out uncompressed, as a
 * small ELF file of their own, to
 *
 *     $XDG_CACHE_HOME/stax/dwarf/BUILDID   (else ~/.cache/stax/dwarf/BUILDID)
 *
 * and later opens map that instead (well under a millisecond plus a
 * checksum pass). STAX_NO_CACHE=1 turns the cache off (as for kallsyms).
 *
 * Layout of a cache file (little-endian, like the ELF inside):
 *
 *   offset size  meaning
 *   0      8     magic "STAXDWC1" (the 1 is the version)
 *   8      4     header size (152)
 *   12     4     build-id size (1..64)
 *   16     64    build-id, zero-padded
 *   80     8     st_dev of the file the image was made from
 *   88     8     st_ino of that file
 *   96     8     its size
 *   104    8     its mtime in nanoseconds
 *   112    8     image offset (DWCACHE_IMAGE_OFF, page-aligned)
 *   120    8     image size; offset + size is the file size
 *   128    8     checksum of the image (sum64 below)
 *   136    16    zero
 *   then padding to the image offset, then the image: an ELF64 file with
 *   the original's section headers (same indexes and names) where each
 *   .debug_* section libdw reads (all but .debug_loc/.debug_loclists,
 *   .debug_frame, .debug_macro/.debug_macinfo), .gnu_debugaltlink and
 *   the section name table hold their uncompressed bytes, and every other
 *   section is SHT_NOBITS of size 0; no program headers.
 *
 * A cache file is used only when it is a regular file of ours that others
 * cannot write, its header matches the build-id and the source file's
 * identity (so a reinstalled or rebuilt debug file makes a new entry), and
 * the image's checksum is right; anything else is ignored and rewritten.
 * Files are written to a temporary name and renamed, so readers never see
 * a half-written one. Entries used least recently (by mtime, which a hit
 * refreshes) are removed once the directory holds more than
 * DWCACHE_MAX_TOTAL bytes.
 */
#include "symbol/symbol-private.h"
#include "lib/buf.h"
#include "lib/cachedir.h"
#include "lib/safefile.h"
#include "lib/util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DWCACHE_MAGIC "STAXDWC1"
#define DWCACHE_IMAGE_OFF 4096u
/* Larger images are not cached (and bound what a reader maps). */
#define DWCACHE_MAX_IMAGE (512ull << 20)
#define DWCACHE_MAX_TOTAL (1ull << 30)
#define DWCACHE_DIR "dwarf"

struct dwcache_header {
	char magic[8];
	uint32_t header_size;
	uint32_t build_id_size;
	uint8_t build_id[64];
	uint64_t src_dev, src_ino, src_size, src_mtime_ns;
	uint64_t image_off, image_size;
	uint64_t image_sum;
	uint64_t zero[2];
};
_Static_assert(sizeof(struct dwcache_header) == 152, "dwcache header layout");
_Static_assert(sizeof(GElf_Ehdr) == sizeof(Elf64_Ehdr) && sizeof(GElf_Shdr) == sizeof(Elf64_Shdr),
	       "gelf is elf64");

/* ---- the cache directory: lib/cachedir.c ---- */

int sym_cache_dir(const char *sub, bool create)
{
	return cache_dir_open(sub, create);
}

/* ---- checksum: four xxh64-style lanes, several GB/s ---- */

#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull

static uint64_t rotl(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

uint64_t sym_dwcache_sum(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t v[4] = { P1 + P2, P2, 0, -P1 }, h, w;
	size_t i, left = n;
	int k;

	for (; left >= 32; b += 32, left -= 32)
		for (k = 0; k < 4; k++) {
			memcpy(&w, b + 8 * k, 8);
			v[k] = rotl(v[k] + w * P2, 31) * P1;
		}
	h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18) + (uint64_t)n;
	for (i = 0; i < left; i++)
		h = rotl(h ^ (b[i] * P3), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	return h ^ (h >> 32);
}

/* ---- building the image ---- */

/* Sections of a debug file that libdw may read for names, inline chains
 * and lines; the others (locations, CFI, macros) are left out. */
static bool keep_section(const char *name)
{
	static const char *const drop[] = {
		".debug_loc", ".debug_loclists", ".debug_frame", ".debug_macro", ".debug_macinfo",
	};
	size_t i;
	if (!strcmp(name, ".gnu_debugaltlink"))
		return true;
	if (strncmp(name, ".debug_", 7))
		return false;
	for (i = 0; i < ARRAY_SIZE(drop); i++)
		if (!strcmp(name, drop[i]))
			return false;
	return true;
}

static bool native_elf64(Elf *e)
{
	const char *id = elf_getident(e, NULL);
	return id && id[EI_CLASS] == ELFCLASS64 && id[EI_DATA] == ELFDATA2LSB &&
	       __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

bool sym_dwcache_wanted(Elf *e)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	bool compressed = false;

	if (!e || !native_elf64(e) || elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		if (!strncmp(name, ".zdebug", 7))
			return false; /* GNU-style compression: renamed sections, left alone */
		if (sh.sh_type != SHT_NOBITS && (sh.sh_flags & SHF_COMPRESSED) && keep_section(name))
			compressed = true;
	}
	return compressed;
}

static void add_zero(struct buf *b, size_t n)
{
	if (n)
		memset(buf_extend(b, n), 0, n);
}

int sym_dwcache_image(Elf *e, struct buf *b)
{
	GElf_Ehdr eh;
	GElf_Shdr *sh = NULL;
	Elf_Data **data = NULL;
	size_t shnum, shstrndx, i, size, start = b->len;
	int ret = -EINVAL;

	if (!native_elf64(e) || !gelf_getehdr(e, &eh) || elf_getshdrnum(e, &shnum) ||
	    elf_getshdrstrndx(e, &shstrndx) || !shnum || shnum > 65536)
		return -EINVAL;
	sh = xcalloc(shnum, sizeof(*sh));
	data = xcalloc(shnum, sizeof(*data));
	/* pass 1: decompress what is kept, and lay the image out */
	size = sizeof(Elf64_Ehdr);
	for (i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(e, i);
		Elf_Data *d;
		const char *name;
		size_t align;

		if (!scn || !gelf_getshdr(scn, &sh[i]))
			goto out;
		if (i == 0)
			continue; /* SHT_NULL; holds the counts of extended numbering */
		name = elf_strptr(e, shstrndx, sh[i].sh_name);
		if (!name || sh[i].sh_type == SHT_NOBITS || (i != shstrndx && !keep_section(name))) {
			sh[i].sh_type = SHT_NOBITS;
			sh[i].sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			sh[i].sh_offset = 0;
			sh[i].sh_size = 0;
			continue;
		}
		if ((sh[i].sh_flags & SHF_COMPRESSED) &&
		    (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, &sh[i])))
			goto out;
		d = elf_getdata(scn, NULL);
		if (!d || (d->d_size && !d->d_buf) || d->d_size != sh[i].sh_size ||
		    elf_getdata(scn, d) != NULL || d->d_size > DWCACHE_MAX_IMAGE)
			goto out;
		align = sh[i].sh_addralign > 1 ? MIN(sh[i].sh_addralign, (uint64_t)4096) : 1;
		size += (align - size % align) % align;
		sh[i].sh_offset = size;
		size += d->d_size;
		data[i] = d;
		if (size > DWCACHE_MAX_IMAGE)
			goto out;
	}
	size += (8 - size % 8) % 8;
	eh.e_phoff = 0;
	eh.e_phnum = 0;
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_shoff = size;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	size += shnum * sizeof(*sh);
	if (size > DWCACHE_MAX_IMAGE)
		goto out;
	/* pass 2: copy */
	add_zero(b, size);
	memcpy(b->data + start, &eh, sizeof(eh));
	for (i = 0; i < shnum; i++)
		if (data[i] && data[i]->d_size)
			memcpy(b->data + start + sh[i].sh_offset, data[i]->d_buf, data[i]->d_size);
	memcpy(b->data + start + eh.e_shoff, sh, shnum * sizeof(*sh));
	ret = 0;
out:
	free(data);
	free(sh);
	return ret;
}

/* ---- reading ---- */

static void make_header(struct dwcache_header *h, const struct sym_dwcache_key *k)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, DWCACHE_MAGIC, 8);
	h->header_size = sizeof(*h);
	h->build_id_size = (uint32_t)k->build_id_size;
	memcpy(h->build_id, k->build_id, k->build_id_size);
	h->src_dev = k->dev;
	h->src_ino = k->ino;
	h->src_size = k->size;
	h->src_mtime_ns = k->mtime_ns;
}

const void *sym_dwcache_check(const void *data, size_t size, const struct sym_dwcache_key *k,
			      size_t *image_size)
{
	struct dwcache_header h, want;

	if (!k->build_id_size || k->build_id_size > 64 || size < sizeof(h))
		return NULL;
	memcpy(&h, data, sizeof(h));
	make_header(&want, k);
	/* every field up to the image's place is known in advance */
	if (memcmp(&h, &want, offsetof(struct dwcache_header, image_off)) ||
	    h.zero[0] || h.zero[1] || h.image_off != DWCACHE_IMAGE_OFF ||
	    h.image_off > size || h.image_size != size - h.image_off ||
	    h.image_size < sizeof(Elf64_Ehdr) || h.image_size > DWCACHE_MAX_IMAGE)
		return NULL;
	if (sym_dwcache_sum((const uint8_t *)data + h.image_off, h.image_size) != h.image_sum)
		return NULL;
	*image_size = h.image_size;
	return (const uint8_t *)data + h.image_off;
}

int sym_dwcache_key_of(int fd, const uint8_t *bid, size_t bidlen, struct sym_dwcache_key *k)
{
	struct stat st;
	if (!bid || !bidlen || bidlen > 64 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	memcpy(k->build_id, bid, bidlen);
	k->build_id_size = bidlen;
	k->dev = (uint64_t)st.st_dev;
	k->ino = (uint64_t)st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	return 0;
}

/* The entry's file name: the build-id in hex. */
static void entry_name(char out[2 * 64 + 1], const struct sym_dwcache_key *k)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;
	for (i = 0; i < k->build_id_size && i < 64; i++) {
		out[2 * i] = hex[k->build_id[i] >> 4];
		out[2 * i + 1] = hex[k->build_id[i] & 15];
	}
	out[2 * i] = '\0';
}

int sym_dwcache_open(const struct sym_dwcache_key *k, struct sym_dwcache_map *out)
{
	char name[2 * 64 + 1];
	struct stat st;
	size_t image_size;
	const void *image;
	void *map;
	int dfd, fd, ret = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (!k->build_id_size || k->build_id_size > 64)
		return -ENOENT;
	entry_name(name, k);
	if ((dfd = sym_cache_dir(DWCACHE_DIR, false)) < 0)
		return -ENOENT;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	close(dfd);
	if (fd < 0)
		return -ENOENT;
	/* a regular file of ours, of a size an entry can have */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < (off_t)(DWCACHE_IMAGE_OFF + sizeof(Elf64_Ehdr)) ||
	    (uint64_t)st.st_size > DWCACHE_IMAGE_OFF + DWCACHE_MAX_IMAGE)
		goto out;
	/* read-only: elf_memory() reads in place (ELF_C_READ_MMAP), and a
	 * writable private mapping would copy every page when populated */
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	image = sym_dwcache_check(map, (size_t)st.st_size, k, &image_size);
	if (!image) {
		munmap(map, (size_t)st.st_size);
		ret = -EINVAL;
		goto out;
	}
	out->map = map;
	out->map_size = (size_t)st.st_size;
	out->image = (void *)image;
	out->image_size = image_size;
	futimens(fd, NULL); /* used: keep it when the directory is trimmed */
	ret = 0;
out:
	close(fd);
	return ret;
}

void sym_dwcache_unmap(struct sym_dwcache_map *m)
{
	if (m->map)
		munmap(m->map, m->map_size);
	memset(m, 0, sizeof(*m));
}

/* ---- writing ---- */

/* n hex digits (lowercase) from s; the count. */
static size_t hex_run(const char *s)
{
	size_t n = 0;
	while ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f'))
		n++;
	return n;
}

/* Names stax gives the files of this directory: an entry is a build-id
 * in hex; a temporary file is one with ".stax-XXXXXXXX.tmp" after it
 * (lib/safefile.c), or ".PID.TID.tmp" (earlier versions). */
static bool entry_named(const char *name)
{
	size_t n = hex_run(name);
	return n >= 2 && n <= 128 && !name[n];
}

static bool temp_named(const char *name)
{
	size_t n = hex_run(name), i;
	const char *p = name + n;
	if (n < 2 || n > 128 || *p != '.')
		return false;
	if (!strncmp(p, ".stax-", 6)) {
		for (i = 6; i < 14; i++)
			if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
			      (p[i] >= 'A' && p[i] <= 'Z')))
				return false;
		return !strcmp(p + 14, ".tmp");
	}
	for (i = 0; i < 2; i++) {
		size_t d = strspn(p + 1, "0123456789");
		if (!d || p[1 + d] != '.')
			return false;
		p += 1 + d;
	}
	return !strcmp(p, ".tmp");
}

/* cache_dir_trim()'s kind of a name: 1 an entry, 2 a temporary file. */
static int dw_named(const char *name)
{
	return temp_named(name) ? 2 : entry_named(name) ? 1 : 0;
}

int sym_dwcache_store(const struct sym_dwcache_key *k, const void *image, size_t size)
{
	struct dwcache_header h;
	uint8_t *head;
	char name[2 * 64 + 1];
	int dfd, ret = 0;

	if (size < sizeof(Elf64_Ehdr) || size > DWCACHE_MAX_IMAGE || !k->build_id_size ||
	    k->build_id_size > 64)
		return -EINVAL;
	entry_name(name, k);
	if ((dfd = sym_cache_dir(DWCACHE_DIR, true)) < 0)
		return -ENOENT;
	make_header(&h, k);
	h.image_off = DWCACHE_IMAGE_OFF;
	h.image_size = size;
	h.image_sum = sym_dwcache_sum(image, size);
	head = xcalloc(1, DWCACHE_IMAGE_OFF);
	memcpy(head, &h, sizeof(h));
	/* the header's page, then the image (from the caller's buffer) */
	if ((ret = safe_replace_write(dfd, name, (struct safe_piece[]){ { head, DWCACHE_IMAGE_OFF }, { image, size } }, 2)))
		goto out;
	cache_dir_trim(dfd, DWCACHE_MAX_TOTAL, dw_named);
out:
	close(dfd);
	free(head);
	return ret;
}

int sym_dwcache_save(const struct sym_dwcache_key *k, Elf *e)
{
	struct buf b = BUF_INIT;
	int ret = sym_dwcache_image(e, &b);
	if (!ret)
		ret = sym_dwcache_store(k, b.data, b.len);
	buf_release(&b);
	return ret;
}
