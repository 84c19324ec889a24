/* resymbolize.c - stax symbolize: a recording's symbols resolved again. */
#include "profile/resymbolize.h"
#include "profile/profile.h"
#include "store/reader.h"
#include "store/writer.h"
#include "symbol/chunk.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Was (addr, mapping, flags) named in the old symbols? */
static bool known_before(const struct profile *p, const struct sym_chunk_key *k)
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

static bool mapping_of(void *arg, uint32_t id, struct module_ref *ref, uint32_t *pid)
{
	const struct profile *p = arg;
	const struct prof_mapping *m = id && id <= p->nmaps ? &p->maps[id - 1] : NULL;
	if (!m)
		return false;
	*ref = profile_mapping_ref(m);
	*pid = m->pid;
	return true;
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
	struct sym_chunk_key *keys = NULL;
	struct sym_chunk_source src = { mapping_of, NULL, &p };
	struct sym_chunk_stats cs;
	uint32_t *pids = NULL;
	struct buf keep;
	bool have_r = false, have_w = false, have_p = false;
	size_t i, n = 0;
	int ret = -1, got;

	memset(st, 0, sizeof(*st));
	memset(&keep, 0, sizeof(keep));
	if (profile_load_err(&p, path, &e)) {
		err_set(err, -1, "%s", e.msg);
		close(out_fd);
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
			if (c.late)
				store_mark_late(&w);
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
	/* the user-space addresses (each with its process, for its JIT
	 * maps), named again */
	keys = xcalloc(p.nnodes + 1, sizeof(*keys));
	pids = xcalloc(p.nnodes + 1, sizeof(*pids));
	for (i = 0; i < p.nnodes; i++) {
		const struct prof_node *nd = &p.nodes[i];
		if ((nd->flags & 0xff) == NODE_ROOT) {
			pids[i] = (uint32_t)nd->addr;
			continue;
		}
		pids[i] = nd->parent && nd->parent <= i ? pids[nd->parent - 1] : 0;
		if ((nd->flags & 0xff) != NODE_USER || (nd->flags & NODE_F_LOST))
			continue;
		keys[n++] = (struct sym_chunk_key){ nd->addr, nd->mapping, nd->flags & (0xff | NODE_F_RA),
						    pids[i], 0 };
	}
	ss = sym_session_new();
	for (i = 0; i < p.nperfmaps; i++)
		sym_jit_set_perfmap(ss, p.perfmaps[i].pid, p.perfmaps[i].data, p.perfmaps[i].size);
	n = sym_chunk_write(ss, &w, keys, n, &src, &cs);
	for (i = 0; i < n; i++)
		st->known_before += known_before(&p, &keys[i]);
	st->addrs = cs.keys;
	st->known_after = cs.named;
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
	free(keys);
	free(pids);
	return ret;
}
