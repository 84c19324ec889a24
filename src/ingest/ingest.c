#include "ingest/ingest.h"
#include "symbol/symbol.h"
#include "unwind/jitcfi.h"
#include "lib/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

/* tracepoints' common_flags (the kernel's enum trace_flag_type) */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
#define TRACE_FLAG_NMI 0x40

void ingest_init(struct ingest *g, struct store_writer *w, enum unwind_mode mode)
{
	memset(g, 0, sizeof(*g));
	g->w = w;
	g->mode = mode;
	state_init(&g->st);
	stack_table_init(&g->stacks);
	if (mode != UNWIND_MODE_FP)
		g->unwinder = unwinder_new();
	hmap_init(&g->switch_ids);
	hmap_init(&g->wake_ids);
	hmap_init(&g->foreign_wake_ids);
	hmap_init(&g->rec_pids);
	hmap_init(&g->comm_index);
	hmap_init(&g->pend_index);
	hmap_init(&g->kreason);
	hmap_init(&g->ureason);
	hmap_init(&g->code_index);
	hmap_init(&g->tail_index);
	recover_init(&g->recover);
}

void ingest_set_arch(struct ingest *g, enum unwind_arch a)
{
	if (g->unwinder)
		unwinder_set_arch(g->unwinder, a);
}

void ingest_enable_python(struct ingest *g)
{
	if (!g->py) {
		g->py = pyframes_new();
		g->pyx = xmalloc(sizeof(*g->pyx));
	}
}

void ingest_release(struct ingest *g)
{
	if (g->unwinder)
		unwinder_free(g->unwinder);
	state_release(&g->st);
	stack_table_release(&g->stacks);
	hmap_release(&g->switch_ids);
	hmap_release(&g->wake_ids);
	hmap_release(&g->foreign_wake_ids);
	hmap_release(&g->rec_pids);
	hmap_release(&g->comm_index);
	free(g->comms);
	hmap_release(&g->pend_index);
	hmap_release(&g->kreason);
	hmap_release(&g->ureason);
	if (g->usyms)
		sym_session_free(g->usyms);
	hmap_release(&g->tail_index);
	recover_release(&g->recover);
	free(g->tails);
	free(g->xstack);
	free(g->xcheck);
	free(g->pend);
	for (size_t i = 0; i < g->ncode; i++)
		free(g->code[i].bytes);
	free(g->code);
	hmap_release(&g->code_index);
	for (size_t i = 0; i < g->njitdumps; i++) {
		free(g->jitdumps[i].path);
		jit_cfi_free(g->jitdumps[i].cfi);
	}
	free(g->jitdumps);
	for (size_t i = 0; i < g->njitfiles; i++) {
		free(g->jitfiles[i].path);
		free(g->jitfiles[i].data);
	}
	free(g->jitfiles);
	pyframes_free(g->py);
	free(g->pyx);
	if (g->ksyms)
		sym_session_free(g->ksyms);
}

#define JIT_POLL_NS 50000000ull   /* sample time between reads of JIT files */
/* A JIT candidate (a process with anonymous executable memory) whose
 * file is not there is asked less and less often, up to this: most such
 * processes never write one (sanitizer runtimes, libffi trampolines),
 * and each ask is a stat of /proc/PID and an open. A runtime that writes
 * its map late and deletes it before it exits has it read if it lives
 * this long after writing it. */
#define JIT_POLL_MAX_NS 400000000ull

static void poll_jit(struct ingest *g, uint64_t now);

static void offcpu_out_sample(struct ingest *g, const struct perf_sample *s,
			      const struct rec_sample *rs, size_t nu, bool unwound, size_t nk);
static struct offcpu_pending *wake_target(struct ingest *g, const struct perf_sample *s, uint8_t *flags);
static void offcpu_wake(struct ingest *g, struct offcpu_pending *p, const struct perf_sample *s,
			const struct rec_sample *rs, uint8_t flags);
static struct offcpu_pending *pending(struct ingest *g, uint32_t pid, uint32_t tid);

/* ---- stacks ---- */

static void put_new_nodes(struct ingest *g)
{
	while (g->stacks.written < g->stacks.n) {
		size_t i = g->stacks.written++;
		store_put_node(g->w, (uint32_t)(i + 1), &g->stacks.nodes[i]);
	}
}

bool ingest_module_of(const struct state_mapping *m, struct unwind_module *out)
{
	if (!m)
		return false;
	out->path = m->path;
	out->build_id = m->build_id_size ? m->build_id : NULL;
	out->build_id_size = m->build_id_size;
	out->start = m->start;
	out->end = m->end;
	out->pgoff = m->pgoff;
	return true;
}

/* The unwinder sees the part of the mapping still mapped around pc (its
 * start and file offset moved alike, so the load bias is the same): a
 * mapping cut by a later one must not claim the addresses now another's
 * (arm64: the vDSO in ld.so's hole). */
static bool find_module(void *arg, uint64_t pc, struct unwind_module *out)
{
	struct ingest *g = arg;
	uint64_t start = 0, end = 0;
	uint32_t id = state_find_part(&g->st, g->cur_pid, pc, &start, &end);

	if (!ingest_module_of(state_mapping(&g->st, id), out))
		return false;
	if (start > out->start && start < out->end) {
		out->pgoff += start - out->start;
		out->start = start;
	}
	if (end > out->start && end < out->end)
		out->end = end;
	return true;
}

/* Mappings up to this size are copied whole on first use and kept: JIT
 * runtimes fill a code arena before making it executable (CPython's
 * trampolines), so the copy stays right, even after the process exits. */
#define CODE_COPY_MAX (1u << 20)

static bool read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return pid && process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Read code of the current sample's process (unwind_read_code_fn). Only
 * anonymous memory is read: file-backed code has CFI or symbols. */
static bool read_code(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	struct ingest *g = arg;
	uint32_t id = state_find(&g->st, g->cur_pid, addr), at;
	const struct state_mapping *m = state_mapping(&g->st, id);

	if (m && m->path[0] == '/')
		return false;
	if (!m || m->end - m->start > CODE_COPY_MAX)
		return g->live && read_mem(g->cur_pid, addr, buf, len);
	if (addr < m->start || len > m->end - addr)
		return false;
	if (!hmap_get(&g->code_index, id, &at)) {
		struct ingest_code cc = { NULL, 0 };
		if (!g->live)
			return false;
		cc.bytes = xmalloc(m->end - m->start);
		if (read_mem(g->cur_pid, m->start, cc.bytes, m->end - m->start)) {
			cc.len = m->end - m->start;
		} else {
			free(cc.bytes);
			cc.bytes = NULL;
		}
		GROW(g->code, g->codecap, g->ncode + 1);
		g->code[g->ncode++] = cc;
		at = (uint32_t)g->ncode;
		hmap_put(&g->code_index, id, at);
	}
	if (!g->code[at - 1].bytes)
		return false;
	memcpy(buf, g->code[at - 1].bytes + (addr - m->start), len);
	return true;
}

/* Read the current sample's stack beyond its copy from the live process
 * (unwind_read_stack_fn). */
static long read_stack(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	struct ingest *g = arg;
	struct iovec local = { buf, len }, remote[16];
	uint64_t a = addr;
	int n = 0;
	ssize_t r;

	if (!g->cur_pid)
		return -ESRCH;
	/* page by page: a read that runs past the top of the stack stops
	 * there (partial reads stop at a whole remote element) */
	while (n < 16 && a < addr + len) {
		uint64_t next = MIN((a | 4095) + 1, addr + len);
		remote[n].iov_base = (void *)(uintptr_t)a;
		remote[n].iov_len = (size_t)(next - a);
		n++;
		a = next;
	}
	local.iov_len = (size_t)(a - addr);
	r = process_vm_readv((pid_t)g->cur_pid, &local, 1, remote, (unsigned long)n, 0);
	if (r < 0)
		return errno == EACCES ? -EPERM : -errno;
	return r ? (long)r : -EFAULT;
}

/* Unwind tables from the jitdump of the current sample's process
 * (unwind_jit_table_fn). A miss reads the file again (from where the last
 * read stopped) when it grew, at most every 10 ms: the program appends
 * its code loads while it runs. */
static const struct utable *jit_table(void *arg, uint64_t pc)
{
	struct ingest *g = arg;
	struct ingest_jitdump *d = NULL;
	const struct utable *t;
	uint64_t now;
	size_t i, size;
	void *data;
	char why[256], err[256];
	int ret;

	for (i = 0; i < g->njitdumps && !d; i++)
		if (g->jitdumps[i].pid == g->cur_pid)
			d = &g->jitdumps[i];
	if (!d)
		return NULL;
	if ((t = jit_cfi_find(d->cfi, pc)))
		return t;
	now = now_ns();
	if (d->checked && now - d->checked < 10000000ull)
		return NULL;
	d->checked = now;
	ret = sym_jit_read_file(d->path, &data, &size, why, sizeof(why));
	if (ret < 0) {
		if (ret != -ENOENT && !d->warned)
			warn("not unwinding with %s: %s", d->path, ret == -EPERM ? why : strerror(-ret));
		d->warned = true;
		return NULL;
	}
	if (size != d->size && jit_cfi_add(d->cfi, data, size, &d->off, err, sizeof(err)) < 0 &&
	    !d->warned) {
		warn("not unwinding with %s: %s", d->path, err);
		d->warned = true;
	}
	d->size = size;
	free(data);
	return jit_cfi_find(d->cfi, pc);
}

/* Thread tid's slot in g->tails (a new one is zeroed). */
static struct ingest_tail *tail_slot(struct ingest *g, uint32_t tid)
{
	uint32_t at;
	if (!hmap_get(&g->tail_index, tid, &at)) {
		GROW(g->tails, g->tailcap, g->ntails + 1);
		at = (uint32_t)g->ntails++;
		memset(&g->tails[at], 0, sizeof(g->tails[at]));
		g->tails[at].tid = tid;
		hmap_put(&g->tail_index, tid, at);
	}
	return &g->tails[at];
}

/* The top of thread tid's stack, from the stacks of it that reached
 * their root; a stack cut where its copy ended is counted by whether
 * the largest copy (65528 bytes) would have reached that top. */
static void stack_depth(struct ingest *g, uint32_t tid, uint64_t sp, const struct unwind_result *res)
{
	uint32_t at;

	if (res->quality == UNWIND_Q_COMPLETE && res->depth && res->method == UNWIND_M_DWARF) {
		struct ingest_tail *t = tail_slot(g, tid);
		t->top = MAX(t->top, sp + res->depth);
		return;
	}
	if (res->quality != UNWIND_Q_TRUNCATED || res->stop != UNWIND_STOP_COPY ||
	    !hmap_get(&g->tail_index, tid, &at) || g->tails[at].top <= sp)
		return;
	if (g->tails[at].top - sp <= 65528)
		g->cut_within_max++;
	else
		g->cut_beyond_max++;
}

/* Keep the outermost frames of a stack DWARF unwound to its root, or
 * complete a spliced one from them (see struct ingest_tail). Sound because
 * a thread's outermost frames do not change while it lives: the same
 * return address into __libc_start_call_main or start_thread has the same
 * callers. */
static void root_tail(struct ingest *g, uint32_t tid, struct unwind_result *res)
{
	struct ingest_tail *t;
	uint32_t at;
	size_t i, j, n = res->n;

	if (res->quality != UNWIND_Q_COMPLETE || !n)
		return;
	if (res->method == UNWIND_M_DWARF) {
		t = tail_slot(g, tid);
		t->n = (uint8_t)MIN(n, (size_t)INGEST_TAIL);
		for (i = 0; i < t->n; i++)
			t->pc[i] = g->frames[n - t->n + i].pc;
		return;
	}
	if (res->method != UNWIND_M_SPLICED || !hmap_get(&g->tail_index, tid, &at))
		return;
	t = &g->tails[at];
	for (j = 0; j + 1 < t->n && t->pc[j] != g->frames[n - 1].pc; j++)
		;
	if (j + 1 >= t->n)
		return;
	for (j++; j < t->n && res->n < INGEST_MAX_FRAMES; j++) {
		g->frames[res->n].pc = t->pc[j];
		g->frames[res->n].flags = UNWIND_F_RA;
		res->n++;
	}
}

/* The stack of a thread off the CPU past the kernel's copy: read from
 * the process, up to this much in all. */
#define STACK_READ_MAX (512u << 10)

/* Bytes of the stack of s's process from addr into buf (up to len, page
 * by page: the read stops at the first page that is not mapped). */
static size_t read_stack_pages(uint32_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	struct iovec local = { buf, len }, remote[64];
	size_t n = 0, done = 0;
	ssize_t got;
	while (done < len) {
		uint64_t a = addr + done;
		size_t k = 0, part = 0;
		for (; k < 64 && done + part < len; k++) {
			size_t step = MIN((size_t)(4096 - ((a + part) & 4095)), len - done - part);
			remote[k].iov_base = (void *)(uintptr_t)(a + part);
			remote[k].iov_len = step;
			part += step;
		}
		local.iov_base = buf + done;
		local.iov_len = part;
		got = process_vm_readv((pid_t)pid, &local, 1, remote, k, 0);
		if (got <= 0)
			break;
		done += (size_t)got;
		n = done;
		if ((size_t)got < part)
			break;
	}
	return n;
}

/* A switch-out's stack copy ended before the unwinding did: read the
 * rest of the stack from the process, while the thread is still off the
 * CPU (no switch-in of it handled yet, and the copied bytes are still
 * what the stack holds, read again after the rest), into g->xstack.
 * Returns the bytes of the longer stack (copy and rest), 0 if none. */
static size_t extend_stack(struct ingest *g, const struct perf_sample *s, uint64_t sp)
{
	struct offcpu_pending *p;
	uint32_t at;
	size_t have = (size_t)s->stack_dyn_size, more;

	if (!g->live || g->no_read_stack || !hmap_get(&g->pend_index, s->tid, &at))
		return 0;
	p = &g->pend[at];
	if (p->last_in > s->time || p->dead)
		return 0;
	if (!g->xstack) {
		g->xstack = xmalloc(STACK_READ_MAX);
		g->xcheck = xmalloc(STACK_READ_MAX);
	}
	if (have >= STACK_READ_MAX)
		return 0;
	memcpy(g->xstack, s->stack, have);
	more = read_stack_pages(s->pid, sp + have, g->xstack + have, STACK_READ_MAX - have);
	if (!more || read_stack_pages(s->pid, sp, g->xcheck, have) != have ||
	    memcmp(g->xcheck, s->stack, have)) {
		g->stack_reads_stale++;
		return 0;
	}
	g->stack_reads++;
	return have + more;
}

/* Unwind the user part of s from its registers and stack copy. Replaces
 * uframes[0..*nu); returns false when the sample has no user registers.
 * switch_out: s is a switch-out, whose stack can be read on (*extended:
 * it was). */
static bool unwind_user(struct ingest *g, const struct perf_sample *s, size_t *nu,
			struct rec_sample *out, bool switch_out, bool *extended)
{
	struct unwind_input in;
	struct unwind_result res;
	size_t k = 0;

	if (!s->regs_abi || !s->regs)
		return false;
	memset(&in, 0, sizeof(in));
	/* in perf's order for the recording's machine (unwind/arch.h) */
	unwind_regs_from_perf(unwinder_arch(g->unwinder), s->regs_mask, s->regs,
			      (size_t)__builtin_popcountll(s->regs_mask), &in.regs);
	if (!(in.regs.valid & (1u << UNW_PC)) || !(in.regs.valid & (1u << UNW_SP)))
		return false;
	in.stack = s->stack;
	in.stack_size = s->stack ? (size_t)s->stack_dyn_size : 0;
	in.fp_chain = g->uframes;
	in.fp_chain_len = *nu;
	in.find = find_module;
	in.find_arg = g;
	in.read_code = read_code;
	in.jit_table = g->njitdumps ? jit_table : NULL;
	in.read_stack = g->live && !g->no_read_stack ? read_stack : NULL;
	in.read_deep = !switch_out; /* extend_stack() reads a sleeper's */
	in.space = state_gen(&g->st, s->pid);
	g->cur_pid = s->pid;
	unwind_sample(g->unwinder, g->mode, &in, g->frames, INGEST_MAX_FRAMES, &res);
	if (switch_out && res.quality != UNWIND_Q_COMPLETE && res.stop == UNWIND_STOP_COPY &&
	    s->stack_dyn_size == s->stack_size && in.stack_size) {
		size_t n = extend_stack(g, s, in.regs.r[UNW_SP]);
		if (n) {
			in.stack = g->xstack;
			in.stack_size = n;
			unwind_sample(g->unwinder, g->mode, &in, g->frames, INGEST_MAX_FRAMES, &res);
			*extended = true;
		}
	}
	g->deep_reads += res.deep == 1;
	g->deep_stale += res.deep == 2;
	g->deep_gone += res.deep == 3;
	stack_depth(g, s->tid, in.regs.r[UNW_SP], &res);
	root_tail(g, s->tid, &res);
	for (k = 0; k < res.n && g->frames[k].pc >= 4096; k++)
		g->uframes[k] = g->frames[k].pc;
	*nu = k;
	out->quality = (uint8_t)(res.quality | (unsigned)res.stop << SAMPLE_Q_STOP_SHIFT);
	out->method = (uint8_t)(res.method | (res.jit & UNWIND_JIT_ALL) << SAMPLE_M_JIT_SHIFT |
				(res.read_frames ? SAMPLE_M_READ : 0));
	if (res.jit_frames) {
		g->jit_samples++;
		g->jit_frames += res.jit_frames;
	}
	return true;
}

/* Frame k from the root of the sample's stack: user frames, then kernel. */
static void frame_at(const struct ingest *g, size_t k, size_t nu, bool unwound, size_t nk,
		     uint64_t *addr, uint32_t *flags)
{
	size_t i;
	bool ra;
	if (k < nu) {
		i = nu - 1 - k;
		if (g->ukind_on)
			ra = (g->ukind[i] & UKIND_RA) != 0;
		else
			ra = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
		*addr = g->uframes[i];
		*flags = NODE_USER | (ra ? NODE_F_RA : 0);
	} else {
		i = nk - 1 - (k - nu);
		*addr = g->kframes[i];
		*flags = NODE_KERNEL | (i ? NODE_F_RA : 0);
	}
}

/* The node of the sample's stack (uframes[0..nu) and kframes[0..nk),
 * leaf first) under its process's root. Frames that the thread slot's
 * last stack has at the same depth, with the same frames above them,
 * take their node from it. */
static uint32_t intern_stack(struct ingest *g, uint32_t pid, uint32_t tid, size_t nu,
			     bool unwound, size_t nk)
{
	struct state_proc *p = state_proc(&g->st, pid);
	struct ingest_last *last = &g->last[tid % INGEST_LAST_WAYS];
	uint32_t node, flags;
	uint64_t addr;
	size_t k, n = nu + nk;
	bool same;

	if (!p->root)
		p->root = stack_intern(&g->stacks, 0, pid, p->image, NODE_ROOT);
	node = p->root;
	same = last->gen == p->gen;
	for (k = 0; k < n; k++) {
		frame_at(g, k, nu, unwound, nk, &addr, &flags);
		if (same && k < last->n && last->addr[k] == addr && last->flags[k] == flags) {
			node = last->node[k];
			continue;
		}
		same = false;
		node = stack_intern(&g->stacks, node, addr,
				    k < nu && !(g->ukind_on && (g->ukind[nu - 1 - k] & UKIND_PY)) ?
				    state_find(&g->st, pid, addr) : 0, flags);
		if (k < INGEST_LAST_FRAMES) {
			last->addr[k] = addr;
			last->flags[k] = flags;
			last->node[k] = node;
		}
	}
	last->gen = p->gen;
	last->n = (uint32_t)MIN(n, (size_t)INGEST_LAST_FRAMES);
	return node;
}

/* Put the Python frames each _PyEval_EvalFrameDefault frame of the
 * sample's user stack (uframes[0..nu), leaf first) was running above it,
 * read from the live interpreter (pyframes.h); sets ukind and returns the
 * new count. A sample whose chain cannot be read or does not validate
 * keeps its frames and is marked. */
static size_t expand_python(struct ingest *g, const struct perf_sample *s, size_t nu, bool unwound,
			    struct rec_sample *rs)
{
	bool *ra = g->ra_py;
	uint64_t *pcs = g->frames_py;
	struct pyf_expansion *x = g->pyx;
	struct pyf_sample seen;
	enum pyf_status st;
	size_t i, k, n = 0, ev = 0;

	g->ukind_on = false;
	if (!g->py || !nu)
		return nu;
	if (SAMPLE_M_JIT(rs->method) & (UNWIND_JIT_TRAMPOLINE | UNWIND_JIT_CFI)) {
		/* through CPython's perf trampolines (-X perf, -X perf_jit): the
		 * process names its Python frames itself */
		pyframes_has_perf_frames(g->py, s->pid);
		return nu;
	}
	for (i = 0; i < nu; i++)
		ra[i] = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
	seen.regs = s->regs_abi ? s->regs : NULL;
	seen.nregs = s->regs_abi && s->regs ? (size_t)__builtin_popcountll(s->regs_mask) : 0;
	seen.stack = s->stack;
	seen.stack_size = s->stack ? (size_t)s->stack_dyn_size : 0;
	st = pyframes_expand(g->py, &g->st, s->pid, s->tid, g->uframes, ra, nu, &seen, x);
	if (st == PYF_NONE)
		return nu;
	if (st != PYF_EXPANDED || nu + x->nids > INGEST_MAX_FRAMES) {
		rs->method |= SAMPLE_M_PYTHON_FAILED;
		if (st == PYF_NO_ACCESS)
			g->py_noaccess++;
		else if (st == PYF_STALE)
			g->py_stale++;
		else
			g->py_failed++;
		return nu;
	}
	memcpy(pcs, g->uframes, nu * sizeof(*pcs));
	for (i = 0; i < nu; i++) {
		if (x->is_eval_pos[i] && ev < x->neval) {
			/* the Python frames it runs are its callees: leafward */
			for (k = 0; k < x->count[ev]; k++) {
				g->uframes[n] = PYFRAME_ADDR_MIN - 1 + x->ids[x->first[ev] + k];
				g->ukind[n++] = UKIND_PY;
			}
			ev++;
		}
		g->uframes[n] = pcs[i];
		g->ukind[n++] = ra[i] ? UKIND_RA : 0;
	}
	g->ukind_on = true;
	rs->method |= SAMPLE_M_PYTHON;
	g->py_expanded++;
	return n;
}

static void on_sample(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_sample s;
	if (perf_sample_parse(f, h, &s)) {
		g->bad_records++;
		return;
	}
	ingest_sample(g, f, &s);
}

void ingest_sample(struct ingest *g, const struct perf_format *f, const struct perf_sample *s)
{
	struct rec_sample rs;
	uint64_t i, ctx = PERF_CONTEXT_USER;
	size_t nk = 0, nu = 0, nchain = 0;
	uint32_t node;
	bool unwound = false, capped, wake = false, extended = false;
	struct offcpu_pending *woken = NULL;
	uint8_t wake_flags = 0;

	/* a wake-up matters only when it ends a wait: unwind no other */
	if (g->wakers && hmap_get(&g->foreign_wake_ids, s->id, &node)) {
		if (!(woken = wake_target(g, s, &wake_flags)))
			return;
		offcpu_wake(g, woken, s, NULL, wake_flags);
		return;
	}
	if (g->wakers && hmap_get(&g->wake_ids, s->id, &node)) {
		g->wakes++;
		if (!(woken = wake_target(g, s, &wake_flags)))
			return;
		if (wake_flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_NMI | TRACE_FLAG_SOFTIRQ)) {
			/* the interrupted thread woke no one: no stack */
			offcpu_wake(g, woken, s, NULL, wake_flags);
			return;
		}
		wake = true;
	}

	for (i = 0; i < s->callchain_nr; i++) {
		uint64_t a;
		memcpy(&a, s->callchain + i, 8);
		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		nchain++;
		if (ctx == PERF_CONTEXT_KERNEL && nk < INGEST_MAX_FRAMES) {
			g->kframes[nk++] = a;
		} else if (ctx == PERF_CONTEXT_USER && nu < INGEST_MAX_FRAMES) {
			/* A zero (or page-zero) return address ends the chain:
			 * the outermost frame pointer was 0 or garbage. */
			if (a < 4096) {
				ctx = PERF_CONTEXT_MAX; /* ignore the rest */
				continue;
			}
			g->uframes[nu++] = a;
		}
	}
	/* The kernel stops both chains together at sample_max_stack entries
	 * (kernel.perf_event_max_stack): callers beyond it are lost, unless
	 * DWARF unwinding reached the root anyway (counted below). */
	capped = g->max_stack && nchain >= g->max_stack;
	if (!nk && !nu && (f->sample_type & PERF_SAMPLE_IP)) {
		if ((s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			g->kframes[nk++] = s->ip;
		else
			g->uframes[nu++] = s->ip;
	}
	/* names and mappings whose records were lost: from /proc, before
	 * the unwinder looks the frames up. Only a pc in user mode is sure
	 * to be mapped: in the kernel, an exec has replaced the mappings
	 * before the user registers. */
	if (g->recover.on)
		recover_sample(g, s->pid, s->tid, s->time,
			       nu && (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER ?
			       g->uframes[0] : 0);
	memset(&rs, 0, sizeof(rs));
	rs.time = s->time;
	rs.weight = (f->sample_type & PERF_SAMPLE_PERIOD) ? s->period : 1;
	rs.pid = s->pid;
	rs.tid = s->tid;
	rs.cpu = (uint16_t)s->cpu;
	rs.quality = UNWIND_Q_UNKNOWN;
	rs.method = UNWIND_M_FP;
	if (g->unwinder)
		unwound = unwind_user(g, s, &nu, &rs,
				      g->offcpu && !wake && hmap_get(&g->switch_ids, s->id, &node), &extended);
	if (capped && SAMPLE_Q(rs.quality) != UNWIND_Q_COMPLETE) {
		g->chains_capped++;
		if (SAMPLE_Q(rs.quality) == UNWIND_Q_UNKNOWN)
			rs.quality = (uint8_t)(UNWIND_STOP_CHAIN << SAMPLE_Q_STOP_SHIFT);
	}
	g->quality[SAMPLE_Q(rs.quality)]++;
	g->method[(rs.method & 3) < 3 ? rs.method & 3 : 0]++;

	nu = expand_python(g, s, nu, unwound, &rs);
	rs.stack = intern_stack(g, rs.pid, rs.tid, nu, unwound, nk);
	g->ukind_on = false;
	put_new_nodes(g);
	if (wake) {
		offcpu_wake(g, woken, s, &rs, wake_flags);
		return;
	}
	if (g->offcpu && hmap_get(&g->switch_ids, s->id, &node)) {
		offcpu_out_sample(g, s, &rs, nu, unwound, nk);
		pending(g, rs.pid, rs.tid)->read = extended;
		return;
	}
	/* the recorder's queue kept only the top of the stack copy */
	if (g->live && (s->misc & QUEUE_MISC_TRIMMED)) {
		rs.quality |= SAMPLE_Q_TRIMMED;
		g->trimmed++;
	}
	store_put_sample(g->w, &rs);
	g->samples++;
	if (g->njitfiles && g->live && rs.time - g->jit_polled >= JIT_POLL_NS) {
		g->jit_polled = rs.time;
		poll_jit(g, rs.time);
	}
	if (!g->first_time || rs.time < g->first_time)
		g->first_time = rs.time;
	if (rs.time > g->last_time)
		g->last_time = rs.time;
}

/* ---- JIT symbol files, read while they exist ---- */

static void jitfile_note(struct ingest *g, uint32_t pid, bool dump, const char *path)
{
	char buf[64];
	struct ingest_jitfile *jf;

	if (!dump) {
		snprintf(buf, sizeof(buf), "/tmp/perf-%u.map", pid);
		path = buf;
	}
	if ((jf = (struct ingest_jitfile *)ingest_jitfile(g, pid, dump, path))) {
		jf->done = false; /* the pid came back: another process */
		jf->next = jf->gap = 0;
		jf->uid = -1;
		return;
	}
	GROW(g->jitfiles, g->jitfilecap, g->njitfiles + 1);
	jf = &g->jitfiles[g->njitfiles++];
	memset(jf, 0, sizeof(*jf));
	jf->pid = pid;
	jf->dump = dump;
	jf->uid = -1;
	jf->path = xstrdup(path);
}

const struct ingest_jitfile *ingest_jitfile(const struct ingest *g, uint32_t pid, bool dump,
					   const char *path)
{
	for (size_t i = 0; i < g->njitfiles; i++) {
		const struct ingest_jitfile *jf = &g->jitfiles[i];
		if (jf->pid == pid && jf->dump == dump && (!dump || !strcmp(jf->path, path)))
			return jf;
	}
	return NULL;
}

/* Read what jf's file gained. The file is trusted as at stop (a regular
 * file, not writable by others, owned by root, by us, or by the user of
 * the process it describes); one that fails is left for the reading at
 * stop to warn about. JIT files only grow: a shorter one is read anew. */
static void jitfile_poll(struct ingest_jitfile *jf, uint64_t now)
{
	struct stat st;
	char why[512], proc[32];
	size_t want;
	bool alive;
	int fd;

	if (jf->done || now < jf->next)
		return;
	/* read once more after the process exited (it may have written
	 * its last lines at exit), then no more: a system-wide recording
	 * sees thousands of processes come and go */
	snprintf(proc, sizeof(proc), "/proc/%u", jf->pid);
	alive = stat(proc, &st) == 0;
	if (alive && jf->uid < 0)
		jf->uid = (long)st.st_uid;
	jf->done = !alive;
	fd = open(jf->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		/* not there (yet, or any more): keep what was read, ask later */
		jf->gap = jf->gap ? MIN(2 * jf->gap, JIT_POLL_MAX_NS) : JIT_POLL_NS;
		jf->next = now + jf->gap;
		return;
	}
	jf->gap = 0;
	if (fstat(fd, &st) || sym_jit_check_file(jf->path, &st, jf->uid, why, sizeof(why)) < 0 ||
	    (size_t)st.st_size == jf->len)
		goto out;
	if ((size_t)st.st_size < jf->len)
		jf->len = 0;
	want = (size_t)st.st_size;
	if (want > jf->cap) {
		jf->data = xrealloc(jf->data, want);
		jf->cap = want;
	}
	while (jf->len < want) {
		ssize_t n = pread(fd, jf->data + jf->len, want - jf->len, (off_t)jf->len);
		if (n <= 0)
			break;
		jf->len += (size_t)n;
	}
out:
	close(fd);
}

/* The JIT files due at sample time now (UINT64_MAX: all of them). */
static void poll_jit(struct ingest *g, uint64_t now)
{
	if (!g->live)
		return;
	for (size_t i = 0; i < g->njitfiles; i++)
		jitfile_poll(&g->jitfiles[i], now);
}

void ingest_poll_jit(struct ingest *g)
{
	poll_jit(g, UINT64_MAX);
}

/* ---- processes, names, mappings ---- */

void ingest_seed_mapping(struct ingest *g, uint32_t pid, uint64_t time, const struct state_mapping *in)
{
	const struct state_mapping *m = state_add_mapping(&g->st, pid, in);
	/* a big binary's unwind table, compiled before its first sample */
	if (g->live && g->unwinder)
		unwind_prefetch(g->unwinder, m->path, m->build_id, m->build_id_size);
	/* JIT code: read its symbol files while they exist */
	if (g->live && sym_path_is_anon(m->path))
		jitfile_note(g, pid, false, NULL);
	else if (g->live && sym_path_is_jitdump(m->path))
		jitfile_note(g, pid, true, m->path);
	struct rec_mapping rm;
	memset(&rm, 0, sizeof(rm));
	rm.id = m->id;
	rm.pid = m->pid;
	rm.time = time;
	rm.start = m->start;
	rm.end = m->end;
	rm.pgoff = m->pgoff;
	rm.inode = m->inode;
	rm.maj = m->maj;
	rm.min = m->min;
	rm.prot = 5;
	rm.build_id_size = m->build_id_size;
	memcpy(rm.build_id, m->build_id, sizeof(rm.build_id));
	store_put_mapping(g->w, &rm, m->path);
}

void ingest_seed_comm(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, const char *name)
{
	struct rec_comm c;
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.tid = tid;
	c.time = time;
	store_put_comm(g->w, &c, name);
	recover_note_comm(g, pid, tid, name);
	hmap_put(&g->rec_pids, pid, 1);
}

void ingest_mapping_of_mmap(const struct perf_mmap *mm, struct state_mapping *m)
{
	memset(m, 0, sizeof(*m));
	m->start = mm->start;
	m->end = mm->start + mm->len;
	m->pgoff = mm->pgoff;
	m->maj = mm->maj;
	m->min = mm->min;
	m->inode = mm->inode;
	m->build_id_size = mm->build_id_size;
	memcpy(m->build_id, mm->build_id, mm->build_id_size);
	m->path = (char *)mm->name;
}

/* MMAP (type 1) and MMAP2 (type 10): executable mappings only. */
static void on_mmap(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_mmap mm;
	struct state_mapping m;
	struct perf_sample id;

	if (perf_mmap_parse(f, h, &mm)) {
		g->bad_records++;
		return;
	}
	if (mm.data)
		return;
	if (!mm.name) {
		g->bad_records++;
		return;
	}
	if (!(mm.prot & 4 /* PROT_EXEC */))
		return;
	ingest_mapping_of_mmap(&mm, &m);
	if (sym_path_is_jitdump(mm.name)) {
		size_t i = 0;
		while (i < g->njitdumps && g->jitdumps[i].pid != mm.pid)
			i++;
		if (i == g->njitdumps) {
			GROW(g->jitdumps, g->jitdumpcap, g->njitdumps + 1);
			memset(&g->jitdumps[i], 0, sizeof(g->jitdumps[i]));
			g->jitdumps[i].pid = mm.pid;
			g->jitdumps[i].path = xstrdup(mm.name);
			g->jitdumps[i].cfi = jit_cfi_new();
			g->njitdumps++;
		}
	}
	perf_sample_id_parse(f, h, &id);
	ingest_seed_mapping(g, mm.pid, id.time, &m);
}

static void on_comm(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	const uint8_t *end = (const uint8_t *)h + h->size - perf_sample_id_size(f);
	struct perf_sample id;
	struct rec_comm c;
	uint32_t pidtid[2];
	const char *name = (const char *)p + 8;

	if (end < p + 9 || strnlen(name, (size_t)(end - p - 8)) == (size_t)(end - p - 8)) {
		g->bad_records++;
		return;
	}
	memcpy(pidtid, p, 8);
	perf_sample_id_parse(f, h, &id);
	memset(&c, 0, sizeof(c));
	c.pid = pidtid[0];
	c.tid = pidtid[1];
	c.time = id.time;
	if (h->misc & PERF_RECORD_MISC_COMM_EXEC) {
		c.flags = COMM_F_EXEC;
		state_exec(&g->st, c.pid);
	}
	store_put_comm(g->w, &c, name);
	recover_note_comm(g, c.pid, c.tid, name);
	hmap_put(&g->rec_pids, c.pid, 1);
}

static void on_task(struct ingest *g, const struct perf_event_header *h)
{
	struct rec_task t;
	if (h->size < sizeof(*h) + 24) {
		g->bad_records++;
		return;
	}
	memcpy(&t, h + 1, 24);
	if (h->type == PERF_RECORD_FORK) {
		uint32_t at;
		if (g->offcpu && hmap_get(&g->pend_index, t.tid, &at))
			g->pend[at].dead = false; /* a tid used again */
		state_fork(&g->st, t.pid, t.ppid);
		hmap_put(&g->rec_pids, t.pid, 1);
		store_put_task(g->w, REC_FORK, &t);
		recover_note_fork(g, t.pid, t.ppid, t.tid);
	} else {
		store_put_task(g->w, REC_EXIT, &t);
		recover_note_exit(g, t.pid, t.tid, t.time);
		/* a thread's last switch-out is its death, not a wait */
		if (g->offcpu) {
			struct offcpu_pending *p = pending(g, t.pid, t.tid);
			p->out_time = 0;
			p->dead = true;
		}
	}
}

/* ---- off-CPU intervals ---- */

void ingest_enable_offcpu(struct ingest *g)
{
	g->offcpu = true;
	if (!g->ksyms)
		g->ksyms = sym_session_new();
}

void ingest_add_switch_id(struct ingest *g, uint64_t id)
{
	hmap_put(&g->switch_ids, id, 1);
}

void ingest_enable_wakers(struct ingest *g, uint32_t flags_off, uint32_t pid_off)
{
	g->wakers = true;
	g->wake_flags_off = flags_off;
	g->wake_pid_off = pid_off;
}

void ingest_add_wake_id(struct ingest *g, uint64_t id)
{
	hmap_put(&g->wake_ids, id, 1);
}

void ingest_add_foreign_wake_id(struct ingest *g, uint64_t id)
{
	hmap_put(&g->foreign_wake_ids, id, 1);
}

/* The name of thread tid of process pid outside the recording, read from
 * /proc once (while live), "" when unknown. */
static const char *foreign_comm(struct ingest *g, uint32_t pid, uint32_t tid)
{
	uint32_t at;
	char path[64];
	FILE *f;
	if (hmap_get(&g->comm_index, tid, &at))
		return g->comms[at - 1];
	GROW(g->comms, g->commcap, g->ncomms + 1);
	g->comms[g->ncomms][0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (g->live && (f = fopen(path, "re"))) {
		if (fgets(g->comms[g->ncomms], 16, f))
			g->comms[g->ncomms][strcspn(g->comms[g->ncomms], "\n")] = 0;
		fclose(f);
	}
	hmap_put(&g->comm_index, tid, (uint32_t)++g->ncomms);
	return g->comms[g->ncomms - 1];
}

/* The thread a sched_waking sample wakes, when it is off the CPU since
 * before the wake-up and no earlier wake-up ended that wait (the first
 * one does: the thread is runnable after it); NULL otherwise. *flags:
 * the tracepoint's common_flags. */
static struct offcpu_pending *wake_target(struct ingest *g, const struct perf_sample *s, uint8_t *flags)
{
	struct offcpu_pending *p;
	int32_t tid;
	uint32_t at;

	if (!s->raw || s->raw_size < g->wake_pid_off + 4u || s->raw_size < g->wake_flags_off + 1u) {
		g->bad_records++;
		return NULL;
	}
	memcpy(&tid, s->raw + g->wake_pid_off, 4);
	*flags = s->raw[g->wake_flags_off];
	if (tid <= 0 || !hmap_get(&g->pend_index, (uint32_t)tid, &at))
		return NULL;
	p = &g->pend[at];
	if (!p->out_time || p->preempt || s->time < p->out_time)
		return NULL;
	/* a recorded waker seen by the event without stacks first: its
	 * own event's sample (same wake-up) completes it */
	if (p->woken && !(p->wk_partial && s->tid == p->wk.waker_tid &&
			  hmap_get(&g->wake_ids, s->id, &at)))
		return NULL;
	return p;
}

/* Keep the wake-up of p (rs: the waker's sample with its stack; NULL in
 * interrupt context), written with p's interval when it ends. */
static void offcpu_wake(struct ingest *g, struct offcpu_pending *p, const struct perf_sample *s,
			const struct rec_sample *rs, uint8_t flags)
{
	uint32_t at;
	memset(&p->wk, 0, sizeof(p->wk));
	p->woken = true;
	p->wk_partial = false;
	p->wk.time = s->time;
	p->wk.tid = p->tid;
	if (flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_NMI)) {
		p->wk.kind = WAKER_IRQ;
	} else if (flags & TRACE_FLAG_SOFTIRQ) {
		p->wk.kind = WAKER_SOFTIRQ;
	} else if (!rs && hmap_get(&g->rec_pids, s->pid, &at)) {
		/* a recorded thread: its own event (with the stack) should
		 * follow; should it not (a thread's wake-ups as it exits),
		 * the thread without its stack */
		p->wk.kind = WAKER_THREAD;
		p->wk.waker_pid = s->pid;
		p->wk.waker_tid = s->tid;
		p->wk_partial = true;
		return;
	} else if (!rs) {
		p->wk.kind = WAKER_OTHER;
		p->wk.waker_pid = s->pid;
		p->wk.waker_tid = s->tid;
		snprintf(p->comm, sizeof(p->comm), "%s", foreign_comm(g, s->pid, s->tid));
	} else {
		p->wk.kind = WAKER_THREAD;
		p->wk.waker_pid = s->pid;
		p->wk.waker_tid = s->tid;
		if (rs) {
			p->wk.stack = rs->stack;
			p->wk.flags = (uint8_t)((SAMPLE_Q(rs->quality) | (rs->method & 3) << 2) << 4);
		}
	}
	g->wakes_kept++;
}

static struct offcpu_pending *pending(struct ingest *g, uint32_t pid, uint32_t tid)
{
	uint32_t at;
	if (!hmap_get(&g->pend_index, tid, &at)) {
		GROW(g->pend, g->pendcap, g->npend + 1);
		memset(&g->pend[g->npend], 0, sizeof(*g->pend));
		g->pend[g->npend].tid = tid;
		at = (uint32_t)g->npend++;
		hmap_put(&g->pend_index, tid, at);
	}
	g->pend[at].pid = pid;
	return &g->pend[at];
}

/* Kernel functions that say why a thread blocked, matched against the
 * names of the frames of the kernel stack at the switch-out. A match of a
 * lower tier wins wherever it is in the stack; within a tier the frame
 * nearest the leaf decides (a mutex taken inside write() is a lock).
 *   tier 0: a page fault, even one taken inside read() or write()
 *   tier 1: what the thread asked for (the syscall and its subsystem)
 *   tier 2: generic waits that many syscalls use (fsync waits for the
 *           flush in wait_for_completion_io: that is a write)
 * Patterns match as substrings, or whole names where marked. */
struct reason_pat {
	const char *pat;
	uint8_t reason, tier;
	bool whole;
	bool futex;       /* a futex wait: the user frames say lock or wait */
};
static const struct reason_pat reason_pats[] = {
	{ "exc_page_fault", OFFCPU_FAULT, 0, false, false }, { "handle_mm_fault", OFFCPU_FAULT, 0, false, false },
	{ "do_user_addr_fault", OFFCPU_FAULT, 0, false, false }, { "__do_fault", OFFCPU_FAULT, 0, false, false },
	{ "futex", OFFCPU_LOCK, 1, false, true }, { "__mutex_lock", OFFCPU_LOCK, 1, false, false },
	{ "rwsem_down", OFFCPU_LOCK, 1, false, false }, { "rt_mutex", OFFCPU_LOCK, 1, false, false },
	{ "flock", OFFCPU_LOCK, 1, false, false }, { "fcntl_setlk", OFFCPU_LOCK, 1, false, false },
	{ "nanosleep", OFFCPU_SLEEP, 1, false, false }, { "msleep", OFFCPU_SLEEP, 1, false, false },
	{ "_sys_alarm", OFFCPU_SLEEP, 1, false, false },
	{ "do_poll", OFFCPU_POLL, 1, false, false }, { "do_sys_poll", OFFCPU_POLL, 1, false, false },
	{ "do_select", OFFCPU_POLL, 1, false, false }, { "core_sys_select", OFFCPU_POLL, 1, false, false },
	{ "ep_poll", OFFCPU_POLL, 1, false, false }, { "epoll_wait", OFFCPU_POLL, 1, false, false },
	{ "do_wait", OFFCPU_POLL, 1, false, false }, { "wait4", OFFCPU_POLL, 1, false, false },
	{ "waitid", OFFCPU_POLL, 1, false, false }, { "sigsuspend", OFFCPU_POLL, 1, false, false },
	{ "sys_pause", OFFCPU_POLL, 1, false, false }, { "sigtimedwait", OFFCPU_POLL, 1, false, false },
	{ "io_uring_enter", OFFCPU_POLL, 1, false, false },
	{ "pipe_read", OFFCPU_READ, 1, false, false }, { "pipe_write", OFFCPU_WRITE, 1, false, false },
	{ "vfs_read", OFFCPU_READ, 1, false, false }, { "ksys_read", OFFCPU_READ, 1, false, false },
	{ "_sys_read", OFFCPU_READ, 1, false, false }, { "_sys_pread", OFFCPU_READ, 1, false, false },
	{ "do_readv", OFFCPU_READ, 1, false, false }, { "do_preadv", OFFCPU_READ, 1, false, false },
	{ "recvmsg", OFFCPU_READ, 1, false, false }, { "recvfrom", OFFCPU_READ, 1, false, false },
	{ "sock_read_iter", OFFCPU_READ, 1, false, false }, { "filemap_read", OFFCPU_READ, 1, true, false },
	{ "tty_read", OFFCPU_READ, 1, false, false }, { "unix_stream_read", OFFCPU_READ, 1, false, false },
	{ "skb_recv", OFFCPU_READ, 1, false, false }, { "accept", OFFCPU_READ, 1, false, false },
	{ "vfs_write", OFFCPU_WRITE, 1, false, false }, { "ksys_write", OFFCPU_WRITE, 1, false, false },
	{ "_sys_write", OFFCPU_WRITE, 1, false, false }, { "_sys_pwrite", OFFCPU_WRITE, 1, false, false },
	{ "do_writev", OFFCPU_WRITE, 1, false, false }, { "do_pwritev", OFFCPU_WRITE, 1, false, false },
	{ "sendmsg", OFFCPU_WRITE, 1, false, false }, { "sendto", OFFCPU_WRITE, 1, false, false },
	{ "sock_write_iter", OFFCPU_WRITE, 1, false, false }, { "fsync", OFFCPU_WRITE, 1, false, false },
	{ "fdatasync", OFFCPU_WRITE, 1, false, false }, { "sync_file_range", OFFCPU_WRITE, 1, false, false },
	{ "tty_write", OFFCPU_WRITE, 1, false, false }, { "unix_stream_sendmsg", OFFCPU_WRITE, 1, false, false },
	{ "wait_for_completion", OFFCPU_POLL, 2, false, false },
};
#define REASON_NONE 0xff

/* The pattern matched by one kernel address (its index in reason_pats,
 * REASON_NONE: none), cached per address. */
static uint8_t addr_reason(struct ingest *g, uint64_t addr)
{
	struct sym_result res;
	uint32_t v;
	uint8_t r = REASON_NONE;
	size_t i;
	_Static_assert(ARRAY_SIZE(reason_pats) < REASON_NONE, "pattern index fits a byte");
	if (hmap_get(&g->kreason, addr, &v))
		return (uint8_t)v;
	if (!g->ksyms)
		g->ksyms = sym_session_new();
	memset(&res, 0, sizeof(res));
	sym_lookup_kernel(g->ksyms, addr - 1, &res);
	for (i = 0; res.name && i < ARRAY_SIZE(reason_pats); i++)
		if (reason_pats[i].whole ? !strcmp(res.name, reason_pats[i].pat)
					 : strstr(res.name, reason_pats[i].pat) != NULL) {
			r = (uint8_t)i;
			break;
		}
	hmap_put(&g->kreason, addr, r);
	return r;
}

/* The pattern of the kernel stack that decides its reason (innermost of
 * the lowest tier), NULL: none. */
static const struct reason_pat *kernel_reason(struct ingest *g, const uint64_t *kframes, size_t nk)
{
	const struct reason_pat *best = NULL;
	size_t i;
	for (i = 0; i < nk; i++) {
		uint8_t r = addr_reason(g, kframes[i]);
		if (r != REASON_NONE && (!best || reason_pats[r].tier < best->tier))
			best = &reason_pats[r];
	}
	return best;
}

enum offcpu_reason ingest_offcpu_reason(struct ingest *g, const uint64_t *kframes, size_t nk)
{
	const struct reason_pat *best = kernel_reason(g, kframes, nk);
	return best ? (enum offcpu_reason)best->reason : OFFCPU_OTHER;
}

/* User functions that say what a futex wait is for, matched (as
 * substrings of the demangled name) against the user frames from the
 * leaf up: the innermost that matches decides. A condition variable
 * that takes its mutex back after the wake-up (glibc's
 * __pthread_mutex_cond_lock, __lll_lock_wait) is contending for a lock,
 * and those frames are nearer the leaf than pthread_cond_wait. Frames
 * of generic futex helpers (futex_wait, __futex_abstimed_wait_common,
 * Rust's std::sys::...::futex::futex_wait, Go's runtime.futexsleep)
 * match neither and let their callers decide. */
static const struct { const char *pat; uint8_t reason; } wait_pats[] = {
	/* glibc, musl: mutexes and rwlocks */
	{ "lll_lock_wait", OFFCPU_LOCK }, { "pthread_mutex_", OFFCPU_LOCK },
	{ "pthread_rwlock_", OFFCPU_LOCK },
	/* C++: std::mutex, std::shared_mutex use the above */
	/* Rust std, parking_lot; Go's runtime locks */
	{ "lock_contended", OFFCPU_LOCK }, { "read_contended", OFFCPU_LOCK },
	{ "write_contended", OFFCPU_LOCK }, { "lock_slow", OFFCPU_LOCK },
	{ "runtime.lock2", OFFCPU_LOCK }, { "runtime.lockWithRank", OFFCPU_LOCK },
	/* condition variables, semaphores, joins, barriers, parking */
	{ "pthread_cond_", OFFCPU_WAIT }, { "sem_wait", OFFCPU_WAIT },
	{ "sem_timedwait", OFFCPU_WAIT }, { "sem_clockwait", OFFCPU_WAIT },
	{ "pthread_join", OFFCPU_WAIT }, { "pthread_timedjoin", OFFCPU_WAIT },
	{ "pthread_clockjoin", OFFCPU_WAIT }, { "pthread_barrier_wait", OFFCPU_WAIT },
	{ "condition_variable", OFFCPU_WAIT }, { "Condvar::wait", OFFCPU_WAIT },
	{ "std::thread::park", OFFCPU_WAIT }, { "Parker::park", OFFCPU_WAIT },
	{ "JoinInner", OFFCPU_WAIT }, { "::recv", OFFCPU_WAIT },
	{ "runtime.notesleep", OFFCPU_WAIT }, { "runtime.notetsleep", OFFCPU_WAIT },
};

enum offcpu_reason ingest_wait_by_name(const char *name)
{
	size_t i;
	for (i = 0; name && i < ARRAY_SIZE(wait_pats); i++)
		if (strstr(name, wait_pats[i].pat))
			return (enum offcpu_reason)wait_pats[i].reason;
	return OFFCPU_OTHER;
}

/* The decision of one user address (OFFCPU_LOCK, OFFCPU_WAIT, or
 * OFFCPU_OTHER: none), cached per mapping and address. */
static enum offcpu_reason user_frame_reason(struct ingest *g, uint32_t pid, uint64_t addr, bool ra)
{
	uint32_t id = state_find(&g->st, pid, addr), v;
	uint64_t key = hash_mix(hash_mix(id, addr), ra);
	const struct state_mapping *m = state_mapping(&g->st, id);
	struct sym_result res;

	if (hmap_get(&g->ureason, key, &v))
		return (enum offcpu_reason)v;
	memset(&res, 0, sizeof(res));
	if (m && m->path[0] == '/') {
		struct sym_module_ref ref = {
			m->path, m->build_id_size ? m->build_id : NULL, m->build_id_size,
			m->start, m->end, m->pgoff,
		};
		if (!g->usyms) {
			g->usyms = sym_session_new();
			sym_set_lines(g->usyms, false);
			sym_set_debuginfod(g->usyms, false);
		}
		sym_lookup(g->usyms, &ref, addr - (ra ? 1 : 0), &res);
	}
	v = ingest_wait_by_name(res.name);
	hmap_put(&g->ureason, key, v);
	return (enum offcpu_reason)v;
}

/* futex(2) operations (the low 7 bits of op): what glibc 2.36 uses them
 * for. Only a hint: Rust's std Mutex waits with FUTEX_WAIT_BITSET too. */
#define FUTEX_OP_WAIT 0
#define FUTEX_OP_LOCK_PI 6
#define FUTEX_OP_WAIT_BITSET 9
#define FUTEX_OP_WAIT_REQUEUE_PI 11
#define FUTEX_OP_LOCK_PI2 13

/* A futex wait: lock or wait, by the user frames (uframes[0..nu), leaf
 * first), else by the futex operation (the second argument, in rsi of
 * the user registers at the system call), else lock. */
static enum offcpu_reason futex_reason(struct ingest *g, const struct perf_sample *s, size_t nu,
				       bool unwound)
{
	size_t i, k = 0;
	int bit;

	for (i = 0; i < nu; i++) {
		bool ra = unwound ? (g->frames[i].flags & UNWIND_F_RA) != 0 : i > 0;
		enum offcpu_reason r = user_frame_reason(g, s->pid, g->uframes[i], ra);
		if (r != OFFCPU_OTHER)
			return r;
	}
	if (s->regs_abi && s->regs && (s->regs_mask & (1ull << 4 /* SI */))) {
		uint64_t si;
		for (bit = 0; bit < 4; bit++)
			k += (s->regs_mask >> bit) & 1;
		memcpy(&si, s->regs + 8 * k, 8);
		switch (si & 0x7f) {
		case FUTEX_OP_WAIT_BITSET:
		case FUTEX_OP_WAIT_REQUEUE_PI:
			return OFFCPU_WAIT;
		case FUTEX_OP_WAIT:
		case FUTEX_OP_LOCK_PI:
		case FUTEX_OP_LOCK_PI2:
		default:
			return OFFCPU_LOCK;
		}
	}
	return OFFCPU_LOCK;
}

/* Switch-outs closer than this to the sample are the same switch. */
#define SAME_SWITCH_NS 1000000ull

static void offcpu_out_sample(struct ingest *g, const struct perf_sample *s,
			      const struct rec_sample *rs, size_t nu, bool unwound, size_t nk)
{
	struct offcpu_pending *p;
	const struct reason_pat *kr;
	if (!rs->tid)
		return; /* the idle task */
	p = pending(g, rs->pid, rs->tid);
	if (rs->time < p->last_in || p->dead)
		return; /* reached us after the switch-in that ended it, or the exit */
	if (!(p->out_time && !p->stack && rs->time - p->out_time < SAME_SWITCH_NS)) {
		p->out_time = rs->time;
		p->preempt = false;
		p->woken = false;
	}
	p->stack = rs->stack;
	p->cpu = rs->cpu;
	p->qm = (uint8_t)(SAMPLE_Q(rs->quality) | (rs->method & 3) << 2);
	kr = kernel_reason(g, g->kframes, nk);
	p->reason = kr ? kr->reason : OFFCPU_OTHER;
	if (kr && kr->futex)
		p->reason = (uint8_t)futex_reason(g, s, nu, unwound);
}

static void offcpu_emit(struct ingest *g, struct offcpu_pending *p, uint64_t end, uint8_t flags)
{
	struct rec_offcpu o;
	memset(&o, 0, sizeof(o));
	o.start = p->out_time;
	o.duration = end - p->out_time;
	o.pid = p->pid;
	o.tid = p->tid;
	o.stack = p->stack;
	o.cpu = p->cpu;
	o.reason = p->preempt ? OFFCPU_PREEMPT : p->reason;
	o.flags = (uint8_t)(flags | (p->qm << OFFCPU_F_QM_SHIFT) | (p->read ? OFFCPU_F_READ : 0));
	store_put_offcpu(g->w, &o);
	if (p->woken && !p->preempt) {
		p->wk.start = o.start;
		p->wk.tid = o.tid;
		store_put_waker(g->w, &p->wk, p->wk.kind == WAKER_OTHER ? p->comm : NULL);
	}
	g->offcpu_intervals++;
	g->offcpu_ns += o.duration;
	p->out_time = 0;
	p->stack = 0;
	p->woken = false;
}

/* PERF_RECORD_SWITCH and SWITCH_CPU_WIDE: the sample_id names the thread
 * that switches (out: the one leaving; in: the one arriving). */
static void on_switch(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_sample id;
	struct offcpu_pending *p;
	if (!g->offcpu)
		return;
	if (perf_sample_id_parse(f, h, &id)) {
		g->bad_records++;
		return;
	}
	if (!id.tid)
		return;
	p = pending(g, id.pid, id.tid);
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		if (id.time < p->last_in || p->dead)
			return;
		if (!p->out_time || id.time - p->out_time >= SAME_SWITCH_NS) {
			/* no stack sample (yet): an interval without a stack */
			p->out_time = id.time;
			p->stack = 0;
			p->reason = OFFCPU_OTHER;
			p->qm = 0;
			p->cpu = (uint16_t)id.cpu;
			p->woken = false;
		} else if (id.time > p->out_time) {
			/* The switch's sample came first: the kernel takes it
			 * (copying the stack, walking the chain) on the way out,
			 * still on the thread's CPU time; the interval starts
			 * at this record, when the thread really leaves. Starting
			 * at the sample counted ~12 us of every switch twice,
			 * as CPU and as off-CPU time. */
			p->out_time = id.time;
		}
		p->preempt = (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
	} else {
		if (p->out_time && id.time >= p->out_time)
			offcpu_emit(g, p, id.time, 0);
		p->out_time = 0;
		if (id.time > p->last_in)
			p->last_in = id.time;
	}
}

void ingest_finish(struct ingest *g, uint64_t end_time)
{
	size_t i;
	for (i = 0; i < g->npend; i++)
		if (g->pend[i].out_time && g->pend[i].out_time <= end_time)
			offcpu_emit(g, &g->pend[i], end_time, OFFCPU_F_OPEN);
	if (g->offcpu)
		store_set_offcpu_open(g->w, end_time, NULL, 0);
}

void ingest_checkpoint(struct ingest *g, uint64_t now)
{
	struct rec_offcpu *v;
	size_t i, n = 0;
	if (!g->offcpu)
		return;
	v = xcalloc(g->npend ? g->npend : 1, sizeof(*v));
	for (i = 0; i < g->npend; i++) {
		const struct offcpu_pending *p = &g->pend[i];
		if (!p->out_time || p->out_time > now || p->dead)
			continue;
		v[n].start = p->out_time;
		v[n].pid = p->pid;
		v[n].tid = p->tid;
		v[n].stack = p->stack;
		v[n].cpu = p->cpu;
		v[n].reason = p->preempt ? OFFCPU_PREEMPT : p->reason;
		v[n].flags = (uint8_t)(OFFCPU_F_OPEN | (p->qm << OFFCPU_F_QM_SHIFT));
		n++;
	}
	store_set_offcpu_open(g->w, now, v, n);
	free(v);
}

void ingest_record(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t body = h->size >= sizeof(*h) ? h->size - sizeof(*h) : 0;
	struct perf_sample id;
	struct rec_lost l;
	struct rec_throttle t;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(g, f, h);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		on_mmap(g, f, h);
		break;
	case PERF_RECORD_COMM:
		on_comm(g, f, h);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		on_task(g, h);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		on_switch(g, f, h);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		memset(&l, 0, sizeof(l));
		if (body < (h->type == PERF_RECORD_LOST ? 16u : 8u)) {
			g->bad_records++;
			break;
		}
		memcpy(&l.count, p + (h->type == PERF_RECORD_LOST ? 8 : 0), 8);
		perf_sample_id_parse(f, h, &id);
		l.time = id.time;
		l.kind = h->type == PERF_RECORD_LOST_SAMPLES ? LOST_SAMPLES : LOST_RING;
		if (l.kind)
			g->lost_samples += l.count;
		else
			g->lost += l.count;
		store_put_lost(g->w, &l);
		recover_note_lost(g);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		memset(&t, 0, sizeof(t));
		if (body >= 8)
			memcpy(&t.time, p, 8);
		t.throttled = h->type == PERF_RECORD_THROTTLE;
		if (t.throttled)
			g->throttles++;
		else
			g->unthrottles++;
		store_put_throttle(g->w, &t);
		break;
	default:
		g->unknown_records++;
		break;
	}
}

/* Whether path (from a MMAP record) names the same as maps_path (from
 * /proc/PID/maps, which says "" for anonymous memory and adds
 * " (deleted)" to files removed since). */
static bool same_path(const char *path, const char *maps_path)
{
	size_t n = strlen(maps_path), d = strlen(" (deleted)");
	if (!*maps_path)
		return !*path || !strcmp(path, "//anon");
	if (!strcmp(path, maps_path))
		return true;
	return n > d && !strcmp(maps_path + n - d, " (deleted)") && strlen(path) == n - d &&
	       !strncmp(path, maps_path, n - d);
}

/* Whether pid has the mapping m (read from /proc) already. */
static bool has_mapping(struct ingest *g, uint32_t pid, const struct state_mapping *m)
{
	const struct state_mapping *old = state_mapping(&g->st, state_find(&g->st, pid, m->start));
	return old && old->start == m->start && old->end == m->end && old->pgoff == m->pgoff &&
	       same_path(old->path, m->path);
}

size_t ingest_seed_maps(struct ingest *g, uint32_t pid, uint64_t time, FILE *f, bool build_ids)
{
	char *line = NULL;
	size_t cap = 0, added = 0;
	ssize_t len;

	/* getline, not a fixed buffer: a long path must not be split into a
	 * second "line" that parses as a mapping of its own */
	while ((len = getline(&line, &cap, f)) > 0) {
		struct state_mapping m;
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
			   &off, &maj, &min, &ino, &pos) < 7 || !strchr(perms, 'x') ||
		    start >= end || pos > len)
			continue;
		line[strcspn(line, "\n")] = 0;
		m.start = start;
		m.end = end;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.inode = ino;
		m.path = line + pos;
		if (has_mapping(g, pid, &m))
			continue;
		if (build_ids && m.path[0] == '/')
			m.build_id_size = (uint8_t)sym_read_build_id(m.path, m.build_id, 20);
		ingest_seed_mapping(g, pid, time, &m);
		added++;
	}
	free(line);
	return added;
}

void ingest_seed_proc(struct ingest *g, int pid, uint64_t time)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	ingest_seed_maps(g, (uint32_t)pid, time, f, true);
	fclose(f);
}

/* ---- symbols at stop: see symbols.c ---- */
