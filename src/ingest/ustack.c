/* ustack.c - a sample's user stack (state: struct ingest_ustack): its
 * registers and copy to the unwinder, what lies beyond the copy (read on
 * from the live process: the stack of a thread off the CPU, a stack
 * deeper than its copy), and the outermost frames of each thread that
 * complete its spliced stacks.
 */
#include "ingest/ingest-private.h"
#include "lib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
/* The unwinder sees the part of the mapping still mapped around pc (its
 * start and file offset moved alike, so the load bias is the same): a
 * mapping cut by a later one must not claim the addresses now another's
 * (arm64: the vDSO in ld.so's hole). */
static bool find_module(void *arg, uint64_t pc, struct module_ref *out)
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

/* Thread tid's slot in g->us.tails (a new one is zeroed). */
static struct ingest_tail *tail_slot(struct ingest *g, uint32_t tid)
{
	uint32_t at;
	if (!hmap_get(&g->us.tail_index, tid, &at)) {
		GROW(g->us.tails, g->us.tailcap, g->us.ntails + 1);
		at = (uint32_t)g->us.ntails++;
		memset(&g->us.tails[at], 0, sizeof(g->us.tails[at]));
		g->us.tails[at].tid = tid;
		hmap_put(&g->us.tail_index, tid, at);
	}
	return &g->us.tails[at];
}

/* The top of the stack a complete DWARF unwind from sp walked (0: not
 * known). */
static uint64_t stack_top(uint64_t sp, const struct unwind_result *res)
{
	return res->quality == UNWIND_Q_COMPLETE && res->depth && res->method == UNWIND_M_DWARF ? sp + res->depth : 0;
}

/* The top of thread tid's stack, from the stacks of it that reached
 * their root; a stack cut where its copy ended is counted by whether
 * the largest copy (65528 bytes) would have reached that top. top: the
 * stack_top() of this stack. */
static void stack_depth(struct ingest *g, uint32_t tid, uint64_t sp, uint64_t top,
			const struct unwind_result *res)
{
	uint32_t at;

	if (top) {
		struct ingest_tail *t = tail_slot(g, tid);
		t->top = MAX(t->top, top);
		return;
	}
	if (res->quality != UNWIND_Q_TRUNCATED || res->stop != UNWIND_STOP_COPY ||
	    !hmap_get(&g->us.tail_index, tid, &at) || g->us.tails[at].top <= sp)
		return;
	if (g->us.tails[at].top - sp <= 65528)
		g->us.cut_within_max++;
	else
		g->us.cut_beyond_max++;
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
	if (res->method != UNWIND_M_SPLICED || !hmap_get(&g->us.tail_index, tid, &at))
		return;
	t = &g->us.tails[at];
	for (j = 0; j + 1 < t->n && t->pc[j] != g->frames[n - 1].pc; j++)
		;
	if (j + 1 >= t->n)
		return;
	for (j++; j < t->n && res->n < INGEST_MAX_FRAMES; j++) {
		g->frames[res->n].pc = t->pc[j];
		g->frames[res->n].flags = UNWIND_F_RA | (g->frames[n - 1].flags & UNWIND_F_LATE);
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
	const struct offcpu_pending *p = ingest_offcpu_find(&g->off, s->tid);
	size_t have = (size_t)s->stack_dyn_size, more;

	if (!g->live || g->no_read_stack || !p || p->last_in > s->time || p->dead)
		return 0;
	if (!g->us.xstack) {
		g->us.xstack = xmalloc(STACK_READ_MAX);
		g->us.xcheck = xmalloc(STACK_READ_MAX);
	}
	if (have >= STACK_READ_MAX)
		return 0;
	memcpy(g->us.xstack, s->stack, have);
	more = read_stack_pages(s->pid, sp + have, g->us.xstack + have, STACK_READ_MAX - have);
	if (!more || read_stack_pages(s->pid, sp, g->us.xcheck, have) != have ||
	    memcmp(g->us.xcheck, s->stack, have)) {
		g->us.stack_reads_stale++;
		return 0;
	}
	g->us.stack_reads++;
	return have + more;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The stack slots an unwind of thread tid read past the copy, to be read
 * by the in-kernel reader at its next samples: with those asked before
 * (another shape of its stack: a thread's deep stacks come in a few),
 * else alone when the union does not fit in a record. */
static void ask_slots(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t *slots, size_t n, uint64_t top)
{
	struct ingest_tail *t = tail_slot(g, tid);
	uint64_t *u;
	size_t i, j, k = 0, nu = 0;

	qsort(slots, n, sizeof(*slots), cmp_u64);
	for (i = 0; i < n; i++)
		if ((!k || slots[i] != slots[k - 1]) && !(slots[i] & 7))
			slots[k++] = slots[i];
	/* nothing new: the reader reads them all already */
	for (i = j = 0; i < k; i++) {
		while (j < t->nasked && t->asked[j] < slots[i])
			j++;
		if (j == t->nasked || t->asked[j] != slots[i])
			break;
	}
	if (i == k)
		return;
	g->us.slot_lists++;
	u = xmalloc((k + t->nasked) * sizeof(*u));
	for (i = j = 0; i < k || j < t->nasked;) {
		if (j == t->nasked || (i < k && slots[i] < t->asked[j]))
			u[nu++] = slots[i++];
		else if (i == k || t->asked[j] < slots[i])
			u[nu++] = t->asked[j++];
		else
			u[nu++] = slots[i++], j++;
	}
	top = MAX(top, t->top);
	if (!t->nasked || !g->moment->slots(g->moment->arg, pid, tid, u, nu, top)) {
		if (!g->moment->slots(g->moment->arg, pid, tid, slots, k, top))
			g->us.slots_cut++;
		memcpy(u, slots, k * sizeof(*u));
		nu = k;
	}
	free(t->asked);
	t->asked = u;
	t->nasked = nu;
}

/* A stack cut where the copy ended, that could not be read on (the
 * thread had moved: the later read did not match the copy), nor from the
 * words the reader read at the sample: which slots would a stack of its
 * shape read? The process's stack read now without that check tells,
 * mostly right (a thread's outer frames change least): those are asked
 * of the reader, and its next samples of that shape have them. The
 * frames of this walk are not the sample's and are thrown away. */
static void guess_slots(struct ingest *g, uint32_t pid, uint32_t tid, const struct unwind_input *sample)
{
	struct unwind_input in = *sample;
	struct unwind_result res;

	if (!g->us.guess)
		g->us.guess = xmalloc(UNWIND_MAX_DEPTH * sizeof(*g->us.guess));
	in.read_deep = true;
	in.read_unchecked = true;
	unwind_sample(g->unwinder, g->mode, &in, g->us.guess, UNWIND_MAX_DEPTH, &res);
	g->us.slot_guesses++;
	if (res.quality == UNWIND_Q_COMPLETE && res.nslots)
		ask_slots(g, pid, tid, g->us.slots, res.nslots, stack_top(in.regs.r[UNW_SP], &res));
}

/* Unwind the user part of s from its registers and stack copy (and the
 * words the in-kernel reader read past it at the sample, g->mo). Replaces
 * uframes[0..*nu); returns false when the sample has no user registers.
 * switch_out: s is a switch-out, whose stack can be read on (*extended:
 * it was). A stack with frames read later has SAMPLE_Q_LATE in
 * out->quality (the caller clears its verdict bits). */
bool ingest_unwind_user(struct ingest *g, const struct perf_sample *s, size_t *nu,
			struct rec_sample *out, bool switch_out, bool *extended)
{
	struct unwind_input in;
	struct unwind_result res;
	size_t k = 0;
	uint64_t top;
	bool topwin;

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
	in.fp_chain_capped = g->cur_capped;
	in.find = find_module;
	in.find_arg = g;
	in.read_code = ingest_jit_read_code;
	in.jit_table = g->jit.ndumps ? ingest_jit_table : NULL;
	in.read_stack = g->live && !g->no_read_stack ? read_stack : NULL;
	in.read_deep = !switch_out; /* extend_stack() reads a sleeper's */
	in.space = state_gen(&g->st, s->pid);
	in.words = g->have_mo && g->mo.words.n ? &g->mo.words : NULL;
	in.go = g->have_mo && g->mo.have_go ? &g->mo.go : NULL;
	if (g->moment) {
		/* what to ask the reader for: the slots past the copy, and
		 * those of its last 4 KiB (a later sample's copy may end
		 * lower) */
		in.slots_out = g->us.slots;
		in.slots_max = INGEST_MAX_SLOTS;
		in.slots_from = in.regs.r[UNW_SP] + in.stack_size - MIN(in.stack_size, (size_t)4096);
	}
	g->cur_pid = s->pid;
	unwind_sample(g->unwinder, g->mode, &in, g->frames, INGEST_MAX_FRAMES, &res);
	if (switch_out && res.quality != UNWIND_Q_COMPLETE && res.stop == UNWIND_STOP_COPY &&
	    s->stack_dyn_size == s->stack_size && in.stack_size) {
		size_t n = extend_stack(g, s, in.regs.r[UNW_SP]), first = res.n;
		if (n) {
			in.stack = g->us.xstack;
			in.stack_size = n;
			unwind_sample(g->unwinder, g->mode, &in, g->frames, INGEST_MAX_FRAMES, &res);
			*extended = true;
			/* past the copy, read later: nothing proves the thread
			 * did not run between its switch-out and the read */
			for (k = first; k < res.n; k++)
				g->frames[k].flags |= UNWIND_F_LATE;
		}
	}
	for (k = 0; k < res.n && !(g->frames[k].flags & UNWIND_F_LATE); k++)
		;
	if (k < res.n) {
		out->quality |= SAMPLE_Q_LATE;
		g->us.late++;
	} else if (res.word_frames && res.quality == UNWIND_Q_COMPLETE) {
		g->us.deep_words++;
	}
	/* a stack that needed words read later: the reader reads them at
	 * the thread's next samples (a stack completed by the words it read
	 * keeps the list) */
	/* (the reader read the top of the stack of this thread, which has
	 * no slots yet: it reads that until told its slots, or that it has
	 * none and where its stack ends) */
	topwin = g->have_mo && (g->mo.flags & MOMENT_F_TOPWIN);
	top = stack_top(in.regs.r[UNW_SP], &res);
	if (g->moment && res.nslots && res.quality == UNWIND_Q_COMPLETE && (k < res.n || topwin))
		ask_slots(g, s->pid, s->tid, g->us.slots, res.nslots, top);
	else if (g->moment && topwin && res.quality == UNWIND_Q_COMPLETE)
		g->moment->slots(g->moment->arg, s->pid, s->tid, NULL, 0,
				 top ? top : in.regs.r[UNW_SP] + in.stack_size);
	else if (g->moment && res.quality == UNWIND_Q_TRUNCATED && res.stop == UNWIND_STOP_COPY && in.read_stack &&
		 !*extended)
		guess_slots(g, s->pid, s->tid, &in);
	g->us.deep_reads += res.deep == 1;
	g->us.deep_stale += res.deep == 2;
	g->us.deep_gone += res.deep == 3;
	stack_depth(g, s->tid, in.regs.r[UNW_SP], top, &res);
	root_tail(g, s->tid, &res);
	for (k = 0; k < res.n && g->frames[k].pc >= 4096; k++)
		g->uframes[k] = g->frames[k].pc;
	*nu = k;
	out->quality = (uint8_t)(res.quality | (unsigned)res.stop << SAMPLE_Q_STOP_SHIFT |
				 (out->quality & SAMPLE_Q_LATE));
	out->method = (uint8_t)(res.method | (res.jit & UNWIND_JIT_ALL) << SAMPLE_M_JIT_SHIFT |
				(res.read_frames ? SAMPLE_M_READ : 0));
	if (res.jit_frames) {
		g->jit.samples++;
		g->jit.frames += res.jit_frames;
	}
	return true;
}

void ingest_ustack_carry(struct ingest_ustack *u, const struct hmap *tids)
{
	size_t i, n = 0;
	uint32_t v;

	u->stack_reads = u->stack_reads_stale = 0;
	u->deep_reads = u->deep_stale = u->deep_gone = 0;
	u->cut_within_max = u->cut_beyond_max = 0;
	hmap_release(&u->tail_index);
	hmap_init(&u->tail_index);
	for (i = 0; i < u->ntails; i++) {
		if (!hmap_get(tids, u->tails[i].tid, &v)) {
			free(u->tails[i].asked);
			continue;
		}
		u->tails[n] = u->tails[i];
		hmap_put(&u->tail_index, u->tails[n].tid, (uint32_t)n);
		n++;
	}
	u->ntails = n;
	if (u->ntails < u->tailcap / 4) {
		u->tailcap = MAX(u->ntails, (size_t)16);
		u->tails = xrealloc(u->tails, u->tailcap * sizeof(*u->tails));
	}
}

void ingest_ustack_exit(struct ingest *g, uint32_t tid)
{
	uint32_t at;
	if (!hmap_get(&g->us.tail_index, tid, &at))
		return;
	free(g->us.tails[at].asked);
	g->us.tails[at].asked = NULL;
	g->us.tails[at].nasked = 0;
}

void ingest_ustack_init(struct ingest_ustack *u)
{
	hmap_init(&u->tail_index);
}

void ingest_ustack_release(struct ingest_ustack *u)
{
	size_t i;
	for (i = 0; i < u->ntails; i++)
		free(u->tails[i].asked);
	hmap_release(&u->tail_index);
	free(u->tails);
	free(u->xstack);
	free(u->xcheck);
	free(u->guess);
}
