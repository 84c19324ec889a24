/* perfdata_import.c - the import of a perf.data file or pipe as a whole
 * (perfdata.h's entry points): the file's header sections (attributes,
 * features) and its data, the end of the recording it makes, and the
 * inputs (a descriptor, memory, a path, a memory file for queries).
 */
#include "source/perfdata-private.h"
#include "ingest/ingest.h"
#include "symbol/symbol.h"
#include "lib/cursor.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* ---- the file format: header, attributes, features ---- */

static int read_section(struct pd *pd, const struct section *s, uint64_t where, const char *what,
			uint8_t **out)
{
	/* pd_fail() returns -1, but in another file: -1 here, so that the
	 * callers are seen never to use *out after a failure */
	*out = NULL;
	if (s->offset > pd->in.size || s->size > pd->in.size - s->offset) {
		pd_fail(pd, where, "%s section (%" PRIu64 " bytes at %" PRIu64 ") lies outside the"
			" file of %" PRIu64 " bytes", what, s->size, s->offset, pd->in.size);
		return -1;
	}
	if (s->size > SECTION_MAX) {
		pd_fail(pd, where, "%s section of %" PRIu64 " bytes is too large", what, s->size);
		return -1;
	}
	*out = xmalloc(s->size ? s->size : 1);
	if (!pd_in_pread(&pd->in, s->offset, *out, s->size)) {
		free(*out);
		*out = NULL;
		pd_fail(pd, s->offset, "cannot read the %s section (%s)", what,
			pd->in.err ? strerror(pd->in.err) : "short read");
		return -1;
	}
	return 0;
}

static int read_attrs(struct pd *pd, const struct file_header *fh)
{
	uint8_t *data;
	size_t pos = 0;
	uint64_t nr, i;

	if (fh->attr_size < ATTR_SIZE_VER0 + sizeof(struct section))
		return pd_fail(pd, 16, "invalid attribute entry size %" PRIu64, fh->attr_size);
	if (read_section(pd, &fh->attrs, 24, "attribute", &data))
		return -1;
	nr = fh->attrs.size / fh->attr_size;
	if (!nr || nr > 65536) {
		free(data);
		return pd_fail(pd, 24, "the file has %s events", nr ? "too many" : "no");
	}
	for (i = 0; i < nr; i++) {
		struct section ids;
		uint64_t k, id;
		uint8_t *idv;
		size_t used = pd_add_attr(pd, data + pos, fh->attrs.size - pos);
		if (!used || fh->attrs.size - pos - used < sizeof(ids)) {
			free(data);
			return pd_fail(pd, fh->attrs.offset + pos, "malformed event attribute %" PRIu64, i);
		}
		memcpy(&ids, data + pos + used, sizeof(ids));
		pos += used + sizeof(ids);
		if (read_section(pd, &ids, fh->attrs.offset + pos - sizeof(ids), "event id", &idv)) {
			free(data);
			return -1;
		}
		for (k = 0; k + 8 <= ids.size; k += 8) {
			memcpy(&id, idv + k, 8);
			pd_add_id(pd, id, (uint32_t)i);
		}
		free(idv);
	}
	free(data);
	return 0;
}

static int read_features(struct pd *pd, const struct file_header *fh)
{
	uint64_t table = fh->data.offset + fh->data.size;
	unsigned bit, k = 0, nfeat = 0;

	for (bit = 1; bit < 256; bit++)
		nfeat += (fh->features[bit / 64] >> (bit % 64)) & 1;
	if (!nfeat)
		return 0;
	if (table > pd->in.size || pd->in.size - table < 16ull * nfeat) {
		pd_warn(pd, "feature sections are missing (perf record did not finish?):"
			" no build-ids, command line or event names");
		return 0;
	}
	for (bit = 1; bit < 256; bit++) {
		struct section s;
		uint8_t *data;
		int ret;
		if (!((fh->features[bit / 64] >> (bit % 64)) & 1))
			continue;
		if (!pd_in_pread(&pd->in, table + 16ull * k, &s, sizeof(s)))
			return pd_fail(pd, table + 16ull * k, "cannot read the feature table");
		k++;
		if (bit != FEAT_BUILD_ID && bit != FEAT_HOSTNAME && bit != FEAT_NRCPUS &&
		    bit != FEAT_CMDLINE && bit != FEAT_EVENT_DESC && bit != FEAT_ARCH)
			continue;
		if (read_section(pd, &s, table + 16ull * (k - 1), "feature", &data))
			return -1;
		ret = pd_feature(pd, bit, data, s.size, s.offset);
		free(data);
		if (ret)
			return -1;
	}
	return 0;
}

static int read_file(struct pd *pd)
{
	struct file_header fh;
	uint64_t limit;
	bool data_cut = false;

	if (!pd->in.seekable)
		return pd_fail(pd, 0, "a perf.data file (not the pipe format) cannot be read from a pipe"
			    " (save it to a file, or record with perf record -o -)");
	if (!pd_in_pread(&pd->in, 0, &fh, sizeof(fh)))
		return pd_fail(pd, 0, "the file is too short for a perf.data header");
	if (fh.size != FILE_HEADER_SIZE)
		return pd_fail(pd, 8, "unsupported perf.data header size %" PRIu64, fh.size);
	if (read_attrs(pd, &fh))
		return -1;
	if (fh.data.offset < FILE_HEADER_SIZE || fh.data.offset > pd->in.size)
		return pd_fail(pd, 40, "data section offset %" PRIu64 " lies outside the file", fh.data.offset);
	if (!fh.data.size && pd->in.size > fh.data.offset) {
		pd_warn(pd, "the header records no data (perf record was killed?): reading to the end"
			" of the file");
		limit = pd->in.size;
	} else if (fh.data.size > pd->in.size - fh.data.offset) {
		limit = pd->in.size;
		data_cut = true;
	} else {
		limit = fh.data.offset + fh.data.size;
		if (read_features(pd, &fh))
			return -1;
	}
	pd_in_seek(&pd->in, fh.data.offset);
	if (pd_read_records(pd, limit))
		return -1;
	if (data_cut)
		pd_cut(pd, limit, "the data section");
	return 0;
}

/* ---- entry points ---- */

static int finish(struct pd *pd)
{
	struct ingest *g;
	size_t i;

	if (!pd->started && pd_start(pd, pd->in.pos))
		return -1;
	g = pd->g;
	pd_flush_upto(pd, UINT64_MAX);
	if (pd->progress_shown)
		note_progress_clear();
	if (pd->counted_lost > g->lost + g->lost_samples) {
		struct rec_lost l;
		memset(&l, 0, sizeof(l));
		l.time = g->last_time;
		l.count = pd->counted_lost - g->lost - g->lost_samples;
		l.kind = LOST_SAMPLES;
		store_put_lost(pd->w, &l);
		g->lost_samples += l.count;
	}
	/* build-ids that came after their mappings (pipe format): symbolize with them */
	for (i = 0; i < g->st.nmaps && pd->nbids; i++) {
		struct state_mapping *m = &g->st.maps[i];
		const struct pd_build_id *b;
		if (!m->build_id_size && m->path && (b = pd_bid_find(pd, m->path))) {
			m->build_id_size = b->size;
			memcpy(m->build_id, b->id, sizeof(m->build_id));
		}
	}
	store_flush(pd->w, CHUNK_DATA);
	if (!pd->o->no_binaries) {
		g->symbols_session = pd_warm_finish(pd);
		ingest_put_symbols(g);
		store_flush(pd->w, CHUNK_SYMBOLS);
	}
	/* the end, as stax record ends a recording (docs/FORMAT.md): every
	 * META again, should the first chunk be damaged, then the times;
	 * the caller's store_writer_close() puts them before END */
	store_repeat_meta(pd->w);
	if (g->samples) {
		store_put_meta_u64(pd->w, "start_ns", g->first_time);
		store_put_meta_u64(pd->w, "end_ns", g->last_time);
	}
	pd->st->samples = g->samples;
	pd->st->bad = g->bad_records;
	pd->st->lost = g->lost + g->lost_samples;
	pd->st->first_time = g->first_time;
	pd->st->last_time = g->last_time;
	pd->st->bytes = pd->in.pos;
	if (pd->w->err)
		return pd_fail(pd, pd->in.pos, "cannot write the recording: %s", strerror(-pd->w->err));
	return 0;
}

static int run(struct pd *pd)
{
	const uint8_t *p;
	uint64_t magic, size;
	int ret;

	pd->progress_start = now_ns();
	p = pd_in_peek(&pd->in, 16);
	if (!p)
		return pd_fail(pd, 0, "too short for a perf.data file (%" PRIu64 " bytes)", pd_in_avail(&pd->in));
	memcpy(&magic, p, 8);
	memcpy(&size, p + 8, 8);
	if (magic == PERF_MAGIC2_SWAPPED)
		return pd_fail(pd, 0, "byte-swapped perf.data (recorded on a big-endian machine) is not"
			    " supported (run perf report or perf script on a machine of that kind)");
	if (magic == PERF_MAGIC1)
		return pd_fail(pd, 0, "perf.data version 1 is not supported (record with a newer perf)");
	if (magic != PERF_MAGIC2)
		return pd_fail(pd, 0, "not a perf.data file (bad magic)");
	if (size == PIPE_HEADER_SIZE) {
		pd->pipe = pd->st->pipe = true;
		pd_in_skip(&pd->in, PIPE_HEADER_SIZE);
		ret = pd_read_records(pd, UINT64_MAX);
	} else {
		ret = read_file(pd);
	}
	if (ret)
		return -1;
	return finish(pd);
}

static void release(struct pd *pd)
{
	size_t i;
	if (pd->progress_shown)
		note_progress_clear();
	for (i = 0; i < pd->nq; i++)
		rec_free(pd, pd->q[i].rec);
	free(pd->q);
	free(pd->qtmp);
	free(pd->runs);
	for (i = 0; i < pd->nattrs; i++)
		free(pd->attrs[i].name);
	free(pd->attrs);
	for (i = 0; i < pd->nbids; i++)
		free(pd->bids[i].path);
	free(pd->bids);
	hmap_release(&pd->ids);
	hmap_release(&pd->bid_index);
	free(pd->cmdline);
	free(pd->hostname);
	free(pd->arch);
	if (pd->warm)
		sym_session_free(pd_warm_finish(pd));
	if (pd->g) {
		ingest_release(pd->g);
		free(pd->g);
	}
	if (pd->dctx)
		ZSTD_freeDCtx(pd->dctx);
	buf_release(&pd->zbuf);
	free(pd->in.buf);
}

/* The event name outlives the session in st->event: keep the last one. */
static char *last_event;

static int import(struct pd *pd)
{
	static const struct perfdata_opts none;
	int ret;
	if (!pd->o)
		pd->o = &none;
	hmap_init(&pd->ids);
	hmap_init(&pd->bid_index);
	memset(pd->st, 0, sizeof(*pd->st));
	if (pd->err)
		pd->err->msg[0] = 0;
	ret = run(pd);
	free(last_event);
	last_event = pd->st->event ? xstrdup(pd->st->event) : NULL;
	pd->st->event = last_event;
	release(pd);
	return ret;
}

/* A session reading into w, as name, its stats in st. */
static void pd_begin(struct pd *pd, const char *name, struct store_writer *w, const struct perfdata_opts *o,
		     struct perfdata_stats *st, struct err *err)
{
	memset(pd, 0, sizeof(*pd));
	pd->name = name;
	pd->o = o;
	pd->st = st;
	pd->err = err;
	pd->w = w;
}

int perfdata_import_fd(int fd, const char *name, struct store_writer *w,
		       const struct perfdata_opts *o, struct perfdata_stats *st,
		       struct err *err)
{
	struct pd pd;
	struct stat sb;
	pd_begin(&pd, name, w, o, st, err);
	pd.in.fd = fd;
	if (!fstat(fd, &sb) && S_ISREG(sb.st_mode)) {
		pd.in.seekable = true;
		pd.in.size = (uint64_t)sb.st_size;
		pd.in.pos = (uint64_t)lseek(fd, 0, SEEK_CUR);
		if (pd.in.pos) /* read from the start whatever the caller did */
			pd_in_seek(&pd.in, 0);
	}
	pd.in.cap = 1 << 20;
	pd.in.buf = xmalloc(pd.in.cap);
	return import(&pd);
}

/* Page faults on a mapped file, and dropping pages again, cost half of
 * reading it; a second thread does both, touching the file at most
 * PREFAULT_AHEAD ahead of the reader and dropping what the reader is done
 * with (drop_to), so they overlap with parsing and unwinding. It touches
 * one byte per PREFAULT_STRIDE: a read fault maps the pages around it
 * that are in the page cache (64 KiB by default, fault_around_bytes), so
 * this takes a fault per 64 KiB instead of one per page, and costs 27 ms
 * a GB here where MADV_POPULATE_READ, which walks every page, cost 40-69. */
#define PREFAULT_AHEAD (32ull << 20)
#define PREFAULT_STRIDE (64ull << 10)
struct prefault {
	struct pd_in *in;
	atomic_bool stop;
};

static void *prefault_main(void *arg)
{
	struct prefault *pf = arg;
	struct pd_in *in = pf->in;
	const volatile uint8_t *mem = in->mem;
	uint64_t at = 0, dropped = 0;
	uint8_t sum = 0;
	while (!atomic_load_explicit(&pf->stop, memory_order_relaxed)) {
		/* acquire: a drop_to seen comes with a shared_pos at least as far */
		uint64_t to = atomic_load_explicit(&in->drop_to, memory_order_acquire);
		uint64_t pos = atomic_load_explicit(&in->shared_pos, memory_order_relaxed);
		uint64_t end = MIN(in->size, pos + PREFAULT_AHEAD);
		if (to > dropped && !madvise((void *)(in->mem + dropped), to - dropped, MADV_DONTNEED)) {
			dropped = to;
			atomic_store_explicit(&in->helper_dropped, to, memory_order_relaxed);
		}
		if (at < pos)   /* fell behind the reader: never map what it is done with */
			at = pos & ~(PREFAULT_STRIDE - 1);
		if (at >= end) {
			usleep(200);
			continue;
		}
		for (; at < end; at += PREFAULT_STRIDE)
			sum += mem[at];
	}
	return (void *)(uintptr_t)sum;
}

static int import_mem(const void *data, size_t size, bool mapped, const char *name,
		      struct store_writer *w, const struct perfdata_opts *o,
		      struct perfdata_stats *st, struct err *err)
{
	struct pd pd;
	pd_begin(&pd, name, w, o, st, err);
	pd.in.fd = -1;
	pd.in.mem = data;
	pd.in.size = size;
	pd.in.seekable = true;
	pd.in.mapped = mapped;
	if (mapped && size > PREFAULT_AHEAD && sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		struct prefault pf = { .in = &pd.in };
		pthread_t t;
		int ret;
		if (pthread_create(&t, NULL, prefault_main, &pf))
			return import(&pd);
		pd.in.helper = true;
		ret = import(&pd);
		atomic_store_explicit(&pf.stop, true, memory_order_relaxed);
		pthread_join(t, NULL);
		return ret;
	}
	return import(&pd);
}

int perfdata_import_mem(const void *data, size_t size, const char *name,
			struct store_writer *w, const struct perfdata_opts *o,
			struct perfdata_stats *st, struct err *err)
{
	return import_mem(data, size, false, name, w, o, st, err);
}

int perfdata_import(const char *path, struct store_writer *w,
		    const struct perfdata_opts *o, struct perfdata_stats *st,
		    struct err *err)
{
	int fd, ret;
	struct stat sb;
	void *map;
	if (!strcmp(path, "-"))
		return perfdata_import_fd(0, "standard input", w, o, st, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_set(err, -1, "cannot open %s: %s", path, strerror(errno));
		memset(st, 0, sizeof(*st));
		return -1;
	}
	/* A regular file is mapped: records are used in place, and the
	 * stack copies of DWARF samples are only touched where unwinding
	 * reads them (perf.data files are mostly those bytes). */
	if (!fstat(fd, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED) {
		close(fd);
		ret = import_mem(map, (size_t)sb.st_size, true, path, w, o, st, err);
		munmap(map, (size_t)sb.st_size);
		return ret;
	}
	ret = perfdata_import_fd(fd, path, w, o, st, err);
	close(fd);
	return ret;
}

bool perfdata_is_magic(const void *p, size_t n)
{
	uint64_t m;
	if (n < 8)
		return false;
	memcpy(&m, p, 8);
	return m == PERF_MAGIC2 || m == PERF_MAGIC2_SWAPPED;
}

bool perfdata_path_is_perfdata(const char *path)
{
	uint8_t b[8];
	int fd;
	ssize_t n;
	if (!strcmp(path, "-"))
		return true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, b, sizeof(b), 0);
	close(fd);
	return n == (ssize_t)sizeof(b) && perfdata_is_magic(b, sizeof(b));
}

int perfdata_to_memfd(const char *path, const struct perfdata_opts *o, struct err *err)
{
	struct store_writer w;
	struct perfdata_stats st;
	char proc[64];
	int fd = memfd_create("stax-perfdata", MFD_CLOEXEC), e;

	if (fd < 0) {
		err_set(err, -1, "cannot create an in-memory file: %s", strerror(errno));
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	e = store_writer_open(&w, proc);
	if (e) {
		err_set(err, -1, "cannot create an in-memory file: %s", strerror(-e));
		close(fd);
		return -1;
	}
	store_writer_fast(&w);
	if (perfdata_import(path, &w, o, &st, err)) {
		store_writer_close(&w);
		close(fd);
		return -1;
	}
	if (store_writer_close(&w)) {
		err_set(err, -1, "cannot write an in-memory file: %s", strerror(ENOMEM));
		close(fd);
		return -1;
	}
	return fd;
}
