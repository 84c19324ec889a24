/* perfdata_header.c - what perf.data says about its events: attributes
 * and sample ids, build-ids, and the feature sections (file) or
 * HEADER_FEATURE records (pipe). */
#include "source/perfdata-private.h"
#include "lib/cursor.h"

#include <inttypes.h>
#include <string.h>

/* ---- events (attributes) ---- */

static char *derive_name(const struct perf_event_attr *a)
{
	const char *name = perf_event_name(a->type, a->config);
	if (name)
		return xstrdup(name);
	if (a->type == PERF_TYPE_RAW)
		return xasprintf("r%" PRIx64, (uint64_t)a->config);
	return xasprintf("event-%u:0x%" PRIx64, a->type, (uint64_t)a->config);
}

bool pd_is_dummy(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY;
}

/* Add an event from its on-disk attr (attr.size bytes at most n). Returns
 * the number of attr bytes used, or 0 when malformed. */
size_t pd_add_attr(struct pd *pd, const uint8_t *p, size_t n)
{
	struct pd_attr *a;
	uint32_t sz;
	if (n < ATTR_SIZE_VER0)
		return 0;
	memcpy(&sz, p + 4, 4);
	if (sz == 0)
		sz = ATTR_SIZE_VER0;
	if (sz < ATTR_SIZE_VER0 || sz > n || sz > 4096)
		return 0;
	GROW(pd->attrs, pd->attrcap, pd->nattrs + 1);
	a = &pd->attrs[pd->nattrs++];
	memset(a, 0, sizeof(*a));
	/* fields are ABI-stable; bytes of a newer perf's larger attr are ignored */
	memcpy(&a->attr, p, MIN((size_t)sz, sizeof(a->attr)));
	a->attr.size = sizeof(a->attr);
	a->fmt.sample_type = a->attr.sample_type;
	a->fmt.read_format = a->attr.read_format;
	a->fmt.regs_user_mask = sz >= 80 ? a->attr.sample_regs_user : 0;
	a->fmt.regs_intr_mask = sz >= 112 ? a->attr.sample_regs_intr : 0;
	a->fmt.sample_id_all = a->attr.sample_id_all;
	a->name = derive_name(&a->attr);
	pd->st->nattrs = (uint32_t)pd->nattrs;
	return sz;
}

void pd_add_id(struct pd *pd, uint64_t id, uint32_t attr)
{
	hmap_put(&pd->ids, id, attr);
}

void pd_set_name(struct pd *pd, uint32_t i, const char *name, size_t len)
{
	/* names are fixed once the import started: META and stats use them */
	if (i >= pd->nattrs || !len || pd->started)
		return;
	free(pd->attrs[i].name);
	pd->attrs[i].name = xstrndup(name, len);
	pd->attrs[i].named = true;
}

/* perf's __perf_evsel__calc_id_pos / is_pos: where a sample carries its
 * id counted in u64 from the start, and from the end of other records. */
static int id_pos(uint64_t t)
{
	int i = 0;
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	i += !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
	     !!(t & PERF_SAMPLE_ADDR);
	return i;
}

static int is_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_STREAM_ID);
}

/* Decide how records are matched to events: one event, several told
 * apart by sample id (all must carry it at the same place, as perf
 * requires), or several with one layout and no ids (merged). */
int pd_check_layout(struct pd *pd, uint64_t off)
{
	size_t i;
	bool same_pos = true, same_type = true;
	const struct pd_attr *a0 = &pd->attrs[0];

	pd->id_pos = id_pos(a0->attr.sample_type);
	pd->is_pos = is_pos(a0->attr.sample_type);
	pd->by_id = pd->nattrs > 1;
	for (i = 1; i < pd->nattrs; i++) {
		const struct pd_attr *a = &pd->attrs[i];
		if (id_pos(a->attr.sample_type) != pd->id_pos || is_pos(a->attr.sample_type) != pd->is_pos)
			same_pos = false;
		if (a->attr.sample_type != a0->attr.sample_type || a->attr.read_format != a0->attr.read_format ||
		    a->attr.sample_id_all != a0->attr.sample_id_all ||
		    a->fmt.regs_user_mask != a0->fmt.regs_user_mask)
			same_type = false;
	}
	if (pd->by_id && (!same_pos || pd->id_pos < 0 || pd->is_pos < 0)) {
		if (!same_type)
			return pd_fail(pd, off, "its %zu events have different sample layouts and no sample"
				    " ids, so their records cannot be told apart (record with"
				    " perf record --sample-identifier)", pd->nattrs);
		pd->by_id = false;
		pd->merged = true;
	}
	return 0;
}

/* The event a kernel record belongs to; -1 when its id is unknown. */
int pd_attr_of(struct pd *pd, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)h;
	uint64_t id;
	uint32_t v;
	if (!pd->by_id)
		return 0;
	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size < 8 + 8 * (size_t)(pd->id_pos + 1))
			return 0; /* malformed: ingest counts it */
		memcpy(&id, p + 8 + 8 * pd->id_pos, 8);
	} else {
		if (!pd->attrs[0].attr.sample_id_all)
			return 0;
		if (h->size < 8 + 8 * (size_t)pd->is_pos)
			return 0;
		memcpy(&id, p + h->size - 8 * pd->is_pos, 8);
	}
	if (!id)
		return 0; /* synthesized by perf */
	if (!hmap_get(&pd->ids, id, &v) || v >= pd->nattrs)
		return -1;
	return (int)v;
}

/* ---- build-ids ---- */

const struct pd_build_id *pd_bid_find(const struct pd *pd, const char *path)
{
	uint32_t i;
	if (!pd->nbids || !hmap_get(&pd->bid_index, hash_bytes(path, strlen(path)), &i))
		return NULL;
	return i < pd->nbids && !strcmp(pd->bids[i].path, path) ? &pd->bids[i] : NULL;
}

/* One build_id_event: header, pid, build_id[24] (20 bytes, size at 20
 * when misc has BUILD_ID_SIZE), filename. Returns false when malformed. */
bool pd_build_id_event(struct pd *pd, const uint8_t *p, size_t n)
{
	struct perf_event_header h;
	struct pd_build_id *b;
	const char *name;
	char *path;
	size_t len, size;
	if (n < 36)
		return false;
	memcpy(&h, p, 8);
	if (h.size < 36 || h.size > n)
		return false;
	name = (const char *)p + 36;
	len = strnlen(name, h.size - 36);
	size = (h.misc & BUILD_ID_SIZE_VALID) ? MIN(p[32], 20) : 20;
	switch (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) {
	case PERF_RECORD_MISC_KERNEL:
	case PERF_RECORD_MISC_GUEST_KERNEL:
		return true;  /* kernel frames are symbolized from kallsyms */
	}
	if (!len || name[0] == '[')
		return true;
	path = xstrndup(name, len);  /* the name need not end in a NUL */
	if (pd_bid_find(pd, path)) {
		free(path);
		return true;
	}
	GROW(pd->bids, pd->bidcap, pd->nbids + 1);
	b = &pd->bids[pd->nbids];
	b->path = path;
	memcpy(b->id, p + 12, 20);
	b->size = (uint8_t)size;
	hmap_put(&pd->bid_index, hash_bytes(b->path, len), (uint32_t)pd->nbids);
	pd->nbids++;
	pd->st->build_ids++;
	return true;
}

/* ---- feature sections (file) and HEADER_FEATURE records (pipe) ---- */

/* perf's do_read_string: u32 length, then that many bytes, NUL-padded. */
static bool read_string(struct cursor *c, const char **s, size_t *len)
{
	uint32_t n = cur_u32(c);
	if (c->bad || cur_left(c) < n) {
		c->bad = true;
		return false;
	}
	*s = (const char *)c->p;
	*len = strnlen(*s, n);
	c->p += n;
	return true;
}

int pd_feature(struct pd *pd, unsigned id, const uint8_t *p, size_t n, uint64_t off)
{
	struct cursor c;
	const char *s;
	size_t len;
	uint32_t nr, i;

	cur_init(&c, p, n);
	switch (id) {
	case FEAT_HOSTNAME:
		if (read_string(&c, &s, &len)) {
			free(pd->hostname);
			pd->hostname = xstrndup(s, len);
		}
		break;
	case FEAT_ARCH:
		if (read_string(&c, &s, &len)) {
			free(pd->arch);
			pd->arch = xstrndup(s, len);
		}
		break;
	case FEAT_NRCPUS:
		cur_u32(&c);
		pd->st->nrcpus = cur_u32(&c);
		break;
	case FEAT_CMDLINE: {
		struct buf b = BUF_INIT;
		nr = cur_u32(&c);
		for (i = 0; i < nr && !c.bad; i++)
			if (read_string(&c, &s, &len)) {
				if (i)
					buf_add_u8(&b, ' ');
				buf_add(&b, s, len);
			}
		buf_add_u8(&b, 0);
		if (!c.bad) {
			free(pd->cmdline);
			pd->cmdline = xstrdup((char *)b.data);
		}
		buf_release(&b);
		break;
	}
	case FEAT_EVENT_DESC: {
		uint32_t sz;
		nr = cur_u32(&c);
		sz = cur_u32(&c);
		if (!c.bad && (sz < ATTR_SIZE_VER0 || nr > cur_left(&c) / sz))
			c.bad = true;
		for (i = 0; i < nr && !c.bad; i++) {
			uint32_t nids;
			if (cur_left(&c) < sz) {
				c.bad = true;
				break;
			}
			c.p += sz;  /* the attr again; we have it */
			nids = cur_u32(&c);
			if (!read_string(&c, &s, &len))
				break;
			if (nids > cur_left(&c) / 8) {
				c.bad = true;
				break;
			}
			c.p += 8 * (size_t)nids;
			pd_set_name(pd, i, s, len);
		}
		break;
	}
	case FEAT_BUILD_ID:
		while (!c.bad && cur_left(&c) >= 8) {
			uint16_t sz;
			memcpy(&sz, c.p + 6, 2);
			if (!pd_build_id_event(pd, c.p, cur_left(&c)))
				c.bad = true;
			else
				c.p += sz;
		}
		break;
	default:
		break;
	}
	if (c.bad)
		return pd_fail(pd, off + (uint64_t)(c.p - p), "malformed feature section %u", id);
	return 0;
}

