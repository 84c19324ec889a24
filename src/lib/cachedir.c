/* cachedir.c - the directories of stax's caches.
 *
 * stax may run as root with HOME or XDG_CACHE_HOME still naming another
 * user's directory (sudo -E): that user could have put symbolic links
 * where the cache goes. So the directories are opened one at a time
 * without following links (a link the user made themselves, such as
 * ~/.cache pointing to another disk, is followed), each must belong to
 * the user stax runs as, stax's own ones (stax/, stax/dwarf/, stax/unwind/, stax/symbols/) must be
 * closed to others, and every file is then opened or created relative
 * to the directory's descriptor. Anything else: no cache, one warning.
 */
#include "lib/cachedir.h"
#include "lib/safefile.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The cache's place could not be used (safe_dir_open() returned err): one
 * warning when that is because it is not safe (a link, another user's),
 * none when it is merely not there (yet) or not writable. */
static int cache_unusable(int err, const char *where, const char *why)
{
	static int warned;
	if ((err == -EPERM || err == -ENOTDIR) && !__atomic_exchange_n(&warned, 1, __ATOMIC_ACQ_REL))
		warn("not using the cache in %s: %s (stax keeps its caches only in directories of"
		     " the user it runs as, uid %u: set XDG_CACHE_HOME to one, or STAX_NO_CACHE=1)",
		     where, why, (unsigned)geteuid());
	return -1;
}

int cache_dir_open(const char *sub, bool create)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	const char *ne = getenv("STAX_NO_CACHE");
	int flags = create ? SAFE_DIR_CREATE : 0, base, top, dir;
	char where[4400];
	struct err why;

	if (ne && *ne && strcmp(ne, "0"))
		return -1;
	if (xdg && *xdg == '/') {
		snprintf(where, sizeof(where), "%s", xdg);
		base = safe_dir_open(AT_FDCWD, xdg, flags | SAFE_DIR_LINK_OK, &why);
	} else if (home && *home == '/') {
		int h = open(home, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (h < 0)
			return -1;
		snprintf(where, sizeof(where), "%s/.cache", strcmp(home, "/") ? home : "");
		base = safe_dir_open(h, ".cache", flags | SAFE_DIR_LINK_OK, &why);
		close(h);
	} else {
		return -1;
	}
	if (base < 0)
		return cache_unusable(base, where, why.msg);
	snprintf(where + strlen(where), sizeof(where) - strlen(where), "/stax");
	top = safe_dir_open(base, "stax", flags | SAFE_DIR_PRIVATE, &why);
	close(base);
	if (top < 0)
		return cache_unusable(top, where, why.msg);
	if (!sub)
		return top;
	snprintf(where + strlen(where), sizeof(where) - strlen(where), "/%s", sub);
	dir = safe_dir_open(top, sub, flags | SAFE_DIR_PRIVATE, &why);
	close(top);
	if (dir < 0)
		return cache_unusable(dir, where, why.msg);
	return dir;
}


struct trim_entry {
	char *name;
	uint64_t size;
	int64_t mtime;
};

static int cmp_trim(const void *a, const void *b)
{
	const struct trim_entry *x = a, *y = b;
	return (x->mtime > y->mtime) - (x->mtime < y->mtime);
}

void cache_dir_trim(int dfd, uint64_t limit, int (*kind)(const char *name))
{
	struct trim_entry *ents = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	time_t now = time(NULL);
	int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int k = kind(de->d_name);
		if (!k || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if (k == 2) {
			if (st.st_mtime + 3600 < now)
				unlinkat(dfd, de->d_name, 0);
			continue;
		}
		GROW(ents, cap, n + 1);
		ents[n++] = (struct trim_entry){ xstrdup(de->d_name), (uint64_t)st.st_size, (int64_t)st.st_mtime };
		total += (uint64_t)st.st_size;
	}
	closedir(d);
	if (n)
		qsort(ents, n, sizeof(*ents), cmp_trim);
	for (size_t i = 0; i < n; i++) {
		if (total > limit && !unlinkat(dfd, ents[i].name, 0))
			total -= ents[i].size;
		free(ents[i].name);
	}
	free(ents);
}
