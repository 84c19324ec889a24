/* merge.c - several recordings read as one profile (profile.h:
 * profile_load_files(), profile_load_dir()).
 *
 * Each file is self-contained (its own ids for mappings and stack
 * nodes, its own symbols), so each is loaded alone with
 * profile_load_err() and then moved into the one profile: mappings
 * interned by what they are (pid, range, offset, inode, build-id,
 * path), stack nodes by (caller, address, mapping, flags) with
 * store/stacks.c's table, thread names by text. Only the nodes the
 * samples, off-CPU intervals and wakers kept go through, so a short
 * window of a long file costs only what it holds. Times move to the
 * clock of the earliest file read: every file's offset between its own
 * clock (CLOCK_MONOTONIC) and the wall clock comes from its META
 * (wall_start_ns - start_ns), so files of one boot keep their times and
 * files of another boot line up by wall-clock time.
 *
 * Which files: a file's span is its wall-clock start (read from its
 * first chunks, without loading it) to its last write (mtime: samples
 * reach the file within a second of being taken). A file whose start
 * cannot be read from its head is loaded to find it.
 */
#include "profile/profile.h"
#include "store/reader.h"
#include "lib/cursor.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Chunks read from a file's head for its wall-clock start. */
#define HEAD_CHUNKS 4

/* META keys whose values add up over files (counts and CPU time). */
static const char *const sum_keys[] = {
	"cpu_ns", "recovered_processes", "recovered_threads", "unrecovered_processes",
	"unrecovered_samples", "released_samples", "python_expanded", "python_stale", "python_invalid",
	"python_unreadable", "deep_stacks_read", "deep_stacks_stale", "deep_stacks_gone",
	"copy_cut_within_max", "copy_cut_beyond_max", "offcpu_stacks_read", "offcpu_stacks_stale",
	"deep_stacks_words", "stacks_late", "python_moment", "python_late", "python_moment_unfit",
	"python_moment_gone", "moment_records", "moment_joined", "moment_dropped", "moment_unmatched",
	"moment_map_errors", "moment_slot_lists", "moment_slots_cut", "moment_runs", "moment_run_ns",
};
/* META keys the merge writes itself. */
static const char *const own_keys[] = { "start_ns", "end_ns", "wall_start", "wall_start_ns" };

struct cand {
	struct prof_source src;
	uint64_t mtime_ns;
	uint64_t start_ns;      /* META start_ns, when the head had it */
	bool head_known;        /* wall start and start_ns read from the head */
	size_t order;           /* position given, for a stable sort */
};

struct merge {
	struct profile *p;
	struct stack_table nodes;   /* the profile's nodes, interned */
	struct stack_table symkeys; /* (mapping, addr, kind, ra) of the symbols kept */
	struct hmap maps;           /* hash of a mapping -> id (probe chain) */
	struct hmap names;          /* hash of a thread name -> index in namev */
	const char **namev;
	size_t nnames, namecap;
	bool have_base;
	int64_t base_off;           /* wall - time of the merged clock */
	uint64_t t0, t1;            /* the window on the merged clock, [t0, t1) */
	uint64_t start, end;        /* span of the merged clock read */
	bool all_symbols;
	bool damaged_seen;
};

static const char *own_str(struct profile *p, const char *s)
{
	return profile_own(p, s, strlen(s));
}

static uint64_t mapping_hash(const struct prof_mapping *m)
{
	uint64_t h = hash_mix(hash_mix(m->pid, m->start), hash_mix(m->end, m->pgoff));
	h = hash_mix(h, m->inode);
	if (m->build_id_size)
		h = hash_mix(h, hash_bytes(m->build_id, m->build_id_size));
	return hash_mix(h, hash_bytes(m->path ? m->path : "", strlen(m->path ? m->path : "")));
}

static bool mapping_equal(const struct prof_mapping *a, const struct prof_mapping *b)
{
	return a->pid == b->pid && a->start == b->start && a->end == b->end && a->pgoff == b->pgoff &&
	       a->inode == b->inode && a->build_id_size == b->build_id_size &&
	       !memcmp(a->build_id, b->build_id, a->build_id_size) &&
	       !strcmp(a->path ? a->path : "", b->path ? b->path : "");
}

/* The merged id of mapping m of another profile (added when new). */
static uint32_t mapping_intern(struct merge *mg, const struct prof_mapping *m, int64_t shift)
{
	struct profile *p = mg->p;
	uint64_t h = mapping_hash(m);
	uint32_t id;
	for (;; h = hash_next(h)) {
		if (!hmap_get(&mg->maps, h, &id))
			break;
		if (mapping_equal(&p->maps[id - 1], m))
			return id;
	}
	GROW(p->maps, p->mapcap, p->nmaps + 1);
	p->maps[p->nmaps] = *m;
	p->maps[p->nmaps].id = (uint32_t)(p->nmaps + 1);
	p->maps[p->nmaps].time = (uint64_t)MAX((int64_t)m->time + shift, 0);
	p->maps[p->nmaps].path = own_str(p, m->path ? m->path : "");
	id = (uint32_t)++p->nmaps;
	hmap_put(&mg->maps, h, id);
	return id;
}

static const char *name_intern(struct merge *mg, const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s));
	uint32_t i;
	for (;; h = hash_next(h)) {
		if (!hmap_get(&mg->names, h, &i))
			break;
		if (!strcmp(mg->namev[i], s))
			return mg->namev[i];
	}
	GROW(mg->namev, mg->namecap, mg->nnames + 1);
	mg->namev[mg->nnames] = own_str(mg->p, s);
	hmap_put(&mg->names, h, (uint32_t)mg->nnames);
	return mg->namev[mg->nnames++];
}

/* One file's ids moved into the merged profile. */
struct remap {
	const struct profile *from;
	uint32_t *map;    /* mapping id -> merged id */
	uint32_t *node;   /* node id -> merged id, 0: not yet */
	uint32_t *path;   /* scratch: a chain of node ids */
};

/* The merged id of node id of r->from (and of its callers). */
static uint32_t node_remap(struct merge *mg, struct remap *r, uint32_t id)
{
	struct profile *p = mg->p;
	size_t n = 0;
	uint32_t parent;
	if (!id || id > r->from->nnodes)
		return 0;
	/* up to the first caller already moved (parents have lower ids) */
	while (id && !r->node[id]) {
		r->path[n++] = id;
		id = r->from->nodes[id - 1].parent;
	}
	parent = id ? r->node[id] : 0;
	while (n-- > 0) {
		const struct prof_node *nd = &r->from->nodes[r->path[n] - 1];
		uint32_t mapping = nd->mapping, nid;
		size_t before = mg->nodes.n;
		/* a root's "mapping" is its image number, not a mapping */
		if ((nd->flags & 0xff) != NODE_ROOT)
			mapping = mapping && mapping <= r->from->nmaps ? r->map[mapping] : 0;
		nid = stack_intern(&mg->nodes, parent, nd->addr, mapping, nd->flags);
		if (mg->nodes.n != before) {
			GROW(p->nodes, p->nodecap, p->nnodes + 1);
			p->nodes[p->nnodes++] = (struct prof_node){
				.addr = nd->addr, .parent = parent, .mapping = mapping, .flags = nd->flags,
				.depth = parent ? p->nodes[parent - 1].depth + 1 : 0,
			};
		}
		r->node[r->path[n]] = nid;
		parent = nid;
	}
	return parent;
}

static bool in_window(const struct merge *mg, uint64_t t)
{
	return t >= mg->t0 && t < mg->t1;
}

static uint64_t shifted(uint64_t t, int64_t shift)
{
	return (uint64_t)MAX((int64_t)t + shift, 0);
}

static void meta_set(struct profile *p, const char *key, const char *value)
{
	size_t i;
	for (i = 0; i < p->nmeta; i++)
		if (!strcmp(p->meta[i].key, key)) {
			p->meta[i].value = own_str(p, value);
			return;
		}
	profile_add_meta(p, key, value);
}

static void meta_set_u64(struct profile *p, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	meta_set(p, key, buf);
}

static bool listed(const char *key, const char *const *keys, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!strcmp(key, keys[i]))
			return true;
	return false;
}

/* from's META into p: counts add up, the commands are listed once each,
 * the rest is the first file's. */
static void merge_meta(struct profile *p, const struct profile *from)
{
	size_t i;
	for (i = 0; i < from->nmeta; i++) {
		const char *key = from->meta[i].key, *have;
		if (profile_meta(from, key) != from->meta[i].value || listed(key, own_keys, ARRAY_SIZE(own_keys)))
			continue; /* a key's last value counts */
		have = profile_meta(p, key);
		if (listed(key, sum_keys, ARRAY_SIZE(sum_keys))) {
			meta_set_u64(p, key, profile_meta_u64(p, key) + profile_meta_u64(from, key));
		} else if (!have) {
			meta_set(p, key, from->meta[i].value);
		} else if (!strcmp(key, "command") && !strstr(have, from->meta[i].value) && strlen(have) < 2000) {
			char *c = xasprintf("%s; %s", have, from->meta[i].value);
			meta_set(p, key, c);
			free(c);
		}
	}
}

/* The symbols of from, their mappings moved; an address another file
 * already named is skipped (consecutive files of one machine name the
 * same addresses again: 300 copies of one recording held 300 copies of
 * its symbols). */
static void merge_symbols(struct merge *mg, const struct profile *from, const struct remap *r)
{
	struct profile *p = mg->p;
	size_t i, k;
	GROW(p->syms, p->symcap, p->nsyms + from->nsyms);
	for (i = 0; i < from->nsyms; i++) {
		struct prof_sym s = from->syms[i];
		uint32_t kind = s.rs.flags & 0xff;
		size_t before = mg->symkeys.n;
		if (kind != NODE_KERNEL) {
			if (s.rs.mapping > from->nmaps)
				continue;
			s.rs.mapping = r->map[s.rs.mapping];
		}
		/* the key symbolize.c resolves a symbol by */
		stack_intern(&mg->symkeys, s.rs.mapping, s.rs.addr, kind, s.rs.flags & NODE_F_RA);
		if (mg->symkeys.n == before)
			continue;
		s.name = own_str(p, s.name ? s.name : "");
		s.module = own_str(p, s.module ? s.module : "");
		s.file = s.file ? own_str(p, s.file) : NULL;
		GROW(p->sym_inl, p->sym_inlcap, p->nsym_inl + s.ninl);
		for (k = 0; k < s.ninl && s.inl + k < from->nsym_inl; k++) {
			const struct prof_inline *in = &from->sym_inl[s.inl + k];
			p->sym_inl[p->nsym_inl + k] = (struct prof_inline){ in->name ? own_str(p, in->name) : NULL,
									    in->file ? own_str(p, in->file) : NULL,
									    in->line };
		}
		s.ninl = (uint32_t)k;
		s.inl = (uint32_t)p->nsym_inl;
		p->nsym_inl += k;
		p->syms[p->nsyms++] = s;
	}
	for (i = 0; i < from->nperfmaps; i++) {
		GROW(p->perfmaps, p->perfmapcap, p->nperfmaps + 1);
		p->perfmaps[p->nperfmaps++] = (struct prof_perfmap){
			from->perfmaps[i].pid, profile_own(p, from->perfmaps[i].data, from->perfmaps[i].size),
			from->perfmaps[i].size };
	}
}

/* Samples, off-CPU intervals and wakers in the window. */
static void merge_events(struct merge *mg, const struct profile *from, struct remap *r, int64_t shift,
			 struct prof_source *src)
{
	struct profile *p = mg->p;
	size_t i;
	GROW(p->samples, p->samplecap, p->nsamples + from->nsamples);
	for (i = 0; i < from->nsamples; i++) {
		struct rec_sample s = from->samples[i];
		s.time = shifted(s.time, shift);
		if (!in_window(mg, s.time))
			continue;
		s.stack = node_remap(mg, r, s.stack);
		p->samples[p->nsamples++] = s;
		src->samples++;
	}
	GROW(p->offcpu, p->offcpucap, p->noffcpu + from->noffcpu);
	for (i = 0; i < from->noffcpu; i++) {
		struct rec_offcpu o = from->offcpu[i];
		o.start = shifted(o.start, shift);
		if (!in_window(mg, o.start)) /* an interval counts where it began */
			continue;
		o.stack = node_remap(mg, r, o.stack);
		p->offcpu[p->noffcpu++] = o;
		src->offcpu++;
	}
	for (i = 0; i < from->nwakers; i++) {
		struct prof_waker w = from->wakers[i];
		w.w.start = shifted(w.w.start, shift);
		w.w.time = shifted(w.w.time, shift);
		if (!in_window(mg, w.w.start))
			continue;
		w.w.stack = node_remap(mg, r, w.w.stack);
		w.comm = w.comm ? name_intern(mg, w.comm) : NULL;
		GROW(p->wakers, p->wakercap, p->nwakers + 1);
		p->wakers[p->nwakers++] = w;
	}
}

/* Move file from (loaded alone) into the merged profile. */
static void merge_one(struct merge *mg, const struct profile *from, int64_t shift, struct prof_source *src)
{
	struct profile *p = mg->p;
	struct remap r = { from, NULL, NULL, NULL };
	size_t i;
	uint64_t fstart, fend;

	r.map = xcalloc(from->nmaps + 1, sizeof(*r.map));
	r.node = xcalloc(from->nnodes + 1, sizeof(*r.node));
	r.path = xmalloc((from->nnodes + 1) * sizeof(*r.path));
	for (i = 0; i < from->nmaps; i++)
		r.map[i + 1] = mapping_intern(mg, &from->maps[i], shift);
	merge_events(mg, from, &r, shift, src);
	for (i = 0; i < from->ncomms; i++) {
		struct prof_comm c = from->comms[i];
		c.time = shifted(c.time, shift);
		c.name = name_intern(mg, c.name);
		GROW(p->comms, p->commcap, p->ncomms + 1);
		p->comms[p->ncomms++] = c;
	}
	GROW(p->forks, p->forkcap, p->nforks + from->nforks);
	for (i = 0; i < from->nforks; i++) {
		p->forks[p->nforks] = from->forks[i];
		p->forks[p->nforks++].time = shifted(from->forks[i].time, shift);
	}
	merge_symbols(mg, from, &r);
	merge_meta(p, from);
	p->lost_records += from->lost_records;
	p->lost_samples += from->lost_samples;
	p->lost_queue += from->lost_queue;
	p->throttles += from->throttles;
	p->unthrottles += from->unthrottles;
	p->throttled_ns += from->throttled_ns;
	p->exits += from->exits;
	p->file_size += from->file_size;
	p->data_bytes += from->data_bytes;
	p->lost_nodes += from->lost_nodes;
	p->lost_maps += from->lost_maps;
	if (from->damage.chunks) {
		if (!mg->damaged_seen) {
			p->damage.first = from->damage.first;
			snprintf(p->damage.why, sizeof(p->damage.why), "in %.60s: %.90s", path_base(from->path),
				 from->damage.why);
			mg->damaged_seen = true;
		}
		p->damage.chunks += from->damage.chunks;
		p->damage.regions += from->damage.regions;
		p->damage.bytes += from->damage.bytes;
		p->damage.lost_raw += from->damage.lost_raw;
	}
	mg->all_symbols &= from->has_symbols;
	/* the file's span on the merged clock */
	fstart = profile_meta_u64(from, "start_ns");
	if (!fstart || (from->first_time && from->first_time < fstart))
		fstart = from->first_time;
	fend = MAX(profile_meta_u64(from, "end_ns"), from->last_time);
	if (fstart) {
		fstart = shifted(fstart, shift);
		mg->start = mg->start ? MIN(mg->start, fstart) : fstart;
	}
	if (fend)
		mg->end = MAX(mg->end, shifted(fend, shift));
	free(r.map);
	free(r.node);
	free(r.path);
}

/* Wall-clock start of a file and the clock it pairs with, from META
 * records of its first chunks; false when they do not say. */
static bool read_head(const char *path, struct cand *c, struct err *e)
{
	struct store_reader r;
	struct store_chunk ch;
	uint64_t wall_ns = 0, wall_s = 0, start = 0;
	int n = 0;

	if (store_reader_open(&r, path)) {
		err_set(e, -1, "%s", r.err.msg);
		return false;
	}
	while (n++ < HEAD_CHUNKS && !(wall_ns && start) && store_reader_next(&r, &ch) > 0) {
		struct store_record_iter it = { &ch, 0 };
		struct store_record rec;
		while (store_chunk_next_record(&r, &it, &rec) > 0) {
			struct cursor cu;
			const char *k, *v;
			size_t kn, vn;
			char num[24];
			uint64_t x;
			if (rec.type != REC_META)
				continue;
			cur_init(&cu, rec.payload, rec.size);
			cur_str(&cu, &k, &kn);
			cur_str(&cu, &v, &vn);
			if (cu.bad || !vn || vn >= sizeof(num))
				continue;
			memcpy(num, v, vn);
			num[vn] = 0;
			if (parse_u64(num, &x))
				continue;
			if (kn == 13 && !memcmp(k, "wall_start_ns", 13))
				wall_ns = x;
			else if (kn == 10 && !memcmp(k, "wall_start", 10))
				wall_s = x;
			else if (kn == 8 && !memcmp(k, "start_ns", 8))
				start = x;
		}
	}
	store_reader_close(&r);
	if (!start || !(wall_ns || wall_s))
		return true; /* a recording; its head does not say */
	c->src.wall_start_ns = wall_ns ? wall_ns : wall_s * 1000000000ull;
	c->start_ns = start;
	c->head_known = true;
	return true;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	uint64_t tx = x->src.wall_start_ns ? x->src.wall_start_ns : x->mtime_ns;
	uint64_t ty = y->src.wall_start_ns ? y->src.wall_start_ns : y->mtime_ns;
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* wall - time of a loaded profile; false when it has no wall clock */
static bool wall_offset(const struct profile *p, int64_t *off)
{
	uint64_t w = profile_wall_ns(p, 0);
	if (!w)
		return false;
	*off = (int64_t)w;
	return true;
}

uint64_t profile_wall_ns(const struct profile *p, uint64_t t)
{
	uint64_t wall = profile_meta_u64(p, "wall_start_ns"), start = profile_meta_u64(p, "start_ns");
	if (!wall)
		wall = profile_meta_u64(p, "wall_start") * 1000000000ull;
	if (!wall || !start)
		return 0;
	return (uint64_t)MAX((int64_t)wall + ((int64_t)t - (int64_t)start), 1);
}

/* Load candidate c and merge it; its source says how it went. */
static void merge_file(struct merge *mg, struct cand *c, const struct prof_window *w)
{
	struct profile f;
	struct err le;
	int64_t off = 0, shift = 0;
	bool has_wall;
	struct prof_warning warn[PROF_WARNINGS_MAX];
	size_t nw, i;

	if (profile_load_err(&f, c->src.path, &le)) {
		c->src.state = PROF_SRC_FAILED;
		c->src.why = own_str(mg->p, le.msg);
		profile_release(&f);
		return;
	}
	has_wall = wall_offset(&f, &off);
	if (has_wall)
		c->src.wall_start_ns = profile_wall_ns(&f, profile_meta_u64(&f, "start_ns"));
	if (!has_wall && w && (w->since_ns || w->until_ns)) {
		c->src.state = PROF_SRC_NO_TIME;
		profile_release(&f);
		return;
	}
	if (has_wall) {
		uint64_t end = MAX(profile_meta_u64(&f, "end_ns"), f.last_time);
		c->src.wall_end_ns = end ? profile_wall_ns(&f, end) : c->src.wall_start_ns;
		if (w && ((w->until_ns && c->src.wall_start_ns >= w->until_ns) ||
			  (w->since_ns && c->src.wall_end_ns < w->since_ns))) {
			c->src.state = PROF_SRC_OUTSIDE;
			profile_release(&f);
			return;
		}
		if (!mg->have_base) {
			/* the first file read gives the merged clock */
			mg->have_base = true;
			mg->base_off = off;
			if (w && w->since_ns)
				mg->t0 = (uint64_t)MAX((int64_t)w->since_ns - off, 0);
			if (w && w->until_ns)
				mg->t1 = (uint64_t)MAX((int64_t)w->until_ns - off, 0);
		}
		shift = off - mg->base_off;
	}
	c->src.state = PROF_SRC_READ;
	c->src.partial = f.partial;
	c->src.live = f.live;
	c->src.damaged_chunks = f.damage.chunks;
	merge_one(mg, &f, shift, &c->src);
	mg->p->partial = f.partial; /* the newest file's state */
	mg->p->live = f.live;
	mg->p->tail = f.tail;
	/* the profile's own warnings speak of the newest file's state, and
	 * of damage, losses and throttling in all files: what only this
	 * file can say is that it was cut short */
	nw = profile_warnings(&f, warn);
	for (i = 0; i < nw; i++)
		if (warn[i].kind == PROF_W_TRUNCATED)
			c->src.why = own_str(mg->p, warn[i].text);
	profile_release(&f);
}

static int cmp_comm(const void *a, const void *b)
{
	const struct prof_comm *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Sort the threads' names by (tid, time) as profile_comm() reads them,
 * and drop a name that repeats the one before it (each file names the
 * threads it saw again). */
static void comms_finish(struct profile *p)
{
	size_t i, n = 0;
	if (!p->ncomms)
		return;
	qsort(p->comms, p->ncomms, sizeof(*p->comms), cmp_comm);
	for (i = 0; i < p->ncomms; i++) {
		const struct prof_comm *c = &p->comms[i];
		if (n && p->comms[n - 1].tid == c->tid && p->comms[n - 1].pid == c->pid &&
		    p->comms[n - 1].name == c->name && !(c->flags & COMM_F_EXEC))
			continue;
		p->comms[n++] = *c;
	}
	p->ncomms = n;
}

/* The profile's own META: its span (the window's where it cuts) and
 * its wall clock. */
static void finish(struct merge *mg, const struct prof_window *w)
{
	struct profile *p = mg->p;
	uint64_t start = mg->start, end = mg->end;
	size_t i;
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		if (!p->first_time || s->time < p->first_time)
			p->first_time = s->time;
		if (s->time > p->last_time)
			p->last_time = s->time;
	}
	comms_finish(p);
	p->has_symbols = mg->all_symbols && p->nsources;
	for (i = p->nsources; i-- > 0;)
		if (p->sources[i].state == PROF_SRC_READ) {
			p->sources[i].why = NULL; /* the newest: profile_warnings() says it */
			break;
		}
	/* --time counts from --since, where the data may start later */
	if (w && w->since_ns && mg->have_base)
		start = mg->t0;
	/* a window's end cuts the span; a file still being written reaches
	 * it (its last chunk may be behind the window's end: the pull
	 * server's N seconds are N seconds) */
	bool cut = w && w->until_ns && mg->have_base && (end > mg->t1 || p->live);
	if (cut)
		end = MAX(mg->t1, start);
	if (start) {
		meta_set_u64(p, "start_ns", start);
		if (mg->have_base) {
			uint64_t wall = (uint64_t)MAX((int64_t)start + mg->base_off, 0);
			meta_set_u64(p, "wall_start_ns", wall);
			meta_set_u64(p, "wall_start", wall / 1000000000ull);
		}
	}
	if (end && (!p->live || cut))
		meta_set_u64(p, "end_ns", end);
}

int profile_load_files(struct profile *p, const char *name, const char *const *paths, size_t n,
		       const struct prof_window *w, struct err *e)
{
	struct merge mg;
	struct cand *c = xcalloc(n + 1, sizeof(*c));
	size_t i, nread = 0, nfailed = 0;
	int ret = 0;

	memset(p, 0, sizeof(*p));
	hmap_init(&p->func_index);
	p->path = name;
	memset(&mg, 0, sizeof(mg));
	mg.p = p;
	mg.t1 = UINT64_MAX;
	mg.all_symbols = true;
	stack_table_init(&mg.nodes);
	stack_table_init(&mg.symkeys);
	hmap_init(&mg.maps);
	hmap_init(&mg.names);
	if (w) {
		p->since_ns = w->since_ns;
		p->until_ns = w->until_ns;
	}
	for (i = 0; i < n; i++) {
		struct stat st;
		struct err le;
		c[i].order = i;
		c[i].src.path = own_str(p, paths[i]);
		bool bad = stat(paths[i], &st) != 0;
		if (bad || !S_ISREG(st.st_mode)) {
			char *why = xasprintf("%s: %s", paths[i], bad ? strerror(errno) : "not a regular file");
			c[i].src.state = PROF_SRC_FAILED;
			c[i].src.why = own_str(p, why);
			free(why);
			continue;
		}
		c[i].mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
		c[i].src.wall_end_ns = c[i].mtime_ns;
		/* last written before the window: every sample it holds is
		 * older (a sample reaches the file after it is taken), and
		 * its head need not be read (a week of files, one scrape) */
		if (w && w->since_ns && c[i].mtime_ns < w->since_ns) {
			c[i].src.state = PROF_SRC_OUTSIDE;
			continue;
		}
		if (!read_head(paths[i], &c[i], &le)) {
			c[i].src.state = PROF_SRC_FAILED;
			c[i].src.why = own_str(p, le.msg);
		}
	}
	qsort(c, n, sizeof(*c), cmp_cand);
	for (i = 0; i < n; i++) {
		struct cand *ci = &c[i];
		if (ci->src.state == PROF_SRC_FAILED || ci->src.state == PROF_SRC_OUTSIDE)
			continue;
		/* outside the window by its head and its last write: not read */
		if (w && ci->head_known && ((w->until_ns && ci->src.wall_start_ns >= w->until_ns) ||
					    (w->since_ns && ci->mtime_ns < w->since_ns))) {
			ci->src.state = PROF_SRC_OUTSIDE;
			continue;
		}
		if (w && w->deadline_ns && now_ns() > w->deadline_ns) {
			ret = err_set(e, -1, "%s: reading took too long (past the request's time limit)", name);
			goto out;
		}
		merge_file(&mg, ci, w);
	}
	p->sources = xmalloc((n + 1) * sizeof(*p->sources));
	for (i = 0; i < n; i++) {
		p->sources[p->nsources++] = c[i].src;
		nread += c[i].src.state == PROF_SRC_READ;
		nfailed += c[i].src.state == PROF_SRC_FAILED;
	}
	if (!nread && nfailed == n && n) {
		const struct prof_source *s = &p->sources[0];
		ret = err_set(e, -1, "%s: no recording could be read (%s%s%s)", name, s->why,
			      n > 1 ? ", and " : "", n > 1 ? "the others as well" : "");
		goto out;
	}
	finish(&mg, w);
out:
	stack_table_release(&mg.nodes);
	stack_table_release(&mg.symkeys);
	hmap_release(&mg.maps);
	hmap_release(&mg.names);
	free(mg.namev);
	free(c);
	return ret;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int profile_load_dir(struct profile *p, const char *dir, const struct prof_window *w, struct err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **paths = NULL;
	size_t n = 0, cap = 0, i;
	int ret;

	if (!d) {
		memset(p, 0, sizeof(*p));
		hmap_init(&p->func_index);
		return err_set(e, -errno, "cannot read directory %s: %s", dir, strerror(errno));
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len < 6 || strcmp(de->d_name + len - 5, ".data"))
			continue;
		GROW(paths, cap, n + 1);
		paths[n++] = xasprintf("%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (!n) {
		memset(p, 0, sizeof(*p));
		hmap_init(&p->func_index);
		free(paths);
		return err_set(e, -1, "%s has no recordings (no *.data file in it; record one with"
			       " stax record -o %s/NAME.data)", dir, dir);
	}
	qsort(paths, n, sizeof(*paths), cmp_str);
	ret = profile_load_files(p, dir, (const char *const *)paths, n, w, e);
	for (i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return ret;
}

int profile_load_path(struct profile *p, const char *path, const struct prof_window *w, struct err *e)
{
	struct stat st;
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return profile_load_dir(p, path, w, e);
	if (w && (w->since_ns || w->until_ns))
		return profile_load_files(p, path, &path, 1, w, e);
	return profile_load_err(p, path, e);
}
