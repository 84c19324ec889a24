/* walk.c - the walk of one sample: from the sampled registers, frame by
 * frame, by the compiled rules of each module's table (a rule cache in
 * front), through signal frames, stack switches and code without CFI,
 * to the outermost frame or where the stack copy ends (then the splice
 * with the kernel's frame-pointer chain, or a read of the live process's
 * stack). See unwind.h for what it promises and UNWINDING.md for the
 * traps.
 */
#include "unwind/unwind-private.h"
#include "unwind/roots.h"
#include "unwind/splice.h"
#include "lib/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- frame-pointer only ---- */

static void fp_only(const struct unwind_input *in, struct unwind_frame *frames,
		    size_t max, struct unwind_result *res)
{
	size_t n = MIN(MIN(in->fp_chain_len, max), (size_t)UNWIND_MAX_DEPTH);
	for (size_t i = 0; i < n; i++) {
		frames[i].pc = in->fp_chain[i];
		frames[i].flags = i ? UNWIND_F_RA : 0;
	}
	res->n = n;
	res->quality = UNWIND_Q_UNKNOWN;
	res->method = UNWIND_M_FP;
}

/* ---- frames in code without CFI ---- */

struct walker;
static void fp_context_end(struct walker *w, struct unwind_result *res);

/* The CPython 3.12/3.13 perf trampoline for x86-64 (Python/asm_trampoline.S,
 * copied into anonymous executable memory once per code object, 11 bytes,
 * optionally after an endbr64):
 *    0: 48 83 ec 08   sub  $8,%rsp       CFA = rsp + 8
 *    4: ff d1         call *%rcx         CFA = rsp + 16
 *    6: 48 83 c4 08   add  $8,%rsp       CFA = rsp + 16 (the return address)
 *   10: c3            ret                CFA = rsp + 8
 * It pushes no frame pointer; the return address is at CFA - 8. */
static const uint8_t py_tramp[11] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				      0x48, 0x83, 0xc4, 0x08, 0xc3 };
static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* CFA offset from rsp when pc is in a CPython trampoline, 0 when its code
 * is something else, -1 when the code bytes are unknown. */
static int tramp_cfa(const struct unwind_input *in, uint64_t pc, bool exact)
{
	static const struct { uint8_t at, cfa; } insn[] = { { 0, 8 }, { 4, 16 }, { 6, 16 }, { 10, 8 } };
	uint8_t b[sizeof(py_tramp) + sizeof(endbr64)];
	bool known = false;

	if (!in->read_code)
		return -1;
	if (!exact) /* a return address: right after the call */
		return !in->read_code(in->find_arg, pc - 6, b, sizeof(py_tramp)) ? -1 :
		       memcmp(b, py_tramp, sizeof(py_tramp)) == 0 ? 16 : 0;
	for (size_t i = 0; i < ARRAY_SIZE(insn); i++) {
		if (!in->read_code(in->find_arg, pc - insn[i].at, b, sizeof(py_tramp)))
			continue;
		known = true;
		if (memcmp(b, py_tramp, sizeof(py_tramp)) == 0)
			return insn[i].cfa;
	}
	if (in->read_code(in->find_arg, pc, b, sizeof(b))) {
		known = true;
		if (!memcmp(b, endbr64, 4) && !memcmp(b + 4, py_tramp, sizeof(py_tramp)))
			return 8;
	}
	return known ? 0 : -1;
}

/* Is ra a plausible return address: in a mapped module whose CFI covers
 * it (the code a trampoline returns to is the interpreter's)? */
static bool ra_in_cfi(struct unwinder *u, const struct unwind_input *in, uint64_t ra)
{
	const struct umod *m = ra > 4096 ? unw_module_for(u, in, ra - 1) : NULL;
	return m && m->t && utable_find(m->t, ra - 1 - m->bias)->kind != UR_FP;
}

enum { NOCFI_BROKEN = 0, NOCFI_TRAMPOLINE, NOCFI_FP, NOCFI_FAULT };

/* One frame at pc where no CFI says how to unwind (JIT code, stripped
 * code). First known generated code by its bytes (the CPython trampoline);
 * else the frame pointer when it is plausible: at or above the stack
 * pointer (a frame record sits above the frame's own slots) and read from
 * the copy. When the code bytes cannot be read (a perf.data file, or the
 * process is gone), the trampoline rule comes first where the frame is
 * consistent with it: the return address it gives is in code that has
 * CFI (a frame-pointer frame of JIT code rarely holds one right above its
 * lowest slot, and the frame pointer may be consistent by chance in
 * callers built with frame pointers, where it skips a caller). That guess
 * is made only in anonymous memory (anon), where the trampolines live; in
 * a file's code without CFI the frame pointer is the only rule.
 * Sets *cfa (0 when unknown), *ra and *nrbp. */
static int nocfi_frame(struct unwinder *u, const struct unwind_input *in, struct copy *c,
		       uint64_t pc, uint64_t sp, uint64_t rbp, uint64_t valid, bool exact,
		       bool anon, uint64_t *cfa, uint64_t *ra, uint64_t *nrbp)
{
	/* the trampoline is x86-64 code */
	int k = u->arch->id == UNWIND_ARCH_X86_64 ? tramp_cfa(in, pc, exact) : 0;
	bool fp_ok = (valid & (1u << UNW_FP)) && rbp >= sp && rbp < UINT64_MAX - 16;

	*cfa = 0;
	*nrbp = rbp;
	if (k > 0) {
		*cfa = sp + (uint64_t)k;
		return copy_read(c, *cfa - 8, ra) ? NOCFI_TRAMPOLINE : NOCFI_FAULT;
	}
	if (k < 0 && !exact && anon) {
		uint64_t tra = 0;
		if (copy_read(c, sp + 8, &tra) && ra_in_cfi(u, in, tra)) {
			*cfa = sp + 16;
			*ra = tra;
			return NOCFI_TRAMPOLINE;
		}
		c->fault = FAULT_NONE;
	}
	if (!fp_ok)
		return NOCFI_BROKEN;
	/* a frame record: the caller's frame pointer, then the return
	 * address (on aarch64 the caller's stack pointer is at or above
	 * CFA: rbp + 16 is its lowest possible value) */
	*cfa = rbp + 16;
	if (!copy_read(c, rbp + 8, ra) || !copy_read(c, rbp, nrbp))
		return NOCFI_FAULT;
	*ra &= u->arch->ra_mask;
	return NOCFI_FP;
}

/* Whether ra (a "return address" in module m) is in a context's start
 * function (ROOT_K_CONTEXT: glibc's __start_context), which makecontext()
 * makes a context's function return into at its first byte. Above it
 * lies the context's link, not a caller: a chain that reaches it ends. */
static bool context_at(const struct umod *m, uint64_t ra)
{
	return m && m->ctx_hi && ra - m->bias >= m->ctx_lo && ra - m->bias < m->ctx_hi;
}

/* Is ra (a return address, the last of the kernel's chain) in an
 * outermost frame? Either its row has an undefined return address, or it
 * is in the function that called main or a thread's start routine: the
 * frame pointer convention zeroes rbp there (_start, clone3), so the
 * kernel's chain ends exactly at that frame. */
static bool is_root(struct unwinder *u, const struct unwind_input *in, uint64_t ra)
{
	const struct umod *m = unw_module_for(u, in, ra - 1);
	return m && m->t && (utable_find(m->t, ra - 1 - m->bias)->kind == UR_STOP ||
			     utable_in_root_caller(m->t, ra - 1 - m->bias));
}

/* The frame pointer at a stack switch frame whose stack pointer is sp:
 * the callee on the new stack saved it in its frame record at sp - 16
 * (Go's frames keep rbp there, and Go's CFI does not say so, so the rules
 * leave rbp as sampled). The record counts only when the frame-pointer
 * walk from the sampled rbp reaches it inside the copy. Else rbp where a
 * rule restored it (valid has UNW_RBP), else 0. */
static uint64_t switch_rbp(const struct unwind_input *in, struct copy *c, uint64_t sp,
			   uint64_t rbp, uint64_t valid)
{
	uint64_t fp = in->regs.r[UNW_RBP], next;

	if (in->regs.valid & (1u << UNW_RBP))
		for (int i = 0; i < UNWIND_MAX_DEPTH && fp >= c->base && fp < c->end; i++) {
			if (!copy_read(c, fp, &next))
				break;
			if (fp == sp - 16)
				return next;
			if (next <= fp)
				break;
			fp = next;
		}
	c->fault = FAULT_NONE;
	return (valid & (1u << UNW_RBP)) ? rbp : 0;
}

/* ---- the walk ---- */

/* One walk of a sample: the frame reached (pc, sp, rbp, which registers
 * are known) and what the steps so far found out. */
struct walker {
	struct unwinder *u;
	const struct arch *arch;  /* the unwinder's */
	const struct unwind_input *in;
	struct unwind_frame *frames;
	struct unwind_result *res;
	size_t n, limit;
	bool track_rbx;           /* carry rbx too (see walk()) */
	/* walk()'s locals, apart: their addresses go to functions of other
	 * files, and the walker's own fields then stay in registers */
	uint64_t *regs;           /* UNW_NREGS */
	struct copy *c;
	struct splice *sp_info;
	uint64_t *cfas;           /* cfas[i]: the CFA that gave frame i */
	uint64_t valid;           /* bit i: slot i of regs is known (UNW_FP, UNW_SP
				   * and UNW_PC: rbp, sp and pc below) */
	uint64_t pc, sp, rbp;     /* rbp: the frame pointer (aarch64's x29) */
	uint64_t ra_mask;         /* the arch's */
	const struct umod *mod;   /* the module pc was last found in */
	bool exact;               /* look up pc itself, not pc-1 */
	bool rbp_by_rule;         /* rbp was restored by a rule (else it is the
				   * sampled one: Go's CFI does not say where
				   * frames save it) */
	bool offstack;            /* a stack switch or a signal frame led to
				   * a stack outside the copy */
	bool back;                /* a step moved the CFA down (a signal frame or
				   * a stack switch): loops become possible */
	int xreads;               /* reads of the live process's stack */
	int xerr;                 /* why the last one failed */
	int first_kind;           /* the rule kind of the step from the sampled frame */
};

/* One step, from the frame at (pc, sp, rbp) to its caller's. */
struct step {
	uint64_t lookup;          /* pc when exact, else pc - 1 */
	const struct urule *r;    /* the rule at lookup (NULL: none) */
	const struct utable *rt;  /* its table and that table's bias */
	uint64_t rbias;
	bool jit_cfi;             /* r is from a jitdump's CFI */
	int kind;                 /* how to step: r's kind, or -1 (done by
				   * the stack-switch rule) */
	/* the caller's frame */
	uint64_t cfa, ra, nsp, nrbp;
	uint64_t nvalid;
	const struct umod *nmod;  /* the module of ra */
	bool cfa_known, signal, switched;
	bool ra_lr;               /* ra is the link register's (aarch64): the
				   * frame stored nothing, its CFA may be sp */
	bool injected;            /* pc is in a function the runtime made
				   * look called (ROOT_K_INJECTED): ra is the
				   * exact pc it interrupted */
	bool context;             /* ra is in a context's start function
				   * (ROOT_K_CONTEXT), made to be returned
				   * into at its first byte */
};

/* How a step ended. */
enum step_end {
	STEP_NEXT,   /* go on (the caller's registers are in the step) */
	STEP_FAULT,  /* a read missed the copy: w->c->fault says how */
	STEP_STOP,   /* res->quality and res->stop are set; stop at pc */
	STEP_DONE,   /* the outermost frame: res->quality is set */
};

static enum step_end step_stop(struct walker *w, enum unwind_quality q, enum unwind_stop why)
{
	w->res->quality = q;
	w->res->stop = why;
	return STEP_STOP;
}

/* Set up the walk of in; false when it ended already (res is final). */
static bool walk_start(struct walker *w, enum unwind_mode mode)
{
	const struct unwind_input *in = w->in;
	struct unwind_result *res = w->res;
	struct copy *c = w->c;

	memset(res, 0, sizeof(*res));
	res->method = UNWIND_M_DWARF;
	if (!in->space || in->space != w->u->space) {
		w->u->space = in->space;
		w->u->nseen = 0;
	}
	if (!w->limit) {
		res->quality = UNWIND_Q_TRUNCATED;
		res->stop = UNWIND_STOP_DEPTH;
		return false;
	}
	if (mode == UNWIND_MODE_FP) {
		fp_only(in, w->frames, w->limit, res);
		fp_context_end(w, res);
		return false;
	}
	if ((w->valid & ((1u << UNW_RIP) | (1u << UNW_RSP))) != ((1u << UNW_RIP) | (1u << UNW_RSP))) {
		/* No user registers (e.g. a kernel thread): nothing to unwind. */
		if (mode == UNWIND_MODE_HYBRID && in->fp_chain_len) {
			fp_only(in, w->frames, w->limit, res);
			fp_context_end(w, res);
			return false;
		}
		res->quality = UNWIND_Q_BROKEN;
		res->stop = UNWIND_STOP_NO_REGS;
		return false;
	}
	/* x86-64 has 17 slots, aarch64 33: two fixed-size copies */
	if (w->arch->nregs <= UNW_NREGS_X86)
		memcpy(w->regs, in->regs.r, UNW_NREGS_X86 * sizeof(*w->regs));
	else
		memcpy(w->regs, in->regs.r, UNW_NREGS * sizeof(*w->regs));
	c->stack = in->stack;
	c->base = w->regs[UNW_RSP];
	c->end = in->stack ? c->base + in->stack_size : c->base;
	if (c->end < c->base)
		c->end = UINT64_MAX;
	c->fault = FAULT_NONE;
	c->x = NULL;
	c->xbase = c->xend = 0;
	c->words = in->words && in->words->n ? in->words : NULL;
	c->used_words = c->late = false;
	c->slots = in->slots_out;
	c->slots_max = in->slots_out ? in->slots_max : 0;
	c->slots_from = in->slots_from;
	c->nslots = 0;
	if (in->stack)
		for (size_t o = 0; o < MIN(in->stack_size, (size_t)STACK_PREFETCH); o += 64)
			__builtin_prefetch(in->stack + o);
	if (mode == UNWIND_MODE_HYBRID)
		splice_prepare(in, w->ra_mask, w->sp_info);
	else
		w->sp_info->valid = false;
	c->hold_words = c->words && w->sp_info->valid;

	w->pc = w->regs[UNW_RIP];
	w->sp = w->regs[UNW_RSP];
	w->rbp = w->regs[UNW_RBP];
	w->frames[0].pc = w->pc;
	w->frames[0].flags = 0;
	w->n = 1;
	return true;
}

/* The rule for pc: its module's compiled table (through the rule
 * cache), else a jitdump's CFI, else none (kind UR_FP). */
static void step_rule(struct walker *w, struct step *s)
{
	struct unwinder *u = w->u;
	const struct umod *mod;

	s->lookup = w->exact ? w->pc : w->pc - 1;
	if (!w->mod || s->lookup < w->mod->start || s->lookup >= w->mod->end)
		w->mod = seen_module(u, w->in, s->lookup);
	mod = w->mod;
	if (mod && mod->t) {
		uint64_t key = (s->lookup & 0xffffffffffffull) | mod->gen;
		struct rule_slot *rs = &u->cache[(key * 0x9e3779b97f4a7c15ull) >> 54];
		if (rs->key != key) {
			rs->rule = *utable_find(mod->t, s->lookup - mod->bias);
			rs->key = key;
		}
		s->r = &rs->rule;
	} else {
		s->r = NULL;
	}
	s->rt = mod ? mod->t : NULL;
	s->rbias = mod ? mod->bias : 0;
	s->jit_cfi = false;
	if ((!s->r || s->r->kind == UR_FP) && w->in->jit_table) {
		/* JIT code that came with CFI in a jitdump */
		const struct utable *jt = w->in->jit_table(w->in->find_arg, s->lookup);
		const struct urule *jr = jt ? utable_find(jt, s->lookup) : NULL;
		if (jr && jr->kind != UR_FP) {
			s->r = jr;
			s->rt = jt;
			s->rbias = 0;
			s->jit_cfi = true;
		}
	}

	s->kind = s->r ? s->r->kind : UR_FP;
	if (s->kind == UR_FP && w->n == 1 && mod && mod->t &&
	    utable_find(mod->t, s->lookup - 1 - mod->bias)->kind == UR_SIGNAL) {
		/* Sampled in rt_sigreturn's syscall: the pc is the byte
		 * after `syscall`, one past the trampoline's FDE (which
		 * starts a byte early for RA-1 lookups instead). */
		s->kind = UR_SIGNAL;
	}
}

/* aarch64, pc in a function that ran its callee on the g0 stack (Go's
 * runtime.systemstack, mcall, morestack; trap A10): Go's arm64 code
 * points x29 at the g0 stack's own record there, and no register or g0
 * slot leads back, so the goroutine's saved state (g.sched, read by the
 * in-kernel reader at the sample: w->in->go) does. systemstack has its
 * frame at the saved sp, and its rule goes on from there; mcall and
 * morestack were called from the saved pc, with the saved sp, x29 and
 * link register.
 * Without that state the stack ends here, truncated (the rules would
 * read the g0 stack's leftovers: runtime.mstart under systemstack). A
 * thread that runs for no goroutine any more (the scheduler, after mcall
 * or morestack dropped it: m.curg 0) has no goroutine to go back to:
 * mcall and morestack set sp to g0's saved state, which mstart1 left as
 * the return into mstart0, whose frame lies there; the walk goes on to
 * it on the same stack (Go's own traceback stops at mcall instead). The
 * sampled frame itself keeps its own rules when the thread is not on g0
 * (in->go NULL: the function has not switched), and stops when it is
 * (which side of the switch is not known). */
static enum step_end step_switch_go(struct walker *w, struct step *s)
{
	const struct unwind_go *go = w->in->go;
	const struct umod *m;
	bool framed;

	if (w->n == 1 && !go)
		return STEP_NEXT;
	if (!go || w->n == 1)
		return step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
	/* systemstack saved runtime.systemstack_switch's pc (ROOT_K_SWITCHED)
	 * with its own sp; mcall and morestack their caller's return
	 * address; g0's own state is the return into mstart0 */
	m = go->pc > 4096 ? seen_module(w->u, w->in, go->pc) : NULL;
	if (!m || !m->t)
		return step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
	framed = !go->dropped && m->t->nroots &&
		 utable_root_kind(m->t, go->pc - m->bias) == ROOT_K_SWITCHED;
	if (!go->dropped)
		s->switched = w->offstack = true;
	if (framed) {
		w->sp = go->sp;
		w->rbp = go->bp;
		w->valid |= 1u << UNW_FP;
		return STEP_NEXT;
	}
	s->cfa = s->nsp = go->sp;
	s->cfa_known = true;
	s->ra = go->pc & w->ra_mask;
	s->nrbp = go->bp;
	s->nvalid = (1u << UNW_RSP) | (1u << UNW_FP) | (1u << UNW_RIP);
	if (go->lr) {
		/* morestack: the function that called it was in its
		 * prologue, its return address still in x30 */
		w->regs[UNW_LR] = go->lr;
		s->nvalid |= 1ull << UNW_LR;
	}
	s->kind = -1;
	return STEP_NEXT;
}

static enum step_end step_signal_at(struct walker *w, struct step *s, uint64_t frame, bool tramp);

/* aarch64, the step out of a function Go made look called from the pc a
 * signal interrupted (asyncPreempt, sigpanic: ROOT_K_INJECTED): the
 * handler moved sp 16 bytes down and saved the interrupted link register
 * at the new sp (sigctxt.pushCall, preparePanic), which is the CFA here.
 * The interrupted frame's sp is 16 above it, and a leaf there has its
 * caller in that slot (trap A12). After the step's rule, which gave the
 * CFA and the pc. */
static enum step_end step_injected_a64(struct walker *w, struct step *s)
{
	uint64_t lr;

	if (!s->cfa_known || s->signal || s->switched)
		return STEP_NEXT;
	if (!copy_read(w->c, s->cfa, &lr))
		return STEP_FAULT;
	s->nsp = s->cfa + 16;
	w->regs[UNW_LR] = lr;
	s->nvalid |= 1ull << UNW_LR;
	return STEP_NEXT;
}

/* aarch64, pc returns into Go's signal handler, runtime.sigtramp (trap
 * A11), whose CFI marks the return address undefined (Go's TOPFRAME),
 * which would end the stack there as if complete. The kernel called it
 * with x1 the signal frame's siginfo and x2 its ucontext, which it
 * stores at sp + 16 and sp + 24 before it calls sigtrampgo: the
 * interrupted frame's registers are there (the rt_sigframe: siginfo,
 * then the ucontext 128 bytes on). Not the pair a signal frame makes
 * (the stack has not reached that store, or another runtime's layout):
 * the rule's end stands. */
static enum step_end step_go_sigtramp(struct walker *w, struct step *s)
{
	uint64_t info, uc;
	enum step_end e;

	if (!copy_read(w->c, w->sp + 16, &info) || !copy_read(w->c, w->sp + 24, &uc) ||
	    info <= w->sp || uc != info + 128)
		return STEP_NEXT;
	if ((e = step_signal_at(w, s, info, false)) != STEP_NEXT)
		return e;
	s->kind = -1;
	return STEP_NEXT;
}

/* Functions that run their callee on another stack (roots.h): a step
 * out of one follows the frame pointer to the old stack (kind -1) or
 * marks the step as switching; else the step is left to the rule. */
static enum step_end step_switch(struct walker *w, struct step *s)
{
	const struct umod *mod = w->mod;
	int rk = mod && mod->t && mod->t->nroots ? utable_root_kind(mod->t, s->lookup - mod->bias) : 0;

	s->injected = rk == ROOT_K_INJECTED;
	if (rk == ROOT_K_CONTEXT && w->exact && w->n > 1) {
		/* the outermost frame of a makecontext() context's stack:
		 * what lies above it is the context's link, not a caller */
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	if (rk == ROOT_K_SWITCH_CFI && !w->exact)
		s->switched = w->offstack = true; /* its CFI goes to the other stack */
	if ((rk == ROOT_K_SWITCH || rk == ROOT_K_SWITCH_G0) && w->arch->record_at_cfa &&
	    (!w->exact || w->n == 1) &&
	    !(w->n <= 2 && w->rbp > w->sp && w->rbp - w->sp <= 4096)) {
		/* pc returns into a function that ran its callee on
		 * another stack (Go's systemstack, mcall, morestack):
		 * the rules of its frame would read the new stack, where
		 * its caller is not. It left rbp pointing at its caller's
		 * frame record on the old stack; the kernel's chain
		 * followed it there. (Its caller's own return address is
		 * not in that record: the caller is skipped, as
		 * frame-pointer unwinders do, never invented.) Seen as the
		 * second frame with rbp just above the stack pointer, it
		 * is systemstack still on the old stack (in
		 * gosave_systemstack_switch): its CFI is right. Sampled
		 * in the function itself (the first frame), the same
		 * test tells whether it switched yet. */
		s->switched = w->offstack = true;
		if (w->n > 1)
			w->rbp = switch_rbp(w->in, w->c, w->sp, w->rbp, w->rbp_by_rule ? w->valid : 0);
		else if (!(w->valid & (1u << UNW_RBP)))
			w->rbp = 0;
		if (w->rbp < 4096 || w->rbp > UINT64_MAX - 16)
			return step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
		s->cfa = w->rbp + 16;
		s->cfa_known = true;
		if (!copy_read(w->c, w->rbp + 8, &s->ra) || !copy_read(w->c, w->rbp, &s->nrbp))
			return STEP_FAULT;
		s->nvalid = (1u << UNW_RSP) | (1u << UNW_RBP) | (1u << UNW_RIP);
		s->nsp = s->cfa;
		s->kind = -1;
	}
	if (rk == ROOT_K_SWITCH_G0 && !w->arch->record_at_cfa)
		return step_switch_go(w, s);
	if (rk == ROOT_K_GO_SIGTRAMP && !w->arch->record_at_cfa && w->n > 1)
		return step_go_sigtramp(w, s);
	if (rk == ROOT_K_SWITCH && !w->arch->record_at_cfa && !w->in->go && w->n > 1)
		/* aarch64, Go's vDSO callers (nanotime1, walltime): on a
		 * goroutine they ran the vDSO on the g0 stack, and their
		 * own frame is on the goroutine's, which no state read at
		 * the sample reaches (on g0 they did not switch: in->go,
		 * and their rules hold) */
		return step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
	return STEP_NEXT;
}

/* How step_rule_cfi() takes the return address: from the slot at
 * CFA + ra_off (UR_NORMAL, UR_PLT), from the link register (UR_LEAF), or
 * from the slot and signed (UR_PAC). */
enum ra_how { RA_SLOT, RA_LR, RA_SIGNED };

/* A compiled rule (UR_NORMAL, UR_PLT; aarch64's UR_LEAF, UR_PAC): the
 * CFA from sp or the frame pointer, the return address (a slot at it, or
 * the link register) and rbp (and rbx with track_rbx) from slots at it.
 * Inlined once per kind, so that x86-64's rules run no aarch64 test. */
static inline __attribute__((always_inline)) enum step_end
step_rule_cfi(struct walker *w, struct step *s, enum ra_how how)
{
	const struct urule *r = s->r;
	uint64_t sp = w->sp, rbp = w->rbp;

	if (r->kind == UR_PLT) {
		s->cfa = sp + (uint64_t)(int64_t)r->cfa_off + ((w->pc & 15) >= r->plt_thresh ? 8 : 0);
	} else if (r->cfa_reg == UNW_RSP) {
		s->cfa = sp + (uint64_t)(int64_t)r->cfa_off;
	} else {
		if (!(w->valid & (1u << UNW_RBP)))
			return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_REG);
		s->cfa = rbp + (uint64_t)(int64_t)r->cfa_off;
	}
	s->cfa_known = true;
	if (how == RA_LR) {
		/* aarch64: the return address is still in the link
		 * register, known in the sampled frame and in one a signal
		 * interrupted only; maybe signed */
		if (!(w->valid & (1ull << UNW_LR)))
			return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_REG);
		s->ra = w->regs[UNW_LR] & w->ra_mask;
		s->ra_lr = true;
	} else if (!copy_read(w->c, s->cfa + (uint64_t)(int64_t)r->ra_off, &s->ra)) {
		return STEP_FAULT;
	}
	/* where the CFI says it is signed (negate_ra_state): pointer
	 * authentication's signature off */
	if (how == RA_SIGNED)
		s->ra &= w->ra_mask;
	if (r->rbp == URBP_CFA) {
		uint64_t slot = s->cfa + (uint64_t)(int64_t)r->rbp_off;
		/* In an epilogue gcc's CFI still says "saved at
		 * CFA-k" after the pop: a slot below the stack
		 * pointer was popped already, and rbp holds the
		 * caller's value again (the copy starts at rsp,
		 * so the stale slot is not even in it). */
		if (slot < sp) {
			s->nrbp = rbp;
		} else {
			if (!copy_read(w->c, slot, &s->nrbp))
				return STEP_FAULT;
			s->nvalid |= 1u << UNW_RBP;
		}
	} else if (r->rbp == URBP_UNDEF) {
		s->nvalid &= ~(1u << UNW_RBP);
	}
	s->nsp = s->cfa;
	/* Only rsp, rbp and rip are tracked by compiled rules
	 * (and rbx on request); the others are unknown in the
	 * caller. */
	s->nvalid &= (1u << UNW_RSP) | (1u << UNW_RBP) | (1u << UNW_RIP) |
		     (w->track_rbx ? 1u << UNW_RBX : 0);
	if (w->track_rbx && r->rbx == URBP_CFA) {
		uint64_t slot = s->cfa + (uint64_t)(int64_t)r->rbx_off;
		if (slot >= sp) {
			if (!copy_read(w->c, slot, &w->regs[UNW_RBX]))
				return STEP_FAULT;
			s->nvalid |= 1u << UNW_RBX;
		}
	} else if (w->track_rbx && r->rbx == URBP_UNDEF) {
		s->nvalid &= ~(1u << UNW_RBX);
	}
	return STEP_NEXT;
}

static enum step_end step_cfi(struct walker *w, struct step *s)
{
	return step_rule_cfi(w, s, RA_SLOT);
}

/* aarch64's two (not inlined into the walk: x86-64's loop stays as it
 * was, measured with callgrind on a recorded xz) */
static __attribute__((noinline)) enum step_end step_leaf(struct walker *w, struct step *s)
{
	return step_rule_cfi(w, s, RA_LR);
}

static __attribute__((noinline)) enum step_end step_pac(struct walker *w, struct step *s)
{
	return step_rule_cfi(w, s, RA_SIGNED);
}

/* A signal frame: every register from the saved context. */
static enum step_end step_signal_at(struct walker *w, struct step *s, uint64_t frame, bool tramp)
{
	uint64_t nr[UNW_NREGS];
	if (w->arch->signal_regs(frame, unw_copy_read_cb, w->c, nr, &s->nvalid) < 0) {
		s->cfa_known = false;
		return STEP_FAULT;
	}
	memcpy(w->regs, nr, sizeof(nr));
	s->ra = nr[UNW_RIP];
	s->nsp = nr[UNW_RSP];
	s->nrbp = nr[UNW_RBP];
	s->signal = true;
	/* handled on an alternate stack (sigaltstack) */
	w->offstack |= s->nsp < w->c->base || s->nsp >= w->c->end;
	/* The trampoline is symbolized at its exact pc. */
	if (tramp && w->n > 1)
		w->frames[w->n - 1].flags = (w->frames[w->n - 1].flags & ~UNWIND_F_RA) | UNWIND_F_SIGTRAMP;
	return STEP_NEXT;
}

static enum step_end step_signal(struct walker *w, struct step *s)
{
	return step_signal_at(w, s, w->sp, true);
}

static enum step_end step_nocfi(struct walker *w, struct step *s);

/* A row the compiled rules cannot hold (UR_SLOW): interpret the CFI row. */
static enum step_end step_slow(struct walker *w, struct step *s)
{
	struct cfi_row row;
	struct cfi_cie cie;
	uint64_t nr[UNW_NREGS];
	int e, k;

	w->regs[UNW_RIP] = w->pc;
	w->regs[UNW_RSP] = w->sp;
	w->regs[UNW_RBP] = w->rbp;
	e = utable_slow_row(s->rt, s->lookup - s->rbias, &row, &cie);
	if (e == -ENOENT && s->rt->lazy) /* no FDE: a compiled table's gap */
		return step_nocfi(w, s);
	if (e < 0)
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_BAD_CFI);
	s->cfa = 0;
	e = arch_apply_row(w->arch, &row, w->regs, w->valid, unw_copy_read_cb, w->c, nr, &s->nvalid,
			   &s->cfa);
	if (e == -ENODATA && w->n == 2 && (w->first_kind == UR_NORMAL || w->first_kind == UR_PLT)) {
		/* OpenSSL's assembly (aesni_gcm_encrypt) defines its CFA by a
		 * caller-saved register (rax) across calls to its own code
		 * that leaves it alone, whose CFI says nothing of it: the
		 * caller's value is the sampled one, as unwinders that read
		 * an unspecified register as the same value find it. Only
		 * one frame up from the sample, and only through a compiled
		 * rule, which restores none of these registers. */
		uint64_t cs = w->arch->caller_saved & w->in->regs.valid & ~w->valid;
		for (int i = 0; i < UNW_NREGS; i++)
			if (cs & (1ull << i))
				w->regs[i] = w->in->regs.r[i];
		if (cs)
			e = arch_apply_row(w->arch, &row, w->regs, w->valid | cs, unw_copy_read_cb, w->c,
					   nr, &s->nvalid, &s->cfa);
	}
	s->cfa_known = s->cfa != 0;
	if (e == -ENOENT) {
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	if (e == -EFAULT && w->c->fault != FAULT_NONE)
		return STEP_FAULT;
	if (e < 0)
		/* a register the caller's rules do not recover
		 * (rbx through ld.so's lazy-binding trampoline) */
		return step_stop(w, UNWIND_Q_BROKEN, e == -ENODATA ? UNWIND_STOP_REG : UNWIND_STOP_BAD_CFI);
	memcpy(w->regs, nr, sizeof(nr));
	s->ra = nr[UNW_RIP];
	/* aarch64: a row that leaves the return address in the link
	 * register stored nothing (the CFA may be sp) */
	k = row.reg[w->arch->ra_col].kind;
	s->ra_lr = !w->arch->record_at_cfa && (k == CFI_R_UNSPEC || k == CFI_R_SAME);
	s->nsp = (s->nvalid & (1u << UNW_RSP)) ? nr[UNW_RSP] : s->cfa;
	s->nvalid |= 1u << UNW_RSP;
	s->nrbp = nr[UNW_RBP];
	return STEP_NEXT;
}

/* aarch64, code without CFI at a frame whose link register is known
 * (the sampled one, one a signal interrupted): a leaf (JIT code's
 * innermost function rarely makes a frame record) still has its caller
 * in x30, and the frame record at x29 is its caller's, whose return
 * address skips the caller (trap A9). Taken as a leaf when the link
 * register is a return address into code with CFI and the record at
 * x29 does not hold it (a function that made its record stored the
 * link register there: the record is its own, nocfi_frame() reads it).
 * The stack pointer stays (it stored nothing). */
static bool nocfi_leaf(struct walker *w, struct step *s)
{
	uint64_t lr = w->regs[UNW_LR] & w->ra_mask, rec;

	if (!w->exact || !(w->valid & (1ull << UNW_LR)) || !ra_in_cfi(w->u, w->in, lr))
		return false;
	if ((w->valid & (1u << UNW_FP)) && w->rbp >= w->sp && copy_read(w->c, w->rbp + 8, &rec) &&
	    (rec & w->ra_mask) == lr)
		return false;
	w->c->fault = FAULT_NONE;
	s->cfa = s->nsp = w->sp;
	s->cfa_known = true;
	s->ra = lr;
	s->ra_lr = true;
	s->nrbp = w->rbp;
	return true;
}

/* No CFI here (JIT code, stripped code): the entry code's outermost
 * frame, a known trampoline, or the frame pointer for this one frame,
 * if it is plausible (nocfi_frame()); on aarch64 first a leaf's link
 * register (nocfi_leaf()). */
static enum step_end step_nocfi(struct walker *w, struct step *s)
{
	const struct umod *mod = w->mod;
	struct unwind_result *res = w->res;

	if (mod && mod->t && mod->t->entry && (w->valid & (1u << UNW_RBP)) &&
	    w->rbp == 0 && s->lookup - mod->bias - mod->t->entry < ENTRY_WINDOW) {
		/* Entry code without CFI (ld.so's _start calls
		 * _dl_start and _dl_init) with the zero frame
		 * pointer the kernel starts a process with: the
		 * outermost frame. */
		res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	/* Neither rule knows more than rsp, rbp and rip in the
	 * caller; the trampoline leaves rbp alone. */
	s->nvalid = (1u << UNW_RSP) | (w->valid & (1u << UNW_RBP)) | (1u << UNW_RIP);
	if (!w->arch->record_at_cfa && nocfi_leaf(w, s)) {
		if (!mod || !mod->t) {
			res->jit |= UNWIND_JIT_FP;
			res->jit_frames++;
		}
		return STEP_NEXT;
	}
	switch (nocfi_frame(w->u, w->in, w->c, w->pc, w->sp, w->rbp, w->valid, w->exact,
			    !mod || !mod->t, &s->cfa, &s->ra, &s->nrbp)) {
	case NOCFI_TRAMPOLINE:
		res->jit |= UNWIND_JIT_TRAMPOLINE;
		res->jit_frames++;
		break;
	case NOCFI_FP:
		s->nvalid |= 1u << UNW_RBP;
		if (!mod || !mod->t) {
			/* anonymous memory: JIT code */
			res->jit |= UNWIND_JIT_FP;
			res->jit_frames++;
		}
		break;
	case NOCFI_FAULT:
		s->cfa_known = s->cfa != 0;
		return STEP_FAULT;
	default:
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_NO_CFI);
	}
	s->cfa_known = true;
	s->nsp = s->cfa;
	return STEP_NEXT;
}

/* The caller's frame as the step's rule says it. */
static enum step_end step_by_rule(struct walker *w, struct step *s)
{
	switch (s->kind) {
	case -1:
		return STEP_NEXT;
	case UR_NORMAL:
	case UR_PLT:
		return step_cfi(w, s);
	case UR_LEAF:
		return step_leaf(w, s);
	case UR_PAC:
		return step_pac(w, s);
	case UR_STOP:
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	case UR_SIGNAL:
		return step_signal(w, s);
	case UR_SLOW:
		return step_slow(w, s);
	case UR_FP:
	default:
		return step_nocfi(w, s);
	}
}

/* Is the caller's frame a real one? */
static enum step_end step_check(struct walker *w, struct step *s)
{
	if (!s->signal && !s->switched && s->nsp <= w->sp && !(s->ra_lr && s->nsp == w->sp))
		/* The stack pointer must move towards the caller (but
		 * for a frame that stored nothing: its return address was
		 * in the link register, which no later frame has). */
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_SP);
	if (s->ra == 0) {
		/* A zero return address ends a chain by convention. */
		if (s->signal)
			return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_SIGNAL);
		w->res->quality = UNWIND_Q_COMPLETE;
		return STEP_DONE;
	}
	/* Never an invented frame: the caller's pc must be in
	 * executable code the process has mapped... */
	s->nmod = seen_module(w->u, w->in, s->signal || s->injected ? s->ra : s->ra - 1);
	if (!s->nmod && w->in->find)
		return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_NOT_CODE);
	/* makecontext() makes a context's function return into the first
	 * byte of its trampoline: that address, not the one before it,
	 * is the frame's */
	s->context = !s->signal && !s->injected && context_at(s->nmod, s->ra);
	/* ...and, once a step went down (where the CFA no longer
	 * rises at every step), no (CFA, return address) pair may come
	 * again. */
	w->back |= s->signal || s->switched;
	if (w->back)
		for (size_t j = 1; j < w->n; j++)
			if (w->cfas[j] == s->nsp && w->frames[j].pc == s->ra)
				return step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_LOOP);
	return STEP_NEXT;
}

/* Move to the caller's frame. */
static void step_advance(struct walker *w, const struct step *s)
{
	if (s->nmod)
		w->mod = s->nmod;
	if (w->n == 1)
		w->first_kind = s->kind;
	w->exact = s->signal || s->injected || s->context;
	w->rbp_by_rule |= s->nrbp != w->rbp || (s->nvalid & ~w->valid & (1u << UNW_RBP)) ||
			  (s->kind >= UR_NORMAL && s->r->rbp == URBP_CFA) || s->kind == UR_SLOW;
	w->pc = s->ra;
	w->sp = s->nsp;
	w->rbp = s->nrbp;
	w->valid = s->nvalid | (1u << UNW_RIP) | (1u << UNW_RSP);
	w->frames[w->n].pc = w->pc;
	w->frames[w->n].flags = (s->signal ? UNWIND_F_SIGNAL : s->injected || s->context ? 0 : UNWIND_F_RA) |
				(w->c->late ? UNWIND_F_LATE : 0);
	w->cfas[w->n] = s->nsp;
	w->n++;
	if (!(s->nsp - 8 >= w->c->base && s->nsp <= w->c->end)) {
		/* beyond the copy: its return address came from the words
		 * read at the sample, or from a later read */
		if (w->c->words && w->c->used_words)
			w->res->word_frames++;
		else if (w->c->x)
			w->res->read_frames++;
	}
}

enum fault_end {
	FAULT_AGAIN,    /* the stack was read from the process: step again */
	FAULT_SPLICED,  /* the kernel's chain ends the walk: res is final */
	FAULT_STOP,     /* res->quality and res->stop are set; stop at pc */
};

/* Whether at (in module m) is in a function the runtime made look
 * called (ROOT_K_INJECTED: Go's asyncPreempt, sigpanic), whose "return
 * address" is the exact pc it interrupted. */
static bool injected_at(const struct umod *m, uint64_t at)
{
	return m && m->t && m->t->nroots && utable_root_kind(m->t, at - m->bias) == ROOT_K_INJECTED;
}

/* The kernel's chain alone (fp_only()) ends at a context's start: the
 * rbp chain above it is whatever the context began with (getcontext()'s
 * caller's frame), not its callers. */
static void fp_context_end(struct walker *w, struct unwind_result *res)
{
	for (size_t i = 1; w->in->find && i < res->n; i++) {
		const struct umod *m = seen_module(w->u, w->in, w->frames[i].pc - 1);
		if (!m)
			return;
		if (context_at(m, w->frames[i].pc)) {
			w->frames[i].flags = 0;
			res->n = i + 1;
			return;
		}
	}
}

/* Where the kernel's chain goes on from this frame, append it (the
 * splice rule, docs/UNWINDING.md). False when it does not match here, or
 * when it did not reach a root from another stack that can be read from
 * the process instead (the splice is undone then). */
static bool walk_splice(struct walker *w, const struct step *s)
{
	const struct unwind_input *in = w->in;
	struct unwind_result *res = w->res;
	const struct unwind_frame *last;
	uint64_t at;
	size_t i;
	bool not_code = false, exact, capped;

	if (!(((w->c->fault == FAULT_BEYOND || s->switched || w->back) && s->cfa_known &&
	       (w->arch->record_at_cfa ? splice_matches(w->sp_info, s->cfa)
				       : w->c->fault == FAULT_BEYOND &&
					 splice_matches_ra(w->sp_info, w->c->fault_addr))) ||
	      (w->back && w->exact && w->n > 1 && (w->valid & (1u << UNW_RBP)) && w->sp_info->valid &&
	       w->rbp == w->sp_info->frame)))
		return false;
	/* A stack switch (or a signal handled on another
	 * stack) goes to another stack, above or below the
	 * copy: the kernel's chain followed its frame pointer
	 * there. A frame interrupted by a signal before it made
	 * its own frame record (a leaf, a prologue) has its
	 * caller's in rbp: the chain goes on from the caller's
	 * caller (the caller is skipped, never invented). */
	res->dwarf_frames = w->n;
	last = &w->frames[w->n - 1];
	at = (last->flags & UNWIND_F_RA) ? last->pc - 1 : last->pc;
	exact = in->find && injected_at(seen_module(w->u, in, at), at);
	for (i = w->sp_info->next; i < in->fp_chain_len && w->n < w->limit; i++) {
		/* The chain is the kernel's rbp walk, which follows
		 * whatever rbp held in code that does not keep frame
		 * pointers: a return address outside executable
		 * code ends it there. After a function the runtime
		 * made look called (Go's asyncPreempt), the entry is
		 * the exact pc it interrupted (exact), not a return
		 * address. */
		const struct umod *m;
		at = in->fp_chain[i] - (exact ? 0 : 1);
		m = in->find ? seen_module(w->u, in, at) : NULL;
		if (in->find && !m) {
			not_code = true;
			break;
		}
		w->frames[w->n].pc = in->fp_chain[i];
		/* after frames read later, where the chain joins was found
		 * by them: no better than they are */
		w->frames[w->n].flags = (exact ? 0 : UNWIND_F_RA) | (w->c->late ? UNWIND_F_LATE : 0);
		w->n++;
		if (!exact && context_at(m, in->fp_chain[i])) {
			/* rbp above it is whatever the context began with */
			w->frames[w->n - 1].flags &= UNWIND_F_LATE;
			i = in->fp_chain_len;
			break;
		}
		exact = injected_at(m, at);
	}
	res->method = UNWIND_M_SPLICED;
	w->u->stats.spliced++;
	if (not_code) {
		res->quality = UNWIND_Q_BROKEN;
		res->stop = UNWIND_STOP_NOT_CODE;
		res->stop_pc = w->frames[w->n - 1].pc;
	} else if (i < in->fp_chain_len) {
		res->quality = UNWIND_Q_TRUNCATED;
		res->stop = UNWIND_STOP_DEPTH;
		res->stop_pc = w->frames[w->n - 1].pc;
	} else if (w->n > res->dwarf_frames && (is_root(w->u, in, w->frames[w->n - 1].pc) ||
						   !w->frames[w->n - 1].flags)) {
		/* a root, or a context's start (context_at()) */
		res->quality = UNWIND_Q_COMPLETE;
	} else {
		res->quality = UNWIND_Q_TRUNCATED;
		res->stop = UNWIND_STOP_CHAIN;
		res->stop_pc = w->frames[w->n - 1].pc;
	}
	/* a chain the kernel cut at its entry limit ends here, where the
	 * words read at the sample (or the process) may go on */
	capped = in->fp_chain_capped && !w->offstack && i == in->fp_chain_len &&
		 res->quality == UNWIND_Q_TRUNCATED && w->c->fault == FAULT_BEYOND &&
		 (w->c->words || in->read_stack);
	if (res->quality == UNWIND_Q_COMPLETE || (!w->offstack && !capped) ||
	    (!in->read_stack && !capped) || w->xreads >= XREAD_MAX || w->xerr == -EPERM) {
		res->n = w->n;
		return true;
	}
	/* The chain did not reach a root from the other stack
	 * (code there keeps no frame pointers), or the kernel cut it:
	 * read that stack instead (walk_fault()). */
	w->n = res->dwarf_frames;
	res->dwarf_frames = 0;
	res->method = UNWIND_M_DWARF;
	res->quality = UNWIND_Q_UNKNOWN;
	res->stop = UNWIND_STOP_NONE;
	res->stop_pc = 0;
	w->u->stats.spliced--;
	if (w->c->fault == FAULT_NONE)
		w->c->fault = FAULT_BEYOND;
	return false;
}

/* A step could not read what it needed from the copy (or went to
 * another stack): splice the kernel's chain, read the stack from the
 * process, or stop with the verdict the fault gives. */
static enum fault_end walk_fault(struct walker *w, const struct step *s)
{
	struct copy *c = w->c;

	if (walk_splice(w, s))
		return FAULT_SPLICED;
	if (c->hold_words && c->fault == FAULT_BEYOND) {
		/* no splice here: on through the words read at the sample */
		c->hold_words = false;
		c->fault = FAULT_NONE;
		return FAULT_AGAIN;
	}
	if (w->in->read_stack && w->xreads < XREAD_MAX && c->fault != FAULT_NONE &&
	    (w->offstack || (w->in->read_deep && c->fault == FAULT_BEYOND)) &&
	    w->xerr != -EPERM) {
		/* The stack a switch came from is not in the copy (or
		 * the stack is deeper than the copy), and the kernel's
		 * chain does not go on from here: read it from the
		 * process and unwind this frame again. */
		int fault = c->fault;
		uint64_t addr = c->fault_addr, slot = 0, v;
		w->xreads++;
		if (w->n >= 2 && (w->frames[w->n - 1].flags & UNWIND_F_RA) &&
		    copy_read(c, w->cfas[w->n - 1] - 8, &v) && v == w->frames[w->n - 1].pc)
			slot = w->cfas[w->n - 1] - 8;
		w->xerr = unw_xread(w->u, w->in, c, addr, !w->offstack, slot);
		if (!w->offstack && w->res->deep != 1) {
			if (!w->xerr)
				w->res->deep = 1;
			else if (w->xerr == -ESTALE)
				w->res->deep = 2;
			else if (w->xerr == -ESRCH)
				w->res->deep = 3;
		}
		c->fault = FAULT_NONE;
		if (!w->xerr)
			return FAULT_AGAIN;
		c->fault = fault;
	}
	if (w->xerr == -EPERM && w->offstack) {
		step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_NO_ACCESS);
		return FAULT_STOP;
	}
	if (w->offstack && (s->switched || c->fault == FAULT_BEYOND || w->in->go)) {
		/* the other stack is not in the copy, and the kernel's
		 * chain does not reach it (or is not this stack's),
		 * nor could it be read from the process */
		step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_SWITCH);
		return FAULT_STOP;
	}
	if (c->fault == FAULT_BEYOND)
		step_stop(w, UNWIND_Q_TRUNCATED, UNWIND_STOP_COPY);
	else
		step_stop(w, UNWIND_Q_BROKEN, UNWIND_STOP_BAD_ADDR);
	return FAULT_STOP;
}

/* One walk of a sample: a step per frame (step_rule() finds the rule,
 * step_switch() and step_by_rule() give the caller's registers,
 * step_check() judges them, step_advance() moves there), and
 * walk_fault() where the copy ends. With track_rbx, rbx is carried from
 * frame to frame by the compiled rules too (where each frame saved it),
 * which only the rare rule that defines its CFA by rbx needs. */
static void walk(struct unwinder *u, enum unwind_mode mode,
		 const struct unwind_input *in,
		 struct unwind_frame *frames, size_t max,
		 struct unwind_result *res, bool track_rbx)
{
	struct walker w = { 0 }; /* walk_start() sets what it reads */
	uint64_t regs[UNW_NREGS], cfas[UNWIND_MAX_DEPTH];
	struct copy c;
	struct splice sp_info;

	w.u = u;
	w.arch = u->arch;
	w.ra_mask = u->arch->ra_mask;
	w.regs = regs;
	w.cfas = cfas;
	w.c = &c;
	w.sp_info = &sp_info;
	w.in = in;
	w.frames = frames;
	w.res = res;
	w.limit = MIN(max, (size_t)UNWIND_MAX_DEPTH);
	w.track_rbx = track_rbx;
	w.valid = in->regs.valid;
	w.mod = NULL;
	w.exact = true;
	w.rbp_by_rule = w.offstack = w.back = false;
	w.xreads = w.xerr = 0;
	w.first_kind = -1;
	w.n = 0;
	if (!walk_start(&w, mode))
		return;

	for (;;) {
		struct step s;
		enum step_end e;

		if (w.n >= w.limit) {
			step_stop(&w, UNWIND_Q_TRUNCATED, UNWIND_STOP_DEPTH);
			goto stop;
		}
		s.cfa = 0;
		s.nrbp = w.rbp;
		s.nvalid = w.valid;
		s.nmod = NULL;
		s.cfa_known = s.signal = s.switched = s.ra_lr = s.injected = s.context = false;
		step_rule(&w, &s);
		if ((e = step_switch(&w, &s)) != STEP_NEXT || (e = step_by_rule(&w, &s)) != STEP_NEXT ||
		    (s.injected && !w.arch->record_at_cfa && (e = step_injected_a64(&w, &s)) != STEP_NEXT))
			goto end;
		if (s.jit_cfi) {
			res->jit |= UNWIND_JIT_CFI;
			res->jit_frames++;
		}
		if ((e = step_check(&w, &s)) == STEP_NEXT) {
			step_advance(&w, &s);
			continue;
		}
	end:
		if (e == STEP_DONE)
			goto done;
		if (e == STEP_STOP)
			goto stop;
		switch (walk_fault(&w, &s)) {
		case FAULT_AGAIN:
			continue;
		case FAULT_SPLICED:
			res->nslots = c.nslots;
			return;
		case FAULT_STOP:
			goto stop;
		}
	}
stop:
	res->stop_pc = w.pc;
done:
	res->n = w.n;
	res->nslots = c.nslots;
	res->depth = w.n > 1 ? cfas[w.n - 1] - in->regs.r[UNW_RSP] : 0;
	if (res->method != UNWIND_M_SPLICED)
		res->dwarf_frames = w.n;
}

void unwind_sample(struct unwinder *u, enum unwind_mode mode,
		   const struct unwind_input *in,
		   struct unwind_frame *frames, size_t max,
		   struct unwind_result *res)
{
	u->stats.samples++;
	if (u->nquick_live)
		unw_quick_refresh(u);
	walk(u, mode, in, frames, max, res, false);
	if (res->stop == UNWIND_STOP_REG) {
		/* A rule needed a register the fast walk drops: walk again
		 * keeping rbx (the frames found so far are the same). */
		walk(u, mode, in, frames, max, res, true);
	}
}
