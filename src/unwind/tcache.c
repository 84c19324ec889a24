/* tcache.c - compiled unwind tables kept on disk, by build-id.
 *
 * Compiling the CFI of a big module costs more than a short recording
 * of it: librustc_driver's 107,000 FDEs give 1.15 million rows in about
 * 150 ms, every recording. So a table utable_load() compiled without
 * complaint is written to
 *
 *     $XDG_CACHE_HOME/stax/unwind/BUILDID   (else ~/.cache/stax/unwind/)
 *
 * (a file without a build-id, as rustup's librustc_driver, by a hash of
 * its path's device, inode, size and mtime instead)
 *
 * and later loads of the same file map it instead (the rows used in
 * place, a checksum pass, the page index rebuilt: about 10 ms for
 * librustc_driver on a busy 2-core VM, against 180-250 ms compiled).
 * The file, its header and its rules are lib/cachefile.h's; the payload
 * (tcache_image()) holds counts and facts, PT_LOAD segments, root
 * functions, the CFI's path, the rows (u32 offsets, u16 rules), the rule
 * dictionary (16 bytes a rule), the SLOW FDEs and their instruction
 * bytes. The page index is not stored: it is rebuilt from the rows.
 * Anything out of bounds or inconsistent in a payload (tcache_parse())
 * makes the table compiled and written anew.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "unwind/tcache.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/util.h"

/* Change TCACHE_VERSION when table.c/rows.c/x86_64.c/aarch64.c compile other
 * rows or rules, or the payload's layout changes: older entries are then
 * rebuilt. 4: signal-trampoline rows in address order (table.c); 5: the
 * machine of the rules (t->arch); 6: aarch64's rule kinds LEAF and PAC;
 * 7: roots.c's list grew (runtime.systemstack_switch, _rt0_arm64,
 * runtime.sigtramp) and Go's switches onto g0 got a kind of their own;
 * 8: x86-64 PLT rows where no CFI covers them (rows.c add_plt_x86). */
#define TCACHE_VERSION 8

static struct cache_kind kind = {
	.dir = "unwind", .magic = "STAXUTC1", .version = TCACHE_VERSION,
	.max_total = 512ull << 20, .max_file = 1ull << 30,
};

/* the values t->source takes (table.c) */
static const char *const sources[] = {
	".eh_frame", ".debug_frame", "debug file .debug_frame", "mixed",
};

/* ---- the payload ---- */

static void put_u64(struct buf *b, uint64_t v) { buf_add(b, &v, 8); }
static void put_u32(struct buf *b, uint32_t v) { buf_add(b, &v, 4); }

static void pad8(struct buf *b)
{
	while (b->len & 7)
		buf_add_u8(b, 0);
}

void tcache_image(const struct utable *t, struct buf *b)
{
	uint32_t src = 0, plen = t->path ? (uint32_t)strlen(t->path) : 0;
	for (uint32_t i = 0; i < ARRAY_SIZE(sources); i++)
		if (t->source && !strcmp(t->source, sources[i]))
			src = i + 1;
	put_u64(b, t->base);
	put_u64(b, t->entry);
	put_u64(b, t->build_ns);
	put_u32(b, t->nrows);
	put_u32(b, t->nrules);
	put_u32(b, t->nslow);
	put_u32(b, (uint32_t)t->blob_len);
	put_u32(b, (uint32_t)t->nload);
	put_u32(b, (uint32_t)t->nroots);
	put_u32(b, src);
	put_u32(b, (uint32_t)t->err);
	put_u32(b, (uint32_t)t->err_sec);
	put_u32(b, t->nfde);
	put_u32(b, t->nslow_rows);
	put_u32(b, t->nsignal_tramp);
	put_u32(b, (uint32_t)t->arch);
	for (int i = 0; i < UTABLE_MAX_SECS; i++)
		put_u32(b, t->nfde_sec[i]);
	put_u32(b, plen);
	for (int i = 0; i < t->nload; i++) {
		put_u64(b, t->load[i].vaddr);
		put_u64(b, t->load[i].off);
		put_u64(b, t->load[i].filesz);
		put_u64(b, t->load[i].exec);
	}
	for (int i = 0; i < t->nroots; i++) {
		put_u64(b, t->roots[i].start);
		put_u64(b, t->roots[i].end);
		put_u64(b, (uint64_t)(int64_t)t->roots[i].kind);
	}
	buf_add(b, t->path, plen);
	pad8(b);
	buf_add(b, t->addr, (size_t)t->nrows * 4);
	pad8(b);
	buf_add(b, t->rule, (size_t)t->nrows * 2);
	pad8(b);
	buf_add(b, t->rules, (size_t)t->nrules * sizeof(*t->rules));
	for (uint32_t i = 0; i < t->nslow; i++) {
		const struct uslow *s = &t->slow[i];
		put_u64(b, s->pc_begin);
		put_u64(b, s->pc_end);
		put_u64(b, s->fde_insn_vaddr);
		put_u32(b, s->cie_insn);
		put_u32(b, s->cie_len);
		put_u32(b, s->fde_insn);
		put_u32(b, s->fde_len);
		put_u64(b, s->cie.off);
		put_u64(b, s->cie.code_align);
		put_u64(b, (uint64_t)s->cie.data_align);
		put_u32(b, s->cie.ra_reg);
		buf_add_u8(b, s->cie.version);
		buf_add_u8(b, s->cie.fde_enc);
		buf_add_u8(b, s->cie.lsda_enc);
		buf_add_u8(b, s->cie.addr_size);
		buf_add_u8(b, s->cie.has_aug_data);
		buf_add_u8(b, s->cie.signal);
		pad8(b);
	}
	buf_add(b, t->blob, t->blob_len);
	pad8(b);
}

/* A reader over [p, end): every take checks what is left. */
struct rd {
	const uint8_t *p, *start, *end;
};

static bool take(struct rd *r, void *dst, size_t n)
{
	if ((size_t)(r->end - r->p) < n)
		return false;
	if (n)
		memcpy(dst, r->p, n);
	r->p += n;
	return true;
}

static bool get_u64(struct rd *r, uint64_t *v) { return take(r, v, 8); }
static bool get_u32(struct rd *r, uint32_t *v) { return take(r, v, 4); }

static bool skip_pad8(struct rd *r)
{
	size_t at = (size_t)(r->p - r->start), n = (8 - (at & 7)) & 7;
	uint8_t z[8];
	if (!take(r, z, n))
		return false;
	for (size_t i = 0; i < n; i++)
		if (z[i])
			return false;
	return true;
}

/* Room for n items of size each, left in r? */
static bool room(const struct rd *r, uint64_t n, size_t size)
{
	return n <= (uint64_t)(r->end - r->p) / size;
}

static bool rule_ok(const struct urule *u, uint32_t i)
{
	static const struct urule zero;
	if (i < UR_NCOMMANDS) {
		/* exactly what init_commands() makes */
		struct urule c = zero;
		c.kind = (uint8_t)i;
		return memcmp(&c, u, sizeof(c)) == 0;
	}
	if (u->kind == UR_STOP || u->kind == UR_SIGNAL)
		return true;
	/* the register the unwinder takes the CFA from */
	return (u->kind == UR_PLT || u->kind == UR_NORMAL || u->kind == UR_LEAF || u->kind == UR_PAC) &&
	       (u->cfa_reg == UNW_SP || u->cfa_reg == UNW_FP) &&
	       u->rbp <= URBP_UNDEF && u->rbx <= URBP_UNDEF &&
	       !(u->flags & ~(UR_F_RA_LR | UR_F_RA_SIGNED));
}

/* borrow: the rows point into p (a mapping the table keeps), not copies */
static int parse(const uint8_t *p, size_t n, struct utable *t, bool borrow)
{
	struct rd r = { p, p, p + n };
	uint32_t nrows, nrules, nslow, blob_len, nload, nroots, src, err, err_sec, plen, arch;
	uint64_t v;
	int ret = -EINVAL;

	if (!get_u64(&r, &t->base) || !get_u64(&r, &t->entry) || !get_u64(&r, &t->build_ns) ||
	    !get_u32(&r, &nrows) || !get_u32(&r, &nrules) || !get_u32(&r, &nslow) ||
	    !get_u32(&r, &blob_len) || !get_u32(&r, &nload) || !get_u32(&r, &nroots) ||
	    !get_u32(&r, &src) || !get_u32(&r, &err) || !get_u32(&r, &err_sec) ||
	    !get_u32(&r, &t->nfde) || !get_u32(&r, &t->nslow_rows) ||
	    !get_u32(&r, &t->nsignal_tramp) || !get_u32(&r, &arch) ||
	    (arch != UNWIND_ARCH_X86_64 && arch != UNWIND_ARCH_AARCH64))
		return -EINVAL;
	t->arch = (enum unwind_arch)arch;
	for (int i = 0; i < UTABLE_MAX_SECS; i++)
		if (!get_u32(&r, &t->nfde_sec[i]))
			return -EINVAL;
	if (!get_u32(&r, &plen))
		return -EINVAL;
	if (!nrows || nrules < UR_NCOMMANDS || nrules > 0xffff || nload > ARRAY_SIZE(t->load) ||
	    nroots > ARRAY_SIZE(t->roots) || src > ARRAY_SIZE(sources) || plen > 4096 ||
	    (int32_t)err > 0 || err_sec >= UTABLE_MAX_SECS)
		return -EINVAL;
	t->err = (int32_t)err;
	t->err_sec = (int)err_sec;
	t->source = src ? sources[src - 1] : NULL;
	for (uint32_t i = 0; i < nload; i++) {
		if (!get_u64(&r, &t->load[i].vaddr) || !get_u64(&r, &t->load[i].off) ||
		    !get_u64(&r, &t->load[i].filesz) || !get_u64(&r, &v) || v > 1)
			return -EINVAL;
		t->load[i].exec = v != 0;
	}
	t->nload = (int)nload;
	for (uint32_t i = 0; i < nroots; i++) {
		if (!get_u64(&r, &t->roots[i].start) || !get_u64(&r, &t->roots[i].end) ||
		    !get_u64(&r, &v) || v > 16)
			return -EINVAL;
		t->roots[i].kind = (int)v;
	}
	t->nroots = (int)nroots;
	char *path = xmalloc(plen + 1);
	if (!take(&r, path, plen) || memchr(path, 0, plen)) {
		free(path);
		return -EINVAL;
	}
	path[plen] = 0;
	free(t->path);
	t->path = path;

	/* the rows: offsets rising, each rule in the dictionary */
	if (!skip_pad8(&r) || !room(&r, nrows, 4))
		goto bad;
	if (borrow) {
		t->addr = (uint32_t *)r.p; /* 8-aligned: the payload is at a page + 128 */
		r.p += (size_t)nrows * 4;
	} else {
		t->addr = xmalloc((size_t)nrows * 4);
		take(&r, t->addr, (size_t)nrows * 4);
	}
	for (uint32_t i = 1; i < nrows; i++)
		if (t->addr[i] <= t->addr[i - 1])
			goto bad;
	if (!skip_pad8(&r) || !room(&r, nrows, 2))
		goto bad;
	if (borrow) {
		t->rule = (uint16_t *)r.p;
		r.p += (size_t)nrows * 2;
	} else {
		t->rule = xmalloc((size_t)nrows * 2);
		take(&r, t->rule, (size_t)nrows * 2);
	}
	for (uint32_t i = 0; i < nrows; i++)
		if (t->rule[i] >= nrules)
			goto bad;
	if (!skip_pad8(&r) || !room(&r, nrules, sizeof(struct urule)))
		goto bad;
	free(t->rules);
	t->rules = xmalloc((size_t)nrules * sizeof(struct urule));
	take(&r, t->rules, (size_t)nrules * sizeof(struct urule));
	t->nrules = nrules;
	for (uint32_t i = 0; i < nrules; i++)
		if (!rule_ok(&t->rules[i], i))
			goto bad;
	t->nrows = nrows;

	/* the SLOW FDEs: in start order, their programs in the blob */
	if (!room(&r, nslow, 64))
		goto bad;
	t->slow = nslow ? xcalloc(nslow, sizeof(*t->slow)) : NULL;
	for (uint32_t i = 0; i < nslow; i++) {
		struct uslow *s = &t->slow[i];
		uint32_t ra;
		uint8_t b[6];
		if (!get_u64(&r, &s->pc_begin) || !get_u64(&r, &s->pc_end) ||
		    !get_u64(&r, &s->fde_insn_vaddr) || !get_u32(&r, &s->cie_insn) ||
		    !get_u32(&r, &s->cie_len) || !get_u32(&r, &s->fde_insn) ||
		    !get_u32(&r, &s->fde_len) || !get_u64(&r, &v) ||
		    !get_u64(&r, &s->cie.code_align) || !get_u64(&r, (uint64_t *)&s->cie.data_align) ||
		    !get_u32(&r, &ra) || !take(&r, b, sizeof(b)) || !skip_pad8(&r))
			goto bad;
		s->cie.off = (size_t)v;
		s->cie.ra_reg = ra;
		s->cie.version = b[0];
		s->cie.fde_enc = b[1];
		s->cie.lsda_enc = b[2];
		s->cie.addr_size = b[3];
		s->cie.has_aug_data = b[4] != 0;
		s->cie.signal = b[5] != 0;
		if (ra > 255 || (b[3] != 4 && b[3] != 8) || b[4] > 1 || b[5] > 1 ||
		    s->pc_end <= s->pc_begin || (i && s->pc_begin < t->slow[i - 1].pc_begin) ||
		    (uint64_t)s->cie_insn + s->cie_len > blob_len ||
		    (uint64_t)s->fde_insn + s->fde_len > blob_len)
			goto bad;
	}
	t->nslow = nslow;
	if (!room(&r, blob_len, 1))
		goto bad;
	/* at least a byte, as blob_add() keeps: the SLOW rows point into it */
	t->blob = xmalloc(blob_len ? blob_len : 1);
	take(&r, t->blob, blob_len);
	t->blob_len = blob_len;
	if (!skip_pad8(&r) || r.p != r.end)
		goto bad;
	utable_build_pages(t);
	return 0;
bad:
	/* the caller frees t: what is set so far is consistent for utable_free() */
	return ret;
}

int tcache_parse(const uint8_t *p, size_t n, struct utable *t)
{
	return parse(p, n, t, false);
}

/* ---- the file ---- */

const uint8_t *tcache_check(const uint8_t *data, size_t size, const struct cache_key *k,
			    size_t *payload_size)
{
	return cache_file_check(&kind, data, size, k, payload_size);
}

void tcache_seal(uint8_t *data, size_t size, struct cache_key *k)
{
	cache_file_seal(&kind, data, size, k);
}

struct utable *tcache_load(const struct cache_key *k)
{
	void *map;
	size_t map_size, psize;
	/* populated at once: the rows are used in place (a copy, and a
	 * page fault a page, cost more than the rest of the load on a big
	 * table) */
	const uint8_t *payload = cache_file_map(&kind, k, true, &map, &map_size, &psize);
	struct utable *t;

	if (!payload)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->map = map; /* the table's now */
	t->map_size = map_size;
	if (parse(payload, psize, t, true)) {
		utable_free(t);
		return NULL;
	}
	memcpy(t->build_id, k->build_id, k->build_id_size);
	t->build_id_size = k->build_id_size;
	t->cached = true;
	return t;
}

int tcache_store(const struct utable *t, const struct cache_key *k)
{
	struct buf b = BUF_INIT;
	int ret;

	if (!t->nrows)
		return -EINVAL;
	buf_extend(&b, CACHE_FILE_HEADER);
	tcache_image(t, &b);
	ret = cache_file_store(&kind, k, &b);
	buf_release(&b);
	return ret;
}
