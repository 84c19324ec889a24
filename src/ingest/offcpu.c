/* offcpu.c - off-CPU intervals and who ended them (ingest.h's
 * ingest_enable_offcpu and friends; state: struct ingest_offcpu).
 *
 * A thread's switch-out sample carries its stack and the kernel stack
 * that says why it blocked; the PERF_RECORD_SWITCH records end and start
 * its intervals; a sched_waking hit that ends a wait is kept as the
 * interval's waker, with the waker's stack when it is a recorded thread.
 */
#include "ingest/ingest-private.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tracepoints' common_flags (the kernel's enum trace_flag_type) */
#define TRACE_FLAG_HARDIRQ 0x08
#define TRACE_FLAG_SOFTIRQ 0x10
#define TRACE_FLAG_NMI 0x40

/* ---- off-CPU intervals ---- */

void ingest_offcpu_init(struct ingest_offcpu *o)
{
	hmap_init(&o->switch_ids);
	hmap_init(&o->wake_ids);
	hmap_init(&o->foreign_wake_ids);
	hmap_init(&o->rec_pids);
	hmap_init(&o->comm_index);
	hmap_init(&o->pend_index);
	hmap_init(&o->kreason);
	hmap_init(&o->ureason);
}

void ingest_offcpu_release(struct ingest_offcpu *o)
{
	hmap_release(&o->switch_ids);
	hmap_release(&o->wake_ids);
	hmap_release(&o->foreign_wake_ids);
	hmap_release(&o->rec_pids);
	hmap_release(&o->comm_index);
	free(o->comms);
	hmap_release(&o->pend_index);
	free(o->pend);
	hmap_release(&o->kreason);
	hmap_release(&o->ureason);
	if (o->usyms)
		sym_session_free(o->usyms);
	if (o->ksyms)
		sym_session_free(o->ksyms);
}

void ingest_enable_offcpu(struct ingest *g)
{
	g->off.on = true;
	if (!g->off.ksyms)
		g->off.ksyms = sym_session_new();
}

void ingest_add_switch_id(struct ingest *g, uint64_t id)
{
	hmap_put(&g->off.switch_ids, id, 1);
}

void ingest_enable_wakers(struct ingest *g, uint32_t flags_off, uint32_t pid_off)
{
	g->off.wakers = true;
	g->off.wake_flags_off = flags_off;
	g->off.wake_pid_off = pid_off;
}

void ingest_add_wake_id(struct ingest *g, uint64_t id)
{
	hmap_put(&g->off.wake_ids, id, 1);
}

void ingest_add_foreign_wake_id(struct ingest *g, uint64_t id)
{
	hmap_put(&g->off.foreign_wake_ids, id, 1);
}

/* The name of thread tid of process pid outside the recording, read from
 * /proc once (while live), "" when unknown. */
static const char *foreign_comm(struct ingest *g, uint32_t pid, uint32_t tid)
{
	uint32_t at;
	char path[64];
	FILE *f;
	if (hmap_get(&g->off.comm_index, tid, &at))
		return g->off.comms[at - 1];
	GROW(g->off.comms, g->off.commcap, g->off.ncomms + 1);
	g->off.comms[g->off.ncomms][0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	if (g->live && (f = fopen(path, "re"))) {
		if (fgets(g->off.comms[g->off.ncomms], 16, f))
			g->off.comms[g->off.ncomms][strcspn(g->off.comms[g->off.ncomms], "\n")] = 0;
		fclose(f);
	}
	hmap_put(&g->off.comm_index, tid, (uint32_t)++g->off.ncomms);
	return g->off.comms[g->off.ncomms - 1];
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

	if (!s->raw || s->raw_size < g->off.wake_pid_off + 4u || s->raw_size < g->off.wake_flags_off + 1u) {
		g->bad_records++;
		return NULL;
	}
	memcpy(&tid, s->raw + g->off.wake_pid_off, 4);
	*flags = s->raw[g->off.wake_flags_off];
	if (tid <= 0 || !hmap_get(&g->off.pend_index, (uint32_t)tid, &at))
		return NULL;
	p = &g->off.pend[at];
	if (!p->out_time || p->preempt || s->time < p->out_time)
		return NULL;
	/* a recorded waker seen by the event without stacks first: its
	 * own event's sample (same wake-up) completes it */
	if (p->woken && !(p->wk_partial && s->tid == p->wk.waker_tid &&
			  hmap_get(&g->off.wake_ids, s->id, &at)))
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
	} else if (!rs && hmap_get(&g->off.rec_pids, s->pid, &at)) {
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
			p->wk.flags = (uint8_t)((SAMPLE_Q(rs->quality) | (rs->method & 3) << 2) << 4 |
						((rs->quality & SAMPLE_Q_LATE) ? WAKER_F_LATE : 0));
		}
	}
	g->off.wakes_kept++;
}

static struct offcpu_pending *pending(struct ingest_offcpu *o, uint32_t pid, uint32_t tid)
{
	uint32_t at;
	if (!hmap_get(&o->pend_index, tid, &at)) {
		GROW(o->pend, o->pendcap, o->npend + 1);
		memset(&o->pend[o->npend], 0, sizeof(*o->pend));
		o->pend[o->npend].tid = tid;
		at = (uint32_t)o->npend++;
		hmap_put(&o->pend_index, tid, at);
	}
	o->pend[at].pid = pid;
	return &o->pend[at];
}

const struct offcpu_pending *ingest_offcpu_find(const struct ingest_offcpu *o, uint32_t tid)
{
	uint32_t at;
	return hmap_get(&o->pend_index, tid, &at) ? &o->pend[at] : NULL;
}

void ingest_offcpu_recorded(struct ingest_offcpu *o, uint32_t pid)
{
	hmap_put(&o->rec_pids, pid, 1);
}

void ingest_offcpu_fork(struct ingest_offcpu *o, uint32_t pid, uint32_t tid)
{
	uint32_t at;
	if (o->on && hmap_get(&o->pend_index, tid, &at))
		o->pend[at].dead = false; /* a tid used again */
	hmap_put(&o->rec_pids, pid, 1);
}

void ingest_offcpu_exit(struct ingest_offcpu *o, uint32_t pid, uint32_t tid)
{
	/* a thread's last switch-out is its death, not a wait */
	if (o->on) {
		struct offcpu_pending *p = pending(o, pid, tid);
		p->out_time = 0;
		p->dead = true;
	}
}

int ingest_offcpu_wake(struct ingest *g, const struct perf_sample *s, struct offcpu_wake *w)
{
	uint32_t v;
	w->p = NULL;
	w->flags = 0;
	if (!g->off.wakers)
		return OFFCPU_WAKE_NONE;
	if (hmap_get(&g->off.foreign_wake_ids, s->id, &v)) {
		if ((w->p = wake_target(g, s, &w->flags)))
			offcpu_wake(g, w->p, s, NULL, w->flags);
		return OFFCPU_WAKE_DONE;
	}
	if (!hmap_get(&g->off.wake_ids, s->id, &v))
		return OFFCPU_WAKE_NONE;
	g->off.wakes++;
	if (!(w->p = wake_target(g, s, &w->flags)))
		return OFFCPU_WAKE_DONE;
	if (w->flags & (TRACE_FLAG_HARDIRQ | TRACE_FLAG_NMI | TRACE_FLAG_SOFTIRQ)) {
		/* the interrupted thread woke no one: no stack */
		offcpu_wake(g, w->p, s, NULL, w->flags);
		return OFFCPU_WAKE_DONE;
	}
	return OFFCPU_WAKE_STACK;
}

void ingest_offcpu_woken(struct ingest *g, const struct offcpu_wake *w, const struct perf_sample *s,
			 const struct rec_sample *rs)
{
	offcpu_wake(g, w->p, s, rs, w->flags);
}

bool ingest_offcpu_is_switch(const struct ingest *g, const struct perf_sample *s)
{
	uint32_t v;
	return g->off.on && hmap_get(&g->off.switch_ids, s->id, &v);
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
	if (hmap_get(&g->off.kreason, addr, &v))
		return (uint8_t)v;
	if (!g->off.ksyms)
		g->off.ksyms = sym_session_new();
	memset(&res, 0, sizeof(res));
	sym_lookup_kernel(g->off.ksyms, addr - 1, &res);
	for (i = 0; res.name && i < ARRAY_SIZE(reason_pats); i++)
		if (reason_pats[i].whole ? !strcmp(res.name, reason_pats[i].pat)
					 : strstr(res.name, reason_pats[i].pat) != NULL) {
			r = (uint8_t)i;
			break;
		}
	hmap_put(&g->off.kreason, addr, r);
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

	if (hmap_get(&g->off.ureason, key, &v))
		return (enum offcpu_reason)v;
	memset(&res, 0, sizeof(res));
	/* another thread symbolizes (ingest.h): never wait for it here */
	if (m && m->path[0] == '/' && g->symbol_lock && pthread_mutex_trylock(g->symbol_lock))
		return OFFCPU_OTHER;
	if (m && m->path[0] == '/') {
		struct module_ref ref = ingest_mapping_ref(m);
		if (!g->off.usyms) {
			g->off.usyms = sym_session_new();
			sym_set_lines(g->off.usyms, false);
			sym_set_debuginfod(g->off.usyms, false);
		}
		sym_lookup(g->off.usyms, &ref, addr - (ra ? 1 : 0), &res);
		v = ingest_wait_by_name(res.name);
		if (g->symbol_lock)
			pthread_mutex_unlock(g->symbol_lock);
		hmap_put(&g->off.ureason, key, v);
		return (enum offcpu_reason)v;
	}
	v = ingest_wait_by_name(res.name);
	hmap_put(&g->off.ureason, key, v);
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

void ingest_offcpu_switch_out(struct ingest *g, const struct perf_sample *s, const struct rec_sample *rs,
			      size_t nu, bool unwound, size_t nk, bool extended)
{
	struct offcpu_pending *p;
	const struct reason_pat *kr;
	if (!rs->tid || rs->tid == UINT32_MAX)
		return; /* the idle task, or a thread past its exit (see below) */
	p = pending(&g->off, rs->pid, rs->tid);
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
	p->late = (rs->quality & SAMPLE_Q_LATE) != 0;
	kr = kernel_reason(g, g->kframes, nk);
	p->reason = kr ? kr->reason : OFFCPU_OTHER;
	if (kr && kr->futex)
		p->reason = (uint8_t)futex_reason(g, s, nu, unwound);
	p->read = extended;
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
	o.flags = (uint8_t)(flags | (p->qm << OFFCPU_F_QM_SHIFT) | (p->read ? OFFCPU_F_READ : 0) |
			    (p->late ? OFFCPU_F_LATE : 0));
	store_put_offcpu(g->w, &o);
	if (p->woken && !p->preempt) {
		p->wk.start = o.start;
		p->wk.tid = o.tid;
		store_put_waker(g->w, &p->wk, p->wk.kind == WAKER_OTHER ? p->comm : NULL);
	}
	g->off.intervals++;
	g->off.ns += o.duration;
	p->out_time = 0;
	p->stack = 0;
	p->woken = false;
}

/* PERF_RECORD_SWITCH and SWITCH_CPU_WIDE: the sample_id names the thread
 * that switches (out: the one leaving; in: the one arriving). */
void ingest_offcpu_on_switch(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_sample id;
	struct offcpu_pending *p;
	if (!g->off.on)
		return;
	if (perf_sample_id_parse(f, h, &id)) {
		g->bad_records++;
		return;
	}
	/* 0: the idle task; -1: a thread that already exited, switched out
	 * for the last time (the kernel names a task no longer alive -1):
	 * its death, not a wait */
	if (!id.tid || id.tid == UINT32_MAX)
		return;
	p = pending(&g->off, id.pid, id.tid);
	if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
		if (id.time < p->last_in || p->dead)
			return;
		if (!p->out_time || id.time - p->out_time >= SAME_SWITCH_NS) {
			/* no stack sample (yet): an interval without a stack */
			p->out_time = id.time;
			p->stack = 0;
			p->reason = OFFCPU_OTHER;
			p->qm = 0;
			p->late = false;
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
	for (i = 0; i < g->off.npend; i++)
		if (g->off.pend[i].out_time && g->off.pend[i].out_time <= end_time)
			offcpu_emit(g, &g->off.pend[i], end_time, OFFCPU_F_OPEN);
	if (g->off.on)
		store_set_offcpu_open(g->w, end_time, NULL, 0);
}

void ingest_offcpu_end_file(struct ingest *g, uint64_t t)
{
	size_t i;
	if (!g->off.on)
		return;
	for (i = 0; i < g->off.npend; i++) {
		struct offcpu_pending *p = &g->off.pend[i], keep;
		if (!p->out_time || p->out_time > t || p->dead)
			continue;
		/* this file's part of the wait; the wake-up that ends it (if
		 * one came already) goes with the rest, in the next file */
		keep = *p;
		p->woken = false;
		offcpu_emit(g, p, t, OFFCPU_F_OPEN);
		*p = keep;
		p->out_time = t;
	}
	store_set_offcpu_open(g->w, t, NULL, 0);
}

void ingest_offcpu_carry(struct ingest *g, const struct ingest_keep *k)
{
	struct ingest_offcpu *o = &g->off;
	size_t i, n = 0;

	o->intervals = o->ns = o->wakes = o->wakes_kept = 0;
	/* caches by mapping id, and the names of threads outside the
	 * recording: asked again */
	hmap_release(&o->ureason);
	hmap_init(&o->ureason);
	if (o->usyms) {
		sym_session_free(o->usyms);
		o->usyms = NULL;
	}
	hmap_release(&o->comm_index);
	hmap_init(&o->comm_index);
	free(o->comms);
	o->comms = NULL;
	o->ncomms = o->commcap = 0;
	{
		struct hmap old = o->rec_pids;
		hmap_init(&o->rec_pids);
		for (i = 0; i < old.cap; i++)
			if (old.slots[i].used && ingest_keeps(k, (uint32_t)old.slots[i].key))
				hmap_put(&o->rec_pids, old.slots[i].key, 1);
		hmap_release(&old);
	}
	hmap_release(&o->pend_index);
	hmap_init(&o->pend_index);
	for (i = 0; i < o->npend; i++) {
		struct offcpu_pending p = o->pend[i];
		if (p.dead || !ingest_keeps(k, p.pid))
			continue;
		p.stack = ingest_copy_stack(g, k, p.stack);
		if (p.woken)
			p.wk.stack = ingest_copy_stack(g, k, p.wk.stack);
		o->pend[n] = p;
		hmap_put(&o->pend_index, p.tid, (uint32_t)n);
		n++;
	}
	o->npend = n;
	if (o->npend < o->pendcap / 4) {
		o->pendcap = MAX(o->npend, (size_t)16);
		o->pend = xrealloc(o->pend, o->pendcap * sizeof(*o->pend));
	}
}

void ingest_checkpoint(struct ingest *g, uint64_t now)
{
	struct rec_offcpu *v;
	size_t i, n = 0;
	if (!g->off.on)
		return;
	v = xcalloc(g->off.npend ? g->off.npend : 1, sizeof(*v));
	for (i = 0; i < g->off.npend; i++) {
		const struct offcpu_pending *p = &g->off.pend[i];
		if (!p->out_time || p->out_time > now || p->dead)
			continue;
		v[n].start = p->out_time;
		v[n].pid = p->pid;
		v[n].tid = p->tid;
		v[n].stack = p->stack;
		v[n].cpu = p->cpu;
		v[n].reason = p->preempt ? OFFCPU_PREEMPT : p->reason;
		v[n].flags = (uint8_t)(OFFCPU_F_OPEN | (p->qm << OFFCPU_F_QM_SHIFT) | (p->late ? OFFCPU_F_LATE : 0));
		n++;
	}
	store_set_offcpu_open(g->w, now, v, n);
	free(v);
}
