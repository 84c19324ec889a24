/* bench_replay.c - the warm unwinder on the stacks of a real recording
 * (not a test).
 *
 * Build from the repository root after make (bench/run.sh does this):
 *   cc -std=gnu11 -O2 -g -Isrc -D_GNU_SOURCE [-DHAVE_LIBUNWIND] \
 *      -o /tmp/bench_replay bench/bench_replay.c OBJECTS \
 *      -Wl,--wrap=unwind_sample -ldw -lelf -lcapstone -lzstd -lz -llzma \
 *      -liberty -lmicrohttpd -lpthread -ldl [-lunwind-x86_64 -lunwind]
 * where OBJECTS are make's objects of src/ but main.o and cmd/ (LIBOBJ in
 * the Makefile), so the unwinder timed is the one ./stax runs.
 *   /tmp/bench_replay [-t SECONDS] PERF.DATA
 *
 * PERF.DATA is a `perf record --call-graph dwarf` recording. It is read
 * with stax's own importer (perfdata_import, as `stax import` does); the
 * linker routes the importer's calls to unwind_sample() through
 * __wrap_unwind_sample() below, which keeps a copy of each sample's
 * unwind_input (registers, stack copy, kernel chain) and of every module
 * the importer's find callback answered (from the recording's MMAP2
 * records, at the sample's time), and lets the import go on unchanged.
 *
 * Then, with a new unwinder (the import's tables are not reused):
 *   cold  one pass over every sample: builds the tables of the modules
 *         it meets (utable_load) and checks that each sample unwinds to
 *         exactly the frames the import got;
 *   warm  passes over every sample, again and again for SECONDS (at least
 *         5 passes), each pass timed alone: only unwind_sample() calls,
 *         the module lookup answered from the recording's mappings by
 *         state_find() as the importer does. Prints the median pass.
 * The replay calls the unwinder as __real_unwind_sample (the unwinder
 * itself; in this program the plain name is the wrapper).
 *
 * With -DHAVE_LIBUNWIND it replays the same samples through libunwind's
 * remote interface, as perf's libunwind unwinder does: one address space
 * per process (unw_create_addr_space, caching UNW_CACHE_GLOBAL), and per
 * sample unw_init_remote() then unw_step() to the end; memory reads come
 * from the stack copy and, elsewhere, from the mapped ELF files; unwind
 * info from each file's .eh_frame_hdr through
 * dwarf_search_unwind_table(). One untimed pass warms its caches; the
 * timed passes are as above. It also counts the samples where libunwind
 * found exactly stax's frames.
 *
 * Output, one fact per line (bench/run.sh reads them):
 *   recording: N samples of P processes, M modules, J with JIT tables, stack copies X MiB
 *   replay: N samples, F frames (X frames/sample), complete C (Y%), same as the import S
 *   cold: first pass X ms (T tables built in Y ms, R rows)
 *   warm: X ns/frame, Y ns/sample (median of K passes of N samples; min A, max B ns/frame)
 *   libunwind: X ns/frame, Y ns/sample, Z frames/sample, same frames as stax S (P%) (median of K passes)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util.h"
#include "ingest/ingest.h"
#include "source/perfdata.h"
#include "state/state.h"
#include "unwind/unwind.h"

#ifdef HAVE_LIBUNWIND
#include <libunwind.h>
/* Not in libunwind's public headers; perf declares it the same way. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)
#endif

void __real_unwind_sample(struct unwinder *u, enum unwind_mode mode,
			  const struct unwind_input *in, struct unwind_frame *frames,
			  size_t max, struct unwind_result *res);
void __wrap_unwind_sample(struct unwinder *u, enum unwind_mode mode,
			  const struct unwind_input *in, struct unwind_frame *frames,
			  size_t max, struct unwind_result *res);

/* ---- what the import handed the unwinder ---- */

struct proc;

struct rsample {
	struct unwind_input in;   /* own copies of the stack and chain */
	enum unwind_mode mode;
	size_t max;
	struct proc *proc;
	size_t n;                 /* the import's result */
	enum unwind_quality quality;
	uint64_t hash;            /* of its frames */
};

/* An ELF file mapped for libunwind's reads. */
struct image {
	const uint8_t *map;
	size_t size;
	const Elf64_Phdr *ph;
	size_t nph;
	uint64_t eh_hdr;          /* p_vaddr of PT_GNU_EH_FRAME, 0: none */
};

struct module {
	uint64_t start, end, pgoff, bias;
	char *path;
	uint8_t bid[20];
	size_t bid_size;
	struct image *img;        /* NULL: not loaded, or not an ELF file */
	bool img_tried;
};

struct proc {
	uint32_t pid;
	struct module *mods;
	size_t nmods, cap;
#ifdef HAVE_LIBUNWIND
	unw_addr_space_t as;
#endif
};

static struct rsample *samples;
static size_t nsamples, capsamples;
static struct proc *procs;
static size_t nprocs, capprocs;
static size_t njit;               /* samples the import could give JIT tables */
static struct state replay_state;

static struct proc *proc_get(uint32_t pid)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	GROW(procs, capprocs, nprocs + 1);
	memset(&procs[nprocs], 0, sizeof(procs[nprocs]));
	procs[nprocs].pid = pid;
	return &procs[nprocs++];
}

static uint64_t frames_hash(const struct unwind_frame *f, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h = (h ^ f[i].pc) * 1099511628211ull;
		h = (h ^ f[i].flags) * 1099511628211ull;
	}
	return h;
}

/* The importer's callbacks, called through these so that every module
 * they answer is kept (find_arg is shared by the three). */
struct tap {
	const struct unwind_input *in;
	struct proc *proc;
};

static bool tap_find(void *arg, uint64_t pc, struct module_ref *out)
{
	struct tap *t = arg;
	struct proc *p = t->proc;
	if (!t->in->find(t->in->find_arg, pc, out))
		return false;
	for (size_t i = 0; i < p->nmods; i++) {
		const struct module *m = &p->mods[i];
		if (m->start == out->start && m->end == out->end && m->pgoff == out->pgoff &&
		    !strcmp(m->path, out->path))
			return true;
	}
	GROW(p->mods, p->cap, p->nmods + 1);
	struct module *m = &p->mods[p->nmods++];
	memset(m, 0, sizeof(*m));
	m->start = out->start;
	m->end = out->end;
	m->pgoff = out->pgoff;
	m->path = xstrdup(out->path);
	if (out->build_id && out->build_id_size && out->build_id_size <= sizeof(m->bid)) {
		memcpy(m->bid, out->build_id, out->build_id_size);
		m->bid_size = out->build_id_size;
	}
	return true;
}

static bool tap_read_code(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	struct tap *t = arg;
	return t->in->read_code(t->in->find_arg, addr, buf, len);
}

static const struct utable *tap_jit_table(void *arg, uint64_t pc)
{
	struct tap *t = arg;
	return t->in->jit_table(t->in->find_arg, pc);
}

void __wrap_unwind_sample(struct unwinder *u, enum unwind_mode mode,
			  const struct unwind_input *in, struct unwind_frame *frames,
			  size_t max, struct unwind_result *res)
{
	/* the importer's find_arg is its struct ingest (ingest/ingest.c) */
	const struct ingest *g = in->find_arg;
	struct tap t = { in, proc_get(g->cur_pid) };
	struct unwind_input tin = *in;
	struct rsample *s;
	uint8_t *stack = NULL;
	uint64_t *chain = NULL;

	tin.find = in->find ? tap_find : NULL;
	tin.read_code = in->read_code ? tap_read_code : NULL;
	tin.jit_table = in->jit_table ? tap_jit_table : NULL;
	tin.find_arg = &t;
	__real_unwind_sample(u, mode, &tin, frames, max, res);

	if (in->stack && in->stack_size) {
		stack = xmalloc(in->stack_size);
		memcpy(stack, in->stack, in->stack_size);
	}
	if (in->fp_chain_len) {
		chain = xmalloc(in->fp_chain_len * sizeof(*chain));
		memcpy(chain, in->fp_chain, in->fp_chain_len * sizeof(*chain));
	}
	GROW(samples, capsamples, nsamples + 1);
	s = &samples[nsamples++];
	memset(s, 0, sizeof(*s));
	s->in.regs = in->regs;
	s->in.stack = stack;
	s->in.stack_size = stack ? in->stack_size : 0;
	s->in.fp_chain = chain;
	s->in.fp_chain_len = in->fp_chain_len;
	s->mode = mode;
	s->max = max;
	s->proc = t.proc;
	s->n = res->n;
	s->quality = res->quality;
	s->hash = frames_hash(frames, res->n);
	if (in->jit_table)
		njit++;
}

/* ---- the replay ---- */

/* The importer's find (ingest/ingest.c find_module) on the mappings it
 * answered with. find_arg is the sample's struct proc. */
static bool replay_find(void *arg, uint64_t pc, struct module_ref *out)
{
	const struct proc *p = arg;
	return ingest_module_of(state_mapping(&replay_state, state_find(&replay_state, p->pid, pc)), out);
}

static void replay_prepare(void)
{
	state_init(&replay_state);
	for (size_t i = 0; i < nprocs; i++)
		for (size_t k = 0; k < procs[i].nmods; k++) {
			const struct module *m = &procs[i].mods[k];
			struct state_mapping sm;
			memset(&sm, 0, sizeof(sm));
			sm.start = m->start;
			sm.end = m->end;
			sm.pgoff = m->pgoff;
			sm.path = m->path;
			sm.build_id_size = (uint8_t)m->bid_size;
			memcpy(sm.build_id, m->bid, sizeof(sm.build_id));
			state_add_mapping(&replay_state, procs[i].pid, &sm);
		}
	/* read_code is left out: for a recording (not live) the importer's
	 * answers no read, which the unwinder treats as no callback. */
	/* the mappings do not change during the replay: one version of each
	 * process's address space (as the importer's state_gen() gives) */
	for (size_t i = 0; i < nsamples; i++) {
		samples[i].in.find = replay_find;
		samples[i].in.find_arg = samples[i].proc;
		samples[i].in.space = state_gen(&replay_state, samples[i].proc->pid);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Passes over every sample for about secs (at least 5, at most 10000);
 * their times in ns, sorted, in *out; returns how many. */
typedef uint64_t (*pass_fn)(void);

static size_t timed_passes(pass_fn pass, double secs, double **out)
{
	size_t n = 0, cap = 0;
	double *t = NULL, total = 0;
	while (n < 5 || (total < secs * 1e9 && n < 10000)) {
		uint64_t t0 = now_ns();
		pass();
		double d = (double)(now_ns() - t0);
		GROW(t, cap, n + 1);
		t[n++] = d;
		total += d;
	}
	qsort(t, n, sizeof(*t), cmp_double);
	*out = t;
	return n;
}

static struct unwinder *unw;
static struct unwind_frame frames[UNWIND_MAX_DEPTH];
static uint64_t *stax_pcs;        /* stax's frames of every sample, for libunwind */
static size_t *stax_off, stax_cap;

static uint64_t stax_pass(void)
{
	uint64_t nf = 0;
	struct unwind_result res;
	for (size_t i = 0; i < nsamples; i++) {
		const struct rsample *s = &samples[i];
		__real_unwind_sample(unw, s->mode, &s->in, frames, s->max, &res);
		nf += res.n;
	}
	return nf;
}

/* ---- libunwind, remote, on the same samples ---- */

#ifdef HAVE_LIBUNWIND
static struct image *image_open(const char *path)
{
	struct image *img;
	const Elf64_Ehdr *eh;
	struct stat st;
	void *map;
	int fd;

	if (path[0] != '/' || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*eh) ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	close(fd);
	eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > (uint64_t)st.st_size ||
	    (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > (uint64_t)st.st_size - eh->e_phoff) {
		munmap(map, (size_t)st.st_size);
		return NULL;
	}
	img = xcalloc(1, sizeof(*img));
	img->map = map;
	img->size = (size_t)st.st_size;
	img->ph = (const Elf64_Phdr *)(img->map + eh->e_phoff);
	img->nph = eh->e_phnum;
	for (size_t i = 0; i < img->nph; i++)
		if (img->ph[i].p_type == PT_GNU_EH_FRAME)
			img->eh_hdr = img->ph[i].p_vaddr;
	return img;
}

/* Load m's file once; its bias from the PT_LOAD holding m's file offset. */
static struct image *module_image(struct module *m)
{
	if (m->img_tried)
		return m->img;
	m->img_tried = true;
	m->img = image_open(m->path);
	if (!m->img)
		return NULL;
	for (size_t i = 0; i < m->img->nph; i++) {
		const Elf64_Phdr *ph = &m->img->ph[i];
		uint64_t lo = ph->p_offset & ~(ph->p_align > 1 ? ph->p_align - 1 : 0);
		if (ph->p_type == PT_LOAD && m->pgoff >= lo && m->pgoff < ph->p_offset + ph->p_filesz) {
			m->bias = m->start - m->pgoff - (ph->p_vaddr - ph->p_offset);
			return m->img;
		}
	}
	m->img = NULL; /* no segment holds the mapping: do not guess */
	return NULL;
}

/* Read 8 bytes at the process address addr from the file mapped there
 * (any of its PT_LOAD segments, like a read of the process's memory). */
static bool module_read(struct proc *p, uint64_t addr, uint64_t *v)
{
	for (size_t k = 0; k < p->nmods; k++) {
		struct module *m = &p->mods[k];
		struct image *img = module_image(m);
		if (!img || addr < m->bias)
			continue;
		uint64_t va = addr - m->bias;
		for (size_t i = 0; i < img->nph; i++) {
			const Elf64_Phdr *ph = &img->ph[i];
			if (ph->p_type != PT_LOAD || va < ph->p_vaddr || va - ph->p_vaddr + 8 > ph->p_filesz)
				continue;
			uint64_t off = va - ph->p_vaddr + ph->p_offset;
			if (off + 8 > img->size)
				return false;
			memcpy(v, img->map + off, 8);
			return true;
		}
	}
	return false;
}

static struct module *module_at(struct proc *p, uint64_t pc)
{
	for (size_t k = 0; k < p->nmods; k++)
		if (pc >= p->mods[k].start && pc < p->mods[k].end)
			return &p->mods[k];
	return NULL;
}

static int lu_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	const struct rsample *s = arg;
	struct module *m = module_at(s->proc, ip);
	struct image *img = m ? module_image(m) : NULL;
	uint64_t hdr, fde_count;
	unw_dyn_info_t di;
	static const uint8_t fmt_size[16] = { 8, 0, 2, 4, 8, 0, 0, 0, 0, 0, 2, 4, 8 };
	uint8_t h[4];
	uint64_t w;

	if (!img || !img->eh_hdr)
		return -UNW_ENOINFO;
	hdr = m->bias + img->eh_hdr;
	/* version, eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (!module_read(s->proc, hdr, &w))
		return -UNW_ENOINFO;
	memcpy(h, &w, 4);
	if (h[0] != 1 || h[2] != 0x03 /* udata4 */ || h[3] != 0x3b /* datarel sdata4 */ ||
	    !fmt_size[h[1] & 15])
		return -UNW_ENOINFO;
	if (!module_read(s->proc, hdr + 4 + fmt_size[h[1] & 15], &w))
		return -UNW_ENOINFO;
	fde_count = (uint32_t)w;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = hdr;
	di.u.rti.table_data = hdr + 4 + fmt_size[h[1] & 15] + 4;
	di.u.rti.table_len = fde_count * 8 / sizeof(unw_word_t);
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

static void lu_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int lu_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dil, void *arg)
{
	return -UNW_ENOINFO;
}

static int lu_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
			 void *arg)
{
	const struct rsample *s = arg;
	uint64_t sp = s->in.regs.r[UNW_RSP], v;

	if (write)
		return -UNW_EINVAL;
	if (addr >= sp && s->in.stack_size >= 8 && addr - sp <= s->in.stack_size - 8) {
		memcpy(valp, s->in.stack + (addr - sp), 8);
		return 0;
	}
	if (!module_read(s->proc, addr, &v))
		return -UNW_EINVAL;
	*valp = v;
	return 0;
}

static int lu_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
			 void *arg)
{
	const struct rsample *s = arg;
	/* libunwind's x86-64 numbers are the DWARF ones, as stax's */
	if (write || reg < 0 || reg >= UNW_NREGS || !(s->in.regs.valid & (1ull << reg)))
		return -UNW_EBADREG;
	*valp = s->in.regs.r[reg];
	return 0;
}

static int lu_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			   void *arg)
{
	return -UNW_EINVAL;
}

static int lu_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t lu_accessors = {
	.find_proc_info = lu_find_proc_info,
	.put_unwind_info = lu_put_unwind_info,
	.get_dyn_info_list_addr = lu_get_dyn_info_list_addr,
	.access_mem = lu_access_mem,
	.access_reg = lu_access_reg,
	.access_fpreg = lu_access_fpreg,
	.resume = lu_resume,
};

static size_t lu_same;            /* samples with stax's frames exactly */

/* One sample; its frames into pcs (at most max). */
static size_t lu_unwind(struct rsample *s, uint64_t *pcs, size_t max)
{
	unw_cursor_t c;
	unw_word_t ip;
	size_t n = 0;

	if (unw_init_remote(&c, s->proc->as, s) < 0)
		return 0;
	do {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		pcs[n++] = ip;
	} while (n < max && unw_step(&c) > 0);
	return n;
}

static uint64_t lu_pass(void)
{
	static uint64_t pcs[UNWIND_MAX_DEPTH];
	uint64_t nf = 0;
	for (size_t i = 0; i < nsamples; i++)
		nf += lu_unwind(&samples[i], pcs, MIN(samples[i].max, (size_t)UNWIND_MAX_DEPTH));
	return nf;
}

/* The untimed first pass: warms libunwind's caches, compares with stax. */
static uint64_t lu_first_pass(void)
{
	static uint64_t pcs[UNWIND_MAX_DEPTH];
	uint64_t nf = 0;
	for (size_t i = 0; i < nprocs; i++) {
		procs[i].as = unw_create_addr_space(&lu_accessors, 0);
		if (!procs[i].as)
			die("unw_create_addr_space failed");
		unw_set_caching_policy(procs[i].as, UNW_CACHE_GLOBAL);
	}
	lu_same = 0;
	for (size_t i = 0; i < nsamples; i++) {
		size_t n = lu_unwind(&samples[i], pcs, MIN(samples[i].max, (size_t)UNWIND_MAX_DEPTH));
		size_t sn = stax_off[i + 1] - stax_off[i];
		nf += n;
		if (n == sn && !memcmp(pcs, stax_pcs + stax_off[i], n * sizeof(*pcs)))
			lu_same++;
	}
	return nf;
}
#endif

int main(int argc, char **argv)
{
	struct perfdata_opts o = { .quiet = true };
	struct unwind_result res;
	struct unwind_stats st;
	double secs = 1, *t;
	uint64_t nf = 0, t0, cold, bytes = 0;
	size_t complete = 0, same = 0, k, i;
	struct err err = { 0 };
	int fd, opt;

	while ((opt = getopt(argc, argv, "t:")) != -1) {
		if (opt != 't' || (secs = atof(optarg)) <= 0)
			die("usage: bench_replay [-t SECONDS] PERF.DATA");
	}
	if (optind + 1 != argc)
		die("usage: bench_replay [-t SECONDS] PERF.DATA");

	fd = perfdata_to_memfd(argv[optind], &o, &err);
	if (fd < 0)
		die("cannot import %s: %s", argv[optind], err.msg);
	close(fd);
	if (!nsamples)
		die("%s: no sample has registers and a stack copy (record with --call-graph dwarf)",
		    argv[optind]);
	for (i = k = 0; i < nprocs; i++)
		k += procs[i].nmods;
	for (i = 0; i < nsamples; i++)
		bytes += samples[i].in.stack_size;
	printf("recording: %zu samples of %zu processes, %zu modules, %zu with JIT tables,"
	       " stack copies %.1f MiB\n", nsamples, nprocs, k, njit, bytes / 1048576.0);

	replay_prepare();
	unw = unwinder_new();
	stax_off = xcalloc(nsamples + 1, sizeof(*stax_off));
	t0 = now_ns();
	for (i = 0; i < nsamples; i++) {
		const struct rsample *s = &samples[i];
		__real_unwind_sample(unw, s->mode, &s->in, frames, s->max, &res);
		nf += res.n;
		complete += res.quality == UNWIND_Q_COMPLETE;
		same += res.n == s->n && frames_hash(frames, res.n) == s->hash;
		stax_off[i + 1] = stax_off[i] + res.n;
		GROW(stax_pcs, stax_cap, stax_off[i + 1]);
		for (k = 0; k < res.n; k++)
			stax_pcs[stax_off[i] + k] = frames[k].pc;
	}
	cold = now_ns() - t0;
	unwind_get_stats(unw, &st);
	printf("replay: %zu samples, %" PRIu64 " frames (%.2f frames/sample), complete %zu (%.1f%%),"
	       " same as the import %zu\n", nsamples, nf, (double)nf / nsamples, complete,
	       100.0 * complete / nsamples, same);
	printf("cold: first pass %.2f ms (%zu tables built in %.2f ms, %zu rows)\n",
	       cold / 1e6, st.modules, st.build_ns / 1e6, st.rows);

	k = timed_passes(stax_pass, secs, &t);
	printf("warm: %.2f ns/frame, %.1f ns/sample (median of %zu passes of %zu samples;"
	       " min %.2f, max %.2f ns/frame)\n", t[k / 2] / nf, t[k / 2] / nsamples, k, nsamples,
	       t[0] / nf, t[k - 1] / nf);
	free(t);
#ifdef HAVE_LIBUNWIND
	{
		uint64_t lnf = lu_first_pass();
		if (lnf) {
			k = timed_passes(lu_pass, secs, &t);
			printf("libunwind: %.2f ns/frame, %.1f ns/sample, %.2f frames/sample, same frames"
			       " as stax %zu (%.1f%%) (median of %zu passes)\n", t[k / 2] / lnf,
			       t[k / 2] / nsamples, (double)lnf / nsamples, lu_same,
			       100.0 * lu_same / nsamples, k);
			free(t);
		} else {
			printf("libunwind: no frames\n");
		}
	}
#endif
	unwinder_free(unw);
	return same == nsamples ? 0 : 1;
}
