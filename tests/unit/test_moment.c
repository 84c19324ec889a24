/* stax-test: seconds=10 */
/* test_moment.c - the in-kernel reader (record/moment.h) on real CPython
 * 3.11, 3.12 and 3.13 processes (pyenv's, built without frame pointers,
 * run without -X perf), sampled by real cpu-clock events opened as the
 * recorder opens them.
 *
 * The program: two functions, heavy() and light(), call work(200) and
 * work(100), where work() calls into C in short calls (json.dumps,
 * re.findall) in a loop: heavy() does 2/3 of the work. It prints
 * time.monotonic_ns() (CLOCK_MONOTONIC, the events' clock) when its
 * loop starts and ends.
 *
 * User space does what the recorder will: registers the process with
 * its interpreter's layout once it has exec'd, fills a thread's
 * PyThreadState from the interpreter's thread list when a record says
 * it is unknown, joins each sample with its record (tid, time, user ip
 * and sp), and names code objects by reading them from the process,
 * cached by address and the stamp read at the sample (a mismatch is
 * not named).
 *
 * Checks, over the main thread's samples inside the loop: >= 98% have a
 * record whose chain was read to its end, every frame named, rooted at
 * <module>; heavy's share of heavy + light within 0.04 of 2/3; the
 * innermost frame of work() is on a line of its loop (co_linetable and
 * the instruction offset read at the sample, symbol/pyline.h); every
 * chain ends with its entry into the interpreter. Off the CPU (3.12,
 * with the switch-out event, as --off-cpu opens it): a program sleeping
 * in napper() has >= 98% of its switch-outs read with their chain
 * (innermost napper, rooted at <module>), their user registers taken
 * in the kernel. Two threads on the CPU at once (3.12, 3.13): one in
 * zlib.compress without the GIL, one in Python: each one's samples have
 * its own chain (the tstate is found per thread, not the GIL holder's).
 * And the program's cost per sample (bpf stats), printed.
 */
#include "test.h"
#include "momenttest.h"
#include "ingest/pyframes.h"
#include "lib/hash.h"
#include "symbol/pyline.h"

#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/uio.h>

static const char script[] =
	"import json, re, sys, time\n"
	"data = {'a': list(range(20)), 'b': 'x' * 50, 'c': {'d': 1.5, 'e': [True, None]}}\n"
	"text = 'alpha beta gamma 123 delta 456 ' * 4\n"
	"pat = re.compile(r'[a-z]+|[0-9]+')\n"
	"def work(n):\n"
	"    s = 0\n"
	"    for i in range(n):\n"
	"        s += len(json.dumps(data))\n"           /* line 8 (work: 5-10) */
	"        s += len(pat.findall(text))\n"          /* line 9 */
	"    return s\n"
	"def heavy():\n"
	"    return work(200)\n"
	"def light():\n"
	"    return work(100)\n"
	"out = open(sys.argv[2], 'w')\n"
	"end = time.monotonic() + float(sys.argv[1])\n"
	"out.write('%d\\n' % time.monotonic_ns())\n"
	"while time.monotonic() < end:\n"
	"    heavy()\n"
	"    light()\n"
	"out.write('%d\\n' % time.monotonic_ns())\n"
	"out.close()\n";

/* Off the CPU: napper() sleeps 1 ms at a time under nap() (the chain at
 * each switch-out is napper <- nap <- <module>). */
static const char sleeper[] =
	"import sys, time\n"
	"def napper():\n"
	"    time.sleep(0.001)\n"
	"def nap(n):\n"
	"    for i in range(n):\n"
	"        napper()\n"
	"out = open(sys.argv[2], 'w')\n"
	"end = time.monotonic() + float(sys.argv[1])\n"
	"out.write('%d\\n' % time.monotonic_ns())\n"
	"while time.monotonic() < end:\n"
	"    nap(10)\n"
	"out.write('%d\\n' % time.monotonic_ns())\n"
	"out.close()\n";

/* Two threads on the CPU at once: squeeze() (a thread of its own) in
 * zlib.compress, which runs without the GIL, while the main thread runs
 * spin(): a sample of either has its own thread's chain, whichever
 * holds the GIL. The samples counted start 0.1 s after the thread: a
 * new thread's first samples, before the recorder has found its thread
 * state and told the reader, have no chain (about as long as the
 * recorder takes to read its rings: milliseconds). */
static const char threads[] =
	"import sys, time, threading, zlib, json\n"
	"blob = bytes(range(256)) * 2048\n"
	"def squeeze():\n"
	"    n = 0\n"
	"    while time.monotonic() < end:\n"
	"        n += len(zlib.compress(blob, 6))\n"
	"def spin():\n"
	"    s = 0\n"
	"    while time.monotonic() < end:\n"
	"        s += len(json.dumps([1, 2.5, 'x']))\n"
	"out = open(sys.argv[2], 'w')\n"
	"end = time.monotonic() + float(sys.argv[1]) + 0.1\n"
	"t = threading.Thread(target=squeeze)\n"
	"t.start()\n"
	"time.sleep(0.1)\n"
	"out.write('%d\\n' % time.monotonic_ns())\n"
	"spin()\n"
	"t.join()\n"
	"out.write('%d\\n' % time.monotonic_ns())\n"
	"out.close()\n";

enum mode { M_WORK, M_OFFCPU, M_THREADS };

/* The interpreter of a process, as the test finds it. */
struct py {
	pid_t pid;
	bool registered, bad;
	uint64_t runtime, code_type;
	struct pyf_layout l;
	struct moment_pyproc pp;
	struct moment *m;
	/* names of code objects by (address, stamp) */
	struct hmap names;
	char **name;
	uint32_t *firstline;
	uint8_t **table;
	size_t *tsize;
	size_t nnames, namecap;
	/* the main thread's samples: time and verdict (enum verdict) */
	uint64_t *time;
	uint8_t *verdict;
	size_t nsamples, samplecap;
	uint64_t t0, t1;
	size_t stale_names, lines_ok, lines_all, tstate_asks, entries_bad;
	enum mode mode;       /* M_OFFCPU: the switch-out samples only; M_THREADS:
			       * every thread's */
	bool *other;          /* per sample: of a thread other than the main one */
	char first_bad[256], bad_line[64];
};

enum verdict { V_NONE, V_BAD, V_HEAVY, V_LIGHT, V_OTHER, V_NAPPER, V_SQUEEZE, V_SPIN };

static int rd(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct py *p = arg;
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(p->pid, &l, 1, &r, 1, 0);
	return n == (ssize_t)len ? 0 : -EFAULT;
}

/* _PyRuntime, PyCode_Type and Py_Version of the interpreter mapped from
 * path at bias; false when it is not one. */
static bool elf_syms(const char *path, uint64_t bias, struct py *p, uint64_t *version)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *e;
	Elf_Scn *scn = NULL;
	bool ok = false;

	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym s;
			const char *n;
			if (!gelf_getsym(d, (int)k, &s) || s.st_shndx == SHN_UNDEF ||
			    !(n = elf_strptr(e, sh.sh_link, s.st_name)))
				continue;
			if (!strcmp(n, "_PyRuntime"))
				p->runtime = s.st_value + bias;
			else if (!strcmp(n, "PyCode_Type"))
				p->code_type = s.st_value + bias;
			else if (!strcmp(n, "Py_Version"))
				*version = s.st_value + bias;
		}
	}
	ok = p->runtime && p->code_type && *version;
	if (e)
		elf_end(e);
	close(fd);
	return ok;
}

/* Register the process once it runs the interpreter: its mappings name
 * libpython3.x or python3.x (pyenv's are shared: libpython). */
static void py_register(struct py *p)
{
	char path[64], line[1024];
	FILE *f;
	uint64_t ver_addr = 0;
	uint32_t ver;

	if (p->registered || p->bad)
		return;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char file[900];
		const char *base;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %899s", &lo, &hi, &off, file) != 4 || off)
			continue;
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		if (strncmp(base, "libpython3.", 11))
			continue;
		if (elf_syms(file, lo, p, &ver_addr))
			break;
	}
	fclose(f);
	if (!p->runtime || rd(p, ver_addr, &ver, 4))
		return;
	ver >>= 16;
	if (ver == 0x030d) {
		uint8_t dbg[PYF_DEBUG_OFFSETS_SIZE];
		if (rd(p, p->runtime, dbg, sizeof(dbg)) || pyf_layout_from_debug(dbg, sizeof(dbg), &p->l)) {
			p->bad = true;
			return;
		}
	} else if (!pyf_layout_builtin(ver, &p->l)) {
		p->bad = true;
		return;
	}
	if (moment_pyproc_from_layout(&p->l, p->code_type, &p->pp) || moment_set_python(p->m, (uint32_t)p->pid, &p->pp)) {
		p->bad = true;
		return;
	}
	p->registered = true;
}

/* moment_opts.need_tstate: every thread state of the interpreter, by
 * its native thread id. */
static void need_tstate(void *arg, uint32_t pid, uint32_t tid)
{
	struct py *p = arg;
	uint64_t interp = 0, ts = 0, ntid;
	int n;

	p->tstate_asks++;
	if (!p->registered || pid != (uint32_t)p->pid)
		return;
	if (rd(p, p->runtime + p->l.rt_interp_head, &interp, 8) || !interp ||
	    rd(p, interp + p->l.interp_threads_head, &ts, 8))
		return;
	for (n = 0; ts && n < 4096; n++) {
		if (rd(p, ts + p->l.ts_native_tid, &ntid, 8))
			return;
		moment_set_tstate(p->m, (uint32_t)ntid, ts);
		if (rd(p, ts + p->l.ts_next, &ts, 8))
			return;
	}
}

/* The name of code object code (stamp read at the sample): cached by
 * both; read from the process on a miss and named only when the code
 * object there still has that stamp. Index + 1, 0: not named. */
static uint32_t code_name(struct py *p, uint64_t code, uint64_t stamp)
{
	uint64_t key = hash_mix(code, stamp);
	uint8_t head[MOMENT_CODE_BUF];
	char q[PYF_MAX_NAME];
	uint32_t id, first;
	uint64_t got, fn, nm, qn, lt;

	if (hmap_get(&p->names, key, &id))
		return id;
	if (rd(p, code, head, p->pp.code_read))
		return 0;
	memcpy(&got, head + p->pp.ob_type, 8);
	memcpy(&fn, head + p->pp.co_filename, 8);
	memcpy(&nm, head + p->pp.co_name, 8);
	memcpy(&qn, head + p->pp.co_qualname, 8);
	memcpy(&lt, head + p->pp.co_linetable, 8);
	memcpy(&first, head + p->pp.co_firstlineno, 4);
	if (got != p->code_type || moment_stamp(fn, nm, qn, lt, first) != stamp) {
		p->stale_names++;
		return 0;
	}
	if (pyf_unicode(&p->l, rd, p, qn, q, sizeof(q)))
		return 0;
	GROW(p->name, p->namecap, p->nnames + 1);
	p->firstline = realloc(p->firstline, p->namecap * sizeof(*p->firstline));
	p->table = realloc(p->table, p->namecap * sizeof(*p->table));
	p->tsize = realloc(p->tsize, p->namecap * sizeof(*p->tsize));
	p->name[p->nnames] = strdup(q);
	p->firstline[p->nnames] = first;
	/* its line table with it: a bytes object (ob_size at 16, data at 32),
	 * read now (the samples may be looked at after the process is gone) */
	p->table[p->nnames] = NULL;
	p->tsize[p->nnames] = 0;
	{
		uint8_t hdr[32];
		uint64_t size;
		if (!rd(p, lt, hdr, sizeof(hdr)) && (memcpy(&size, hdr + 16, 8), size <= 65536)) {
			p->table[p->nnames] = malloc(size ? size : 1);
			if (!rd(p, lt + 32, p->table[p->nnames], size))
				p->tsize[p->nnames] = size;
		}
	}
	id = (uint32_t)++p->nnames;
	hmap_put(&p->names, key, id);
	return id;
}

/* The source line of instruction offset instr (bytes) of code id, from
 * its co_linetable (symbol/pyline.h); -4 when the table was not read. */
static int code_line(struct py *p, uint32_t id, int32_t instr)
{
	const uint8_t *t = p->table[id - 1];
	if (instr < 0 || !t || !p->tsize[id - 1])
		return -4;
	return pyline_find(t, t + p->tsize[id - 1], (int)p->firstline[id - 1], p->l.version, (uint32_t)instr, NULL);
}

static void note_bad(struct py *p, const char *what, const struct moment_rec *r)
{
	if (!p->first_bad[0])
		snprintf(p->first_bad, sizeof(p->first_bad), "%s (flags 0x%x err %u npy %u)", what,
			 r->flags, r->py_err, r->npy);
}

/* The verdict of a sample of the main thread with its record r. */
static enum verdict judge(struct py *p, const struct moment_rec *r)
{
	const struct moment_pyframe *f;
	bool is_heavy = false, is_light = false, is_spin = false;
	size_t i, frames = 0;
	const char *outer = NULL;

	if (!r)
		return V_NONE;
	f = moment_rec_pyframes(r);
	if (!(r->flags & MOMENT_F_PY_DONE) || (r->flags & (MOMENT_F_PY_FAULT | MOMENT_F_PY_CUT)) || !f) {
		note_bad(p, "chain not read to its end", r);
		return V_BAD;
	}
	/* the outermost entry closes the first entry into the interpreter */
	if (!(f[r->npy - 1].flags & MOMENT_PYF_ENTRY))
		p->entries_bad++;
	for (i = 0; i < r->npy; i++) {
		uint32_t id;
		if (f[i].flags & MOMENT_PYF_ENTRY)
			continue;
		frames++;
		if (!(id = code_name(p, f[i].code, f[i].stamp))) {
			note_bad(p, "a frame not named", r);
			return V_BAD;
		}
		outer = p->name[id - 1];
		is_heavy |= !strcmp(outer, "heavy");
		is_light |= !strcmp(outer, "light");
		is_spin |= !strcmp(outer, "spin");
		if (frames == 1 && !strcmp(outer, "work")) {
			int line = code_line(p, id, f[i].instr);
			p->lines_all++;
			p->lines_ok += line >= 5 && line <= 10;
			if ((line < 5 || line > 10) && !p->bad_line[0])
				snprintf(p->bad_line, sizeof(p->bad_line), "line %d at offset %d", line, f[i].instr);
		}
	}
	if (p->mode == M_THREADS && r->tid != r->pid) {
		/* the other thread's chain: squeeze <- run <- ... <- _bootstrap */
		uint32_t id = f[0].flags & MOMENT_PYF_ENTRY ? 0 : code_name(p, f[0].code, f[0].stamp);
		return id && !strcmp(p->name[id - 1], "squeeze") ? V_SQUEEZE : V_OTHER;
	}
	if (!outer || strcmp(outer, "<module>")) {
		note_bad(p, "not rooted at <module>", r);
		return V_BAD;
	}
	if (p->mode == M_THREADS)
		return is_spin ? V_SPIN : V_OTHER; /* under spin (json's Python code above it) */
	if (p->mode == M_OFFCPU) {
		/* the innermost frame */
		uint32_t id = f[0].flags & MOMENT_PYF_ENTRY ? 0 : code_name(p, f[0].code, f[0].stamp);
		return id && !strcmp(p->name[id - 1], "napper") && (r->flags & MOMENT_F_KERNEL) ? V_NAPPER : V_OTHER;
	}
	return is_heavy ? V_HEAVY : is_light ? V_LIGHT : V_OTHER;
}

static void on_sample(void *arg, const struct perf_sample *s, const struct moment_rec *r)
{
	struct py *p = arg;
	if (s->pid != (uint32_t)p->pid || (s->tid != (uint32_t)p->pid && p->mode != M_THREADS) ||
	    (p->mode == M_OFFCPU && s->period != 1))
		return;
	GROW(p->time, p->samplecap, p->nsamples + 1);
	p->verdict = realloc(p->verdict, p->samplecap);
	p->other = realloc(p->other, p->samplecap * sizeof(*p->other));
	p->other[p->nsamples] = s->tid != (uint32_t)p->pid;
	p->time[p->nsamples] = s->time;
	p->verdict[p->nsamples++] = (uint8_t)judge(p, r);
}

static void on_tick(void *arg, struct mt_run *run)
{
	struct py *p = arg;
	py_register(p);
}

/* Returns false, having checked nothing, when two threads (M_THREADS)
 * got too few samples to judge and last is false: a busy machine gives
 * the run less CPU; the caller runs it again, longer. */
static bool run_python(struct moment *m, struct py *p, const char *python, const char *dir, const char *secs,
		       enum mode mode, bool last)
{
	char sp[256], tp[256], label[300];
	char *argv[] = { (char *)python, sp, (char *)secs, tp, NULL };
	struct mt_run run;
	struct err e = { 0 };
	struct moment_stats st0, st1;
	FILE *f;
	int status;
	double share, cost;
	size_t in_loop = 0, with_record = 0, complete = 0, heavy = 0, light = 0;

	snprintf(sp, sizeof(sp), "%s/%s", dir, mode == M_OFFCPU ? "sleep.py" : mode == M_THREADS ? "threads.py" :
		 "work.py");
	snprintf(tp, sizeof(tp), "%s/times", dir);
	p->mode = mode;
	snprintf(label, sizeof(label), "moment: %s", python);
	unlink(tp);
	moment_get_stats(m, &st0);
	if (mt_start(&run, m, argv, 999, 8192, mode == M_OFFCPU, &e)) {
		CHECK(0, label);
		printf("# %s\n", e.msg);
		return true;
	}
	p->pid = run.child.pid;
	status = mt_wait(&run, m, on_sample, on_tick, p);
	/* the loop's times: written at its start and end */
	if ((f = fopen(tp, "re"))) {
		unsigned long long a = 0, b = 0;
		if (fscanf(f, "%llu %llu", &a, &b) == 2) {
			p->t0 = a;
			p->t1 = b;
		}
		fclose(f);
	}
	moment_get_stats(m, &st1);
	for (size_t i = 0; i < p->nsamples; i++) {
		if (p->time[i] < p->t0 || p->time[i] > p->t1)
			continue;
		in_loop++;
		with_record += p->verdict[i] != V_NONE;
		complete += p->verdict[i] >= V_HEAVY;
		heavy += p->verdict[i] == V_HEAVY;
		light += p->verdict[i] == V_LIGHT;
	}
	share = heavy + light ? (double)heavy / (double)(heavy + light) : 0;
	cost = st1.run_cnt > st0.run_cnt ? (double)(st1.run_ns - st0.run_ns) / (double)(st1.run_cnt - st0.run_cnt) : 0;
	printf("# %s: %zu samples in the loop, %zu with a record, %zu complete; heavy %zu light %zu"
	       " (share %.3f); %zu tstate lookups; %zu stamps changed; lines %zu/%zu; %.0f ns per run"
	       " (%llu runs); records read %llu, unmatched %llu, dropped %llu\n",
	       python, in_loop, with_record, complete, heavy, light, share, p->tstate_asks,
	       p->stale_names, p->lines_ok, p->lines_all, cost,
	       (unsigned long long)(st1.run_cnt - st0.run_cnt), (unsigned long long)(st1.read - st0.read),
	       (unsigned long long)(st1.unmatched - st0.unmatched), (unsigned long long)(st1.dropped - st0.dropped));
	if (p->first_bad[0])
		printf("#   first incomplete: %s\n", p->first_bad);
	if (mode == M_THREADS) {
		size_t squeeze = 0, spin = 0, others = 0;
		for (size_t i = 0; i < p->nsamples; i++) {
			if (p->time[i] < p->t0 || p->time[i] > p->t1)
				continue;
			others += p->other[i];
			squeeze += p->other[i] && p->verdict[i] == V_SQUEEZE;
			spin += !p->other[i] && p->verdict[i] == V_SPIN;
		}
		printf("#   threads: %zu of %zu samples of the main thread under spin; %zu of %zu of the other in"
		       " squeeze\n", spin, in_loop - others, squeeze, others);
		if (!last && WIFEXITED(status) && (others < 300 || in_loop - others < 300)) {
			printf("#   too few samples to judge (the machine is busy): again, three times longer\n");
			return false;
		}
		snprintf(label, sizeof(label), "moment: %s, two threads on the CPU: >= 98%% of each one's samples"
			 " have its own chain (%zu and %zu samples)", python, in_loop - others, others);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && others >= 300 && in_loop - others >= 300 &&
		      squeeze >= 0.98 * (double)others && spin >= 0.98 * (double)(in_loop - others), label);
		return true;
	}
	if (mode == M_OFFCPU) {
		size_t napper = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			napper += p->time[i] >= p->t0 && p->time[i] <= p->t1 && p->verdict[i] == V_NAPPER;
		printf("#   off the CPU: %zu of %zu switch-outs in napper <- ... <- <module>\n", napper, in_loop);
		if (!last && WIFEXITED(status) && in_loop < 300) {
			printf("#   too few switch-outs to judge (the machine is busy): again, three times longer\n");
			return false;
		}
		snprintf(label, sizeof(label), "moment: %s off the CPU: >= 98%% of %zu switch-outs have their"
			 " chain read at the switch (napper, rooted at <module>, in the kernel)", python, in_loop);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && in_loop >= 300 &&
		      napper >= 0.98 * (double)in_loop, label);
		return true;
	}
	if (!last && WIFEXITED(status) && in_loop < 500) {
		printf("#   too few samples to judge (the machine is busy): again, three times longer\n");
		return false;
	}
	snprintf(label, sizeof(label), "moment: %s: >= 98%% of %zu samples have their chain read at the"
		 " sample, named, rooted at <module>", python, in_loop);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && in_loop >= 500 &&
	      complete >= 0.98 * (double)in_loop, label);
	snprintf(label, sizeof(label), "moment: %s: heavy's share %.3f within 0.04 of 2/3", python, share);
	CHECK(heavy + light >= 0.9 * (double)complete && share > 2.0 / 3 - 0.04 && share < 2.0 / 3 + 0.04, label);
	snprintf(label, sizeof(label), "moment: %s: work's line is a line of its loop (%zu of %zu)", python,
		 p->lines_ok, p->lines_all);
	CHECK(p->lines_all > 0 && p->lines_ok == p->lines_all, label);
	if (p->bad_line[0])
		printf("#   %s\n", p->bad_line);
	snprintf(label, sizeof(label), "moment: %s: every chain ends with the interpreter's entry", python);
	CHECK(p->entries_bad == 0, label);
	return true;
}

static void py_release(struct py *p)
{
	for (size_t i = 0; i < p->nnames; i++)
		free(p->name[i]);
	free(p->name);
	free(p->firstline);
	for (size_t i = 0; i < p->nnames; i++)
		free(p->table[i]);
	free(p->table);
	free(p->tsize);
	free(p->time);
	free(p->verdict);
	free(p->other);
	hmap_release(&p->names);
}

int main(int argc, char **argv)
{
	static const char *const globs[] = {
		"/root/.pyenv/versions/3.11.*/bin/python3.11",
		"/root/.pyenv/versions/3.12.*/bin/python3.12",
		"/root/.pyenv/versions/3.13.*/bin/python3.13",
	};
	char dir[] = "/tmp/stax-moment-XXXXXX", sp[300];
	const char *secs = argc > 1 ? argv[1] : "3";
	struct moment_opts o = { 0 };
	struct moment *m = NULL;
	struct err e = { 0 };
	struct py p;
	FILE *f;
	size_t i;
	int ret;

	o.stack_user = 8192;
	o.need_tstate = need_tstate;
	o.arg = &p;
	ret = moment_open(&m, &o, &e);
	if (ret == -EPERM || ret == -ENOENT || ret == -EOPNOTSUPP) {
		SKIP("moment: the in-kernel reader", e.msg);
		TEST_DONE();
	}
	CHECK(ret == 0, "moment: the in-kernel reader loads");
	if (ret) {
		printf("# %s\n", e.msg);
		TEST_DONE();
	}
	moment_count_time(m);
	if (!mkdtemp(dir)) {
		CHECK(0, "moment: a directory");
		TEST_DONE();
	}
	snprintf(sp, sizeof(sp), "%s/work.py", dir);
	if (!(f = fopen(sp, "w")) || fputs(script, f) < 0 || fclose(f)) {
		CHECK(0, "moment: write the script");
		TEST_DONE();
	}
	snprintf(sp, sizeof(sp), "%s/threads.py", dir);
	if (!(f = fopen(sp, "w")) || fputs(threads, f) < 0 || fclose(f)) {
		CHECK(0, "moment: write the script");
		TEST_DONE();
	}
	snprintf(sp, sizeof(sp), "%s/sleep.py", dir);
	if (!(f = fopen(sp, "w")) || fputs(sleeper, f) < 0 || fclose(f)) {
		CHECK(0, "moment: write the script");
		TEST_DONE();
	}
	for (i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		glob_t g;
		if (glob(globs[i], 0, NULL, &g) || !g.gl_pathc) {
			SKIP(globs[i], "not installed (pyenv install it)");
			continue;
		}
		/* the loop on each version; off the CPU, and two threads, on
		 * one version (3.12) and the two threads on the other layout
		 * family too (3.13) */
		for (enum mode k = M_WORK; k <= M_THREADS; k++) {
			if (k != M_WORK && (i == 0 || (i == 2 && k == M_OFFCPU)))
				continue;
			bool done = false;
			for (int again = 0; !done; again++) {
				char longer[32];
				snprintf(longer, sizeof(longer), "%g", atof(secs) * (again ? 3 : 1));
				memset(&p, 0, sizeof(p));
				p.m = m;
				hmap_init(&p.names);
				done = run_python(m, &p, g.gl_pathv[0], dir, longer, k, again > 0);
				py_release(&p);
			}
		}
		globfree(&g);
	}
	{
		char path[400];
		snprintf(path, sizeof(path), "%s/times", dir);
		unlink(path);
		unlink(sp);
		snprintf(path, sizeof(path), "%s/work.py", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/threads.py", dir);
		unlink(path);
		rmdir(dir);
	}
	moment_free(m);
	TEST_DONE();
}
