/* cachefile.c - entries of the caches kept per module file (the layout
 * and rules are in cachefile.h).
 */
#include "lib/cachefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
/* header-only: lib/ links into the bench programs without -lxxhash */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "lib/cachedir.h"
#include "lib/debugfile.h"
#include "lib/hash.h"
#include "lib/safefile.h"
#include "lib/util.h"

struct cache_header {
	char magic[8];
	uint32_t header_size;
	uint32_t version;
	uint32_t build_id_size;
	uint8_t build_id[20];
	uint64_t dev, ino, size, mtime_ns;
	uint64_t debug_ident;
	uint64_t payload_size;
	uint64_t payload_sum;
	uint64_t zero[4];
};
_Static_assert(sizeof(struct cache_header) == CACHE_FILE_HEADER, "cache header layout");
_Static_assert(offsetof(struct cache_header, payload_size) == 80, "cache header layout");
_Static_assert(offsetof(struct cache_header, payload_sum) == 88, "cache header layout");

static uint64_t stat_mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

bool cache_key_of(Elf *elf, int fd, const char *path, const uint8_t *bid, size_t bidlen,
		  struct cache_key *k)
{
	struct stat st;
	char *cand[DEBUG_FILE_MAX_CANDIDATES] = { 0 };

	memset(k, 0, sizeof(*k));
	if (bidlen > sizeof(k->build_id) || fd < 0 || fstat(fd, &st))
		return false;
	memcpy(k->build_id, bid, bidlen);
	k->build_id_size = bidlen;
	k->dev = (uint64_t)st.st_dev;
	k->ino = (uint64_t)st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = stat_mtime_ns(&st);
	size_t n = debug_file_candidates(elf, path, bid, bidlen, cand);
	for (size_t i = 0; i < n; i++) {
		if (!stat(cand[i], &st)) {
			uint64_t h = hash_mix(0xdeb9 + (uint64_t)i, (uint64_t)st.st_dev);
			h = hash_mix(h, (uint64_t)st.st_ino);
			h = hash_mix(h, (uint64_t)st.st_size);
			k->debug_ident = hash_mix(k->debug_ident ^ h, stat_mtime_ns(&st)) | 1;
		}
		free(cand[i]);
	}
	return true;
}

static void make_header(struct cache_header *h, const struct cache_kind *c,
			const struct cache_key *k)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, c->magic, 8);
	h->header_size = CACHE_FILE_HEADER;
	h->version = c->version;
	h->build_id_size = (uint32_t)MIN(k->build_id_size, sizeof(h->build_id));
	memcpy(h->build_id, k->build_id, h->build_id_size);
	h->dev = k->dev;
	h->ino = k->ino;
	h->size = k->size;
	h->mtime_ns = k->mtime_ns;
	h->debug_ident = k->debug_ident;
}

static bool key_usable(const struct cache_key *k)
{
	return k->build_id_size <= sizeof(k->build_id) && (k->build_id_size || k->ino);
}

const uint8_t *cache_file_check(const struct cache_kind *c, const uint8_t *data, size_t size,
				const struct cache_key *k, size_t *payload_size)
{
	struct cache_header h, want;

	if (size < CACHE_FILE_HEADER || !key_usable(k))
		return NULL;
	memcpy(&h, data, sizeof(h));
	make_header(&want, c, k);
	want.payload_size = h.payload_size;
	want.payload_sum = h.payload_sum;
	if (memcmp(&h, &want, sizeof(h)) || h.payload_size != size - CACHE_FILE_HEADER ||
	    XXH3_64bits(data + CACHE_FILE_HEADER, h.payload_size) != h.payload_sum)
		return NULL;
	*payload_size = h.payload_size;
	return data + CACHE_FILE_HEADER;
}

void cache_file_seal(const struct cache_kind *c, uint8_t *data, size_t size, struct cache_key *k)
{
	struct cache_header h;

	if (size < CACHE_FILE_HEADER)
		return;
	memcpy(&h, data, sizeof(h));
	h.payload_size = size - CACHE_FILE_HEADER;
	h.payload_sum = XXH3_64bits(data + CACHE_FILE_HEADER, h.payload_size);
	memcpy(data, &h, sizeof(h));
	memset(k, 0, sizeof(*k));
	k->build_id_size = h.build_id_size;
	memcpy(k->build_id, h.build_id, sizeof(k->build_id));
	k->dev = h.dev;
	k->ino = h.ino;
	k->size = h.size;
	k->mtime_ns = h.mtime_ns;
	k->debug_ident = h.debug_ident;
}

/* The entry's name: the build-id in hex; for a file without one, a hash
 * of the file's identity (16 hex digits; the header holds the identity
 * itself). */
static void entry_name(char out[41], const struct cache_key *k)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t h[8];
	const uint8_t *id = k->build_id;
	size_t i, n = k->build_id_size;
	if (!n) {
		uint64_t v = hash_mix(hash_mix(hash_mix(hash_mix(0x7cac, k->dev), k->ino), k->size),
				      k->mtime_ns);
		memcpy(h, &v, 8);
		id = h;
		n = 8;
	}
	for (i = 0; i < n; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 15];
	}
	out[2 * i] = '\0';
}

const uint8_t *cache_file_map(const struct cache_kind *c, const struct cache_key *k,
			      bool populate, void **map, size_t *map_size, size_t *payload_size)
{
	char name[41];
	struct stat st;
	void *data;
	const uint8_t *payload = NULL;
	int dfd, fd;

	if (!key_usable(k))
		return NULL;
	entry_name(name, k);
	if ((dfd = cache_dir_open(c->dir, false)) < 0)
		return NULL;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	close(dfd);
	if (fd < 0)
		return NULL;
	/* a regular file of ours, of a size an entry can have */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_size < CACHE_FILE_HEADER ||
	    (uint64_t)st.st_size > c->max_file)
		goto out;
	data = mmap(NULL, (size_t)st.st_size, PROT_READ,
		    MAP_PRIVATE | (populate ? MAP_POPULATE : 0), fd, 0);
	if (data == MAP_FAILED)
		goto out;
	payload = cache_file_check(c, data, (size_t)st.st_size, k, payload_size);
	if (!payload) {
		munmap(data, (size_t)st.st_size);
		goto out;
	}
	*map = data;
	*map_size = (size_t)st.st_size;
	futimens(fd, NULL); /* used: keep it when the directory is trimmed */
out:
	close(fd);
	return payload;
}

/* The names a cache directory's files get: a build-id in lowercase hex
 * (2 to 40 digits), and while written, that with ".stax-XXXXXXXX.tmp"
 * after it (lib/safefile.c). Returns 1 for an entry, 2 for a temporary
 * file, 0 for any other name. */
static int named(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	if (n < 2 || n > 40)
		return 0;
	if (!s[n])
		return 1;
	if (strncmp(s + n, ".stax-", 6) || strlen(s + n + 6) != 12 || strcmp(s + n + 14, ".tmp"))
		return 0;
	for (size_t i = n + 6; i < n + 14; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 2;
}

int cache_file_store(struct cache_kind *c, const struct cache_key *k, struct buf *b)
{
	struct cache_header h;
	char name[41];
	int dfd, ret;

	if (!key_usable(k) || b->len < CACHE_FILE_HEADER)
		return -EINVAL;
	if (b->len > c->max_file)
		return -EFBIG;
	make_header(&h, c, k);
	h.payload_size = b->len - CACHE_FILE_HEADER;
	h.payload_sum = XXH3_64bits(b->data + CACHE_FILE_HEADER, h.payload_size);
	memcpy(b->data, &h, sizeof(h));
	entry_name(name, k);
	if ((dfd = cache_dir_open(c->dir, true)) < 0)
		return -ENOENT;
	if ((ret = safe_replace_write(dfd, name, &(struct safe_piece){ b->data, b->len }, 1)))
		goto out;
	/* unswept starts at 0: the first write trims */
	uint64_t was = __atomic_fetch_add(&c->unswept, b->len, __ATOMIC_RELAXED);
	if (!was || was > c->max_total / 16) {
		__atomic_store_n(&c->unswept, 1, __ATOMIC_RELAXED);
		cache_dir_trim(dfd, c->max_total, named);
	}
out:
	close(dfd);
	return ret;
}
