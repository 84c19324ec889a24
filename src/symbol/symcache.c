/* symcache.c - built symbol tables kept on disk, by build-id.
 *
 * Building the symbol table of a big module costs more than a short
 * recording's unwinding of it: librustc_driver's .symtab holds 186,000
 * symbols with 19 MB of names, read, copied, sorted and sized in 150-200
 * ms at the end of every recording of rustc. So a table built from a
 * full symbol table (.symtab, a debug file, MiniDebugInfo) of a file of
 * SYMCACHE_MIN_FILE bytes or more is written to
 *
 *     $XDG_CACHE_HOME/stax/symbols/BUILDID   (else ~/.cache/stax/symbols/)
 *
 * with the rules and header of lib/cachefile.h, and later sessions map
 * it instead: the entries are copied, the names used in place in the
 * mapping. A table from .dynsym alone, or from debuginfod, is not kept
 * (a later session may find better: debuginfod turned on, a debug file
 * installed, which changes the key anyway).
 *
 * The payload (little-endian, 8-aligned parts):
 *
 *   u32 source (index in sources[] below), u32 opened (0 or 1),
 *   u32 PT_LOAD segments, u32 FDE ranges, u32 symbols, u32 zero,
 *   u64 bytes of names;
 *   segments: u64 offset, u64 filesz, u64 vaddr each;
 *   FDE ranges: u64 start, u64 end each (sorted, not overlapping);
 *   symbols: u64 start, u64 end each (starts rising, start < end);
 *   name offsets: u32 each, into the names, then zeros to 8 bytes;
 *   names: NUL-terminated, the last byte NUL, then zeros to 8 bytes.
 */
#include "symbol/symcache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/cursor.h"
#include "lib/util.h"

/* Change when elf.c or table.c make other tables from the same file,
 * or the payload's layout changes: older entries are then rebuilt. */
#define SYMCACHE_VERSION 1

static struct cache_kind kind = {
	.dir = "symbols", .magic = "STAXSYM1", .version = SYMCACHE_VERSION,
	.max_total = 512ull << 20, .max_file = 1ull << 30,
};

/* the sources a kept table can have, by index */
static const char *const sources[] = {
	SYM_SRC_SYMTAB, SYM_SRC_DEBUG_FILE, SYM_SRC_DEBUGLINK, SYM_SRC_MINIDEBUGINFO,
};

static int source_index(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(sources); i++)
		if (s && !strcmp(s, sources[i]))
			return (int)i;
	return -1;
}

bool symcache_wanted(const struct sym_module *m)
{
	return source_index(m->source) >= 0 && m->table.nsyms;
}

/* ---- the payload ---- */

static void pad8(struct buf *b)
{
	buf_align(b, 8);
}

int symcache_image(const struct sym_module *m, struct buf *b)
{
	const struct sym_table *t = &m->table;
	size_t start = b->len, names_at;
	int src = source_index(m->source);

	if (src < 0 || t->nsyms > UINT32_MAX || m->nsegs > UINT32_MAX || m->nfdes > UINT32_MAX)
		return -EINVAL;
	buf_add_u32(b, (uint32_t)src);
	buf_add_u32(b, m->opened ? 1 : 0);
	buf_add_u32(b, (uint32_t)m->nsegs);
	buf_add_u32(b, (uint32_t)m->nfdes);
	buf_add_u32(b, (uint32_t)t->nsyms);
	buf_add_u32(b, 0);
	names_at = b->len;
	buf_add_u64(b, 0); /* bytes of names, filled in below */
	for (size_t i = 0; i < m->nsegs; i++) {
		buf_add_u64(b, m->segs[i].offset);
		buf_add_u64(b, m->segs[i].filesz);
		buf_add_u64(b, m->segs[i].vaddr);
	}
	for (size_t i = 0; i < m->nfdes; i++) {
		buf_add_u64(b, m->fdes[i].start);
		buf_add_u64(b, m->fdes[i].end);
	}
	for (size_t i = 0; i < t->nsyms; i++) {
		buf_add_u64(b, t->syms[i].start);
		buf_add_u64(b, t->syms[i].end);
	}
	/* the names go after the offsets: lay them out first */
	struct buf names = BUF_INIT;
	uint32_t *offs = xmalloc((t->nsyms ? t->nsyms : 1) * sizeof(*offs));
	for (size_t i = 0; i < t->nsyms; i++) {
		const char *s = t->syms[i].name ? t->syms[i].name : "";
		size_t n = strlen(s);
		if (names.len + n + 1 > UINT32_MAX) {
			free(offs);
			buf_release(&names);
			b->len = start;
			return -EFBIG;
		}
		offs[i] = (uint32_t)names.len;
		buf_add(&names, s, n + 1);
	}
	if (!names.len)
		buf_add_u8(&names, 0);
	buf_add(b, offs, t->nsyms * sizeof(*offs));
	pad8(b);
	uint64_t names_len = names.len;
	buf_add(b, names.data, names.len);
	memcpy(b->data + names_at, &names_len, 8);
	pad8(b);
	free(offs);
	buf_release(&names);
	return 0;
}

/* Zeros up to the next multiple of 8 from start. */
static bool skip_pad8(struct cursor *c, const uint8_t *start)
{
	size_t n = (8 - ((size_t)(c->p - start) & 7)) & 7;
	uint8_t z[8];
	if (!cur_get(c, z, n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (z[i])
			return false;
	return true;
}

int symcache_parse(const uint8_t *p, size_t n, struct sym_module *m)
{
	struct cursor c;
	uint32_t src, opened, nsegs, nfdes, nsyms, zero, *offs = NULL;
	uint64_t names_len;
	const char *names;

	cur_init(&c, p, n);
	src = cur_u32(&c);
	opened = cur_u32(&c);
	nsegs = cur_u32(&c);
	nfdes = cur_u32(&c);
	nsyms = cur_u32(&c);
	zero = cur_u32(&c);
	names_len = cur_u64(&c);
	if (c.bad || src >= ARRAY_SIZE(sources) || opened > 1 || zero || !names_len ||
	    nsegs > cur_left(&c) / 24)
		return -EINVAL;
	m->source = sources[src];
	m->opened = opened;
	m->segs = xcalloc(nsegs ? nsegs : 1, sizeof(*m->segs));
	for (uint32_t i = 0; i < nsegs; i++) {
		m->segs[i].offset = cur_u64(&c);
		m->segs[i].filesz = cur_u64(&c);
		m->segs[i].vaddr = cur_u64(&c);
	}
	m->nsegs = nsegs;
	if (nfdes > cur_left(&c) / 16)
		return -EINVAL;
	m->fdes = nfdes ? xmalloc(nfdes * sizeof(*m->fdes)) : NULL;
	for (uint32_t i = 0; i < nfdes; i++) {
		m->fdes[i].start = cur_u64(&c);
		m->fdes[i].end = cur_u64(&c);
		if (m->fdes[i].start >= m->fdes[i].end || (i && m->fdes[i].start < m->fdes[i - 1].end))
			return -EINVAL;
	}
	m->nfdes = nfdes;
	if (nsyms > cur_left(&c) / 20)
		return -EINVAL;
	struct sym_table *t = &m->table;
	t->syms = xcalloc(nsyms ? nsyms : 1, sizeof(*t->syms));
	t->cover = xmalloc((nsyms ? nsyms : 1) * sizeof(*t->cover));
	for (uint32_t i = 0; i < nsyms; i++) {
		t->syms[i].start = cur_u64(&c);
		t->syms[i].end = cur_u64(&c);
		if (t->syms[i].start >= t->syms[i].end ||
		    (i && t->syms[i].start <= t->syms[i - 1].start))
			return -EINVAL;
		t->cover[i] = i ? MAX(t->cover[i - 1], t->syms[i].end) : t->syms[i].end;
	}
	t->nsyms = nsyms;
	offs = xmalloc((nsyms ? nsyms : 1) * sizeof(*offs));
	cur_get(&c, offs, (size_t)nsyms * 4);
	if (c.bad || !skip_pad8(&c, p) || names_len > cur_left(&c))
		goto bad;
	names = (const char *)c.p;
	if (names[names_len - 1])
		goto bad;
	c.p += names_len;
	if (!skip_pad8(&c, p) || cur_left(&c))
		goto bad;
	for (uint32_t i = 0; i < nsyms; i++) {
		if (offs[i] >= names_len)
			goto bad;
		t->syms[i].name = names + offs[i];
	}
	free(offs);
	return 0;
bad:
	free(offs);
	return -EINVAL;
}

/* ---- the file ---- */

bool symcache_load(const struct cache_key *k, struct sym_module *m)
{
	struct sym_module got;
	void *map;
	size_t map_size, psize;
	/* populated at once: the checksum reads it all (page by page, the
	 * faults cost more than the checksum) */
	const uint8_t *payload = cache_file_map(&kind, k, true, &map, &map_size, &psize);

	if (!payload)
		return false;
	memset(&got, 0, sizeof(got));
	if (symcache_parse(payload, psize, &got)) {
		free(got.segs);
		free(got.fdes);
		sym_table_release(&got.table);
		munmap(map, map_size);
		return false;
	}
	m->source = got.source;
	m->opened = got.opened;
	m->segs = got.segs;
	m->nsegs = got.nsegs;
	m->fdes = got.fdes;
	m->nfdes = got.nfdes;
	m->table = got.table;
	m->map = map;
	m->map_size = map_size;
	return true;
}

int symcache_store(const struct cache_key *k, const struct sym_module *m)
{
	struct buf b = BUF_INIT;
	int ret;

	if (!symcache_wanted(m))
		return -EINVAL;
	buf_extend(&b, CACHE_FILE_HEADER);
	ret = symcache_image(m, &b);
	if (!ret)
		ret = cache_file_store(&kind, k, &b);
	buf_release(&b);
	return ret;
}

const uint8_t *symcache_check(const uint8_t *data, size_t size, const struct cache_key *k,
			      size_t *payload_size)
{
	return cache_file_check(&kind, data, size, k, payload_size);
}

void symcache_seal(uint8_t *data, size_t size, struct cache_key *k)
{
	cache_file_seal(&kind, data, size, k);
}
