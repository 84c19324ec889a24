/* moment.bpf.c - the in-kernel reader: at each sample of stax's perf
 * events, read what describes the sampled thread at that moment (its
 * CPython frame chain, the stack slots user space asked for) and write
 * it into a ring buffer. See moment_abi.h for the records and maps, and
 * record/moment.h for the user-space side.
 *
 * Built with clang -target bpf; CO-RE: the only kernel structure read,
 * struct pt_regs, is declared here with preserve_access_index and
 * relocated by libbpf at load against the running kernel's BTF (no
 * vmlinux.h from the build machine). Every read of the process is
 * bpf_probe_read_user (it cannot fault a page in: a page not present
 * fails the read, which the record says).
 *
 * Returns 1: the kernel writes the sample as it would without us.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

typedef __u8 uint8_t;
typedef __u16 uint16_t;
typedef __u32 uint32_t;
typedef __u64 uint64_t;
typedef __s32 int32_t;

#include "moment_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* The kernel's saved registers of a task (the user ones when taken from
 * bpf_task_pt_regs()); the field names are the kernel's, their offsets
 * come from its BTF at load. */
#if defined(__TARGET_ARCH_arm64)
struct pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
} __attribute__((preserve_access_index));
#define USER_IP(r) BPF_CORE_READ(r, pc)
#define USER_SP(r) BPF_CORE_READ(r, sp)
/* bpf_perf_event_data.regs is the UAPI struct user_pt_regs: pstate at 264 */
#define CTX_IN_KERNEL(ctx) ((((const __u64 *)(ctx))[33] & 0xf) != 0)
#else
struct pt_regs {
	unsigned long ip;
	unsigned long sp;
} __attribute__((preserve_access_index));
#define USER_IP(r) BPF_CORE_READ(r, ip)
#define USER_SP(r) BPF_CORE_READ(r, sp)
/* bpf_perf_event_data.regs is the UAPI struct pt_regs: cs at 136 */
#define CTX_IN_KERNEL(ctx) ((((const __u64 *)(ctx))[17] & 3) == 0)
#endif

struct task_struct;

/* The mapping that holds an address (bpf_find_vma()): where it ends. */
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
} __attribute__((preserve_access_index));

#define REC_PY_OFF ((__u32)sizeof(struct moment_rec))
#define REC_SLOT_OFF (REC_PY_OFF + MOMENT_MAX_PYFRAMES * (__u32)sizeof(struct moment_pyframe))
/* a process is Python or Go, never both: the goroutine part takes the
 * Python frames' place (the per-cpu scratch is at most 32 KiB) */
#define REC_GO_OFF REC_PY_OFF
#define REC_MAX (REC_SLOT_OFF + 2 * (__u32)sizeof(struct moment_range_hdr) + MOMENT_WINDOW_MAX + \
		 MOMENT_TOPWIN_MAX + MOMENT_SLOT_BYTES)
_Static_assert(sizeof(struct moment_go) + MOMENT_GO_STACK <= REC_SLOT_OFF - REC_GO_OFF,
	       "the goroutine part fits where Python frames go");

/* Per cpu: the record being built and the bytes of the frame and code
 * object being read (the BPF stack is too small for them). An array with
 * an entry per possible cpu (user space sizes it), not a per-cpu array:
 * a record with its window is larger than a per-cpu value may be (32 KiB).
 * The program does not nest on a cpu (the kernel runs one BPF program at
 * a time there), so each cpu's entry is its own. */
struct scratch {
	__u8 rec[REC_MAX];
	__u8 frame[MOMENT_FRAME_BUF];
	__u8 code[MOMENT_CODE_BUF];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);              /* user space: the possible cpus */
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);                  /* pid */
	__type(value, struct moment_pyproc);
} pyprocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);                  /* pid */
	__type(value, struct moment_goproc);
} goprocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);                  /* tid */
	__type(value, __u64);                /* its PyThreadState */
} tstates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);                  /* tid */
	__type(value, struct moment_slots);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);                  /* pid */
	__type(value, __u32);                /* 1: its stacks go past the copy */
} deep SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);                  /* tid, of a thread without slots */
	__type(value, __u64);                /* the end of its stack's mapping */
} tops SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);        /* user space sets the size */
} ring SEC(".maps");

struct moment_config config;
/* records not written: the ring was full */
__u64 dropped;

static __always_inline __u64 get64(const __u8 *buf, __u32 off)
{
	return *(const __u64 *)(buf + off);
}

/* The walk of one chain, through bpf_loop(). */
struct pywalk {
	struct scratch *s;
	const struct moment_pyproc *pp;
	__u64 frame;          /* the next frame to read */
	__u32 n;              /* entries written */
	__u32 flags;
	__u32 err;
};

static __always_inline int put_entry(struct pywalk *w, __u64 code, __u64 stamp, __s32 instr,
				     __u32 flags)
{
	struct moment_pyframe *f;
	__u32 n = w->n;

	if (n >= MOMENT_MAX_PYFRAMES) {
		w->flags |= MOMENT_F_PY_CUT;
		return -1;
	}
	barrier_var(n);
	f = (struct moment_pyframe *)(w->s->rec + REC_PY_OFF +
				      (n & (MOMENT_MAX_PYFRAMES - 1)) * sizeof(*f));
	f->code = code;
	f->stamp = stamp;
	f->instr = instr;
	f->flags = flags;
	w->n = n + 1;
	return 0;
}

static long py_step(__u32 i, void *arg)
{
	struct pywalk *w = arg;
	const struct moment_pyproc *pp = w->pp;
	struct scratch *s = w->s;
	__u32 fsize = pp->frame_read, csize = pp->code_read;
	__u64 code, instr_ptr, stamp, prev;
	__s64 instr;
	__u8 owner;

	if (!w->frame) {
		w->flags |= MOMENT_F_PY_DONE;
		return 1;
	}
	if (fsize < 8 || fsize > MOMENT_FRAME_BUF || csize < 8 || csize > MOMENT_CODE_BUF) {
		w->flags |= MOMENT_F_PY_FAULT;
		w->err = MOMENT_PYE_LAYOUT;
		return 1;
	}
	if (bpf_probe_read_user(s->frame, fsize, (const void *)w->frame)) {
		w->flags |= MOMENT_F_PY_FAULT;
		w->err = MOMENT_PYE_FRAME;
		return 1;
	}
	prev = get64(s->frame, pp->fr_previous & (MOMENT_FRAME_BUF - 8));
	owner = s->frame[pp->fr_owner & (MOMENT_FRAME_BUF - 1)];
	if (pp->fr_is_entry == 0xffff && owner == pp->owned_by_cstack) {
		/* 3.12+: the entry frame of one _PyEval_EvalFrameDefault */
		if (put_entry(w, 0, 0, 0, MOMENT_PYF_ENTRY))
			return 1;
		w->frame = prev;
		return 0;
	}
	code = get64(s->frame, pp->fr_code & (MOMENT_FRAME_BUF - 8));
	instr_ptr = get64(s->frame, pp->fr_instr & (MOMENT_FRAME_BUF - 8));
	if (!code || bpf_probe_read_user(s->code, csize, (const void *)code)) {
		w->flags |= MOMENT_F_PY_FAULT;
		w->err = MOMENT_PYE_CODE;
		return 1;
	}
	if (get64(s->code, pp->ob_type & (MOMENT_CODE_BUF - 8)) != pp->code_type) {
		w->flags |= MOMENT_F_PY_FAULT;
		w->err = MOMENT_PYE_TYPE;
		return 1;
	}
	stamp = moment_stamp(get64(s->code, pp->co_filename & (MOMENT_CODE_BUF - 8)),
			     get64(s->code, pp->co_name & (MOMENT_CODE_BUF - 8)),
			     get64(s->code, pp->co_qualname & (MOMENT_CODE_BUF - 8)),
			     get64(s->code, pp->co_linetable & (MOMENT_CODE_BUF - 8)),
			     *(const __u32 *)(s->code + (pp->co_firstlineno & (MOMENT_CODE_BUF - 4))));
	instr = (__s64)(instr_ptr - (code + pp->co_code));
	if (instr < -0x40000000 || instr > 0x40000000)
		instr = -0x40000000;
	if (put_entry(w, code, stamp, (__s32)instr, 0))
		return 1;
	if (pp->fr_is_entry != 0xffff && s->frame[pp->fr_is_entry & (MOMENT_FRAME_BUF - 1)] &&
	    put_entry(w, 0, 0, 0, MOMENT_PYF_ENTRY))
		return 1;
	w->frame = prev;
	return 0;
}

/* The chain of thread tid (tstate ts) into the record; returns its
 * entries. */
static __always_inline __u32 read_python(struct scratch *s, struct moment_rec *h,
					 const struct moment_pyproc *pp, __u32 tid)
{
	struct pywalk w = { .s = s, .pp = pp };
	__u64 *tsp = bpf_map_lookup_elem(&tstates, &tid), ts, v = 0, frame = 0;

	h->flags |= MOMENT_F_PY;
	if (!tsp) {
		h->flags |= MOMENT_F_NO_TSTATE;
		return 0;
	}
	ts = *tsp;
	h->tstate = ts;
	if (bpf_probe_read_user(&v, sizeof(v), (const void *)(ts + pp->ts_native_tid))) {
		h->flags |= MOMENT_F_PY_FAULT;
		h->py_err = MOMENT_PYE_TSTATE;
		return 0;
	}
	if (v != tid) {
		h->flags |= MOMENT_F_TSTATE_GONE;
		return 0;
	}
	if (bpf_probe_read_user(&frame, sizeof(frame), (const void *)(ts + pp->ts_frame))) {
		h->flags |= MOMENT_F_PY_FAULT;
		h->py_err = MOMENT_PYE_TSTATE;
		return 0;
	}
	if (pp->cf_current != 0xffff && frame &&
	    bpf_probe_read_user(&frame, sizeof(frame), (const void *)(frame + pp->cf_current))) {
		h->flags |= MOMENT_F_PY_FAULT;
		h->py_err = MOMENT_PYE_CFRAME;
		return 0;
	}
	w.frame = frame;
	bpf_loop(MOMENT_MAX_PYFRAMES + 1, py_step, &w, 0);
	h->flags |= w.flags;
	h->py_err = (__u16)w.err;
	return w.n;
}

#if defined(__TARGET_ARCH_arm64)
static __always_inline int user_word(__u64 addr, __u64 *v)
{
	return bpf_probe_read_user(v, sizeof(*v), (const void *)addr);
}

/* A Go thread (g in x28): when it runs on its g0 stack,
 * the goroutine it runs for, where that one's stack was left and its
 * top bytes, at REC_GO_OFF; when it runs for none, where g0's own stack
 * was left. Returns the bytes written (0: not on g0, or
 * a read failed). */
static __always_inline __u32 read_go(struct scratch *s, struct moment_rec *h,
				     const struct moment_goproc *gp, struct pt_regs *regs)
{
	struct moment_go *go = (struct moment_go *)(s->rec + REC_GO_OFF);
	__u64 g = 0, m, g0, hi, len;

	g = BPF_CORE_READ(regs, regs[28]); /* Go's g register on arm64 */
	if (!g ||
	    user_word(g + gp->g_m, &m) || !m || user_word(m + gp->m_g0, &g0) || g != g0)
		return 0;
	__builtin_memset(go, 0, sizeof(*go));
	if (user_word(m + gp->m_curg, &go->curg))
		return 0;
	h->flags |= MOMENT_F_GO;
	if (!go->curg) {
		/* the scheduler, for no goroutine: where the g0 stack's own
		 * frames go on (g0.sched: mstart0's, as mstart1 left it) */
		if (user_word(g + gp->g_sched + gp->buf_sp, &go->sp) ||
		    user_word(g + gp->g_sched + gp->buf_pc, &go->pc) ||
		    user_word(g + gp->g_sched + gp->buf_bp, &go->bp))
			goto fault;
		return sizeof(*go);
	}
	if (user_word(go->curg + gp->g_sched + gp->buf_sp, &go->sp) ||
	    user_word(go->curg + gp->g_sched + gp->buf_pc, &go->pc) ||
	    user_word(go->curg + gp->g_sched + gp->buf_lr, &go->lr) ||
	    user_word(go->curg + gp->g_sched + gp->buf_bp, &go->bp) ||
	    user_word(go->curg + gp->g_stack_hi, &hi))
		goto fault;
	go->stack = go->sp;
	len = hi > go->sp && !(go->sp & 7) ? hi - go->sp : 0;
	if (len > MOMENT_GO_STACK)
		len = MOMENT_GO_STACK;
	len &= ~7ull;
	barrier_var(len);
	if (len > MOMENT_GO_STACK)
		return sizeof(*go);
	if (len) {
		go->err = (__s32)bpf_probe_read_user(s->rec + REC_GO_OFF + sizeof(*go), len,
						     (const void *)go->sp);
		if (!go->err)
			go->stack_len = (__u32)len;
	}
	return sizeof(*go) + go->stack_len;
fault:
	/* no goroutine part at all: the walk stops at the switch */
	h->flags &= ~MOMENT_F_GO;
	return 0;
}
#endif

/* The window past the copy, a page at a time through bpf_loop() (a read
 * across a page that is not there would fail whole). */
struct winwalk {
	struct scratch *s;
	__u64 addr, end;      /* what to read */
	__u32 off;            /* where its bytes go in the record */
	__u32 got;            /* bytes read */
	__s32 err;            /* why it stopped before end */
};

static long win_step(__u32 i, void *arg)
{
	struct winwalk *w = arg;
	__u64 a = w->addr + w->got, len;
	__u32 off = w->off + w->got;
	long err;

	if (a >= w->end)
		return 1;
	/* 64 bits, tested and used in one register (Linux 6.1's verifier
	 * loses the bounds of a 32-bit copy's test) */
	len = 4096 - (a & 4095);
	if (len > w->end - a)
		len = w->end - a;
	barrier_var(len);
	barrier_var(off);
	if (len == 0 || len > 4096 || off > REC_MAX - 4096)
		return 1;
	err = bpf_probe_read_user(w->s->rec + off, len, (const void *)a);
	if (err) {
		w->err = (__s32)err;
		return 1;
	}
	w->got += len;
	return 0;
}

/* [start, end) (at most max bytes) at off in the record, as a range
 * header and the bytes read, a page at a time up to the first that cannot
 * be read: its size (0: nothing read), and *read_to where the bytes end. */
static __always_inline __u32 read_span(struct scratch *s, __u64 start, __u64 end, __u32 off, __u32 max,
				       __u64 *read_to)
{
	struct moment_range_hdr *wh;
	struct winwalk w;

	if (end <= start || off > REC_MAX - sizeof(*wh) - max)
		return 0;
	if (end - start > max)
		end = start + max;
	w.s = s;
	w.addr = start;
	w.end = end;
	w.off = off + sizeof(*wh);
	w.got = 0;
	w.err = 0;
	bpf_loop(max / 4096 + 1, win_step, &w, 0);
	if (w.got < 8)
		return 0;
	/* tested again here: Linux 6.1's verifier forgets the bounds of
	 * off across the loop */
	barrier_var(off);
	if (off > REC_MAX - sizeof(*wh) - max)
		return 0;
	wh = (struct moment_range_hdr *)(s->rec + off);
	wh->addr = start;
	wh->len = w.got;
	wh->err = w.err;
	*read_to = start + w.got;
	return sizeof(*wh) + w.got;
}

/* The window past the copy at off in the record (MOMENT_F_WINDOW): its
 * size, 0 if none; *read_to: where the bytes read end. top: the thread's
 * stack top (0: not known; then the read goes on to the first page that
 * cannot be read). */
static __u32 read_window(struct scratch *s, struct moment_rec *h, __u64 top, __u32 off,
			 __u64 *read_to)
{
	__u64 start = (h->sp + config.stack_user) & ~7ull, end = start + config.window;
	__u32 n;

	if (!config.window || config.window > MOMENT_WINDOW_MAX || !h->sp || start < h->sp)
		return 0;
	/* a sample on the stack whose top is known: not past it (one on
	 * another stack, above it, reads on to where its pages end) */
	if (top && h->sp < top) {
		if (start >= top)
			return 0;
		if (end > top)
			end = top;
	}
	n = read_span(s, start, end, off, MOMENT_WINDOW_MAX, read_to);
	if (n)
		h->flags |= MOMENT_F_WINDOW;
	return n;
}

static long vma_end(struct task_struct *task, struct vm_area_struct *vma, void *arg)
{
	*(__u64 *)arg = BPF_CORE_READ(vma, vm_end);
	return 0;
}

/* The end of the mapping that holds thread tid's stack pointer sp,
 * looked up once per thread (bpf_find_vma() costs 9 us a sample here: the
 * mmap lock it takes in an interrupt is let go through an irq_work); 0
 * when it cannot be told. */
static __always_inline __u64 stack_end(__u32 tid, __u64 sp)
{
	__u64 *have = bpf_map_lookup_elem(&tops, &tid), end = 0;

	if (have)
		return *have;
	if (bpf_find_vma(bpf_get_current_task_btf(), sp, vma_end, &end, 0) || end <= sp)
		return 0;
	bpf_map_update_elem(&tops, &tid, &end, BPF_ANY);
	return end;
}

/* The top of the stack of a thread without slots (MOMENT_F_TOPWIN) at
 * off in the record: config.topwin bytes below end, not below read_to
 * (what the copy and the window hold). Its size, 0 if none. */
static __u32 read_topwin(struct scratch *s, struct moment_rec *h, __u64 end, __u32 off, __u64 read_to)
{
	__u64 start, to;
	__u32 n;

	if (!config.topwin || config.topwin > MOMENT_TOPWIN_MAX || end <= read_to || end < config.topwin)
		return 0;
	start = (end - config.topwin) & ~7ull;
	if (start < read_to)
		start = read_to;
	n = read_span(s, start, end, off, MOMENT_TOPWIN_MAX, &to);
	if (n)
		h->flags |= MOMENT_F_TOPWIN;
	return n;
}

/* The copy of the thread's asked-for slot ranges, through bpf_loop(). */
struct slotwalk {
	struct scratch *s;
	const struct moment_slots *sl;
	__u64 sp, copy_end;   /* slots in [sp, copy_end) are in the sample's copy
			       * (or its window) */
	__u32 off;            /* where the next range goes in the record */
	__u32 n;
};

static long slot_step(__u32 i, void *arg)
{
	struct slotwalk *w = arg;
	const struct moment_range *r;
	struct moment_range_hdr *h;
	__u32 off = w->off, len;
	__u64 addr;

	if (i >= w->sl->n || i >= MOMENT_MAX_RANGES)
		return 1;
	barrier_var(i); /* keep the mask: the verifier wants it */
	r = &w->sl->r[i & (MOMENT_MAX_RANGES - 1)];
	addr = r->addr;
	len = r->len;
	if (len < 8 || len > MOMENT_MAX_RANGE || (len & 7) || (addr & 7))
		return 0;
	if (addr >= w->sp && addr + len <= w->copy_end)
		return 0;
	if (off > REC_MAX - sizeof(*h) - MOMENT_MAX_RANGE)
		return 1;
	h = (struct moment_range_hdr *)(w->s->rec + off);
	h->addr = addr;
	h->len = len;
	h->err = (__s32)bpf_probe_read_user(w->s->rec + off + sizeof(*h), len, (const void *)addr);
	w->off = off + sizeof(*h) + len;
	w->n++;
	return 0;
}

SEC("perf_event")
int moment_sample(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, npy = 0, size;
	const struct moment_pyproc *pp;
	const struct moment_goproc *gp = NULL;
	const struct moment_slots *sl;
	const __u32 *dp = NULL;
	struct moment_rec *h;
	struct scratch *s;
	struct pt_regs *regs;
	__u32 cpu, isdeep, has_pp, has_gp, has_sl;
	__u64 out, read_to, end = 0;

	if (!pid)
		return 1;
	pp = bpf_map_lookup_elem(&pyprocs, &pid);
	sl = bpf_map_lookup_elem(&slots, &tid);
#if defined(__TARGET_ARCH_arm64)
	if (!pp)
		gp = bpf_map_lookup_elem(&goprocs, &pid);
	asm volatile("" : "+r"(gp));
#endif
	if (!sl)
		dp = bpf_map_lookup_elem(&deep, &pid);
	/* what there is to read, as flags: each pointer tested alone (the
	 * verifier refuses arithmetic on pointers, and compilers merge the
	 * tests of two into one of their OR, which Linux 6.1's refuses) */
	isdeep = config.deep_all;
	has_pp = has_gp = has_sl = 0;
	if (dp)
		isdeep = 1;
	if (pp)
		has_pp = 1;
	if (gp)
		has_gp = 1;
	if (sl)
		has_sl = 1;
	barrier_var(isdeep);
	barrier_var(has_pp);
	barrier_var(has_gp);
	barrier_var(has_sl);
	if (!(has_pp | has_gp | has_sl | isdeep))
		return 1; /* nothing to read for this thread: the common case */
	cpu = bpf_get_smp_processor_id();
	s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!s)
		return 1;
	h = (struct moment_rec *)s->rec;
	__builtin_memset(h, 0, sizeof(*h));
	h->pid = pid;
	h->tid = tid;
	h->time = bpf_ktime_get_ns();
	h->cpu = cpu;
	/* the user registers, wherever the sample interrupted the thread
	 * (as perf's REGS_USER: the task's saved user registers) */
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (regs) {
		h->ip = USER_IP(regs);
		h->sp = USER_SP(regs);
	}
	if (CTX_IN_KERNEL(ctx))
		h->flags |= MOMENT_F_KERNEL;
	if (pp)
		npy = read_python(s, h, pp, tid);
	size = REC_PY_OFF + npy * sizeof(struct moment_pyframe);
#if defined(__TARGET_ARCH_arm64)
	if (gp && regs)
		size = REC_GO_OFF + read_go(s, h, gp, regs);
#endif
	read_to = h->sp + config.stack_user;
	/* a new thread of a process known deep: where its stack ends */
	if (!has_sl && isdeep && config.topwin && h->sp && read_to > h->sp)
		end = stack_end(tid, h->sp);
	if (has_sl | isdeep)
		size += read_window(s, h, sl ? sl->top : end, size, &read_to);
	if (end > read_to)
		size += read_topwin(s, h, end, size, read_to);
	if (sl) {
		struct slotwalk w = {
			.s = s, .sl = sl, .sp = h->sp, .copy_end = read_to, .off = size,
		};
		h->flags |= MOMENT_F_SLOTS;
		h->slots_gen = sl->gen;
		bpf_loop(MOMENT_MAX_RANGES, slot_step, &w, 0);
		h->nranges = (__u16)w.n;
		size = w.off;
	}
	/* a thread whose stack goes nowhere past the copy now: nothing */
	if (!(has_pp | has_gp) && !h->nranges && !(h->flags & (MOMENT_F_WINDOW | MOMENT_F_TOPWIN)))
		return 1;
	h->npy = (__u16)npy;
	h->size = size;
	out = size;
	barrier_var(out);
	if (out < sizeof(*h) || out > REC_MAX)
		return 1;
	/* no wake-up per record (each would preempt the workload): user
	 * space reads on its own pace, and is woken when half is full */
	if (bpf_ringbuf_output(&ring, s->rec, out,
			       bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA) >
			       bpf_ringbuf_query(&ring, BPF_RB_RING_SIZE) / 2 ?
			       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP))
		__sync_fetch_and_add(&dropped, 1);
	return 1;
}
