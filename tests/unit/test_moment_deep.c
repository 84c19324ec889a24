/* test_moment_deep.c - stacks deeper than the copy, continued from words
 * the in-kernel reader (record/moment.h) read at the sample.
 *
 * tests/programs/build/moment_deep-nofp (no frame pointers) alternates
 * two call paths about 100 KiB deep whose frames look alike, every 300
 * us, and logs which ran when. Its cpu-clock samples (999 Hz, 32 KiB
 * stack copies, opened as the recorder opens them) are unwound by stax's
 * unwinder (unwind/unwind.h) as the recorder will:
 *   - with the words the reader read at the sample beyond the copy
 *     (unwind_input.words) and no later read: the sample's own stack;
 *   - when those do not reach the root (the thread's first samples, or
 *     a stack of another shape), once with today's later read from the
 *     process (read_stack), whose slots (unwind_input.slots_out) become
 *     the ranges the reader reads at the thread's next samples.
 * Checks, over the samples in leaf(): >= 98% are unwound to main from
 * the copy and the words read at the sample alone, and at most 1% of
 * those are under the path the log says did not run then. For
 * comparison (printed), the same samples unwound with a later read only
 * (today's stax): how many land under the wrong path. And the program's
 * cost per sample (bpf stats), printed.
 */
#include "test.h"
#include "momenttest.h"
#include "unwind/unwind.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <sys/uio.h>

#define PROG "tests/programs/build/moment_deep-nofp"
#define STACK 32768
#define MAX_SLOTS 4096

struct map {
	uint64_t start, end, pgoff;
	char path[256];
};

struct deep {
	pid_t pid;
	struct unwinder *u;
	struct map maps[64];
	size_t nmaps;
	uint64_t sym_lo[4], sym_hi[4]; /* leaf, down, path_a, path_b in the process */
	bool have_syms;
	struct { uint64_t t; char path; } *log;
	size_t nlog, logcap;
	/* the samples in leaf: time and verdicts */
	struct dsample { uint64_t t; char moment, late; uint8_t how; } *s;
	size_t ns, cap;
	uint64_t slots[MAX_SLOTS];
	uint64_t word_addr[MOMENT_MAX_RANGES * 8], word_val[MOMENT_MAX_RANGES * 8];
	size_t discoveries, words_frames;
};

enum { HOW_WORDS = 1, HOW_LATE };

static void load_maps(struct deep *d)
{
	char path[64], line[512];
	FILE *f;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)d->pid);
	d->nmaps = 0;
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f) && d->nmaps < 64) {
		unsigned long long lo, hi, off;
		char perm[8], file[256] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &lo, &hi, perm, &off, file) < 4 ||
		    perm[2] != 'x')
			continue;
		d->maps[d->nmaps].start = lo;
		d->maps[d->nmaps].end = hi;
		d->maps[d->nmaps].pgoff = off;
		snprintf(d->maps[d->nmaps].path, sizeof(d->maps[0].path), "%s", file);
		d->nmaps++;
	}
	fclose(f);
}

static bool find(void *arg, uint64_t pc, struct module_ref *out)
{
	struct deep *d = arg;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < d->nmaps; i++)
			if (pc >= d->maps[i].start && pc < d->maps[i].end) {
				memset(out, 0, sizeof(*out));
				out->path = d->maps[i].path;
				out->start = d->maps[i].start;
				out->end = d->maps[i].end;
				out->pgoff = d->maps[i].pgoff;
				return d->maps[i].path[0] != 0;
			}
		load_maps(d);
	}
	return false;
}

static long read_stack(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	struct deep *d = arg;
	struct iovec l = { buf, len }, r[16];
	uint64_t a = addr;
	int n = 0;
	ssize_t got;
	while (n < 16 && a < addr + len) {
		uint64_t next = (a | 4095) + 1 < addr + len ? (a | 4095) + 1 : addr + len;
		r[n].iov_base = (void *)(uintptr_t)a;
		r[n].iov_len = (size_t)(next - a);
		n++;
		a = next;
	}
	l.iov_len = (size_t)(a - addr);
	got = process_vm_readv(d->pid, &l, 1, r, (unsigned long)n, 0);
	return got < 0 ? -errno : got ? got : -EFAULT;
}

/* leaf, down, path_a and path_b in the process (the program is PIE: its
 * mapping at offset 0 is its base). */
static void load_syms(struct deep *d)
{
	static const char *const names[4] = { "leaf", "down", "path_a", "path_b" };
	uint64_t base = 0;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd;
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)d->pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "moment_deep-nofp") && !base) {
			unsigned long long lo, off;
			if (sscanf(line, "%llx-%*x %*s %llx", &lo, &off) == 2 && off == 0)
				base = lo;
		}
	fclose(f);
	if (!base || (fd = open(PROG, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym s;
			const char *n;
			if (!gelf_getsym(data, (int)k, &s) || !(n = elf_strptr(e, sh.sh_link, s.st_name)))
				continue;
			for (int i = 0; i < 4; i++)
				if (!strcmp(n, names[i])) {
					d->sym_lo[i] = base + s.st_value;
					d->sym_hi[i] = base + s.st_value + s.st_size;
				}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	d->have_syms = d->sym_lo[0] && d->sym_lo[1] && d->sym_lo[2] && d->sym_lo[3];
}

static int sym_of(const struct deep *d, uint64_t pc)
{
	for (int i = 0; i < 4; i++)
		if (pc >= d->sym_lo[i] && pc < d->sym_hi[i])
			return i;
	return -1;
}

/* perf_event_x86_regs numbering to DWARF numbering (as ingest.c) */
static const uint8_t perf_to_dwarf[24] = {
	UNW_RAX, UNW_RBX, UNW_RCX, UNW_RDX, UNW_RSI, UNW_RDI, UNW_RBP, UNW_RSP, UNW_RIP,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	UNW_R8, UNW_R9, UNW_R10, UNW_R11, UNW_R12, UNW_R13, UNW_R14, UNW_R15,
};

static uint64_t user_chain[512];

static void input_of(struct deep *d, const struct perf_sample *s, struct unwind_input *in)
{
	uint64_t ctx = 0;
	size_t k = 0, n = 0;
	memset(in, 0, sizeof(*in));
	for (int bit = 0; bit < 64; bit++) {
		uint64_t v;
		if (!(s->regs_mask & (1ull << bit)))
			continue;
		memcpy(&v, s->regs + 8 * k++, 8);
		if (bit < 24 && perf_to_dwarf[bit] != 0xff) {
			in->regs.r[perf_to_dwarf[bit]] = v;
			in->regs.valid |= 1u << perf_to_dwarf[bit];
		}
	}
	for (uint64_t i = 0; i < s->callchain_nr; i++) {
		uint64_t a = s->callchain[i];
		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		if (ctx == PERF_CONTEXT_USER && n < 512 && a >= 4096)
			user_chain[n++] = a;
	}
	in->stack = s->stack;
	in->stack_size = (size_t)s->stack_dyn_size;
	in->fp_chain = user_chain;
	in->fp_chain_len = n;
	in->find = find;
	in->find_arg = d;
}

/* The path of an unwound stack: 'a' or 'b' when it runs from leaf
 * through down to path_a or path_b and on to a root; 0 otherwise. */
static char path_of(const struct deep *d, const struct unwind_frame *f, const struct unwind_result *r)
{
	size_t i;
	int sym;
	if (r->quality != UNWIND_Q_COMPLETE || r->n < 3 || sym_of(d, f[0].pc) != 0)
		return 0;
	for (i = 1; i < r->n && sym_of(d, f[i].pc - 1) == 1; i++)
		;
	if (i >= r->n)
		return 0;
	sym = sym_of(d, f[i].pc - 1);
	return sym == 2 ? 'a' : sym == 3 ? 'b' : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The slots an unwind read beyond the copy, as ranges for the reader. */
static void ask_slots(struct moment *m, uint32_t tid, uint64_t *slots, size_t n)
{
	struct moment_range r[MOMENT_MAX_RANGES];
	size_t i, nr = 0;
	qsort(slots, n, sizeof(*slots), cmp_u64);
	for (i = 0; i < n; i++) {
		if (i && slots[i] == slots[i - 1])
			continue;
		if (nr && r[nr - 1].addr + r[nr - 1].len == slots[i] && r[nr - 1].len < MOMENT_MAX_RANGE) {
			r[nr - 1].len += 8;
			continue;
		}
		if (nr == MOMENT_MAX_RANGES)
			break;
		r[nr].addr = slots[i];
		r[nr].len = 8;
		r[nr].pad = 0;
		nr++;
	}
	moment_set_slots(m, tid, r, nr, 1, 0);
}

static struct moment *the_m;

static void on_sample(void *arg, const struct perf_sample *s, const struct moment_rec *rec)
{
	struct deep *d = arg;
	static struct unwind_frame frames[UNWIND_MAX_DEPTH];
	struct unwind_words words = { d->word_addr, d->word_val, 0 };
	struct unwind_input in;
	struct unwind_result r;
	struct dsample ds = { s->time, 0, 0, 0 };
	size_t i, nw = 0;

	if (s->pid != (uint32_t)d->pid || !s->regs_abi || !s->stack)
		return;
	if (!d->have_syms)
		load_syms(d);
	if (!d->have_syms || sym_of(d, mt_reg(s, MT_REG_IP)) != 0)
		return; /* only the samples in leaf */
	input_of(d, s, &in);
	/* the words read at the sample, sorted */
	struct moment_range_it it = { 0 };
	const struct moment_range_hdr *h;
	const uint8_t *data;
	while (rec && (h = moment_rec_next_range(rec, &it, &data))) {
		if (h->err)
			continue;
		for (uint32_t o = 0; o + 8 <= h->len && nw < MOMENT_MAX_RANGES * 8; o += 8) {
			d->word_addr[nw] = h->addr + o;
			memcpy(&d->word_val[nw], data + o, 8);
			nw++;
		}
	}
	/* (ranges come sorted and apart; sort pairs anyway by a simple pass) */
	for (i = 1; i < nw; i++)
		for (size_t j = i; j > 0 && d->word_addr[j - 1] > d->word_addr[j]; j--) {
			uint64_t ta = d->word_addr[j], tv = d->word_val[j];
			d->word_addr[j] = d->word_addr[j - 1];
			d->word_val[j] = d->word_val[j - 1];
			d->word_addr[j - 1] = ta;
			d->word_val[j - 1] = tv;
		}
	words.n = nw;
	in.words = &words;
	unwind_sample(d->u, UNWIND_MODE_HYBRID, &in, frames, UNWIND_MAX_DEPTH, &r);
	if (r.quality == UNWIND_Q_COMPLETE && r.word_frames && !r.read_frames) {
		ds.moment = path_of(d, frames, &r);
		ds.how = HOW_WORDS;
		d->words_frames += r.word_frames;
	} else {
		/* today's later read, which also finds the slots to ask for */
		in.words = NULL;
		in.read_stack = read_stack;
		in.read_deep = true;
		in.slots_out = d->slots;
		in.slots_max = MAX_SLOTS;
		in.slots_from = in.regs.r[UNW_RSP] + in.stack_size - 4096;
		unwind_sample(d->u, UNWIND_MODE_HYBRID, &in, frames, UNWIND_MAX_DEPTH, &r);
		if (r.quality == UNWIND_Q_COMPLETE && r.nslots) {
			ask_slots(the_m, s->tid, d->slots, r.nslots);
			d->discoveries++;
		}
		ds.how = HOW_LATE;
	}
	/* today's stax on the same sample: the later read alone */
	input_of(d, s, &in);
	in.read_stack = read_stack;
	in.read_deep = true;
	unwind_sample(d->u, UNWIND_MODE_HYBRID, &in, frames, UNWIND_MAX_DEPTH, &r);
	ds.late = path_of(d, frames, &r);
	GROW(d->s, d->cap, d->ns + 1);
	d->s[d->ns++] = ds;
}

static void on_tick(void *arg, struct mt_run *run)
{
	(void)arg;
	(void)run;
}

/* The path that ran at t by the program's log ('a', 'b'), or 0 within
 * 20 us after a round started (the switch itself). */
static char truth(const struct deep *d, uint64_t t)
{
	size_t lo = 0, hi = d->nlog;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->log[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || t - d->log[lo - 1].t < 20000)
		return 0;
	return d->log[lo - 1].path;
}

int main(int argc, char **argv)
{
	char logp[] = "/tmp/stax-moment-deep-XXXXXX", secs[16];
	char *av[] = { PROG, secs, logp, NULL };
	struct moment_opts o = { 0 };
	struct moment *m = NULL;
	struct moment_stats st;
	struct err e = { 0 };
	struct mt_run run;
	struct deep d;
	size_t i, leaf = 0, words = 0, right = 0, wrong = 0, late_wrong = 0, late_right = 0;
	unsigned long long t;
	char p;
	FILE *f;
	int fd, ret, status;

	snprintf(secs, sizeof(secs), "%s", argc > 1 ? argv[1] : "3");
	if (access(PROG, X_OK)) {
		SKIP("moment deep", "tests/programs/build/moment_deep-nofp is not built (make programs)");
		TEST_DONE();
	}
	o.stack_user = STACK;
	ret = moment_open(&m, &o, &e);
	if (ret == -EPERM || ret == -ENOENT || ret == -EOPNOTSUPP) {
		SKIP("moment deep: the in-kernel reader", e.msg);
		TEST_DONE();
	}
	CHECK(ret == 0, "moment deep: the in-kernel reader loads");
	if (ret) {
		printf("# %s\n", e.msg);
		TEST_DONE();
	}
	the_m = m;
	moment_count_time(m);
	if ((fd = mkstemp(logp)) < 0) {
		CHECK(0, "moment deep: a log file");
		TEST_DONE();
	}
	close(fd);
	memset(&d, 0, sizeof(d));
	d.u = unwinder_new();
	if (mt_start(&run, m, av, 999, STACK, false, &e)) {
		CHECK(0, "moment deep: start the program");
		printf("# %s\n", e.msg);
		TEST_DONE();
	}
	d.pid = run.child.pid;
	status = mt_wait(&run, m, on_sample, on_tick, &d);
	moment_get_stats(m, &st);
	if ((f = fopen(logp, "re"))) {
		while (fscanf(f, "%llu %c", &t, &p) == 2) {
			GROW(d.log, d.logcap, d.nlog + 1);
			d.log[d.nlog].t = t;
			d.log[d.nlog++].path = p;
		}
		fclose(f);
	}
	unlink(logp);
	for (i = 0; i < d.ns; i++) {
		char want = truth(&d, d.s[i].t);
		if (!want)
			continue;
		leaf++;
		if (d.s[i].how == HOW_WORDS && d.s[i].moment) {
			words++;
			right += d.s[i].moment == want;
			wrong += d.s[i].moment != want;
		}
		late_right += d.s[i].late == want;
		late_wrong += d.s[i].late && d.s[i].late != want;
	}
	printf("# %zu samples in leaf: %zu unwound to main from the copy and the words read at the sample"
	       " (%zu right path, %zu wrong); %zu slot lists asked; today's later read: %zu right, %zu wrong"
	       " path; %.0f ns per program run (%llu runs), %llu records, %llu unmatched, %llu dropped\n",
	       leaf, words, right, wrong, d.discoveries, late_right, late_wrong,
	       st.run_cnt ? (double)st.run_ns / (double)st.run_cnt : 0.0, (unsigned long long)st.run_cnt,
	       (unsigned long long)st.read, (unsigned long long)st.unmatched, (unsigned long long)st.dropped);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && d.nlog > 1000, "moment deep: the program ran");
	CHECK(leaf >= 500 && words >= 0.98 * (double)leaf,
	      "moment deep: >= 98% of the leaf's samples unwound to main from what was read at the sample");
	CHECK(words && wrong <= 0.01 * (double)words,
	      "moment deep: at most 1% of them under the path that was not running");
	unwinder_free(d.u);
	free(d.s);
	free(d.log);
	moment_free(m);
	TEST_DONE();
}
