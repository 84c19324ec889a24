/* hash.h - an open-addressing map from 64-bit keys to 32-bit values.
 *
 * Keys are arbitrary u64 (callers hash composite keys with hash_mix());
 * the map stores the full key so there are no false matches. Never fails
 * (grows with xmalloc).
 */
#ifndef STAX_LIB_HASH_H
#define STAX_LIB_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	uint64_t key;
	uint32_t val;
	uint32_t used;
};

struct hmap {
	struct hmap_slot *slots;
	size_t cap, len; /* cap is a power of two */
};

void hmap_init(struct hmap *m);
void hmap_release(struct hmap *m);
/* Returns true and sets *val when key is present. */
bool hmap_get(const struct hmap *m, uint64_t key, uint32_t *val);
/* Insert or replace. */
void hmap_put(struct hmap *m, uint64_t key, uint32_t val);

static inline uint64_t hash_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	return h;
}

uint64_t hash_bytes(const void *p, size_t n);

/* The one collision scheme for interning with the map (a key's value is
 * the id of an object the caller compares): objects whose hash h is
 * taken by another go at hash_next(h), then hash_next() of that, and so
 * on. A lookup walks the same keys until it finds the object or a free
 * key, where a new one is put:
 *
 *	for (h = hash_of(obj);; h = hash_next(h)) {
 *		if (!hmap_get(m, h, &id))
 *			break;               // not there: hmap_put(m, h, new id)
 *		if (equal(objects[id], obj))
 *			return id;
 *	}
 */
static inline uint64_t hash_next(uint64_t h)
{
	return hash_mix(h, 0x77);
}

#endif
