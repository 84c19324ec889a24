/* debugfile.c - find a binary's separate debug file (debugfile.h). */
#include "lib/debugfile.h"
#include "lib/elffile.h"
#include "lib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define DEBUG_DIR "/usr/lib/debug"

static bool same_build_id(Elf *e, const uint8_t *bid, size_t len)
{
	uint8_t got[64];
	size_t n = elf_file_build_id(e, got, sizeof(got));
	return n && n == len && !memcmp(got, bid, len);
}

static char *build_id_path(const uint8_t *bid, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char s[2 * 64 + 1];
	size_t i;

	for (i = 0; i < len; i++) {
		s[2 * i] = hex[bid[i] >> 4];
		s[2 * i + 1] = hex[bid[i] & 15];
	}
	s[2 * len] = '\0';
	return xasprintf(DEBUG_DIR "/.build-id/%.2s/%s.debug", s, s + 2);
}

/* Where the file a debuglink names may be, in order: next to path, in
 * its .debug/, under /usr/lib/debug/DIR. Returns the count (3 at most). */
static size_t link_candidates(const char *path, const char *name, char **cand)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";
	size_t n = 0;

	cand[n++] = xasprintf("%.*s/%s", dirlen, dir, name);
	cand[n++] = xasprintf("%.*s/.debug/%s", dirlen, dir, name);
	if (slash)
		cand[n++] = xasprintf(DEBUG_DIR "%.*s/%s", dirlen, path, name);
	return n;
}

size_t debug_file_candidates(Elf *e, const char *path, const uint8_t *bid, size_t bidlen,
			     char *cand[DEBUG_FILE_MAX_CANDIDATES])
{
	const char *name;
	uint32_t crc;
	size_t n = 0;

	if (bid && bidlen >= 2 && bidlen <= 64)
		cand[n++] = build_id_path(bid, bidlen);
	if (!elf_file_debuglink(e, &name, &crc))
		n += link_candidates(path, name, cand + n);
	return n;
}

Elf *debug_file_by_build_id(const uint8_t *bid, size_t len, int *fd, char **found)
{
	char *path;
	Elf *e;

	*fd = -1;
	if (!bid || len < 2 || len > 64)
		return NULL;
	path = build_id_path(bid, len);
	e = elf_file_open(path, fd);
	if (e && !same_build_id(e, bid, len)) {
		elf_file_close(e, *fd);
		*fd = -1;
		e = NULL;
	}
	if (e && found)
		*found = path;
	else
		free(path);
	return e;
}

static bool file_crc32(int fd, uint32_t *crc)
{
	enum { CHUNK = 65536 };
	unsigned char *buf = xmalloc(CHUNK);
	uLong c = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, CHUNK, off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	free(buf);
	*crc = (uint32_t)c;
	return n == 0;
}

Elf *debug_file_by_link(Elf *e, const char *path, const uint8_t *bid, size_t bidlen,
			int *fd, char **found)
{
	const char *name;
	uint32_t want_crc;
	char *cand[3] = { 0 };
	struct stat self;
	bool have_self;
	size_t i, n;
	Elf *d = NULL;

	*fd = -1;
	if (elf_file_debuglink(e, &name, &want_crc))
		return NULL;
	have_self = stat(path, &self) == 0;
	n = link_candidates(path, name, cand);
	for (i = 0; i < n && !d; i++) {
		struct stat st;
		uint8_t got[64];
		size_t gotlen;
		uint32_t crc;

		/* the debuglink may name the binary itself */
		if (stat(cand[i], &st) ||
		    (have_self && st.st_dev == self.st_dev && st.st_ino == self.st_ino))
			continue;
		d = elf_file_open(cand[i], fd);
		if (!d)
			continue;
		gotlen = elf_file_build_id(d, got, sizeof(got));
		if (bidlen && gotlen) {
			if (gotlen == bidlen && !memcmp(got, bid, bidlen))
				break;
		} else if (file_crc32(*fd, &crc) && crc == want_crc) {
			break;
		}
		elf_file_close(d, *fd);
		*fd = -1;
		d = NULL;
	}
	if (d && found) {
		*found = cand[i];
		cand[i] = NULL;
	}
	for (i = 0; i < n; i++)
		free(cand[i]);
	return d;
}

Elf *debug_file_find(Elf *e, const char *path, const uint8_t *bid, size_t bidlen,
		     int *fd, char **found)
{
	Elf *d = debug_file_by_build_id(bid, bidlen, fd, found);
	return d ? d : debug_file_by_link(e, path, bid, bidlen, fd, found);
}
