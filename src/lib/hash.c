#include "lib/hash.h"
#include "lib/util.h"

#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 17) & (cap - 1);
}

void hmap_init(struct hmap *m)
{
	m->slots = NULL;
	m->cap = m->len = 0;
}

void hmap_release(struct hmap *m)
{
	free(m->slots);
	hmap_init(m);
}

bool hmap_get(const struct hmap *m, uint64_t key, uint32_t *val)
{
	size_t i;
	if (!m->cap)
		return false;
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		const struct hmap_slot *s = &m->slots[i];
		if (!s->used)
			return false;
		if (s->key == key) {
			*val = s->val;
			return true;
		}
	}
}

static void rehash(struct hmap *m, size_t cap)
{
	struct hmap_slot *old = m->slots;
	size_t oldcap = m->cap, i;
	m->slots = xcalloc(cap, sizeof(*m->slots));
	m->cap = cap;
	m->len = 0;
	for (i = 0; i < oldcap; i++)
		if (old[i].used)
			hmap_put(m, old[i].key, old[i].val);
	free(old);
}

void hmap_put(struct hmap *m, uint64_t key, uint32_t val)
{
	size_t i;
	if ((m->len + 1) * 4 >= m->cap * 3)
		rehash(m, m->cap ? m->cap * 2 : 64);
	for (i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		struct hmap_slot *s = &m->slots[i];
		if (!s->used) {
			s->used = 1;
			s->key = key;
			s->val = val;
			m->len++;
			return;
		}
		if (s->key == key) {
			s->val = val;
			return;
		}
	}
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t h = 1469598103934665603ull;
	size_t i;
	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}
