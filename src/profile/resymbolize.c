/* resymbolize.c - stax symbolize: a recording's symbols resolved again. */
#include "profile/resymbolize.h"
#include "profile/profile.h"
#include "store/reader.h"
#include "store/writer.h"
#include "symbol/symbol.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYMBOLS_CHUNK_BYTES (24u << 20)

struct resym_key {
	uint64_t addr;
	uint32_t mapping, flags, pid;
};

static int cmp_key(const void *a, const void *b)
{
	const struct resym_key *x = a, *y = b;
	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->flags > y->flags) - (x->flags < y->flags);
}

/* Was (addr, mapping, flags) named in the old symbols? */
static bool known_before(const struct profile *p, const struct resym_key *k)
{
	size_t i;
	for (i = 0; i < p->nsyms; i++) {
		const struct rec_symbol *rs = &p->syms[i].rs;
		if (rs->addr == k->addr && rs->mapping == k->mapping &&
		    (rs->flags & (0xff | NODE_F_RA)) == k->flags)
			return rs->flags & SYMBOL_F_KNOWN;
	}
	return false;
}

/* META "symbols:MODULE" = "SOURCE, lines from DWARFSOURCE", once per
 * module, as the recorder writes it. */
static void put_module_source(struct store_writer *w, struct sym_session *ss, struct hmap *done,
			      const struct sym_module_ref *ref, const char *module)
{
	uint64_t h = hash_bytes(module, strlen(module));
	uint32_t v;
	char key[300], val[128];
	if (hmap_get(done, h, &v))
		return;
	hmap_put(done, h, 1);
	snprintf(key, sizeof(key), "symbols:%s", module);
	sym_module_sources(ss, ref, val, sizeof(val));
	store_put_meta(w, key, val);
}

/* The old symbols chunk's records to keep: everything but user-space
 * symbols (and their sources) and the "symbols:MODULE" notes. */
static int keep_records(struct store_reader *r, const struct store_chunk *c, struct buf *keep)
{
	struct store_record_iter it = { c, 0 };
	struct store_record rec;
	bool last_kept = false;
	int n;

	while ((n = store_chunk_next_record(r, &it, &rec)) == 1) {
		bool k = true;
		if (rec.type == REC_SYMBOL && rec.size >= sizeof(struct rec_symbol)) {
			struct rec_symbol rs;
			memcpy(&rs, rec.payload, sizeof(rs));
			k = (rs.flags & 0xff) != NODE_USER;
			last_kept = k;
		} else if (rec.type == REC_SYMBOL_SRC) {
			k = last_kept;
		} else if (rec.type == REC_META && rec.size > 10 && !memcmp(rec.payload + 2, "symbols:", 8)) {
			/* str key: u16 length, then the bytes */
			k = false;
		}
		if (k)
			buf_add(keep, c->data + rec.offset, rec.size + 8);
	}
	return n;
}

int profile_resymbolize(const char *path, int out_fd, struct resym_stats *st, struct err *err)
{
	struct store_reader r;
	struct store_writer w;
	struct store_chunk c;
	struct profile p;
	struct err e;
	struct sym_session *ss = NULL;
	struct resym_key *keys = NULL;
	struct buf keep;
	struct hmap done;
	bool have_r = false, have_w = false, have_p = false;
	size_t i, n = 0;
	int ret = -1, got;

	memset(st, 0, sizeof(*st));
	memset(&keep, 0, sizeof(keep));
	hmap_init(&done);
	if (profile_load_err(&p, path, &e)) {
		err_set(err, -1, "%s", e.msg);
		close(out_fd);
		hmap_release(&done);
		return -1;
	}
	have_p = true;
	if (p.live) {
		err_set(err, -1, "%s is still being recorded (symbolize it once the recording has stopped)",
			 path);
		goto fail_fd;
	}
	if (p.partial) {
		err_set(err, -1, "%s has no end chunk (the recorder was killed or the file cut): its"
			 " addresses are resolved from the binaries at every query already", path);
		goto fail_fd;
	}
	if (p.damage.chunks || p.damage.regions) {
		err_set(err, -1, "%s has damaged chunks (see stax info); symbolize copies whole"
			 " recordings only", path);
		goto fail_fd;
	}
	if (store_reader_open(&r, path)) {
		err_set(err, -1, "%s", r.err.msg);
		goto fail_fd;
	}
	have_r = true;
	if (store_writer_open_fd(&w, out_fd)) {
		err_set(err, -1, "cannot write the new recording");
		goto out;
	}
	have_w = true;
	/* the data chunks as they are (node ids, samples, mappings) */
	while ((got = store_reader_next(&r, &c)) == 1) {
		if (c.kind == CHUNK_DATA) {
			buf_add(&w.raw, c.data, c.size);
			store_flush(&w, CHUNK_DATA);
		} else if (c.kind == CHUNK_SYMBOLS && keep_records(&r, &c, &keep) < 0) {
			err_set(err, -1, "%s: %s", path, r.err.msg);
			goto out;
		}
	}
	if (got < 0) {
		err_set(err, -1, "%s", r.err.msg);
		goto out;
	}
	/* the user-space addresses, once each */
	keys = xcalloc(p.nnodes + 1, sizeof(*keys));
	for (i = 0; i < p.nnodes; i++) {
		const struct prof_node *nd = &p.nodes[i];
		if ((nd->flags & 0xff) != NODE_USER || (nd->flags & NODE_F_LOST))
			continue;
		keys[n++] = (struct resym_key){ nd->addr, nd->mapping, nd->flags & (0xff | NODE_F_RA), 0 };
	}
	if (n)
		qsort(keys, n, sizeof(*keys), cmp_key);
	ss = sym_session_new();
	sym_set_demangle(ss, false); /* names are stored as the binary has them */
	for (i = 0; i < p.nperfmaps; i++)
		sym_jit_set_perfmap(ss, p.perfmaps[i].pid, p.perfmaps[i].data, p.perfmaps[i].size);
	for (i = 0; i < n; i++) {
		const struct resym_key *k = &keys[i];
		const struct prof_mapping *m = k->mapping && k->mapping <= p.nmaps ? &p.maps[k->mapping - 1] : NULL;
		uint64_t a = k->addr - ((k->flags & NODE_F_RA) ? 1 : 0);
		struct sym_result res;
		struct rec_symbol rs;
		size_t j;

		if (i && !cmp_key(&keys[i - 1], k))
			continue;
		if (w.raw.len > SYMBOLS_CHUNK_BYTES)
			store_flush(&w, CHUNK_SYMBOLS);
		memset(&res, 0, sizeof(res));
		{
			struct sym_module_ref ref = { 0 };
			if (m)
				ref = (struct sym_module_ref){ m->path, m->build_id_size ? m->build_id : NULL,
							       m->build_id_size, m->start, m->end, m->pgoff };
			sym_lookup_user(ss, m ? &ref : NULL, m ? m->pid : 0, 0, a, &res);
			if (m && !sym_path_is_anon(m->path) && res.module)
				put_module_source(&w, ss, &done, &ref, res.module);
		}
		st->addrs++;
		st->known_before += known_before(&p, k);
		st->known_after += res.name != NULL;
		memset(&rs, 0, sizeof(rs));
		rs.addr = k->addr;
		rs.mapping = k->mapping;
		rs.flags = k->flags;
		if (res.name) {
			rs.flags |= SYMBOL_F_KNOWN;
			rs.offset = res.sym_offset;
		} else {
			rs.offset = res.has_vaddr ? res.func_vaddr : res.file_offset;
		}
		store_put_symbol(&w, &rs, res.name ? res.name : "", res.module ? res.module : "");
		if (res.file || res.ninlined) {
			struct rec_symbol_src src = { rs.addr, rs.mapping, rs.flags, res.line, 0 };
			struct store_inline inl[SYM_MAX_INLINE];
			for (j = 0; j < res.ninlined && j < SYM_MAX_INLINE; j++)
				inl[j] = (struct store_inline){ res.inlined[j].name, res.inlined[j].file,
								res.inlined[j].line };
			src.ninline = (uint32_t)j;
			store_put_symbol_src(&w, &src, res.file, inl);
		}
	}
	/* kernel symbols, perf maps and the rest of the old chunk */
	buf_add(&w.raw, keep.data, keep.len);
	store_flush(&w, CHUNK_SYMBOLS);
	have_w = false;
	if (store_writer_close(&w)) {
		err_set(err, -1, "cannot write the new recording (is the disk full?)");
		goto out;
	}
	ret = 0;
	goto out;
fail_fd:
	close(out_fd);
out:
	if (have_w)
		store_writer_close(&w);
	if (have_r)
		store_reader_close(&r);
	if (have_p)
		profile_release(&p);
	if (ss)
		sym_session_free(ss);
	buf_release(&keep);
	hmap_release(&done);
	free(keys);
	return ret;
}
