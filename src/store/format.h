/* format.h - the stax recording file, version 1 (see docs/FORMAT.md).
 *
 * All integers are little-endian. A file is a header followed by chunks:
 *
 * File header (16 bytes)
 *   off size meaning
 *   0   8    magic "STAXREC\0"
 *   8   4    version (1)
 *   12  4    header size (16)
 *
 * Chunk header (24 bytes), then comp_size bytes of one zstd frame (with
 * content checksum) that decompresses to raw_size bytes of records.
 *   0   4    magic 0x4b4e4843 ("CHNK")
 *   4   2    kind (CHUNK_DATA, CHUNK_SYMBOLS, CHUNK_END, CHUNK_DATA_LATE)
 *   6   2    flags (CHUNK_F_SUM, or 0 in files of stax before it)
 *   8   4    sequence number, 0, 1, 2, ...
 *   12  4    raw_size (<= STORE_MAX_RAW)
 *   16  4    comp_size (<= STORE_MAX_COMP)
 *   20  4    check: raw_size ^ comp_size ^ seq ^ 0x5354aa55
 *
 * With CHUNK_F_SUM the payload ends in a checksum frame (16 bytes,
 * counted in comp_size): a zstd skippable frame, which every zstd
 * decoder (and so every older stax) passes over:
 *   0   4    STORE_SUM_MAGIC (0x184d2a53)
 *   4   4    8 (the frame's content size)
 *   8   8    XXH3-64 of the chunk header and the zstd frame before it
 *            (the chunk's first 24 + comp_size - 16 bytes)
 * It tells a damaged chunk (any flipped bit in its header, kind and
 * flags included, or payload) from one a newer stax wrote. A reader
 * skips a damaged chunk, counts it, and reads on from the next chunk
 * header it finds.
 *
 * A chunk may refer to stack nodes, mappings and threads defined in
 * earlier chunks, never later ones. A chunk is written with one write()
 * after it is complete, so a reader stops cleanly at a partial tail.
 * The writer holds an exclusive flock() on the file until it has
 * written the END chunk, so a reader can tell a recording still being
 * written (locked) from one whose recorder died (not locked, no END).
 *
 * Records inside a chunk: an 8-byte header, then the payload, padded to a
 * multiple of 8 (size includes header and padding).
 *   0   2    type (REC_*)
 *   2   2    flags
 *   4   4    size
 * Strings in payloads are a u16 length followed by the bytes (no NUL).
 */
#ifndef STAX_STORE_FORMAT_H
#define STAX_STORE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define STORE_MAGIC "STAXREC"           /* 8 bytes with the NUL */
#define STORE_VERSION 1
#define STORE_CHUNK_MAGIC 0x4b4e4843u
#define STORE_CHECK_XOR 0x5354aa55u
#define STORE_MAX_RAW (64u << 20)
#define STORE_MAX_COMP (68u << 20)
#define STORE_SUM_MAGIC 0x184d2a53u     /* a zstd skippable frame (0x184d2a50 + 3) */

/* store_chunk_header.flags */
#define CHUNK_F_SUM 0x1u                /* the payload ends in a struct store_chunk_sum */

enum chunk_kind {
	CHUNK_DATA = 1,    /* events, nodes, samples */
	CHUNK_SYMBOLS = 2, /* symbols appended at stop */
	CHUNK_END = 3,     /* last chunk: the recording finished cleanly */
	/* a data chunk with late stacks (SAMPLE_Q_LATE, OFFCPU_F_LATE,
	 * WAKER_F_LATE): read as CHUNK_DATA. Readers before it count a stack
	 * that reaches main complete whatever its verdict bits say, so they
	 * must not read these: to them it is a kind a newer stax wrote, and
	 * they refuse the file with that message (recordings without late
	 * stacks have none, and read everywhere). */
	CHUNK_DATA_LATE = 4,
};

struct store_file_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;
} __attribute__((packed));
_Static_assert(sizeof(struct store_file_header) == 16, "file header");

struct store_chunk_header {
	uint32_t magic;
	uint16_t kind;
	uint16_t flags;
	uint32_t seq;
	uint32_t raw_size;
	uint32_t comp_size;
	uint32_t check;
} __attribute__((packed));
_Static_assert(sizeof(struct store_chunk_header) == 24, "chunk header");

/* The last 16 bytes of the payload of a chunk with CHUNK_F_SUM. */
struct store_chunk_sum {
	uint32_t magic;      /* STORE_SUM_MAGIC */
	uint32_t size;       /* 8 */
	uint64_t xxh3;       /* XXH3_64bits of the header and the zstd frame */
} __attribute__((packed));
_Static_assert(sizeof(struct store_chunk_sum) == 16, "chunk checksum frame");

enum rec_type {
	REC_META = 1,     /* str key, str value (keys: docs/FORMAT.md; e.g.
			   * "stax_version", the version of the stax that
			   * wrote the file, scripts/version.sh's string;
			   * absent in files from before it was stored) */
	REC_COMM = 2,     /* struct rec_comm, str name */
	REC_MAPPING = 3,  /* struct rec_mapping, str path */
	REC_FORK = 4,     /* struct rec_task */
	REC_EXIT = 5,     /* struct rec_task */
	REC_NODES = 6,    /* u32 first_id, u32 count, count x struct rec_node */
	REC_SAMPLES = 7,  /* u32 count, u32 pad, count x struct rec_sample */
	REC_LOST = 8,     /* struct rec_lost */
	REC_THROTTLE = 9, /* struct rec_throttle */
	REC_SYMBOL = 10,  /* struct rec_symbol, str name, str module */
	REC_OFFCPU = 11,  /* u32 count, u32 pad, count x struct rec_offcpu */
	REC_SYMBOL_SRC = 12, /* struct rec_symbol_src, str file, ninline x
			      * (u32 line, str name, str file) */
	REC_PERFMAP = 13, /* u32 pid, u32 size, size bytes of /tmp/perf-PID.map */
	REC_OFFCPU_OPEN = 14, /* u32 count, u32 pad, u64 as_of, count x struct
			       * rec_offcpu: threads off the CPU as of as_of */
	REC_WAKER = 15,   /* struct rec_waker, str comm: who ended an off-CPU wait */
};

struct rec_header {
	uint16_t type;
	uint16_t flags;
	uint32_t size;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_header) == 8, "rec header");

#define COMM_F_EXEC 1u

struct rec_comm {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t flags;     /* COMM_F_EXEC: the name changed by exec */
	uint32_t pad;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_comm) == 24, "rec_comm");

struct rec_mapping {
	uint32_t id;        /* 1, 2, 3, ... (0 = kernel, never written) */
	uint32_t pid;
	uint64_t time;
	uint64_t start, end, pgoff;
	uint64_t inode;
	uint32_t maj, min;
	uint32_t prot;
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint8_t pad[7];
} __attribute__((packed));
_Static_assert(sizeof(struct rec_mapping) == 88, "rec_mapping");

struct rec_task {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_task) == 24, "rec_task");

/* Node kinds (low 8 bits of rec_node.flags). */
enum node_kind {
	NODE_ROOT = 0,     /* one per process image: addr = pid */
	NODE_USER = 1,
	NODE_KERNEL = 2,
};
#define NODE_F_RA 0x100u      /* addr is a return address: look up addr-1 */
/* The frame was read from the live process after the sample (the stack
 * beyond its copy, or a Python frame read from the interpreter), and
 * nothing proves it was the sample's: views can leave it out
 * (--no-late-frames). Its symbol is that of the same (mapping, address,
 * kind, NODE_F_RA) without this flag. Readers before it ignore it.
 * (0x200 and 0x400 are taken by the profile's in-memory flags.) */
#define NODE_F_LATE 0x1000u

/* A stack is a node; its parent is its caller. Node ids start at 1;
 * parent 0 means none (only roots have it). */
struct rec_node {
	uint64_t addr;
	uint32_t parent;
	uint32_t mapping;  /* mapping id, 0 for kernel or unknown */
	uint32_t flags;    /* node_kind | NODE_F_* */
	uint32_t pad;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_node) == 24, "rec_node");

/* The verdict of a sample's or an off-CPU interval's stack (rec_sample.quality
 * bits 0-1, rec_offcpu.flags bits 4-5). */
enum unwind_quality {
	UNWIND_Q_UNKNOWN = 0,   /* frame-pointer chain, not verified */
	UNWIND_Q_COMPLETE,      /* reached a root (undefined RA, _start, clone) */
	UNWIND_Q_TRUNCATED,     /* stack copy or depth ran out */
	UNWIND_Q_BROKEN,        /* bad read, no unwind info, no usable frame pointer */
	/* not one of the 2 bits: a stack with frames read after the sample
	 * that nothing proves unchanged (SAMPLE_Q_LATE, OFFCPU_F_LATE,
	 * WAKER_F_LATE; their 2 bits hold UNWIND_Q_UNKNOWN); what readers
	 * call it (SAMPLE_VERDICT()) */
	UNWIND_Q_LATE,
};

/* How the frames were found (rec_sample.method bits 0-1, rec_offcpu.flags
 * bits 6-7). */
enum unwind_method {
	UNWIND_M_FP = 0,        /* kernel frame-pointer chain only */
	UNWIND_M_DWARF,         /* CFI from the copy only */
	UNWIND_M_SPLICED,       /* CFI, then the kernel chain beyond the copy */
};

/* Why unwinding stopped short of a root (rec_sample.quality bits 4-7; what
 * `stax doctor` explains). */
enum unwind_stop {
	UNWIND_STOP_NONE = 0,    /* complete, or not known (frame pointers) */
	UNWIND_STOP_COPY,        /* truncated: a read above the end of the stack copy */
	UNWIND_STOP_DEPTH,       /* truncated: the depth limit */
	UNWIND_STOP_CHAIN,       /* truncated: the kernel's frame-pointer chain ended
				  * (perf_event_max_stack) before a root */
	UNWIND_STOP_NO_CFI,      /* broken: no CFI and no usable frame pointer */
	UNWIND_STOP_BAD_ADDR,    /* broken: a read below the stack pointer (outside
				  * any copy) or a wrapped address */
	UNWIND_STOP_SP,          /* broken: the stack pointer did not move up */
	UNWIND_STOP_REG,         /* broken: the rule needs a register not recovered */
	UNWIND_STOP_BAD_CFI,     /* broken: CFI that could not be interpreted */
	UNWIND_STOP_NO_REGS,     /* broken: the sample has no user registers */
	UNWIND_STOP_SIGNAL,      /* broken: a signal frame ended in a zero pc */
	UNWIND_STOP_NOT_CODE,    /* broken: the next return address is in no
				  * executable mapping (never shown as a frame) */
	UNWIND_STOP_LOOP,        /* broken: a (CFA, return address) pair came
				  * again: the rules went round in a loop */
	UNWIND_STOP_SWITCH,      /* truncated: a stack switch (Go's systemstack,
				  * mcall, morestack) whose other stack could not
				  * be reached (no frame pointer, or beyond the
				  * copy and not in the kernel's chain) */
	UNWIND_STOP_NO_ACCESS,   /* truncated: the stack beyond the copy could
				  * not be read from the process (no ptrace
				  * access to it) */
	UNWIND_NSTOPS            /* at most 16: 4 bits in rec_sample.quality */
};

/* Rules for frames whose code has no CFI in a file (JIT code), as a set of
 * bits (rec_sample.method bits 4-6, shifted by SAMPLE_M_JIT_SHIFT). */
#define UNWIND_JIT_TRAMPOLINE 1u /* known generated code, by its bytes (the
				  * CPython 3.12/3.13 perf trampoline) */
#define UNWIND_JIT_FP 2u         /* the frame pointer, where it was plausible */
#define UNWIND_JIT_CFI 4u        /* CFI from a jitdump's unwinding info */
#define UNWIND_JIT_ALL 7u

_Static_assert(UNWIND_Q_BROKEN <= 3, "a verdict fits 2 bits");
_Static_assert(UNWIND_Q_LATE == 4, "late is outside the 2 bits");
_Static_assert(UNWIND_M_SPLICED <= 3, "a method fits 2 bits");
_Static_assert(UNWIND_NSTOPS <= 16, "a stop reason fits 4 bits");

struct rec_sample {
	uint64_t time;
	uint64_t weight;   /* event period (ns for cpu-clock / task-clock) */
	uint32_t pid, tid;
	uint32_t stack;    /* leaf node id, 0 if the sample had no stack */
	uint16_t cpu;
	uint8_t quality;   /* bits 0-1 enum unwind_quality; bits 4-7 enum unwind_stop */
	uint8_t method;    /* bits 0-1 enum unwind_method; bits 4-6 JIT rules */
} __attribute__((packed));
_Static_assert(sizeof(struct rec_sample) == 32, "rec_sample");
/* rec_sample.quality: the verdict, and why unwinding stopped (0: complete
 * or not known; enum unwind_stop: 1 copy ended, 2 depth, 3 chain ended,
 * 4 no CFI, 5 read below sp, 6 sp did not move, 7 register, 8 bad CFI,
 * 9 no registers, 10 signal frame with zero pc, 11 a return address in
 * no executable mapping, 12 a loop (a (CFA, return address) pair again),
 * 13 a stack switch not followed, 14 no access to read the stack
 * beyond the copy from the process). */
#define SAMPLE_Q_STOP_SHIFT 4
#define SAMPLE_Q(q) ((q) & 3u)
#define SAMPLE_Q_STOP(q) ((unsigned)(q) >> SAMPLE_Q_STOP_SHIFT)
/* rec_sample.quality bit 2: the recorder fell behind and kept only the
 * top of this sample's stack copy (or none): its user frames past that
 * come from the kernel's frame-pointer chain */
#define SAMPLE_Q_TRIMMED 0x4u
/* rec_sample.quality bit 3: frames of this stack (its outer part beyond
 * the copy, or Python frames) were read from the live process after the
 * sample, and nothing proves them the sample's (they carry NODE_F_LATE).
 * Its verdict bits are then 0 (UNWIND_Q_UNKNOWN); bits 4-7 keep the
 * unwinder's stop reason. The chunk that holds it is CHUNK_DATA_LATE,
 * which readers before the bit refuse (they would count the stack
 * complete when it reaches main). */
#define SAMPLE_Q_LATE 0x8u
/* The verdict of quality q, late included (enum unwind_quality). */
#define SAMPLE_VERDICT(q) (((q) & SAMPLE_Q_LATE) ? (unsigned)UNWIND_Q_LATE : SAMPLE_Q(q))
/* rec_sample.method bits 4-6: frames in code without CFI were unwound by
 * known generated code (bit 4: the CPython trampoline), the frame pointer
 * in anonymous memory (bit 5), CFI from a jitdump (bit 6). */
#define SAMPLE_M_JIT_SHIFT 4
#define SAMPLE_M_METHOD(m) ((m) & 3u)
/* rec_sample.method bit 7: frames beyond the stack copy were read from
 * the live process's memory (its outer frames, after the sample). */
#define SAMPLE_M_READ 0x80u
#define SAMPLE_M_JIT(m) (((unsigned)(m) >> SAMPLE_M_JIT_SHIFT) & UNWIND_JIT_ALL)
/* rec_sample.method bit 2: Python frames were read from the live
 * CPython's own frame chain and put in place of (above) each
 * _PyEval_EvalFrameDefault frame; bit 3: the stack has
 * _PyEval_EvalFrameDefault frames, but their Python frames could not be
 * read (the chain did not validate, or no access to the process's
 * memory): those frames are left unexpanded. */
#define SAMPLE_M_PYTHON 0x04u
#define SAMPLE_M_PYTHON_FAILED 0x08u

/* A Python frame read from the interpreter is a NODE_USER node with
 * mapping 0 and an address in [PYFRAME_ADDR_MIN, PYFRAME_ADDR_MAX] (not
 * canonical on x86-64, so no code has it): the recording's own number for
 * a function, named by its REC_SYMBOL ("py::QUALNAME:FILE", module
 * "[python]"). */
#define PYFRAME_ADDR_MIN 0x7079000000000001ull
#define PYFRAME_ADDR_MAX 0x70790000ffffffffull
#define PYFRAME_MODULE "[python]"

struct rec_lost {
	uint64_t time;
	uint64_t count;
	uint32_t kind;     /* enum lost_kind */
	uint32_t pad;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_lost) == 24, "rec_lost");
/* rec_lost.kind: who lost them */
enum lost_kind {
	LOST_RING = 0,    /* records the kernel could not write: its ring was full
			   * (PERF_RECORD_LOST) */
	LOST_SAMPLES = 1, /* samples the kernel dropped (PERF_RECORD_LOST_SAMPLES) */
	LOST_QUEUE = 2,   /* samples the recorder dropped: its own queue was full */
};

struct rec_throttle {
	uint64_t time;
	uint32_t throttled; /* 1 throttle, 0 unthrottle */
	uint32_t pad;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_throttle) == 16, "rec_throttle");

/* Why a thread was off the CPU (rec_offcpu.reason), from its kernel
 * stack at switch-out and whether it was still runnable. */
enum offcpu_reason {
	OFFCPU_OTHER = 0,
	OFFCPU_LOCK = 1,      /* contended mutex or rwlock (futex), kernel mutex or rwsem */
	OFFCPU_READ = 2,      /* read, recv, pipe or socket read */
	OFFCPU_WRITE = 3,     /* write, send, fsync */
	OFFCPU_SLEEP = 4,     /* nanosleep, hrtimer sleep */
	OFFCPU_POLL = 5,      /* poll, select, epoll, wait4, waitid, completions */
	OFFCPU_FAULT = 6,     /* page fault */
	OFFCPU_PREEMPT = 7,   /* preempted: still runnable when switched out */
	OFFCPU_WAIT = 8,      /* a futex wait that is no contended lock: condition
			       * variable, semaphore, join, barrier, thread park
			       * (recordings of stax before it have lock there) */
	OFFCPU_NREASONS = 9,
};
#define OFFCPU_F_OPEN 1u      /* still off the CPU when recording stopped (or,
                                * read live, as of the last chunk) */
#define OFFCPU_F_READ 2u      /* the user stack past the kernel's copy was read
                                * from the process while the thread was still
                                * off the CPU (its copied bytes unchanged) */
#define OFFCPU_F_LATE 4u      /* frames of the stack were read after the
                                * switch-out and nothing proves them its own
                                * (as SAMPLE_Q_LATE: the quality bits are 0) */
/* rec_offcpu.flags bits 4-7: the verdict (enum unwind_quality, bits 4-5)
 * and method (enum unwind_method, bits 6-7) of the interval's stack. */
#define OFFCPU_F_QM_SHIFT 4
#define OFFCPU_F_QM(quality, method) \
	((unsigned)(((quality) & 3u) | ((method) & 3u) << 2) << OFFCPU_F_QM_SHIFT)
#define OFFCPU_QUALITY(f) (((unsigned)(f) >> OFFCPU_F_QM_SHIFT) & 3u)
#define OFFCPU_METHOD(f) (((unsigned)(f) >> (OFFCPU_F_QM_SHIFT + 2)) & 3u)
/* The verdict of an interval's stack, late included. */
#define OFFCPU_VERDICT(f) (((f) & OFFCPU_F_LATE) ? (unsigned)UNWIND_Q_LATE : OFFCPU_QUALITY(f))

/* One interval a thread spent off the CPU: from its switch-out to its
 * next switch-in. The stack is where it blocked (user and kernel). */
struct rec_offcpu {
	uint64_t start;    /* switch-out time */
	uint64_t duration; /* ns until the switch-in (or the end of recording) */
	uint32_t pid, tid;
	uint32_t stack;    /* leaf node id, 0 if the switch had no stack */
	uint16_t cpu;      /* cpu it left */
	uint8_t reason;    /* enum offcpu_reason */
	uint8_t flags;     /* OFFCPU_F_*; bits 4-5 quality, 6-7 method of the stack */
} __attribute__((packed));
_Static_assert(sizeof(struct rec_offcpu) == 32, "rec_offcpu");

/* Who woke a thread that waited off the CPU (rec_waker.kind). */
enum waker_kind {
	WAKER_THREAD = 0,       /* a recorded thread: waker_pid/tid, its stack */
	WAKER_IRQ = 1,          /* an interrupt handler (hard irq or NMI) */
	WAKER_SOFTIRQ = 2,      /* a softirq */
	WAKER_OTHER = 3,        /* a thread outside the recorded processes:
				 * waker_pid/tid and its name, no stack */
	WAKER_NKINDS = 4,
};

/* The wake-up that ended the off-CPU interval of thread tid that began
 * at start (the rec_offcpu with the same tid and start), from the
 * sched:sched_waking tracepoint: the waking thread and its stack (kernel
 * and user, unwound like a sample), or the interrupt context it ran in
 * (then neither thread nor stack: the interrupted thread did not wake
 * anyone). Followed by str comm: the name of a WAKER_OTHER thread, else
 * empty. Intervals without one were not ended by a recorded wake-up. */
/* rec_waker.flags bit 0: as OFFCPU_F_LATE, for the waker's stack */
#define WAKER_F_LATE 1u

struct rec_waker {
	uint64_t start;    /* the interval's start (switch-out time) */
	uint64_t time;     /* of the wake-up */
	uint32_t tid;      /* the thread that waited */
	uint32_t waker_pid, waker_tid;  /* 0 for interrupts */
	uint32_t stack;    /* the waker's stack, leaf node id (0: none) */
	uint8_t kind;      /* enum waker_kind */
	uint8_t flags;     /* WAKER_F_LATE; bits 4-5 quality, 6-7 method of the stack */
	uint16_t pad;
	uint32_t pad2;
} __attribute__((packed));
_Static_assert(sizeof(struct rec_waker) == 40, "rec_waker");

#define SYMBOL_F_KNOWN 0x10000u  /* name holds a function; else module+offset */

/* Symbol for the address of one node kind: (mapping, addr, RA flag). */
struct rec_symbol {
	uint64_t addr;
	uint64_t offset;   /* addr - function start, or file offset if unknown */
	uint32_t mapping;  /* 0 = kernel */
	uint32_t flags;    /* node_kind | NODE_F_RA | SYMBOL_F_KNOWN */
} __attribute__((packed));
_Static_assert(sizeof(struct rec_symbol) == 24, "rec_symbol");

/* Source line and inline chain of the address of the REC_SYMBOL record
 * just before it (same addr, mapping, flags; ignored otherwise). The
 * inline frames follow, innermost first: the first one's line is the
 * address's own line; line here is the call site in the symbol's
 * function. Readers that do not know this type skip it and see the
 * function alone. */
struct rec_symbol_src {
	uint64_t addr;
	uint32_t mapping;
	uint32_t flags;    /* as in rec_symbol */
	uint32_t line;     /* 0 unknown */
	uint32_t ninline;  /* inline frames that follow the file name */
} __attribute__((packed));
_Static_assert(sizeof(struct rec_symbol_src) == 24, "rec_symbol_src");

/* Every field's offset, as the tables above and docs/FORMAT.md give it:
 * a change to a struct that moves a field breaks the build, not the
 * files already written. */
_Static_assert(offsetof(struct store_file_header, magic) == 0, "store_file_header.magic");
_Static_assert(offsetof(struct store_file_header, version) == 8, "store_file_header.version");
_Static_assert(offsetof(struct store_file_header, header_size) == 12, "store_file_header.header_size");
_Static_assert(offsetof(struct store_chunk_header, magic) == 0, "store_chunk_header.magic");
_Static_assert(offsetof(struct store_chunk_header, kind) == 4, "store_chunk_header.kind");
_Static_assert(offsetof(struct store_chunk_header, flags) == 6, "store_chunk_header.flags");
_Static_assert(offsetof(struct store_chunk_header, seq) == 8, "store_chunk_header.seq");
_Static_assert(offsetof(struct store_chunk_header, raw_size) == 12, "store_chunk_header.raw_size");
_Static_assert(offsetof(struct store_chunk_header, comp_size) == 16, "store_chunk_header.comp_size");
_Static_assert(offsetof(struct store_chunk_header, check) == 20, "store_chunk_header.check");
_Static_assert(offsetof(struct store_chunk_sum, magic) == 0, "store_chunk_sum.magic");
_Static_assert(offsetof(struct store_chunk_sum, size) == 4, "store_chunk_sum.size");
_Static_assert(offsetof(struct store_chunk_sum, xxh3) == 8, "store_chunk_sum.xxh3");
_Static_assert(offsetof(struct rec_header, type) == 0, "rec_header.type");
_Static_assert(offsetof(struct rec_header, flags) == 2, "rec_header.flags");
_Static_assert(offsetof(struct rec_header, size) == 4, "rec_header.size");
_Static_assert(offsetof(struct rec_comm, pid) == 0, "rec_comm.pid");
_Static_assert(offsetof(struct rec_comm, tid) == 4, "rec_comm.tid");
_Static_assert(offsetof(struct rec_comm, time) == 8, "rec_comm.time");
_Static_assert(offsetof(struct rec_comm, flags) == 16, "rec_comm.flags");
_Static_assert(offsetof(struct rec_mapping, id) == 0, "rec_mapping.id");
_Static_assert(offsetof(struct rec_mapping, pid) == 4, "rec_mapping.pid");
_Static_assert(offsetof(struct rec_mapping, time) == 8, "rec_mapping.time");
_Static_assert(offsetof(struct rec_mapping, start) == 16, "rec_mapping.start");
_Static_assert(offsetof(struct rec_mapping, end) == 24, "rec_mapping.end");
_Static_assert(offsetof(struct rec_mapping, pgoff) == 32, "rec_mapping.pgoff");
_Static_assert(offsetof(struct rec_mapping, inode) == 40, "rec_mapping.inode");
_Static_assert(offsetof(struct rec_mapping, maj) == 48, "rec_mapping.maj");
_Static_assert(offsetof(struct rec_mapping, min) == 52, "rec_mapping.min");
_Static_assert(offsetof(struct rec_mapping, prot) == 56, "rec_mapping.prot");
_Static_assert(offsetof(struct rec_mapping, build_id_size) == 60, "rec_mapping.build_id_size");
_Static_assert(offsetof(struct rec_mapping, build_id) == 61, "rec_mapping.build_id");
_Static_assert(offsetof(struct rec_task, pid) == 0, "rec_task.pid");
_Static_assert(offsetof(struct rec_task, ppid) == 4, "rec_task.ppid");
_Static_assert(offsetof(struct rec_task, tid) == 8, "rec_task.tid");
_Static_assert(offsetof(struct rec_task, ptid) == 12, "rec_task.ptid");
_Static_assert(offsetof(struct rec_task, time) == 16, "rec_task.time");
_Static_assert(offsetof(struct rec_node, addr) == 0, "rec_node.addr");
_Static_assert(offsetof(struct rec_node, parent) == 8, "rec_node.parent");
_Static_assert(offsetof(struct rec_node, mapping) == 12, "rec_node.mapping");
_Static_assert(offsetof(struct rec_node, flags) == 16, "rec_node.flags");
_Static_assert(offsetof(struct rec_sample, time) == 0, "rec_sample.time");
_Static_assert(offsetof(struct rec_sample, weight) == 8, "rec_sample.weight");
_Static_assert(offsetof(struct rec_sample, pid) == 16, "rec_sample.pid");
_Static_assert(offsetof(struct rec_sample, tid) == 20, "rec_sample.tid");
_Static_assert(offsetof(struct rec_sample, stack) == 24, "rec_sample.stack");
_Static_assert(offsetof(struct rec_sample, cpu) == 28, "rec_sample.cpu");
_Static_assert(offsetof(struct rec_sample, quality) == 30, "rec_sample.quality");
_Static_assert(offsetof(struct rec_sample, method) == 31, "rec_sample.method");
_Static_assert(offsetof(struct rec_lost, time) == 0, "rec_lost.time");
_Static_assert(offsetof(struct rec_lost, count) == 8, "rec_lost.count");
_Static_assert(offsetof(struct rec_lost, kind) == 16, "rec_lost.kind");
_Static_assert(offsetof(struct rec_throttle, time) == 0, "rec_throttle.time");
_Static_assert(offsetof(struct rec_throttle, throttled) == 8, "rec_throttle.throttled");
_Static_assert(offsetof(struct rec_offcpu, start) == 0, "rec_offcpu.start");
_Static_assert(offsetof(struct rec_offcpu, duration) == 8, "rec_offcpu.duration");
_Static_assert(offsetof(struct rec_offcpu, pid) == 16, "rec_offcpu.pid");
_Static_assert(offsetof(struct rec_offcpu, tid) == 20, "rec_offcpu.tid");
_Static_assert(offsetof(struct rec_offcpu, stack) == 24, "rec_offcpu.stack");
_Static_assert(offsetof(struct rec_offcpu, cpu) == 28, "rec_offcpu.cpu");
_Static_assert(offsetof(struct rec_offcpu, reason) == 30, "rec_offcpu.reason");
_Static_assert(offsetof(struct rec_offcpu, flags) == 31, "rec_offcpu.flags");
_Static_assert(offsetof(struct rec_symbol, addr) == 0, "rec_symbol.addr");
_Static_assert(offsetof(struct rec_symbol, offset) == 8, "rec_symbol.offset");
_Static_assert(offsetof(struct rec_symbol, mapping) == 16, "rec_symbol.mapping");
_Static_assert(offsetof(struct rec_symbol, flags) == 20, "rec_symbol.flags");
_Static_assert(offsetof(struct rec_symbol_src, addr) == 0, "rec_symbol_src.addr");
_Static_assert(offsetof(struct rec_symbol_src, mapping) == 8, "rec_symbol_src.mapping");
_Static_assert(offsetof(struct rec_symbol_src, flags) == 12, "rec_symbol_src.flags");
_Static_assert(offsetof(struct rec_symbol_src, line) == 16, "rec_symbol_src.line");
_Static_assert(offsetof(struct rec_symbol_src, ninline) == 20, "rec_symbol_src.ninline");

#endif
