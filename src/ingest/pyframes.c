/* pyframes.c - Python frames read from a running CPython (see pyframes.h). */
#include "ingest/pyframes.h"
#include "symbol/pyline.h"
#include "lib/elffile.h"
#include "lib/elfguard.h"
#include "lib/hash.h"
#include "lib/util.h"
#include "module/module.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpf/moment_abi.h"

#define PYF_MAX_THREADS 4096   /* thread states walked per interpreter */
#define PYF_MAX_INTERPS 64
#define PYF_MAX_CHAIN 4096     /* interpreter frames walked per sample */
#define PYF_MAX_OFFSET 65536   /* no field we read lies further in its struct */
#define PYF_WINDOW 2048        /* bytes read around a frame: its callers are
				* mostly below it in the same data stack chunk */
#define PYF_MAX_PROCS 4096
#define PYF_CODE_HEAD 256      /* bytes of a code object read per frame */
#define PYF_MAX_TABLE 65536    /* bytes of a line table kept */

/* ---- layouts ---- */

bool pyf_layout_builtin(uint32_t version, struct pyf_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->version = version;
	/* common to 3.11-3.13: PyObject.ob_type, PyASCIIObject's state and
	 * length, co_filename and co_qualname */
	l->ob_type = 8;
	l->u_length = 16;
	l->u_state = 32;
	l->co_filename = 112;
	l->co_qualname = 128;
	l->co_name = 120;
	l->co_linetable = 136;
	l->fr_instr = 56;
	l->rt_interp_head = 40;
	l->ts_next = 8;
	switch (version) {
	case 0x030b: /* Include/internal/pycore_{runtime,interp,frame}.h, cpython/pystate.h */
		l->co_code = 184;
		l->interp_next = 0;
		l->interp_threads_head = 16;
		l->ts_native_tid = 160;
		l->ts_cframe = 56;
		l->cf_current = 8;
		l->fr_code = 32;
		l->fr_previous = 48;
		l->fr_owner = 69;
		l->fr_is_entry = 68;
		l->co_firstlineno = 72;
		l->u_ascii_size = 48; /* with wstr */
		l->u_compact_size = 72;
		return true;
	case 0x030c:
		l->co_code = 192;
		l->interp_next = 0;
		l->interp_threads_head = 72;
		l->ts_native_tid = 144;
		l->ts_cframe = 56;
		l->cf_current = 0;
		l->fr_code = 0;
		l->fr_previous = 8;
		l->fr_owner = 70;
		l->fr_is_entry = -1;
		l->owned_by_cstack = 3;
		l->co_firstlineno = 68;
		l->u_ascii_size = 40;
		l->u_compact_size = 56;
		return true;
	}
	return false;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Offsets inside 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h
 * of 3.13.0); its version field says which release filled it. */
int pyf_layout_from_debug(const uint8_t *p, size_t size, struct pyf_layout *l)
{
	uint64_t version;
	uint64_t *fields[] = {
		&l->rt_interp_head, &l->interp_next, &l->interp_threads_head, &l->ts_next,
		&l->ts_current, &l->ts_native_tid, &l->fr_previous, &l->fr_code, &l->fr_owner,
		&l->co_filename, &l->co_qualname, &l->ob_type, &l->u_state, &l->u_length,
		&l->u_ascii_size, &l->co_code, &l->fr_instr, &l->co_name, &l->co_linetable,
		&l->co_firstlineno,
	};
	static const size_t at[] = {
		40, 64, 72, 168, 184, 200, 232, 240, 264, 280, 296, 360, 544, 552, 560, 344,
		248, 288, 304, 312,
	};
	size_t i;

	if (size < PYF_DEBUG_OFFSETS_SIZE || memcmp(p, "xdebugpy", 8))
		return -EINVAL;
	version = get_u64(p + 8);
	if ((version >> 16) != 0x030d || get_u64(p + 16) != 0) /* free-threaded: out of scope */
		return -EINVAL;
	memset(l, 0, sizeof(*l));
	l->version = 0x030d;
	for (i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		*fields[i] = get_u64(p + at[i]);
		if (*fields[i] >= PYF_MAX_OFFSET && fields[i] != &l->rt_interp_head)
			return -EINVAL;
	}
	if (l->rt_interp_head >= (1u << 20))
		return -EINVAL;
	l->fr_is_entry = -1;
	l->owned_by_cstack = 3; /* FRAME_OWNED_BY_CSTACK, pycore_frame.h */
	/* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject */
	l->u_compact_size = l->u_ascii_size + 16;
	return 0;
}

/* ---- strings ---- */

static size_t put_utf8(char *out, size_t at, size_t outsize, uint32_t c)
{
	char b[4];
	size_t n, i;
	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else if (c < 0x110000) {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	} else {
		b[0] = '?';
		n = 1;
	}
	if (at + n >= outsize)
		return at;
	for (i = 0; i < n; i++)
		out[at + i] = b[i];
	return at + n;
}

int pyf_unicode(const struct pyf_layout *l, pyf_read_fn rd, void *arg, uint64_t addr,
		char *out, size_t outsize)
{
	uint8_t hdr[128], data[PYF_MAX_NAME * 4];
	uint64_t len;
	uint32_t state, kind;
	size_t hsize = l->u_compact_size, n, i, at = 0;
	bool ascii;
	int ret;

	if (!outsize)
		return -EINVAL;
	out[0] = 0;
	if (hsize > sizeof(hdr) || l->u_state + 4 > hsize || l->u_length + 8 > hsize || !addr)
		return -EINVAL;
	if ((ret = rd(arg, addr, hdr, hsize)))
		return ret;
	memcpy(&state, hdr + l->u_state, 4);
	len = get_u64(hdr + l->u_length);
	kind = (state >> 2) & 7;
	ascii = (state >> 6) & 1;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1) ||
	    len > (1u << 30))
		return -EINVAL; /* not compact: legacy strings are not names of code */
	n = (size_t)MIN(len, (uint64_t)PYF_MAX_NAME - 1);
	if (n && (ret = rd(arg, addr + (ascii ? l->u_ascii_size : l->u_compact_size), data, n * kind)))
		return ret;
	for (i = 0; i < n; i++) {
		uint32_t c;
		if (kind == 1)
			c = data[i];
		else if (kind == 2)
			c = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			memcpy(&c, data + 4 * i, 4);
		if (ascii && c >= 0x80)
			c = '?';
		if (c == 0)
			c = '?';
		at = put_utf8(out, at, outsize, c);
	}
	out[at] = 0;
	return 0;
}

/* ---- processes ---- */

/* What an interpreter binary (libpython or a static python) holds. */
struct pyf_elf {
	char *path;
	bool ok;                     /* has _PyEval_EvalFrameDefault and _PyRuntime */
	uint64_t eval, eval_size, runtime, code_type, py_version;
	/* for the bias: the segments' vaddr - offset, by file offset */
	struct { uint64_t off, filesz, vaddr; } seg[16];
	size_t nseg;
};

struct pyf_proc {
	uint32_t pid;
	uint64_t gen;                /* state_gen when the mappings were looked at */
	uint32_t image;              /* state_proc.image then (exec count) */
	int elf;                     /* index in elfs, -1: not Python */
	uint64_t eval_lo, eval_hi;   /* _PyEval_EvalFrameDefault, in the process */
	uint64_t runtime, code_type;
	bool init, bad;              /* layout read (or failed to) */
	bool perf;                   /* runs with -X perf: its frames are there */
	int err;                     /* the last read's -errno */
	struct pyf_layout l;
	struct hmap tstate;          /* tid -> index in tsaddr + 1 */
	uint64_t *tsaddr;
	size_t nts, tscap;
	/* the code objects named: by hash_mix(address, stamp) (probing on
	 * collisions) -> index in code + 1 */
	struct hmap codes;
	struct pyf_code {
		uint64_t addr, stamp;    /* moment_stamp() of its fields */
		uint32_t name, file;     /* strings (pf->strs) */
		int32_t first;           /* co_firstlineno */
		uint32_t tsize;          /* bytes of table (0: no lines) */
		uint8_t *table;          /* its co_linetable */
	} *code;
	size_t ncode, codecap;
};

struct pyframes {
	struct pyf_elf *elfs;
	size_t nelfs, elfcap;
	struct pyf_proc *procs;
	size_t nprocs, proccap;
	struct hmap proc_index;      /* pid -> index + 1 */
	/* strings: the names ("py::QUALNAME:FILE") and files */
	char **strs;
	size_t nstrs, strcap;
	struct hmap str_index;       /* hash -> index + 1 (probing) */
	/* the frames of the samples: id - 1 -> (name, file, line) */
	struct pyf_frame { uint32_t name, file, line; } *frames;
	size_t nframes, framecap;
	struct hmap frame_index;     /* hash -> id (probing) */
	char no_access[256];
	bool found;                  /* an interpreter was seen */
	/* the window of the last frame read */
	uint32_t wpid;
	uint64_t wlo, whi;
	uint8_t win[PYF_WINDOW];
	uint8_t chead[PYF_MAX_FRAMES][PYF_CODE_HEAD]; /* the code objects' first bytes */
	/* pyframes_expand()'s scratch: each frame's code object and
	 * instruction pointer, and the reads of the code objects */
	uint64_t codes[PYF_MAX_FRAMES], instrs[PYF_MAX_FRAMES];
	struct iovec local[PYF_MAX_FRAMES], remote[PYF_MAX_FRAMES];
};

static void proc_forget_codes(struct pyf_proc *p)
{
	size_t i;
	for (i = 0; i < p->ncode; i++)
		free(p->code[i].table);
	free(p->code);
	p->code = NULL;
	p->ncode = p->codecap = 0;
}

struct pyframes *pyframes_new(void)
{
	struct pyframes *pf = xcalloc(1, sizeof(*pf));
	hmap_init(&pf->proc_index);
	hmap_init(&pf->str_index);
	hmap_init(&pf->frame_index);
	return pf;
}

void pyframes_free(struct pyframes *pf)
{
	size_t i;
	if (!pf)
		return;
	for (i = 0; i < pf->nelfs; i++)
		free(pf->elfs[i].path);
	free(pf->elfs);
	for (i = 0; i < pf->nprocs; i++) {
		hmap_release(&pf->procs[i].tstate);
		proc_forget_codes(&pf->procs[i]);
		hmap_release(&pf->procs[i].codes);
		free(pf->procs[i].tsaddr);
	}
	free(pf->procs);
	for (i = 0; i < pf->nstrs; i++)
		free(pf->strs[i]);
	free(pf->strs);
	free(pf->frames);
	hmap_release(&pf->proc_index);
	hmap_release(&pf->str_index);
	hmap_release(&pf->frame_index);
	free(pf);
}

const char *pyframes_name(const struct pyframes *pf, uint32_t id)
{
	return pf && id && id <= pf->nframes ? pf->strs[pf->frames[id - 1].name] : NULL;
}

bool pyframes_frame(const struct pyframes *pf, uint32_t id, const char **name, const char **file,
		    uint32_t *line)
{
	const struct pyf_frame *f;
	if (!pf || !id || id > pf->nframes)
		return false;
	f = &pf->frames[id - 1];
	*name = pf->strs[f->name];
	*file = pf->strs[f->file];
	*line = f->line;
	return true;
}

size_t pyframes_count(const struct pyframes *pf)
{
	return pf ? pf->nframes : 0;
}

bool pyframes_found(const struct pyframes *pf)
{
	return pf && pf->found;
}

const char *pyframes_no_access_why(const struct pyframes *pf)
{
	return pf ? pf->no_access : "";
}

static uint32_t intern_str(struct pyframes *pf, const char *str)
{
	uint64_t h = hash_bytes(str, strlen(str));
	uint32_t at;
	for (;; h = hash_next(h)) {
		if (!hmap_get(&pf->str_index, h, &at))
			break;
		if (!strcmp(pf->strs[at - 1], str))
			return at - 1;
	}
	GROW(pf->strs, pf->strcap, pf->nstrs + 1);
	pf->strs[pf->nstrs++] = xstrdup(str);
	hmap_put(&pf->str_index, h, (uint32_t)pf->nstrs);
	return (uint32_t)(pf->nstrs - 1);
}

/* The id of the frame (name, file, line): one per function and line. */
static uint32_t intern_frame(struct pyframes *pf, uint32_t name, uint32_t file, uint32_t line)
{
	uint64_t h = hash_mix(hash_mix(name, file), line);
	uint32_t id;
	for (;; h = hash_next(h)) {
		const struct pyf_frame *f;
		if (!hmap_get(&pf->frame_index, h, &id))
			break;
		f = &pf->frames[id - 1];
		if (f->name == name && f->file == file && f->line == line)
			return id;
	}
	GROW(pf->frames, pf->framecap, pf->nframes + 1);
	pf->frames[pf->nframes++] = (struct pyf_frame){ name, file, line };
	id = (uint32_t)pf->nframes;
	hmap_put(&pf->frame_index, h, id);
	return id;
}

bool pyframes_is_interpreter_path(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;
	b = b ? b + 1 : path;
	return b && (!strncmp(b, "libpython3.", 11) || !strncmp(b, "python3", 7));
}

/* Look up the symbols an interpreter binary needs (once per path). */
static int elf_of(struct pyframes *pf, const char *path)
{
	struct pyf_elf *pe;
	struct module *mod;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;
	size_t i, nph;
	int fd;

	for (i = 0; i < pf->nelfs; i++)
		if (!strcmp(pf->elfs[i].path, path))
			return (int)i;
	GROW(pf->elfs, pf->elfcap, pf->nelfs + 1);
	pe = &pf->elfs[pf->nelfs++];
	memset(pe, 0, sizeof(*pe));
	pe->path = xstrdup(path);
	mod = module_get(path, NULL, 0);
	e = module_open(mod, &fd);
	module_put(mod);
	if (!e)
		return (int)(pf->nelfs - 1);
	if (!elf_getphdrnum(e, &nph))
		for (i = 0; i < nph && pe->nseg < 16; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
				pe->seg[pe->nseg].off = ph.p_offset;
				pe->seg[pe->nseg].filesz = ph.p_filesz;
				pe->seg[pe->nseg].vaddr = ph.p_vaddr;
				pe->nseg++;
			}
		}
	/* .dynsym first: all four are exported */
	for (int pass = 0; pass < 2 && !(pe->eval && pe->runtime && pe->code_type); pass++) {
		scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t k, nsym;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM) ||
			    !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
				continue;
			nsym = sh.sh_size / sh.sh_entsize;
			for (k = 0; k < nsym; k++) {
				GElf_Sym sym;
				const char *name;
				if (!gelf_getsym(d, (int)k, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
				    !(name = elf_strptr(e, sh.sh_link, sym.st_name)))
					continue;
				if (!strcmp(name, "_PyEval_EvalFrameDefault")) {
					pe->eval = sym.st_value;
					pe->eval_size = sym.st_size;
				} else if (!strcmp(name, "_PyRuntime")) {
					pe->runtime = sym.st_value;
				} else if (!strcmp(name, "PyCode_Type")) {
					pe->code_type = sym.st_value;
				} else if (!strcmp(name, "Py_Version")) {
					pe->py_version = sym.st_value;
				}
			}
		}
	}
	pe->ok = pe->eval && pe->eval_size && pe->runtime && pe->code_type && pe->py_version;
	if (elfguard_changed(e))
		pe->ok = false; /* the file changed while being read */
	module_close(e, fd);
	return (int)(pf->nelfs - 1);
}

static struct pyf_proc *proc_of(struct pyframes *pf, uint32_t pid)
{
	uint32_t idx;
	struct pyf_proc *p;
	if (hmap_get(&pf->proc_index, pid, &idx))
		return &pf->procs[idx - 1];
	if (pf->nprocs >= PYF_MAX_PROCS)
		return NULL;
	GROW(pf->procs, pf->proccap, pf->nprocs + 1);
	p = &pf->procs[pf->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->elf = -1;
	hmap_init(&p->tstate);
	hmap_init(&p->codes);
	hmap_put(&pf->proc_index, pid, (uint32_t)pf->nprocs);
	return p;
}

void pyframes_keep(struct pyframes *pf, bool (*keep)(void *arg, uint32_t pid), void *arg)
{
	size_t i, n = 0;

	if (!pf)
		return;
	hmap_release(&pf->proc_index);
	hmap_init(&pf->proc_index);
	for (i = 0; i < pf->nprocs; i++) {
		struct pyf_proc *p = &pf->procs[i];
		if (!keep(arg, p->pid)) {
			hmap_release(&p->tstate);
			proc_forget_codes(p);
			hmap_release(&p->codes);
			free(p->tsaddr);
			continue;
		}
		pf->procs[n++] = *p;
		hmap_put(&pf->proc_index, p->pid, (uint32_t)n);
	}
	pf->nprocs = n;
	pf->wpid = 0;
}

void pyframes_has_perf_frames(struct pyframes *pf, uint32_t pid)
{
	struct pyf_proc *p = pid ? proc_of(pf, pid) : NULL;
	if (p)
		p->perf = true;
}

/* Find the interpreter among pid's executable mappings (when they changed). */
static void proc_scan(struct pyframes *pf, struct state *st, struct pyf_proc *p)
{
	struct state_proc *sp = state_proc(st, p->pid);
	size_t i, j;

	p->gen = sp->gen;
	if (p->image != sp->image) {
		/* an exec: another program, maybe another interpreter */
		p->image = sp->image;
		p->elf = -1;
		p->init = p->bad = p->perf = false;
		p->nts = 0;
		hmap_release(&p->tstate);
		hmap_init(&p->tstate);
		hmap_release(&p->codes);
		hmap_init(&p->codes);
		proc_forget_codes(p);
	}
	if (p->elf >= 0)
		return; /* found before: an interpreter is not unloaded */
	for (i = 0; i < sp->nranges; i++) {
		const struct state_mapping *m = state_mapping(st, sp->ranges[i].id);
		const struct pyf_elf *pe;
		int k;
		if (!m || !pyframes_is_interpreter_path(m->path))
			continue;
		k = elf_of(pf, m->path);
		pe = &pf->elfs[k];
		if (!pe->ok)
			continue;
		/* the bias from the segment holding this mapping's file offset */
		for (j = 0; j < pe->nseg; j++) {
			uint64_t bias;
			if (m->pgoff < (pe->seg[j].off & ~4095ull) || m->pgoff >= pe->seg[j].off + pe->seg[j].filesz)
				continue;
			bias = m->start - m->pgoff - (pe->seg[j].vaddr - pe->seg[j].off);
			if (pe->eval + bias < m->start || pe->eval + bias >= m->end)
				break; /* _PyEval_EvalFrameDefault is not in this mapping */
			p->elf = k;
			pf->found = true;
			p->eval_lo = pe->eval + bias;
			p->eval_hi = pe->eval + pe->eval_size + bias;
			p->runtime = pe->runtime + bias;
			p->code_type = pe->code_type + bias;
			return;
		}
	}
}

static int read_proc(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct pyf_proc *p = arg;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t r;
	if (!addr || addr + len < addr)
		return -EFAULT;
	r = process_vm_readv((pid_t)p->pid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EFAULT;
}

/* Read the layout of p's interpreter (once). */
static int proc_init(struct pyframes *pf, struct pyf_proc *p)
{
	const struct pyf_elf *pe = &pf->elfs[p->elf];
	uint8_t dbg[PYF_DEBUG_OFFSETS_SIZE];
	uint32_t ver;
	int ret;

	/* (a read that fails is tried again at the next sample: the
	 * process may be too young to have its data mapped) */
	if ((ret = read_proc(p, p->runtime - pe->runtime + pe->py_version, &ver, 4)))
		return ret;
	ver >>= 16;
	if (ver == 0x030d) {
		if ((ret = read_proc(p, p->runtime, dbg, sizeof(dbg))))
			return ret;
		if (pyf_layout_from_debug(dbg, sizeof(dbg), &p->l))
			p->bad = true;
	} else if (!pyf_layout_builtin(ver, &p->l)) {
		p->bad = true; /* another version: not read */
	}
	p->init = true;
	return 0;
}

/* Read thread state ts's native_thread_id into *tidv and its frame field
 * (cframe in 3.11/3.12, current_frame in 3.13) into *fv, in one read
 * when they are near each other. */
static int read_tstate(struct pyf_proc *p, uint64_t ts, uint64_t *tidv, uint64_t *fv)
{
	const struct pyf_layout *l = &p->l;
	uint64_t f = l->ts_cframe ? l->ts_cframe : l->ts_current;
	uint64_t lo = MIN(f, l->ts_native_tid), hi = MAX(f, l->ts_native_tid) + 8;
	uint8_t b[256];
	int ret;
	if (hi - lo > sizeof(b)) {
		if ((ret = read_proc(p, ts + l->ts_native_tid, tidv, 8)))
			return ret;
		return read_proc(p, ts + f, fv, 8);
	}
	if ((ret = read_proc(p, ts + lo, b, hi - lo)))
		return ret;
	*tidv = get_u64(b + (l->ts_native_tid - lo));
	*fv = get_u64(b + (f - lo));
	return 0;
}

/* The PyThreadState of tid (cached, checked by its native_thread_id) and
 * its frame field (*fv: see read_tstate). */
static uint64_t find_tstate(struct pyf_proc *p, uint32_t tid, uint64_t *fv, int *err)
{
	const struct pyf_layout *l = &p->l;
	uint64_t interp, ts, v;
	uint32_t idx;
	int ni, nt;

	*err = 0;
	if (hmap_get(&p->tstate, tid, &idx)) {
		ts = p->tsaddr[idx - 1];
		if (!(*err = read_tstate(p, ts, &v, fv)) && v == tid)
			return ts;
	}
	if ((*err = read_proc(p, p->runtime + l->rt_interp_head, &interp, 8)))
		return 0;
	for (ni = 0; interp && ni < PYF_MAX_INTERPS; ni++) {
		if ((*err = read_proc(p, interp + l->interp_threads_head, &ts, 8)))
			return 0;
		for (nt = 0; ts && nt < PYF_MAX_THREADS; nt++) {
			if ((*err = read_tstate(p, ts, &v, fv)))
				return 0;
			if (v == tid) {
				if (hmap_get(&p->tstate, tid, &idx)) {
					p->tsaddr[idx - 1] = ts;
				} else {
					GROW(p->tsaddr, p->tscap, p->nts + 1);
					p->tsaddr[p->nts++] = ts;
					hmap_put(&p->tstate, tid, (uint32_t)p->nts);
				}
				return ts;
			}
			if ((*err = read_proc(p, ts + l->ts_next, &ts, 8)))
				return 0;
		}
		if ((*err = read_proc(p, interp + l->interp_next, &interp, 8)))
			return 0;
	}
	return 0;
}

/* Read a frame's first len bytes, through a window of the bytes below it
 * (its callers mostly lie there, in the same data stack chunk). */
static int read_frame(struct pyframes *pf, struct pyf_proc *p, uint64_t addr, uint8_t *buf, size_t len)
{
	uint64_t lo;
	int ret;
	if (pf->wpid == p->pid && addr >= pf->wlo && addr + len <= pf->whi && addr + len > addr) {
		memcpy(buf, pf->win + (addr - pf->wlo), len);
		return 0;
	}
	if (addr + len < addr)
		return -EFAULT;
	lo = addr + len - PYF_WINDOW;
	if (lo > addr || lo < (addr & ~4095ull))
		lo = addr & ~4095ull; /* stay in the frame's page: the one below may be unmapped */
	if (!(ret = read_proc(p, lo, pf->win, addr + len - lo))) {
		pf->wpid = p->pid;
		pf->wlo = lo;
		pf->whi = addr + len;
		memcpy(buf, pf->win + (addr - lo), len);
		return 0;
	}
	pf->wpid = 0;
	return read_proc(p, addr, buf, len);
}

/* The bytes of a code object's head read: up to its last field used. */
static size_t code_head_size(const struct pyf_layout *l)
{
	uint64_t n = MAX(MAX(l->ob_type, (uint64_t)PYF_OB_SIZE), MAX(l->co_qualname, l->co_filename));
	n = MAX(n, MAX(l->co_name, l->co_linetable));
	return (size_t)MAX(n + 8, l->co_firstlineno + 4);
}

/* The stamp of the code object whose head is h (moment_abi.h: what the
 * in-kernel reader computes at the sample from the same fields). */
static uint64_t code_stamp(const struct pyf_layout *l, const uint8_t *h)
{
	uint32_t first;
	memcpy(&first, h + l->co_firstlineno, 4);
	return moment_stamp(get_u64(h + l->co_filename), get_u64(h + l->co_name), get_u64(h + l->co_qualname),
			    get_u64(h + l->co_linetable), first);
}

/* The code object at co with stamp, named before: its index, or -1. */
static long code_find(const struct pyf_proc *p, uint64_t co, uint64_t stamp)
{
	uint64_t h = hash_mix(co, stamp);
	uint32_t at;
	for (;; h = hash_next(h)) {
		if (!hmap_get(&p->codes, h, &at))
			return -1;
		if (p->code[at - 1].addr == co && p->code[at - 1].stamp == stamp)
			return (long)at - 1;
	}
}

/* Name code object co whose head h (code_head_size() bytes) was read
 * now, and keep its line table: its index, or -errno. */
static long code_add(struct pyframes *pf, struct pyf_proc *p, uint64_t co, const uint8_t *h)
{
	const struct pyf_layout *l = &p->l;
	char qual[PYF_MAX_NAME], file[PYF_MAX_NAME], name[2 * PYF_MAX_NAME + 8];
	uint64_t stamp = code_stamp(l, h), lt = get_u64(h + l->co_linetable), size, key;
	struct pyf_code *c;
	uint8_t hdr[32];
	uint32_t at;
	int err;

	if ((err = pyf_unicode(l, read_proc, p, get_u64(h + l->co_qualname), qual, sizeof(qual))) ||
	    (err = pyf_unicode(l, read_proc, p, get_u64(h + l->co_filename), file, sizeof(file))))
		return err;
	snprintf(name, sizeof(name), "py::%s:%s", qual, file);
	GROW(p->code, p->codecap, p->ncode + 1);
	c = &p->code[p->ncode];
	memset(c, 0, sizeof(*c));
	c->addr = co;
	c->stamp = stamp;
	c->name = intern_str(pf, name);
	c->file = intern_str(pf, file);
	memcpy(&c->first, h + l->co_firstlineno, 4);
	/* co_linetable: a bytes object (ob_size at 16, its bytes at 32);
	 * kept, so that lines are known after the process is gone */
	if (lt && !read_proc(p, lt, hdr, sizeof(hdr)) && (size = get_u64(hdr + PYF_OB_SIZE)) &&
	    size <= PYF_MAX_TABLE) {
		c->table = xmalloc((size_t)size);
		if (!read_proc(p, lt + 32, c->table, (size_t)size)) {
			c->tsize = (uint32_t)size;
		} else {
			free(c->table);
			c->table = NULL;
		}
	}
	for (key = hash_mix(co, stamp); hmap_get(&p->codes, key, &at); key = hash_next(key))
		;
	hmap_put(&p->codes, key, (uint32_t)++p->ncode);
	return (long)p->ncode - 1;
}

/* The frame id of code c at instruction offset instr (bytes): its line
 * from the line table (0 when not known). */
static uint32_t code_frame(struct pyframes *pf, const struct pyf_proc *p, const struct pyf_code *c, int64_t instr)
{
	int line = 0;
	if (c->tsize)
		line = pyline_find(c->table, c->table + c->tsize, c->first, p->l.version,
				   (uint32_t)(instr < 0 ? 0 : MIN(instr, (int64_t)INT32_MAX)), NULL);
	return intern_frame(pf, c->name, c->file, line > 0 ? (uint32_t)line : 0);
}

bool pyf_seen_points_into(const struct pyf_sample *seen, uint64_t lo, uint64_t hi)
{
	size_t i;
	for (i = 0; i < seen->nregs; i++) {
		uint64_t v = get_u64(seen->regs + 8 * i);
		if (v >= lo && v < hi)
			return true;
	}
	for (i = 0; i + 8 <= seen->stack_size; i += 8) {
		uint64_t v = get_u64(seen->stack + i);
		if (v >= lo && v < hi)
			return true;
	}
	return false;
}

/* The process of a sample whose user frames are pcs[0..n) and its
 * _PyEval_EvalFrameDefault frames (out->is_eval_pos, *neval): NULL when
 * there is nothing to expand (not an interpreter, -X perf, no such
 * frame). */
static struct pyf_proc *sample_evals(struct pyframes *pf, struct state *st, uint32_t pid, const uint64_t *pcs,
				     const bool *ra, size_t n, struct pyf_expansion *out, size_t *neval)
{
	struct pyf_proc *p;
	size_t i;

	out->neval = out->nids = 0;
	*neval = 0;
	if (!pid || !(p = proc_of(pf, pid)))
		return NULL;
	if (p->gen != state_gen(st, pid))
		proc_scan(pf, st, p);
	if (p->elf < 0 || p->perf)
		return NULL;
	for (i = 0; i < n && i < 1024; i++) {
		uint64_t a = pcs[i] - (ra[i] ? 1 : 0);
		out->is_eval_pos[i] = a >= p->eval_lo && a < p->eval_hi;
		*neval += out->is_eval_pos[i];
	}
	return *neval ? p : NULL;
}

/* A read's error as the status of a sample (and why, the first time). */
static enum pyf_status read_failed(struct pyframes *pf, uint32_t pid, int err)
{
	if (err == -EPERM || err == -EACCES) {
		if (!pf->no_access[0])
			snprintf(pf->no_access, sizeof(pf->no_access),
				 "cannot read the memory of process %u: %s (reading it needs ptrace access:"
				 " root with CAP_SYS_PTRACE, or its own user where kernel.yama.ptrace_scope"
				 " allows)", pid, strerror(-err));
		return PYF_NO_ACCESS;
	}
	return PYF_FAILED;
}

enum pyf_status pyframes_expand(struct pyframes *pf, struct state *st, uint32_t pid, uint32_t tid,
				const uint64_t *pcs, const bool *ra, size_t n, const struct pyf_sample *seen,
				struct pyf_expansion *out)
{
	struct pyf_proc *p;
	const struct pyf_layout *l;
	uint64_t frame, ts, *codes = pf->codes, *instrs = pf->instrs;
	struct iovec *local = pf->local, *remote = pf->remote;
	uint8_t fb[128];
	size_t i, neval, nfr = 0, fsize, csize, walked;
	ssize_t r;
	int err = 0;

	pf->wpid = 0; /* the window is of another moment */
	if (!(p = sample_evals(pf, st, pid, pcs, ra, n, out, &neval)))
		return PYF_NONE;
	if (neval > PYF_MAX_FRAMES)
		return PYF_FAILED;
	if (!p->init && (err = proc_init(pf, p)))
		goto fail;
	if (p->bad)
		return PYF_FAILED;
	l = &p->l;
	if (!(ts = find_tstate(p, tid, &frame, &err)))
		goto fail;
	/* 3.11/3.12: frame is the thread's _PyCFrame, current_frame in it */
	if (l->ts_cframe && (err = read_proc(p, frame + l->cf_current, &frame, 8)))
		goto fail;
	fsize = MAX(MAX(l->fr_code, l->fr_instr), MAX(l->fr_previous, l->fr_owner)) + 8;
	if (l->fr_is_entry >= 0)
		fsize = MAX(fsize, (size_t)l->fr_is_entry + 1);
	if (fsize > sizeof(fb))
		return PYF_FAILED;
	/* walk from the innermost frame: group k belongs to the k-th
	 * _PyEval_EvalFrameDefault from the leaf */
	out->first[0] = 0;
	out->count[0] = 0;
	for (walked = 0; frame && walked < PYF_MAX_CHAIN; walked++) {
		uint64_t co;
		uint8_t owner;
		if ((err = read_frame(pf, p, frame, fb, fsize)))
			goto fail;
		owner = fb[l->fr_owner];
		co = get_u64(fb + l->fr_code);
		if (l->fr_is_entry < 0 && owner == l->owned_by_cstack) {
			/* 3.12+: the entry frame of one _PyEval_EvalFrameDefault */
			if (++out->neval > neval)
				return PYF_FAILED;
			if (out->neval < neval) {
				out->first[out->neval] = nfr;
				out->count[out->neval] = 0;
			}
		} else {
			if (nfr >= PYF_MAX_FRAMES || out->neval >= neval)
				return PYF_FAILED;
			instrs[nfr] = get_u64(fb + l->fr_instr);
			codes[nfr++] = co;
			out->count[out->neval]++;
			if (l->fr_is_entry >= 0 && fb[l->fr_is_entry]) {
				if (++out->neval < neval) {
					out->first[out->neval] = nfr;
					out->count[out->neval] = 0;
				}
			}
		}
		frame = get_u64(fb + l->fr_previous);
	}
	if (frame || out->neval != neval || !nfr)
		return PYF_FAILED;
	/* every code object's type and names, in one read */
	csize = code_head_size(l);
	if (csize > PYF_CODE_HEAD)
		return PYF_FAILED;
	for (i = 0; i < nfr; i++) {
		if (!codes[i] || codes[i] + csize < codes[i])
			return PYF_FAILED;
		local[i].iov_base = pf->chead[i];
		local[i].iov_len = csize;
		remote[i].iov_base = (void *)(uintptr_t)codes[i];
		remote[i].iov_len = csize;
	}
	for (i = 0; i < nfr; i += 1024) {
		size_t k = MIN(nfr - i, (size_t)1024);
		r = process_vm_readv((pid_t)pid, local + i, k, remote + i, k, 0);
		if (r != (ssize_t)(csize * k)) {
			err = r < 0 ? -errno : -EFAULT;
			goto fail;
		}
	}
	for (i = 0; i < nfr; i++) {
		long c;
		if (get_u64(pf->chead[i] + l->ob_type) != p->code_type)
			return PYF_FAILED;
		if ((c = code_find(p, codes[i], code_stamp(l, pf->chead[i]))) < 0 &&
		    (c = code_add(pf, p, codes[i], pf->chead[i])) < 0) {
			err = (int)c;
			goto fail;
		}
		out->ids[i] = code_frame(pf, p, &p->code[c], (int64_t)(instrs[i] - (codes[i] + l->co_code)));
	}
	/* the sample's moment: the interpreter was running the innermost
	 * frame's code (its instruction pointer, in a register or saved on
	 * the stack, points into the code object's bytecode) */
	{
		uint64_t units = get_u64(pf->chead[0] + PYF_OB_SIZE), lo = codes[0] + l->co_code;
		if (units > (1u << 24) || !pyf_seen_points_into(seen, lo, lo + 2 * units + 2))
			return PYF_STALE;
	}
	out->nids = nfr;
	return PYF_EXPANDED;
fail:
	return read_failed(pf, pid, err);
}

enum pyf_status pyframes_expand_moment(struct pyframes *pf, struct state *st, uint32_t pid, const uint64_t *pcs,
				       const bool *ra, size_t n, const struct moment_pyframe *f, size_t nf,
				       struct pyf_expansion *out)
{
	uint8_t head[PYF_CODE_HEAD];
	struct pyf_proc *p;
	size_t i, neval, nfr = 0, hsize;
	int err;

	if (!(p = sample_evals(pf, st, pid, pcs, ra, n, out, &neval)))
		return PYF_NONE;
	out->gone = 0;
	if (neval > PYF_MAX_FRAMES)
		return PYF_FAILED;
	if (!p->init && (err = proc_init(pf, p)))
		return read_failed(pf, pid, err);
	if (p->bad || (hsize = code_head_size(&p->l)) > sizeof(head))
		return PYF_FAILED;
	/* innermost first: the frames of the k-th _PyEval_EvalFrameDefault
	 * from the leaf, then the entry mark that closes them */
	out->first[0] = 0;
	out->count[0] = 0;
	for (i = 0; i < nf; i++) {
		long c;
		if (f[i].flags & MOMENT_PYF_ENTRY) {
			if (++out->neval < neval) {
				out->first[out->neval] = nfr;
				out->count[out->neval] = 0;
			}
			continue;
		}
		if (out->neval >= neval || nfr >= PYF_MAX_FRAMES)
			return PYF_FAILED;
		if ((c = code_find(p, f[i].code, f[i].stamp)) < 0) {
			/* named now, if the code object at that address is still
			 * the one the sample saw (a freed one's address may hold
			 * another by now: never named after it) */
			if ((err = read_proc(p, f[i].code, head, hsize)) && err != -EFAULT)
				return read_failed(pf, pid, err);
			if (err || get_u64(head + p->l.ob_type) != p->code_type ||
			    code_stamp(&p->l, head) != f[i].stamp) {
				/* freed since (a module's body after its import,
				 * code made by exec): the frame was there, its
				 * name is lost */
				out->ids[nfr++] = intern_frame(pf, intern_str(pf, PYF_GONE_NAME), intern_str(pf, ""), 0);
				out->count[out->neval]++;
				out->gone++;
				continue;
			}
			if ((c = code_add(pf, p, f[i].code, head)) < 0)
				return read_failed(pf, pid, (int)c);
		}
		out->ids[nfr++] = code_frame(pf, p, &p->code[c], f[i].instr);
		out->count[out->neval]++;
	}
	if (out->neval != neval || !nfr)
		return PYF_FAILED;
	out->nids = nfr;
	return PYF_EXPANDED;
}

bool pyframes_interpreter(struct pyframes *pf, struct state *st, uint32_t pid, struct pyf_layout *l,
			  uint64_t *code_type)
{
	struct pyf_proc *p = pid ? proc_of(pf, pid) : NULL;
	if (!p)
		return false;
	if (p->gen != state_gen(st, pid))
		proc_scan(pf, st, p);
	if (p->elf < 0 || p->perf || (!p->init && proc_init(pf, p)) || p->bad)
		return false;
	*l = p->l;
	*code_type = p->code_type;
	return true;
}

int pyframes_each_tstate(struct pyframes *pf, uint32_t pid, void (*fn)(void *arg, uint32_t tid, uint64_t tstate),
			 void *arg)
{
	uint32_t idx;
	struct pyf_proc *p;
	const struct pyf_layout *l;
	uint64_t interp, ts, tid;
	int ni, nt, n = 0, err;

	if (!hmap_get(&pf->proc_index, pid, &idx))
		return -ESRCH;
	p = &pf->procs[idx - 1];
	if (p->elf < 0 || !p->init || p->bad)
		return -ESRCH;
	l = &p->l;
	if ((err = read_proc(p, p->runtime + l->rt_interp_head, &interp, 8)))
		return err;
	for (ni = 0; interp && ni < PYF_MAX_INTERPS; ni++) {
		if ((err = read_proc(p, interp + l->interp_threads_head, &ts, 8)))
			return err;
		for (nt = 0; ts && nt < PYF_MAX_THREADS; nt++) {
			if ((err = read_proc(p, ts + l->ts_native_tid, &tid, 8)))
				return err;
			if (tid && tid <= 0x7fffffff) {
				fn(arg, (uint32_t)tid, ts);
				n++;
			}
			if ((err = read_proc(p, ts + l->ts_next, &ts, 8)))
				return err;
		}
		if ((err = read_proc(p, interp + l->interp_next, &interp, 8)))
			return err;
	}
	return n;
}
