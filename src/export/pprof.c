/* pprof.c - profile.proto (github.com/google/pprof/proto/profile.proto),
 * gzip-compressed, as go tool pprof reads it.
 *
 * Model mapping: a stax function is a pprof Function (its filename is
 * the source file where DWARF gave one, else the module); every distinct
 * (mapping, address) in the stacks is a Location, and the functions
 * inlined at that address are its Lines, innermost first, each with its
 * source line (pprof's model: one Location, several Lines, the last one
 * the function that holds the code). A recorded executable mapping is a
 * Mapping, and kernel frames share one "[kernel.kallsyms]" Mapping.
 * Samples with the same stack and thread are merged; values are samples
 * and CPU time.
 */
#include "export/export.h"
#include "export/protobuf.h"
#include "profile/filter.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define MAX_DEPTH 4096

/* profile.proto field numbers */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3, PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6, PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

struct strtab {
	struct hmap index;
	const char **s;
	size_t n, cap;
	char **own; /* the copies str_id_copy() made */
	size_t nown, owncap;
};

static uint64_t str_id(struct strtab *t, const char *s)
{
	uint64_t h = hash_bytes(s, strlen(s));
	uint32_t id;
	for (;; h = hash_next(h)) {
		if (!hmap_get(&t->index, h, &id))
			break;
		if (!strcmp(t->s[id], s))
			return id;
	}
	GROW(t->s, t->cap, t->n + 1);
	t->s[t->n] = s;
	hmap_put(&t->index, h, (uint32_t)t->n);
	return t->n++;
}

/* str_id() of a string that does not outlive the call (a buffer): the
 * table keeps a copy when the string is new. */
static uint64_t str_id_copy(struct strtab *t, const char *s)
{
	size_t n = t->n;
	uint64_t id = str_id(t, s);
	if (t->n > n) {
		GROW(t->own, t->owncap, t->nown + 1);
		t->own[t->nown] = xstrdup(s);
		t->s[id] = t->own[t->nown++];
	}
	return id;
}

static void value_type(struct buf *b, uint32_t field, struct strtab *st, const char *type, const char *unit)
{
	struct buf m = BUF_INIT;
	pb_uint(&m, VALUE_TYPE_TYPE, str_id(st, type));
	pb_uint(&m, VALUE_TYPE_UNIT, str_id(st, unit));
	pb_msg(b, field, &m);
	buf_release(&m);
}

struct pp {
	const struct profile *p;
	struct buf out, m;
	struct strtab st;
	struct hmap loc_index;       /* hash(mapping, addr, kind) -> location id */
	const struct prof_node **loc_node; /* loc_node[id] = first node seen */
	size_t nlocs, loccap;
	uint32_t *node_loc;          /* node id -> location id */
	bool *map_used;              /* by mapping id; [nmaps + 1] = kernel */
	bool *func_used;
	const char **func_file;      /* by function id: a source file seen for it */
};

static uint32_t kind_of(const struct prof_node *nd)
{
	return nd->flags & 0xff;
}

/* Location of a stack node (interned by mapping, address and kind). The
 * node is the innermost frame at its address; its inline chain (parents
 * while NODE_F_INLINE, and the holder) is the same for every node with
 * that key, since symbolization resolves each address once. */
static uint32_t location(struct pp *pp, uint32_t node_id)
{
	const struct prof_node *nd = profile_node(pp->p, node_id);
	uint64_t h;
	uint32_t id;
	if (pp->node_loc[node_id])
		return pp->node_loc[node_id];
	h = hash_mix(hash_mix(nd->mapping, nd->addr), kind_of(nd) | (nd->flags & NODE_F_RA));
	for (;; h = hash_next(h)) {
		const struct prof_node *o;
		if (!hmap_get(&pp->loc_index, h, &id))
			break;
		o = pp->loc_node[id];
		if (o->mapping == nd->mapping && o->addr == nd->addr && o->flags == nd->flags &&
		    o->func == nd->func)
			return pp->node_loc[node_id] = id;
	}
	id = (uint32_t)++pp->nlocs;
	GROW(pp->loc_node, pp->loccap, id + 1);
	pp->loc_node[id] = nd;
	hmap_put(&pp->loc_index, h, id);
	return pp->node_loc[node_id] = id;
}

static uint32_t mapping_id(const struct profile *p, const struct prof_node *nd)
{
	if (kind_of(nd) == NODE_KERNEL)
		return (uint32_t)p->nmaps + 1;
	return nd->mapping && nd->mapping <= p->nmaps ? nd->mapping : 0;
}


/* samples with equal (stack, tid) become one pprof sample */
static int cmp_stack_tid(const void *a, const void *b, void *arg)
{
	const struct profile *merge_p = arg;
	const struct rec_sample *x = &merge_p->samples[*(const size_t *)a];
	const struct rec_sample *y = &merge_p->samples[*(const size_t *)b];
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static void encode(struct pp *pp, const struct view_filter *f)
{
	const struct profile *p = pp->p;
	const char *clock = profile_meta(p, "event_is_clock");
	bool is_clock = clock && !strcmp(clock, "1");
	uint64_t *locs = xmalloc(MAX_DEPTH * sizeof(*locs)), period = 0;
	size_t *idx = xmalloc((p->nsamples + 1) * sizeof(*idx)), n = 0, i, j;
	struct buf m = BUF_INIT, sub = BUF_INIT;
	const char *event = profile_meta(p, "event");
	char comment[256];

	str_id(&pp->st, "");
	value_type(&pp->out, PROFILE_SAMPLE_TYPE, &pp->st, "samples", "count");
	value_type(&pp->out, PROFILE_SAMPLE_TYPE, &pp->st, is_clock ? "cpu" : "events",
		   is_clock ? "nanoseconds" : "count");

	for (i = 0; i < p->nsamples; i++)
		if (view_keep(p, f, &p->samples[i]))
			idx[n++] = i;
	qsort_r(idx, n, sizeof(*idx), cmp_stack_tid, (void *)p);
	for (i = 0; i < n; i = j) {
		const struct rec_sample *s = &p->samples[idx[i]];
		const struct prof_node *nd = profile_node(p, s->stack);
		uint64_t count = 0, weight = 0, values[2];
		size_t nl = 0;
		for (j = i; j < n && p->samples[idx[j]].stack == s->stack &&
			    p->samples[idx[j]].tid == s->tid; j++) {
			count++;
			weight += is_clock ? p->samples[idx[j]].weight : 1;
		}
		if (!period && is_clock)
			period = s->weight;
		while (nd && nl < MAX_DEPTH) {
			if (kind_of(nd) != NODE_ROOT) {
				locs[nl++] = location(pp, (uint32_t)(nd - p->nodes) + 1);
				/* the inline frames at this address are Lines of that Location */
				while (nd && (nd->flags & NODE_F_INLINE))
					nd = profile_node(p, nd->parent);
			}
			if (nd)
				nd = profile_node(p, nd->parent);
		}
		buf_reset(&m);
		pb_packed(&m, SAMPLE_LOCATION_ID, locs, nl);
		values[0] = count;
		values[1] = weight;
		pb_packed(&m, SAMPLE_VALUE, values, 2);
		buf_reset(&sub);
		pb_uint(&sub, LABEL_KEY, str_id(&pp->st, "thread"));
		pb_uint(&sub, LABEL_STR, str_id(&pp->st, profile_comm(p, s->pid, s->tid, s->time)));
		pb_msg(&m, SAMPLE_LABEL, &sub);
		buf_reset(&sub);
		pb_uint(&sub, LABEL_KEY, str_id(&pp->st, "tid"));
		pb_uint(&sub, LABEL_NUM, s->tid);
		pb_msg(&m, SAMPLE_LABEL, &sub);
		buf_reset(&sub);
		pb_uint(&sub, LABEL_KEY, str_id(&pp->st, "pid"));
		pb_uint(&sub, LABEL_NUM, s->pid);
		pb_msg(&m, SAMPLE_LABEL, &sub);
		pb_msg(&pp->out, PROFILE_SAMPLE, &m);
	}

	/* mappings, then locations and functions */
	for (i = 1; i <= pp->nlocs; i++) {
		const struct prof_node *nd;
		pp->map_used[mapping_id(p, pp->loc_node[i])] = true;
		for (nd = pp->loc_node[i]; nd; nd = profile_node(p, nd->parent)) {
			if (nd->func && nd->func <= p->nfuncs) {
				pp->func_used[nd->func] = true;
				if (!pp->func_file[nd->func] && nd->file)
					pp->func_file[nd->func] = nd->file;
			}
			if (!(nd->flags & NODE_F_INLINE))
				break;
		}
	}
	for (i = 1; i <= p->nmaps + 1; i++) {
		char bid[41];
		if (!pp->map_used[i])
			continue;
		buf_reset(&m);
		pb_uint(&m, MAPPING_ID, i);
		if (i <= p->nmaps) {
			const struct prof_mapping *pm = &p->maps[i - 1];
			size_t k;
			pb_uint(&m, MAPPING_START, pm->start);
			pb_uint(&m, MAPPING_LIMIT, pm->end);
			pb_uint(&m, MAPPING_OFFSET, pm->pgoff);
			pb_uint(&m, MAPPING_FILENAME, str_id(&pp->st, pm->path ? pm->path : ""));
			for (k = 0; k < pm->build_id_size; k++)
				sprintf(bid + 2 * k, "%02x", pm->build_id[k]);
			bid[2 * pm->build_id_size] = 0;
			pb_uint(&m, MAPPING_BUILD_ID, str_id_copy(&pp->st, bid));
		} else {
			pb_uint(&m, MAPPING_FILENAME, str_id(&pp->st, "[kernel.kallsyms]"));
		}
		pb_uint(&m, MAPPING_HAS_FUNCTIONS, 1);
		pb_msg(&pp->out, PROFILE_MAPPING, &m);
	}
	for (i = 1; i <= pp->nlocs; i++) {
		const struct prof_node *nd = pp->loc_node[i];
		buf_reset(&m);
		pb_uint(&m, LOCATION_ID, i);
		pb_uint(&m, LOCATION_MAPPING_ID, mapping_id(p, nd));
		/* a return address stands for the call just before it */
		pb_uint(&m, LOCATION_ADDRESS, nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0));
		/* Lines innermost first; the last is the function holding the code */
		for (; nd; nd = profile_node(p, nd->parent)) {
			if (nd->func && nd->func <= p->nfuncs) {
				buf_reset(&sub);
				pb_uint(&sub, LINE_FUNCTION_ID, nd->func);
				if (nd->line)
					pb_uint(&sub, LINE_LINE, nd->line);
				pb_msg(&m, LOCATION_LINE, &sub);
			}
			if (!(nd->flags & NODE_F_INLINE))
				break;
		}
		pb_msg(&pp->out, PROFILE_LOCATION, &m);
	}
	for (i = 1; i <= p->nfuncs; i++) {
		const struct prof_func *fn = &p->funcs[i - 1];
		if (!pp->func_used[i])
			continue;
		buf_reset(&m);
		pb_uint(&m, FUNCTION_ID, i);
		pb_uint(&m, FUNCTION_NAME, str_id(&pp->st, fn->name));
		pb_uint(&m, FUNCTION_SYSTEM_NAME, str_id(&pp->st, fn->name));
		pb_uint(&m, FUNCTION_FILENAME, str_id(&pp->st, fn->file ? fn->file : pp->func_file[i] ?
						      pp->func_file[i] : fn->module));
		pb_msg(&pp->out, PROFILE_FUNCTION, &m);
	}
	{
		/* the wall clock at the start (to the second before stax
		 * wrote wall_start_ns), and the span recorded: a window's
		 * when one was read (profile_load_files()) */
		uint64_t start = profile_start_ns(p), end = profile_meta_u64(p, "end_ns");
		uint64_t wall = profile_wall_ns(p, start);
		if (wall)
			pb_uint(&pp->out, PROFILE_TIME_NANOS, wall);
		if (end < p->last_time)
			end = p->last_time;
		if (end > start)
			pb_uint(&pp->out, PROFILE_DURATION_NANOS, end - start);
	}
	value_type(&pp->out, PROFILE_PERIOD_TYPE, &pp->st, is_clock ? "cpu" : "events",
		   is_clock ? "nanoseconds" : "count");
	pb_uint(&pp->out, PROFILE_PERIOD, period ? period : 1);
	snprintf(comment, sizeof(comment), "stax recording %s, event %s", p->path ? p->path : "",
		 event ? event : "?");
	pb_uint(&pp->out, PROFILE_COMMENT, str_id(&pp->st, comment));
	/* the string table goes last: every id above is assigned by now */
	for (i = 0; i < pp->st.n; i++)
		pb_str(&pp->out, PROFILE_STRING_TABLE, pp->st.s[i]);

	buf_release(&m);
	buf_release(&sub);
	free(idx);
	free(locs);
}

static int gzip_to(FILE *out, const struct buf *in, struct err *e)
{
	z_stream z;
	unsigned char chunk[65536];
	int ret;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip header and trailer, not a zlib one */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return err_set(e, -1, "pprof: cannot start gzip compression");
	z.next_in = in->data;
	z.avail_in = (uInt)in->len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			deflateEnd(&z);
			return err_set(e, -1, "pprof: gzip compression failed");
		}
		if (fwrite(chunk, 1, sizeof(chunk) - z.avail_out, out) != sizeof(chunk) - z.avail_out) {
			deflateEnd(&z);
			return err_set(e, errno ? -errno : -EIO, "pprof: cannot write the profile: %s", strerror(errno));
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

int export_pprof(const struct profile *p, const struct view_filter *f, FILE *out, struct err *e)
{
	struct pp pp;
	int ret;
	memset(&pp, 0, sizeof(pp));
	pp.p = p;
	hmap_init(&pp.st.index);
	hmap_init(&pp.loc_index);
	pp.node_loc = xcalloc(p->nnodes + 1, sizeof(*pp.node_loc));
	pp.map_used = xcalloc(p->nmaps + 2, sizeof(*pp.map_used));
	pp.func_used = xcalloc(p->nfuncs + 1, sizeof(*pp.func_used));
	pp.func_file = xcalloc(p->nfuncs + 1, sizeof(*pp.func_file));
	encode(&pp, f);
	ret = gzip_to(out, &pp.out, e);
	buf_release(&pp.out);
	hmap_release(&pp.st.index);
	hmap_release(&pp.loc_index);
	free(pp.st.s);
	for (size_t k = 0; k < pp.st.nown; k++)
		free(pp.st.own[k]);
	free(pp.st.own);
	free(pp.loc_node);
	free(pp.node_loc);
	free(pp.map_used);
	free(pp.func_used);
	free(pp.func_file);
	return ret;
}
