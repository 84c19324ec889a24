/* debuginfo.c - find a module's symbols outside the module: a separate
 * debug file (by build-id or .gnu_debuglink) or MiniDebugInfo.
 *
 * A debug file is only used when it provably belongs to the binary: same
 * build-id when both carry one, otherwise the CRC32 recorded in the
 * debuglink. Symbols from the wrong build would name the wrong functions.
 */
#include "symbol/symbol-private.h"
#include "lib/safefile.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <elfutils/debuginfod.h>

#define DEBUG_DIR "/usr/lib/debug"
/* MiniDebugInfo is a small symbol table; refuse to inflate beyond this. */
#define MINI_MAX (256u << 20)

static char *build_id_hex(const uint8_t *bid, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char *s = xmalloc(2 * len + 1);
	size_t i;
	for (i = 0; i < len; i++) {
		s[2 * i] = hex[bid[i] >> 4];
		s[2 * i + 1] = hex[bid[i] & 15];
	}
	s[2 * len] = '\0';
	return s;
}

static bool same_build_id(Elf *e, const uint8_t *bid, size_t len)
{
	uint8_t got[64];
	size_t n = sym_elf_build_id(e, got, sizeof(got));
	return n == len && n <= sizeof(got) && !memcmp(got, bid, len);
}

Elf *sym_debug_by_build_id(const uint8_t *bid, size_t len, int *fd, char **found)
{
	char *hex, *path;
	Elf *e;

	*fd = -1;
	if (!bid || len < 2 || len > 64)
		return NULL;
	hex = build_id_hex(bid, len);
	path = xasprintf(DEBUG_DIR "/.build-id/%.2s/%s.debug", hex, hex + 2);
	e = sym_elf_open(path, fd);
	if (e && !same_build_id(e, bid, len)) {
		sym_elf_close(e, *fd);
		*fd = -1;
		e = NULL;
	}
	if (e && found)
		*found = path;
	else
		free(path);
	free(hex);
	return e;
}

static int file_crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	if (n < 0)
		return -errno;
	*crc = (uint32_t)c;
	return 0;
}

/* Parse .gnu_debuglink: NUL-terminated file name, padding to 4, CRC32 in
 * the file's byte order. */
static int read_debuglink(Elf *e, const char **name, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_elf_section(e, ".gnu_debuglink", &sh);
	Elf_Data *d, src, dst;
	size_t len, crc_off;
	uint32_t raw;

	if (!scn || sh.sh_type == SHT_NOBITS)
		return -ENOENT;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return -EINVAL;
	len = strnlen(d->d_buf, d->d_size);
	/* a base name (objcopy writes one): never a path elsewhere */
	if (!len || len == d->d_size || memchr(d->d_buf, '/', len))
		return -EINVAL;
	crc_off = (len + 4) & ~(size_t)3;
	if (crc_off > d->d_size || d->d_size - crc_off < 4)
		return -EINVAL;
	memcpy(&raw, (const char *)d->d_buf + crc_off, 4);
	/* Convert from file to host byte order. */
	src.d_buf = &raw;
	src.d_size = 4;
	src.d_type = ELF_T_WORD;
	src.d_version = EV_CURRENT;
	dst = src;
	dst.d_buf = crc;
	if (!gelf_xlatetom(e, &dst, &src, elf_getident(e, NULL)[EI_DATA]))
		return -EINVAL;
	*name = d->d_buf;
	return 0;
}

Elf *sym_debug_by_link(Elf *e, const char *path, const uint8_t *bid,
		       size_t bidlen, int *fd, char **found)
{
	const char *name;
	uint32_t want_crc;
	char *dir, *cand[3];
	struct stat self;
	bool have_self;
	size_t i;
	Elf *d = NULL;

	*fd = -1;
	if (read_debuglink(e, &name, &want_crc))
		return NULL;
	have_self = stat(path, &self) == 0;
	dir = xstrdup(path);
	*(char *)path_base(dir) = '\0'; /* keeps the trailing '/' */
	cand[0] = xasprintf("%s%s", dir, name);
	cand[1] = xasprintf("%s.debug/%s", dir, name);
	cand[2] = xasprintf(DEBUG_DIR "%s%s%s", dir[0] == '/' ? "" : "/", dir, name);

	for (i = 0; i < ARRAY_SIZE(cand) && !d; i++) {
		struct stat st;
		uint8_t got[64];
		size_t gotlen;
		uint32_t crc;

		if (stat(cand[i], &st))
			continue;
		/* The debuglink may name the binary itself. */
		if (have_self && st.st_dev == self.st_dev && st.st_ino == self.st_ino)
			continue;
		d = sym_elf_open(cand[i], fd);
		if (!d)
			continue;
		gotlen = sym_elf_build_id(d, got, sizeof(got));
		if (bidlen && gotlen) {
			if (gotlen == bidlen && !memcmp(got, bid, bidlen))
				break;
		} else if (!file_crc32(*fd, &crc) && crc == want_crc) {
			break;
		}
		sym_elf_close(d, *fd);
		*fd = -1;
		d = NULL;
	}
	if (d && found) {
		*found = cand[i];
		cand[i] = NULL;
	}
	for (i = 0; i < ARRAY_SIZE(cand); i++)
		free(cand[i]);
	free(dir);
	return d;
}

Elf *sym_debug_mini(Elf *e, void **buf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = sym_elf_section(e, ".gnu_debugdata", &sh);
	Elf_Data *d;

	*buf = NULL;
	if (!scn || sh.sh_type == SHT_NOBITS)
		return NULL;
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	return sym_elf_from_xz(d->d_buf, d->d_size, buf);
}

Elf *sym_elf_from_xz(const void *xz, size_t size, void **buf)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	lzma_ret r;
	uint8_t *out = NULL;
	size_t cap = 0;
	Elf *m = NULL;

	*buf = NULL;
	if (!size)
		return NULL;
	if (lzma_stream_decoder(&strm, MINI_MAX, LZMA_CONCATENATED) != LZMA_OK)
		return NULL;
	strm.next_in = xz;
	strm.avail_in = size;
	do {
		if (!strm.avail_out) {
			size_t used = cap;
			if (cap >= MINI_MAX)
				goto fail;
			cap = cap ? MIN(cap * 2, (size_t)MINI_MAX) : MIN(4 * size + 4096, (size_t)MINI_MAX);
			out = xrealloc(out, cap);
			strm.next_out = out + used;
			strm.avail_out = cap - used;
		}
		r = lzma_code(&strm, LZMA_FINISH);
	} while (r == LZMA_OK);
	if (r != LZMA_STREAM_END)
		goto fail;
	sym_elf_init();
	m = elf_memory((char *)out, strm.total_out);
	if (!m || elf_kind(m) != ELF_K_ELF) {
		if (m)
			elf_end(m);
		m = NULL;
		goto fail;
	}
	lzma_end(&strm);
	*buf = out;
	return m;
fail:
	lzma_end(&strm);
	free(out);
	return NULL;
}

bool sym_elf_has_dwarf(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = e ? sym_elf_section(e, ".debug_info", &sh) : NULL;
	return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

/* debuginfod: the client library caches files (and misses, for
 * cache_miss_s) under ~/.cache/debuginfod_client; we add a timeout so a
 * dead server cannot stall a query for the library's default 90 s.
 *
 * libdebuginfod is opened when first needed, not linked: it brings
 * libcurl, GnuTLS, Kerberos and LDAP (some 30 libraries), and loading
 * and relocating them cost every stax command ~2.5 ms of start-up,
 * though only runs with DEBUGINFOD_URLS set ever use them. */
#define DEBUGINFOD_TIMEOUT_S "10"
#define DEBUGINFOD_SONAME "libdebuginfod.so.1"

static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*end)(debuginfod_client *);
} dfd;
static pthread_once_t dfd_once = PTHREAD_ONCE_INIT;

static void dfd_load(void)
{
	static const char *const names[] = { "debuginfod_begin", "debuginfod_find_debuginfo",
					     "debuginfod_end" };
	char err[256];
	if (load_library(DEBUGINFOD_SONAME, ARRAY_SIZE(names), names, (void **)&dfd, err, sizeof(err)))
		warn("DEBUGINFOD_URLS is set, but %s (install libdebuginfod1)", err);
}

/* Servers that do not answer (a timeout, a refused connection) are not
 * asked again: for the rest of this process, and for
 * DEBUGINFOD_DOWN_S by other stax processes, through a marker file
 * ~/.cache/stax/debuginfod-down holding a hash of DEBUGINFOD_URLS (its
 * mtime says when). Without it every stop of a recording waited out
 * the timeout once per module without debug info. libdebuginfod's own
 * cache remembers "not found" answers (cache_miss_s), not dead servers. */
#define DEBUGINFOD_DOWN_S 600
#define DEBUGINFOD_DOWN_FILE "debuginfod-down"

static int dfd_down;          /* set once the servers failed (atomic) */

static uint64_t urls_hash(const char *urls)
{
	uint64_t h = 1469598103934665603ull;
	for (; *urls; urls++)
		h = (h ^ (uint8_t)*urls) * 1099511628211ull;
	return h;
}

/* True when a recent marker says these servers did not answer. */
static bool down_marked(const char *urls)
{
	char buf[32];
	struct stat st;
	ssize_t n;
	int fd, dfd;

	if ((dfd = sym_cache_dir(NULL, false)) < 0)
		return false;
	fd = openat(dfd, DEBUGINFOD_DOWN_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	close(dfd);
	if (fd < 0)
		return false;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() ?
	    read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strtoull(buf, NULL, 16) == urls_hash(urls) &&
	       time(NULL) - st.st_mtime < DEBUGINFOD_DOWN_S && time(NULL) >= st.st_mtime;
}

/* Best effort, like the other caches: a new file renamed into place in
 * the user's own cache directory. */
static void down_mark(const char *urls)
{
	struct safe_replace r;
	char line[32];
	int dfd, n;

	if ((dfd = sym_cache_dir(NULL, true)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%016llx\n", (unsigned long long)urls_hash(urls));
	if (!safe_replace_begin(&r, dfd, DEBUGINFOD_DOWN_FILE, 0600, SAFE_REPLACE_OWN_DIR, NULL, 0)) {
		if (write(r.fd, line, (size_t)n) == n)
			safe_replace_commit(&r);
		else
			safe_replace_abort(&r);
	}
	close(dfd);
}

char *sym_debuginfod_find(const uint8_t *bid, size_t len)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	char *path = NULL;
	int fd, was;

	if (!urls || !*urls || !bid || !len || __atomic_load_n(&dfd_down, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_once(&dfd_once, dfd_load);
	if (!dfd.begin)
		return NULL;
	if (down_marked(urls)) {
		if (!__atomic_exchange_n(&dfd_down, 1, __ATOMIC_ACQ_REL))
			note("debuginfod: not asking %s, which did not answer less than %d minutes ago (delete ~/.cache/stax/%s to ask now)",
			     urls, DEBUGINFOD_DOWN_S / 60, DEBUGINFOD_DOWN_FILE);
		return NULL;
	}
	if (!getenv("DEBUGINFOD_TIMEOUT"))
		setenv("DEBUGINFOD_TIMEOUT", DEBUGINFOD_TIMEOUT_S, 0);
	/* one try: the library's default retries triple a timeout */
	if (!getenv("DEBUGINFOD_RETRY_LIMIT"))
		setenv("DEBUGINFOD_RETRY_LIMIT", "0", 0);
	c = dfd.begin();
	if (!c)
		return NULL;
	fd = dfd.find_debuginfo(c, bid, (int)len, &path);
	dfd.end(c);
	if (fd < 0) {
		free(path);
		/* -ENOENT: the servers answered that they do not have it */
		if (fd != -ENOENT && !(was = __atomic_exchange_n(&dfd_down, 1, __ATOMIC_ACQ_REL))) {
			down_mark(urls);
			warn("debuginfod: %s did not answer (%s); not asking it again for %d minutes",
			     urls, strerror(-fd), DEBUGINFOD_DOWN_S / 60);
		}
		return NULL;
	}
	close(fd);
	return path;
}
