/* debuginfo.c - a module's debug information outside its debug files
 * on disk: MiniDebugInfo and debuginfod (module.h). A separate debug
 * file by build-id or .gnu_debuglink is lib/debugfile.h's.
 */
#include "module/module.h"
#include "lib/cachedir.h"
#include "lib/elffile.h"
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
#include <elfutils/debuginfod.h>

/* MiniDebugInfo is a small symbol table; refuse to inflate beyond this. */
#define MINI_MAX (256u << 20)

Elf *module_mini_debuginfo(Elf *e, void **buf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_file_section(e, ".gnu_debugdata", &sh);
	Elf_Data *d;

	*buf = NULL;
	if (!scn || sh.sh_type == SHT_NOBITS)
		return NULL;
	d = elf_rawdata(scn, NULL);
	if (!d || !d->d_buf || !d->d_size)
		return NULL;
	return module_elf_from_xz(d->d_buf, d->d_size, buf);
}

Elf *module_elf_from_xz(const void *xz, size_t size, void **buf)
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
	elf_file_init();
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

bool module_elf_has_dwarf(Elf *e)
{
	GElf_Shdr sh;
	Elf_Scn *scn = e ? elf_file_section(e, ".debug_info", &sh) : NULL;
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
	struct err e;
	if (load_library(DEBUGINFOD_SONAME, ARRAY_SIZE(names), names, (void **)&dfd, &e))
		warn("DEBUGINFOD_URLS is set, but %s (install libdebuginfod1)", e.msg);
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

	if ((dfd = cache_dir_open(NULL, false)) < 0)
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
	char line[32];
	int dfd, n;

	if ((dfd = cache_dir_open(NULL, true)) < 0)
		return;
	n = snprintf(line, sizeof(line), "%016llx\n", (unsigned long long)urls_hash(urls));
	safe_replace_write(dfd, DEBUGINFOD_DOWN_FILE, &(struct safe_piece){ line, (size_t)n }, 1);
	close(dfd);
}

char *module_debuginfod_find(const uint8_t *bid, size_t len)
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
