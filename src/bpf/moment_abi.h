/* moment_abi.h - what the in-kernel reader (bpf/moment.bpf.c) and its
 * user-space side (record/moment.c) share: map values and ring records.
 *
 * Both compilers see this file: clang -target bpf for the program, the
 * host compiler for stax. It uses only fixed-width types (defined by the
 * includer: <stdint.h> in user space, the program's own typedefs in the
 * kernel) and lays every structure out with explicit padding, so that
 * both sides agree byte for byte (checked by _Static_assert below).
 *
 * The reader runs on each of stax's sampling events (cpu-clock, the
 * off-CPU switch-outs) just before the kernel writes the sample, on the
 * sampled thread, and copies at that moment what user space would
 * otherwise read later from the process:
 *   - the CPython frame chain of the thread (when its process is in the
 *     pyprocs map and the thread in tstates);
 *   - the words of the stack slots user space asked for (slots map),
 *     beyond the sample's stack copy;
 *   - for a thread of a process whose stacks go past the copy (a thread
 *     with slots, or its process in the deep map), a window of the stack
 *     right past the copy (config.window bytes, not past the thread's
 *     stack top when user space knows it, up to the first page that
 *     cannot be read): the outer frames of a new thread, or of a new
 *     shape of a deep stack, before user space has unwound one and could
 *     ask for its slots;
 *   - for such a thread without slots yet (a new thread), the top of its
 *     stack too (config.topwin bytes below the end of the mapping that
 *     holds its stack pointer, found once per thread: tops map): where a
 *     thread's outermost frames lie, past frames too large for a window
 *     (rustc's compiler thread: its callers 500 KiB above its first
 *     samples' copies, 52 KiB below its stack's end);
 *   - aarch64, a Go process (goprocs map) whose thread runs on its g0
 *     (scheduler) stack: the goroutine it runs for (m.curg), where that
 *     goroutine's stack was left (curg.sched) and the top of that stack,
 *     which the unwinder needs to cross the switch (runtime.systemstack,
 *     mcall, morestack: docs/UNWINDING.md, trap A10).
 * It writes one record per sample of such a thread into the ring buffer
 * (layout: struct moment_rec, then npy struct moment_pyframe, then with
 * MOMENT_F_GO a struct moment_go followed by its stack_len bytes, then
 * with MOMENT_F_WINDOW one struct moment_range_hdr followed by its len
 * bytes (the window), then with MOMENT_F_TOPWIN another (the top of the
 * stack), then nranges struct moment_range_hdr each followed by its len
 * bytes).
 */
#ifndef STAX_BPF_MOMENT_ABI_H
#define STAX_BPF_MOMENT_ABI_H

#define MOMENT_MAX_PYFRAMES 2048  /* entries (frames and entry marks) per record:
				   * Python's default recursion limit (1000)
				   * and more */
#define MOMENT_MAX_RANGES 1024    /* slot ranges per thread */
#define MOMENT_MAX_RANGE 64       /* bytes of one range (a multiple of 8) */
#define MOMENT_SLOT_BYTES 32768   /* slot words and their headers per record */
#define MOMENT_WINDOW_MAX 16384   /* bytes of the window past the copy (a
				   * multiple of 4096) */
#define MOMENT_TOPWIN_MAX 65536   /* bytes of the top of a new thread's stack
				   * (a multiple of 4096) */
#define MOMENT_FRAME_BUF 128      /* bytes of an interpreter frame read */
#define MOMENT_CODE_BUF 256       /* bytes of a code object's head read */
#define MOMENT_GO_STACK 8192      /* bytes of a goroutine's stack read, from
				   * its saved stack pointer up (a power of 2) */

/* One CPython process (pyprocs map, by pid): where its structures keep
 * what the reader follows, in bytes. Filled by user space from
 * struct pyf_layout (ingest/pyframes.h). */
struct moment_pyproc {
	uint64_t code_type;       /* address of PyCode_Type in the process */
	uint32_t version;         /* 0x030b, 0x030c, 0x030d */
	uint16_t ts_native_tid;   /* PyThreadState.native_thread_id */
	uint16_t ts_frame;        /* 3.11/3.12: PyThreadState.cframe; 3.13: current_frame */
	uint16_t cf_current;      /* 3.11/3.12: _PyCFrame.current_frame; 0xffff: none (3.13) */
	uint16_t fr_code, fr_previous, fr_instr, fr_owner;
	uint16_t fr_is_entry;     /* 3.11: the frame's is_entry; 0xffff: none (entries
				   * are frames owned by the C stack) */
	uint16_t frame_read;      /* bytes read of a frame (<= MOMENT_FRAME_BUF) */
	uint16_t co_filename, co_name, co_qualname, co_linetable;
	uint16_t co_firstlineno;  /* an int */
	uint16_t co_code;         /* co_code_adaptive: the first instruction */
	uint16_t ob_type;
	uint16_t code_read;       /* bytes read of a code object (<= MOMENT_CODE_BUF) */
	uint8_t owned_by_cstack;  /* the owner value of entry frames (3.12+) */
	uint8_t pad[9];
};

/* One Go process (goprocs map, by pid; aarch64; its running g is in
 * x28): where the runtime's structures keep what the reader follows (g.m, m.g0, m.curg, g.sched and its fields, g.stack.hi), in
 * bytes, from the program's DWARF (ingest/golayout.h). */
struct moment_goproc {
	uint16_t g_m, m_g0, m_curg;
	uint16_t g_sched;         /* the gobuf; its fields from its start: */
	uint16_t buf_sp, buf_pc, buf_lr, buf_bp;
	uint16_t g_stack_hi;      /* g.stack.hi */
	uint8_t pad[6];           /* (the running g is in x28) */
};

/* What the reader found of a Go thread on its g0 stack (MOMENT_F_GO). */
struct moment_go {
	uint64_t curg;            /* m.curg: 0 when the thread runs for no
				   * goroutine (it left it: the scheduler) */
	uint64_t sp, pc, lr, bp;  /* curg.sched; with curg 0, g0.sched (where
				   * the g0 stack's frames go on: mstart0, as
				   * mstart1 left it for mcall and morestack) */
	uint64_t stack;           /* the address of the bytes that follow
				   * (sched.sp) */
	uint32_t stack_len;       /* bytes that follow: up to MOMENT_GO_STACK,
				   * not past curg.stack.hi (0: not read) */
	int32_t err;              /* 0, or the stack read's -errno */
};

/* One range of stack slots of a thread (slots map, by tid). */
struct moment_range {
	uint64_t addr;            /* 8-aligned */
	uint32_t len;             /* 8..MOMENT_MAX_RANGE, a multiple of 8 */
	uint32_t pad;
};

struct moment_slots {
	uint32_t n;               /* ranges used */
	uint32_t gen;             /* user space's version of the list, echoed */
	uint64_t top;             /* the top of the thread's stack as far as
				   * user space knows (0: not known): a window
				   * stops there, and a sample whose copy ends
				   * at or past it reads none */
	struct moment_range r[MOMENT_MAX_RANGES];
};

/* The reader's settings (its .bss, set by user space after load). */
struct moment_config {
	uint32_t stack_user;      /* bytes of the samples' stack copy: a slot
				   * range within [sp, sp + stack_user) is in
				   * the copy already and is not read */
	uint32_t window;          /* bytes of the window past the copy (0: none;
				   * a multiple of 4096, <= MOMENT_WINDOW_MAX) */
	uint32_t topwin;          /* bytes of the top of a new thread's stack
				   * (0: none; a multiple of 4096, <=
				   * MOMENT_TOPWIN_MAX) */
	uint32_t deep_all;        /* 1: every process is one whose stacks go
				   * past the copy (the deep map's entry is
				   * implied): a recording of a program */
};

/* moment_rec.flags */
#define MOMENT_F_PY          1u   /* the thread's process is a Python one */
#define MOMENT_F_NO_TSTATE   2u   /* its tstate is not known (user space: find it) */
#define MOMENT_F_TSTATE_GONE 4u   /* the known tstate is another thread's now */
#define MOMENT_F_PY_DONE     8u   /* the chain was read to its end (previous == NULL) */
#define MOMENT_F_PY_CUT      16u  /* the chain is longer than MOMENT_MAX_PYFRAMES */
#define MOMENT_F_PY_FAULT    32u  /* a read failed or a frame was not sane (py_err says) */
#define MOMENT_F_SLOTS       64u  /* slot ranges were asked for this thread */
#define MOMENT_F_KERNEL      128u /* the sample interrupted the kernel (user
				   * registers from the task's pt_regs) */
#define MOMENT_F_GO          256u /* a Go thread on its g0 stack: a struct
				   * moment_go follows the Python frames */
#define MOMENT_F_WINDOW      512u /* a window past the copy follows (a
				   * struct moment_range_hdr and its bytes) */
#define MOMENT_F_TOPWIN      1024u /* the top of the thread's stack follows
				    * (the same), read for a thread with no
				    * slots: user space answers with its slots
				    * (or none and its stack top) */

/* moment_rec.py_err: where a chain stopped when MOMENT_F_PY_FAULT */
enum moment_py_err {
	MOMENT_PYE_NONE = 0,
	MOMENT_PYE_TSTATE,        /* reading the tstate failed */
	MOMENT_PYE_CFRAME,        /* reading the _PyCFrame failed */
	MOMENT_PYE_FRAME,         /* reading a frame failed */
	MOMENT_PYE_CODE,          /* reading a code object failed */
	MOMENT_PYE_TYPE,          /* a frame's code is not a code object */
	MOMENT_PYE_LAYOUT,        /* the layout's offsets do not fit the buffers */
};

struct moment_rec {
	uint32_t size;            /* bytes of the whole record */
	uint32_t flags;           /* MOMENT_F_* */
	uint32_t pid, tid;
	uint64_t time;            /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, the clock
				   * of stax's events (use_clockid, clockid 1);
				   * within microseconds of the sample's time
				   * (before it or after it: kernels differ) */
	uint64_t ip, sp;          /* the user registers at the sample, as the
				   * sample's REGS_USER has them */
	uint64_t tstate;          /* the PyThreadState read (0: none) */
	uint32_t cpu;
	uint16_t npy;             /* struct moment_pyframe that follow */
	uint16_t py_err;          /* enum moment_py_err */
	uint16_t nranges;         /* slot ranges that follow the frames */
	uint16_t pad16;
	uint32_t slots_gen;       /* moment_slots.gen of the ranges read */
};

/* moment_pyframe.flags */
#define MOMENT_PYF_ENTRY 1u  /* not a frame: an entry into the interpreter
			      * (one _PyEval_EvalFrameDefault C frame) lies
			      * here, between the frames before it (its
			      * callees) and those after it */

/* One entry of a chain, innermost first. */
struct moment_pyframe {
	uint64_t code;            /* the code object's address (0 for an entry) */
	uint64_t stamp;           /* moment_stamp() of the code object's fields
				   * read at the sample */
	int32_t instr;            /* bytes from the code's first instruction to
				   * the frame's instruction pointer (3.11 and
				   * 3.12: prev_instr, the last one started; 3.13:
				   * instr_ptr, the one executing) */
	uint32_t flags;           /* MOMENT_PYF_* */
};

struct moment_range_hdr {
	uint64_t addr;
	uint32_t len;             /* bytes that follow (read or not); of the
				   * window: those read, up to the first page
				   * that could not be */
	int32_t err;              /* 0, or the read's -errno (bytes are zero;
				   * the window: where it stopped early) */
};

/* The identity of a code object: its names' and line table's addresses
 * and its first line, mixed. A code object freed and another made at its
 * address is told apart unless all five are equal (then its names and
 * lines are the same objects). User space computes it the same way from
 * what it reads later, and names a code object only when both agree. */
static inline uint64_t moment_stamp(uint64_t filename, uint64_t name, uint64_t qualname,
				    uint64_t linetable, uint32_t firstlineno)
{
	uint64_t v[5] = { filename, name, qualname, linetable, firstlineno };
	uint64_t h = 0x9e3779b97f4a7c15ull;
	int i;
	for (i = 0; i < 5; i++) {
		h ^= v[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h ? h : 1;
}

_Static_assert(sizeof(struct moment_pyproc) == 56, "moment_pyproc layout");
_Static_assert(sizeof(struct moment_range) == 16, "moment_range layout");
_Static_assert(sizeof(struct moment_goproc) == 24, "moment_goproc layout");
_Static_assert(sizeof(struct moment_go) == 56, "moment_go layout");
_Static_assert(sizeof(struct moment_rec) == 64, "moment_rec layout");
_Static_assert(sizeof(struct moment_pyframe) == 24, "moment_pyframe layout");
_Static_assert(sizeof(struct moment_range_hdr) == 16, "moment_range_hdr layout");

#endif
