/* unwind.h - user-space stack unwinding at record time (x86-64, aarch64).
 *
 * The recorder hands each sample's registers, the copy of the top of the
 * user stack and the kernel's frame-pointer chain to unwind_sample(). It
 * unwinds with DWARF CFI compiled into compact per-module tables (built
 * lazily, once per module, cached by build-id), and where the copy ends
 * before the root it continues with the kernel's frame-pointer chain
 * (hybrid mode). Raw stack bytes never leave this module.
 *
 * The machine whose samples are unwound is the unwinder's (unwinder_set_arch):
 * the host's for a live recording, the recording machine's for a
 * perf.data file, so a file recorded on aarch64 is unwound with aarch64
 * rules on x86-64. What differs between machines (registers, perf's
 * register order, CFI columns, the signal frame, return addresses) is in
 * unwind/arch.h, one file per machine (x86_64.c, aarch64.c).
 *
 * Ownership: an unwinder owns its module tables; unwind_sample() writes
 * into caller-provided arrays and allocates nothing on the warm path.
 */
#ifndef STAX_UNWIND_UNWIND_H
#define STAX_UNWIND_UNWIND_H

#include "module/ref.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The verdicts, methods, stop reasons and JIT rules of a sample are
 * written into the recording: they are defined in store/format.h. */
#include "store/format.h"

/* The machines whose stacks stax unwinds (0: none known). */
enum unwind_arch { UNWIND_ARCH_NONE = 0, UNWIND_ARCH_X86_64, UNWIND_ARCH_AARCH64 };

/* The machine this stax was built for. */
enum unwind_arch unwind_arch_host(void);
/* By uname's machine name ("x86_64", "aarch64"; "arm64" too), as
 * perf.data's HEADER_ARCH holds it; NONE when unknown. */
enum unwind_arch unwind_arch_by_name(const char *name);
/* By an ELF header's e_machine; NONE when unknown. */
enum unwind_arch unwind_arch_by_elf(unsigned e_machine);
/* uname's name of the machine ("x86_64", "aarch64"; "unknown"). */
const char *unwind_arch_name(enum unwind_arch a);

/* Registers, in slots numbered alike on every machine for the parts they
 * play in a walk: the pc, the stack pointer and the frame pointer sit in
 * the slots of x86-64's DWARF numbers for rip, rsp and rbp (so on x86-64
 * every slot is its register's DWARF number). On aarch64 the slots are
 * the DWARF numbers (x0-x30 0-30, sp 31, pc 32) with three pairs swapped
 * so that x29 (fp), sp and pc land there: x6<->x29, x7<->sp, x16<->pc
 * (aarch64.c, a64_slot()). */
enum {
	UNW_RAX = 0, UNW_RDX, UNW_RCX, UNW_RBX, UNW_RSI, UNW_RDI, UNW_RBP, UNW_RSP,
	UNW_R8, UNW_R9, UNW_R10, UNW_R11, UNW_R12, UNW_R13, UNW_R14, UNW_R15,
	UNW_RIP, UNW_NREGS_X86 = 17,
	UNW_FP = UNW_RBP, UNW_SP = UNW_RSP, UNW_PC = UNW_RIP,
	UNW_LR = 30,            /* aarch64's x30, the link register */
	UNW_NREGS = 33          /* the most any machine uses (aarch64) */
};

struct unwind_regs {
	uint64_t r[UNW_NREGS];
	uint64_t valid;        /* bit i set when r[i] is known */
};

/* The user registers to ask perf_event_open for (sample_regs_user) on
 * machine a: every one the unwinder reads. */
uint64_t unwind_perf_regs_mask(enum unwind_arch a);
/* A sample's user registers (PERF_SAMPLE_REGS_USER: one u64 for each bit
 * of mask, in bit order, n values at vals) of machine a into *out (the
 * registers the unwinder does not use are left out). */
void unwind_regs_from_perf(enum unwind_arch a, uint64_t mask, const uint8_t *vals, size_t n,
			   struct unwind_regs *out);

enum unwind_mode { UNWIND_MODE_FP = 0, UNWIND_MODE_DWARF, UNWIND_MODE_HYBRID };

/* Find the executable mapping containing pc in the sampled process.
 * Anonymous executable memory (JIT code) is a mapping too, with path ""
 * or "//anon" (no unwind table). Returns false when pc is in no
 * executable mapping: the unwinder then never makes pc a frame. */
typedef bool (*unwind_find_fn)(void *arg, uint64_t pc, struct module_ref *out);

/* Read len bytes of the sampled process's code at addr into buf, to
 * recognise generated code without CFI by its bytes. Returns false when
 * they cannot be read (the process is gone, or a recording from a file). */
typedef bool (*unwind_read_code_fn)(void *arg, uint64_t addr, uint8_t *buf, size_t len);

/* Read len bytes of the sampled thread's stack at addr from the live
 * process (process_vm_readv), for frames beyond the copy. Returns the
 * bytes read (> 0), or -errno (-EPERM: no ptrace access to it). */
typedef long (*unwind_read_stack_fn)(void *arg, uint64_t addr, uint8_t *buf, size_t len);

/* Unwind rows for JIT code from the program's jitdump
 * (JIT_CODE_UNWINDING_INFO): the compiled table covering pc, or NULL.
 * Addresses in the table are absolute (bias 0). */
struct utable;
typedef const struct utable *(*unwind_jit_table_fn)(void *arg, uint64_t pc);

/* Words of the sampled thread's stack read at the sample, beyond the
 * copy (the in-kernel reader's slots, record/moment.h): addr[i] holds
 * val[i]; addr sorted ascending, no duplicates. */
struct unwind_words {
	const uint64_t *addr, *val;
	size_t n;
};

/* aarch64, a Go thread sampled on its g0 (scheduler) stack: the
 * goroutine it runs for, as the in-kernel reader read it at the sample
 * (record/moment.h). Go's stack switches (runtime.systemstack, mcall,
 * morestack) leave no way back to the goroutine's stack in registers or
 * on the g0 stack: the goroutine's saved state (g.sched) is it. */
struct unwind_go {
	bool dropped;       /* m.curg was 0: the thread runs for no goroutine */
	uint64_t sp, pc, lr, bp; /* curg.sched */
};

struct unwind_input {
	struct unwind_regs regs;       /* user registers at the sample */
	const uint8_t *stack;          /* copy of user memory starting at regs SP */
	size_t stack_size;             /* valid bytes in stack (dyn_size) */
	const uint64_t *fp_chain;      /* kernel's user callchain: pc, ret, ret, ... */
	size_t fp_chain_len;
	bool fp_chain_capped;          /* the kernel stopped it at its entry limit
					* (kernel.perf_event_max_stack): a splice
					* onto it that ends there is undone when
					* the stack can be read on instead */
	unwind_find_fn find;
	void *find_arg;                /* argument of find, read_code, jit_table */
	unwind_read_code_fn read_code; /* optional */
	unwind_jit_table_fn jit_table; /* optional */
	/* optional, live recordings only: where a stack switch (or a
	 * signal frame) leads to a stack outside the copy and the kernel's
	 * chain does not continue there, read that stack from the process.
	 * The outer frames of a running thread change rarely; what is read
	 * next to the copy must equal the copy's last bytes, every frame
	 * read passes the same checks, and samples so unwound say so
	 * (unwind_result.read_frames). */
	unwind_read_stack_fn read_stack;
	/* with read_stack: a stack merely deeper than the copy is read on
	 * too (a sample on the CPU; a thread off the CPU is read by the
	 * caller, which knows whether it ran since). false: it stays
	 * truncated. */
	bool read_deep;
	/* with read_stack: read it without checking that the thread is
	 * still where the copy says (the outermost return address in its
	 * slot): the frames are then not the sample's, and are for nothing
	 * but finding the slots a stack of this shape reads (slots_out) */
	bool read_unchecked;
	/* The address space's version: when it equals the previous sample's
	 * (and is not 0), the modules find() gave for that sample are used
	 * again without asking; the caller must change it whenever a
	 * mapping of the space changes. 0: ask find() for every module. */
	uint64_t space;
	/* optional: stack words beyond the copy as they were at the sample.
	 * A read beyond the copy takes its word from here first; only a
	 * word not here goes to read_stack (a later moment). */
	const struct unwind_words *words;
	/* optional (aarch64): the goroutine of a Go thread sampled on its g0
	 * stack (NULL: not on g0, or not known). The goroutine's stack words
	 * read at the sample are in words. */
	const struct unwind_go *go;
	/* optional: the addresses of the stack words the walk read at or
	 * above slots_from (from the copy, words or read_stack) or below
	 * the copy (another stack, from words or read_stack), in the order
	 * read (repeats possible), up to slots_max into slots_out: what to
	 * ask the in-kernel reader for at this thread's next samples. */
	uint64_t *slots_out;
	size_t slots_max;
	uint64_t slots_from;
};

#define UNWIND_F_RA 1u      /* pc is a return address: symbolize at pc-1 */
#define UNWIND_F_SIGNAL 2u  /* frame interrupted by a signal (exact pc) */
#define UNWIND_F_SIGTRAMP 4u /* the signal return trampoline (__restore_rt):
			      * the handler "returned" to it, but its exact pc
			      * is the one to symbolize (UNWIND_F_RA unset) */
#define UNWIND_F_LATE 8u    /* found with stack words read from the live
			     * process after the sample (read_stack), as is
			     * every frame after it: of a later moment, and
			     * nothing proves it the sample's */

/* unwind_sample() writes at most this many frames whatever max is. */
#define UNWIND_MAX_DEPTH 1024

struct unwind_frame {
	uint64_t pc;
	uint32_t flags;
};

struct unwind_result {
	size_t n;                  /* frames written, leaf first */
	enum unwind_quality quality;
	enum unwind_stop stop;     /* why, when not complete */
	enum unwind_method method;
	uint64_t stop_pc;          /* where unwinding stopped when not complete */
	size_t dwarf_frames;       /* frames found by CFI (rest from the chain) */
	size_t jit_frames;         /* frames unwound through code without CFI in
				    * its module, by one of the rules in jit: */
	uint32_t jit;              /* UNWIND_JIT_* bits */
	size_t read_frames;        /* frames found in stack memory read from the
				    * live process (beyond the copy) */
	/* a stack deeper than the copy (unwind_input.read_deep): read from
	 * the process (1), or not, as it had changed (2) or the process
	 * had exited (3); 0: none of these */
	int deep;
	uint64_t depth;            /* bytes from the sample's sp to the CFA of
				    * the last frame found */
	size_t word_frames;        /* frames found beyond the copy in
				    * unwind_input.words (the sample's moment) */
	size_t nslots;             /* addresses written to slots_out */
};

struct unwinder;

/* An unwinder of the host's stacks. */
struct unwinder *unwinder_new(void);
/* Unwind the stacks of machine a instead (NONE: the host's), from the
 * next sample on: a perf.data file's (its header says which). */
void unwinder_set_arch(struct unwinder *u, enum unwind_arch a);
enum unwind_arch unwinder_arch(const struct unwinder *u);
void unwinder_free(struct unwinder *u);
/* A file was just mapped executable: when it is big (16 MiB or more:
 * librustc_driver's table takes 150-250 ms to compile, LLVM's as long),
 * compile its table now on a helper thread, so that the samples that
 * come first do not wait for it (stacks read from the process must be
 * read soon after their sample, and the in-kernel reader learns what to
 * read for a thread from its unwound stacks). Until it is built, samples
 * there are unwound with a provisional table that finds and runs each
 * frame's FDE (utable_build_quick(): a millisecond or two to make). True
 * when the file's table is (or will be) compiled so; never fails (a table
 * not prefetched is built on first use, the sample waiting for it). */
bool unwind_prefetch(struct unwinder *u, const char *path, const uint8_t *bid, size_t bid_size);

/* Unwind one sample into frames[0..max). mode HYBRID splices the kernel
 * chain where the copy ends; DWARF stops there (truncated). Never fails:
 * the verdict says how far it got. */
void unwind_sample(struct unwinder *u, enum unwind_mode mode,
		   const struct unwind_input *in,
		   struct unwind_frame *frames, size_t max,
		   struct unwind_result *res);

/* Let go of the tables no sample used since the last call (the first:
 * since unwinder_new()), and of those compiled ahead that no sample
 * came to within a call: each is its module's part, freed when no one
 * else holds it, and compiled again (or read back from the table cache
 * on disk) when a later sample needs it. A recorder that runs for long
 * calls it now and then, so that the tables of programs that came and
 * went do not stay. Returns how many were let go. */
size_t unwind_trim(struct unwinder *u);

/* Counters since unwinder_new(), for reports and `stax doctor`. */
struct unwind_stats {
	size_t modules;          /* tables built (one per distinct file) */
	size_t modules_no_cfi;   /* of which without usable CFI */
	uint64_t build_ns;       /* time spent building tables */
	size_t rows, slow_rows;  /* rows in all tables, of which SLOW */
	size_t samples, spliced; /* samples unwound, of which spliced */
	size_t mappings;         /* mappings entered in the unwinder's cache (a
				  * mapping evicted and found again counts again) */
	size_t held;             /* tables held now */
	uint64_t released;       /* tables let go by unwind_trim() */
	size_t quick;            /* provisional tables made (utable_build_quick()),
				  * used while the prefetch thread built theirs */
};
void unwind_get_stats(const struct unwinder *u, struct unwind_stats *st);

/* True when name (a symbol as the ELF file spells it) is a function where
 * stacks begin, by the list the unwinder's verdicts use (roots.h): main
 * and the libc frames that call it, thread and process starts, each
 * runtime's own, where a makecontext() stack begins. */
bool unwind_is_root_name(const char *name);

const char *unwind_quality_name(enum unwind_quality q);
const char *unwind_method_name(enum unwind_method m);
/* A short phrase for a stop reason ("beyond the stack copy", ...). */
const char *unwind_stop_name(enum unwind_stop s);

#endif
