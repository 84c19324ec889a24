/* roots.h - the one list of functions where stacks begin, and of the
 * functions where runtimes switch stacks.
 *
 * A root is a function in the outermost frames of a thread: main and the
 * libc frames that call it, thread and process start functions, and each
 * runtime's own (runtime.goexit, runtime.mstart, runtime.rt0_go for Go).
 * The unwinder (unwind/table.c: a chain ending in one is complete), stax
 * info, doctor and flame (view/common.c) and bench/roots.awk use this
 * list, so they count completeness by the same rule.
 *
 * A stack switch is a function that runs its callee on another stack:
 * the callee's return address into it is on the new stack, its caller's
 * frame on the old one (Go's runtime.systemstack, runtime.mcall,
 * runtime.morestack; rust_psm_on_stack, which rustc's stacker uses to
 * run deep work on fresh segments). Unwinding there follows the frame
 * pointer, which Go's leave pointing at the caller's frame record on the
 * old stack (psm's CFI says so itself), never the rules for one
 * contiguous stack; the caller's stack may be outside the copy, and the
 * live recorder may read it from the process.
 */
#ifndef STAX_UNWIND_ROOTS_H
#define STAX_UNWIND_ROOTS_H

#include <stddef.h>

enum root_kind {
	ROOT_K_NONE = 0,
	ROOT_K_ROOT,      /* a stack that reaches it is complete */
	ROOT_K_SWITCH,    /* runs its callee on another stack, leaving rbp
			   * at its caller's frame record (Go) */
	ROOT_K_SWITCH_CFI, /* runs its callee on another stack, and its CFI
			    * finds the caller there (Rust's psm) */
	ROOT_K_INJECTED,  /* the runtime made it look called from the pc it
			   * interrupted (Go's asyncPreempt, sigpanic): its
			   * return address is that exact pc, not a call's end */
	ROOT_K_CONTEXT,   /* where a stack begins whose first function was made
			   * to return into its first byte (glibc's
			   * __start_context, makecontext's trampoline): a
			   * stack that reaches it is complete */
	ROOT_K_SWITCH_G0, /* as ROOT_K_SWITCH, and onto the g0 stack with
			   * the thread's g (Go's systemstack, mcall,
			   * morestack, asmcgocall; not the vDSO's callers,
			   * which switch the stack only) */
	ROOT_K_GO_SIGTRAMP, /* Go's signal handler, called by the kernel:
			     * its CFI ends the stack (aarch64 finds the
			     * signal frame from its saved arguments) */
	ROOT_K_SWITCHED,  /* never a frame: the pc Go saves in a goroutine's
			   * g.sched while systemstack runs its callee on
			   * g0 (runtime.systemstack_switch) */
};

/* The kind of the function named name (a symbol as the ELF file spells
 * it; Go's ".abi0" wrappers count as the function). len is the name's
 * length (strlen when SIZE_MAX). */
enum root_kind roots_kind(const char *name, size_t len);

#endif
