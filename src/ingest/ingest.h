/* ingest.h - turn kernel perf_event records into a stax recording.
 *
 * Every source (the live ring buffers, a perf.data file or pipe) feeds
 * its records here in time order with the format that laid them out. The
 * ingester keeps processes and mappings (state/), unwinds user stacks
 * from registers and stack copies when samples carry them (unwind/),
 * interns stacks and writes records, nodes and samples (store/). At the
 * end, ingest_put_symbols() appends the symbols chunk.
 */
#ifndef STAX_INGEST_INGEST_H
#define STAX_INGEST_INGEST_H

#include "ingest/pyframes.h"
#include "ingest/recover.h"
#include "ingest/sample.h"
#include "state/state.h"
#include "store/stacks.h"
#include "store/writer.h"
#include "lib/hash.h"
#include "unwind/unwind.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#define INGEST_MAX_FRAMES 3072 /* a sample's frames: native (UNWIND_MAX_DEPTH) and Python */
#define INGEST_LAST_FRAMES 128
#define INGEST_LAST_WAYS 8
#define INGEST_TAIL 8
#define UKIND_RA 1u   /* ukind: a return address */
#define UKIND_PY 2u   /* ukind: a Python frame (pyframes.h) */
#define UKIND_LATE 4u /* ukind: read after the sample (NODE_F_LATE) */
#define INGEST_MAX_SLOTS 4096 /* stack slots noted per unwind for the reader */

/* A thread switched out whose switch-in has not been seen yet. */
struct offcpu_pending {
	uint32_t pid, tid;
	uint64_t out_time;   /* switch-out time, 0 = not off the CPU */
	uint64_t last_in;    /* last switch-in: older switch-outs are stale */
	uint32_t stack;
	uint16_t cpu;
	uint8_t reason;      /* from the kernel stack (enum offcpu_reason) */
	uint8_t qm;          /* quality | method << 2 of the stack */
	bool preempt;        /* the switch-out record said still runnable */
	bool dead;           /* exited: its last switch-out is no wait */
	/* the wake-up that ended the wait (sched_waking), if seen */
	bool woken;
	struct rec_waker wk;
	char comm[16];       /* a WAKER_OTHER's name */
	bool read;           /* stack read on from the process (OFFCPU_F_READ) */
	bool late;           /* the stack has late frames (OFFCPU_F_LATE) */
	bool wk_partial;     /* wk from the event without stacks, of a recorded thread */
};

/* perf_event_header.misc of a sample whose stack copy a live source (the
 * recorder's queue, record/queue.c) shortened because unwinding fell
 * behind: bits 3-11 are unused by the kernel, so only the recorder's own
 * records carry it; the ingester honours it only when live. */
#define QUEUE_MISC_TRIMMED (1u << 11)

/* Off-CPU intervals and their wakers (offcpu.c). */
struct ingest_offcpu {
	/* samples of these event ids are switch-outs, not samples */
	bool on;
	struct hmap switch_ids;
	/* wakers: samples of these ids are sched_waking tracepoint hits, the
	 * woken thread's pid and common_flags at these raw offsets */
	bool wakers;
	struct hmap wake_ids;
	struct hmap foreign_wake_ids;  /* every process's wake-ups, no stacks */
	struct hmap rec_pids;          /* processes recorded (their COMM or FORK seen) */
	struct hmap comm_index;        /* tid -> comms index + 1: names from /proc */
	char (*comms)[16];
	size_t ncomms, commcap;
	uint32_t wake_flags_off, wake_pid_off;
	uint64_t wakes, wakes_kept;
	struct offcpu_pending *pend;   /* threads off the CPU, or that were */
	size_t npend, pendcap;
	struct hmap pend_index;        /* tid -> index in pend */
	struct hmap kreason;           /* kernel address -> reason + 1 */
	struct sym_session *ksyms;
	/* futex waits: (mapping, user address) -> OFFCPU_LOCK, OFFCPU_WAIT
	 * or OFFCPU_OTHER (says neither), named by usyms */
	struct hmap ureason;
	struct sym_session *usyms;
	uint64_t intervals, ns;        /* intervals written, their time */
};

/* JIT code (jit.c): bytes of anonymous executable mappings, read from the
 * live process (recorder) to recognise generated code; its jitdump
 * unwind tables; its symbol files, read while they exist. */
struct ingest_jit {
	struct hmap code_index;        /* mapping id -> index in code + 1 */
	struct ingest_code { uint8_t *bytes; size_t len; } *code;
	size_t ncode, codecap;
	/* samples and frames unwound by the rules for code without CFI */
	uint64_t samples, frames;
	/* jitdump files mapped by the processes (their marker mmap), with
	 * the unwind tables of their UNWINDING_INFO records */
	struct ingest_jitdump {
		uint32_t pid;
		char *path;
		struct jit_cfi *cfi;
		size_t off;              /* parsed up to here */
		uint64_t size, checked;  /* file size at the last read; when checked */
		bool warned;
	} *dumps;
	size_t ndumps, dumpcap;
	/* JIT symbol files (/tmp/perf-PID.map, jitdumps) of processes with
	 * anonymous executable memory, read while they grow during a live
	 * recording (ingest_poll_jit): a file the program deletes before the
	 * recording stops still names its code. */
	struct ingest_jitfile {
		uint32_t pid;
		bool dump;               /* a jitdump, else a perf map */
		long uid;                /* the process's user (-1 not known yet) */
		char *path;
		uint8_t *data;           /* the bytes read so far */
		size_t len, cap;
		/* its process has exited and what the file held was read:
		 * not polled again (noted again if the pid comes back) */
		bool done;
		/* while the file is not there, polled every gap ns (doubling
		 * from JIT_POLL_NS to JIT_POLL_MAX_NS), from sample time next */
		uint64_t next, gap;
	} *files;
	size_t nfiles, filecap;
	uint64_t polled;               /* sample time of the last poll */
};

/* The user stack beyond the kernel's copy (ustack.c): what is read on
 * from the live process, and the outermost frames of each thread. */
struct ingest_ustack {
	/* switch-out stacks read on from the process past the kernel's
	 * copy, and attempts given up (the thread had run again) */
	uint8_t *xstack, *xcheck;
	uint64_t stack_reads, stack_reads_stale;
	/* on-CPU stacks deeper than their copy: the rest read from the
	 * process, or not, as the thread's stack had moved on
	 * (unwind_result.deep); stacks cut where the copy ended whose
	 * thread's stack top is known (from a stack of it that reached its
	 * root), within 65528 bytes of it (the largest copy) or beyond */
	uint64_t deep_reads, deep_stale, deep_gone, cut_within_max, cut_beyond_max;
	/* with the in-kernel reader: stacks that went on past the copy
	 * with the words it read at the sample alone (deep_words), stack
	 * slot lists asked of it, and samples with late frames of the
	 * stack (read after the sample: UNWIND_F_LATE) */
	uint64_t deep_words, slot_lists, slots_cut, late;
	uint64_t slot_guesses;             /* stale stacks walked for their slots */
	struct unwind_frame *guess;        /* scratch: those walks' frames */
	uint64_t slots[INGEST_MAX_SLOTS];  /* scratch: the slots an unwind read */
	/* The outermost frames of each thread's last stack that DWARF
	 * unwound to its root: a spliced stack whose frame-pointer chain
	 * ended at one of them (in libc, without frame pointers, just below
	 * _start or clone3) continues with the rest. */
	struct hmap tail_index;        /* tid -> index in tails */
	struct ingest_tail {
		uint32_t tid;
		uint8_t n;
		uint64_t pc[INGEST_TAIL];
		uint64_t top;  /* the highest CFA of a stack that reached
				* its root: the top of the thread's stack */
		/* the stack slots the in-kernel reader reads for it: those of
		 * its last deep stacks of other shapes too, while they fit */
		uint64_t *asked;
		size_t nasked;
	} *tails;
	size_t ntails, tailcap;
};

/* Python frames read from live CPython processes (python.c, with the
 * reader of pyframes.h): reader is NULL when off (not live, or
 * --no-python-frames); set by the recorder. The counts are of samples
 * expanded, whose chain failed to validate, could not be read, or was
 * another moment's; of those expanded, from the chain the in-kernel
 * reader read at the sample (moment) or read later (late); chains read
 * at the sample that did not fit the native stack, or named a code
 * object freed before it was named (PYF_GONE_NAME). */
struct ingest_python {
	struct pyframes *reader;
	struct pyf_expansion *x;
	uint64_t expanded, failed, noaccess, stale;
	uint64_t moment, late, moment_unfit, moment_gone;
	size_t syms_written;             /* frame ids whose REC_SYMBOL is written */
	struct hmap registered;          /* pid -> image + 1 told to the reader (0: none) */
	uint64_t pcs[INGEST_MAX_FRAMES]; /* scratch: uframes before expanding */
	bool ra[INGEST_MAX_FRAMES], ulate[INGEST_MAX_FRAMES];
};

/* Go processes told to the in-kernel reader (goproc.c, golayout.c; aarch64): pid -> image
 * + 1 (told, or found not to be Go: no second look until an exec). */
struct ingest_go {
	struct hmap asked;
	uint64_t told;                   /* processes told */
};

/* What the in-kernel reader (record/moment.h) read at a sample's moment,
 * as the recorder hands it over (struct ingest_moment_ops). */
struct ingest_moment {
	uint32_t flags;                  /* MOMENT_F_* of its record */
	const struct moment_pyframe *py; /* the Python chain, innermost first */
	size_t npy;
	/* the stack words beyond the copy read at the sample (addresses
	 * sorted, none twice; with have_go, the goroutine's stack words too) */
	struct unwind_words words;
	/* aarch64, a Go thread on its g0 stack (MOMENT_F_GO): the goroutine
	 * it runs for (unwind.h) */
	bool have_go;
	struct unwind_go go;
};

/* The recorder's in-kernel reader, as the ingester uses it (NULL: not
 * there; then what lies outside a sample is read later, and marked). */
struct ingest_moment_ops {
	/* The record of sample s into *out, borrowed until the next call;
	 * false when there is none. */
	bool (*take)(void *arg, const struct perf_sample *s, struct ingest_moment *out);
	/* Read these stack slots (8-aligned addresses, sorted, none twice)
	 * at thread tid's next samples (n 0: none), in place of those asked
	 * before, and the window past the copy, up to top (the thread's
	 * stack top as far as known, 0: not); its process pid has stacks
	 * deeper than the copy (its other threads get the window too).
	 * False when the slots are more than a record holds (then it reads
	 * those from the lowest address that fit). */
	bool (*slots)(void *arg, uint32_t pid, uint32_t tid, const uint64_t *addr, size_t n, uint64_t top);
	/* Process pid runs CPython with layout l (PyCode_Type at code_type);
	 * l NULL: not any more (an exec). */
	void (*python)(void *arg, uint32_t pid, const struct pyf_layout *l, uint64_t code_type);
	/* Process pid runs Go whose runtime is laid out as gp says
	 * (aarch64: its g0 threads' goroutines are read at the sample). */
	void (*go)(void *arg, uint32_t pid, const struct moment_goproc *gp);
	/* Thread tid (of process pid) exited. */
	void (*exited)(void *arg, uint32_t pid, uint32_t tid);
	void *arg;
};

struct ingest {
	struct store_writer *w;
	struct state st;
	struct stack_table stacks;
	struct unwinder *unwinder;     /* NULL: use the kernel's chain as is */
	enum unwind_mode mode;
	uint64_t samples, lost, lost_samples, throttles, unthrottles;
	uint64_t trimmed;              /* samples marked SAMPLE_Q_TRIMMED (live only) */
	uint64_t unknown_records, bad_records;
	uint64_t quality[5], method[3];  /* quality: by SAMPLE_VERDICT() */
	uint64_t max_stack;            /* the events' sample_max_stack (0: unknown) */
	uint64_t chains_capped;        /* samples whose kernel chain hit max_stack */
	uint64_t first_time, last_time;
	/* a session already holding the modules' symbols and DWARF (opened
	 * on another thread while reading): ingest_put_symbols uses it and
	 * frees it; NULL: it opens its own */
	struct sym_session *symbols_session;
	/* set (by a recorder of several files): the names written in one
	 * file's symbols chunk, kept for the next (symbol/chunk.h) */
	struct sym_chunk_cache *symcache;
	/* set (by a recorder whose process symbolizes on another thread
	 * too: stax agent's pull server): held around the symbols chunk;
	 * the sample path only tries it (the off-CPU reason's names: a
	 * wait classified while another thread holds it is "other") */
	pthread_mutex_t *symbol_lock;
	uint32_t cur_pid;              /* the process of the sample at hand */
	bool cur_capped;               /* its chain stopped at max_stack */
	bool live;                     /* processes can be read: set by the recorder */
	bool no_read_stack;            /* never read stacks beyond their copy */
	/* names and mappings read from /proc when their records were lost
	 * (recover.h); recover.on is set by the recorder */
	struct recover recover;
	struct ingest_offcpu off;
	struct ingest_jit jit;
	struct ingest_ustack us;
	struct ingest_python py;
	struct ingest_go go;
	/* processes /proc did not have at the last ingest_new_file() (pid
	 * -> 1): missing twice and unsampled, one whose EXIT record was
	 * lost is let go */
	struct hmap missing;
	uint64_t file_start;           /* time the current file began (0: the first) */
	/* the in-kernel reader (set by the recorder), and what it read at
	 * the sample at hand (mo, when have_mo); samples joined with one */
	const struct ingest_moment_ops *moment;
	struct ingest_moment mo;
	bool have_mo;
	uint64_t moment_samples;
	/* the sample at hand: its frames, leaf first */
	uint8_t ukind[INGEST_MAX_FRAMES]; /* with ukind_on: UKIND_* of uframes[i] */
	bool ukind_on;                   /* this sample's frames use ukind */
	uint64_t kframes[INGEST_MAX_FRAMES], uframes[INGEST_MAX_FRAMES];
	struct unwind_frame frames[INGEST_MAX_FRAMES];
	/* The last stack interned per thread slot, root first: a thread's
	 * consecutive samples mostly share most of their frames, which then
	 * reuse their node ids instead of being looked up again. Valid while
	 * the process's address space generation is unchanged (it changes
	 * with the process's root node too, and is never another process's). */
	struct ingest_last {
		uint64_t gen;            /* state_gen of the process; 0 = empty */
		uint32_t n;
		uint64_t addr[INGEST_LAST_FRAMES];
		uint32_t flags[INGEST_LAST_FRAMES], node[INGEST_LAST_FRAMES];
	} last[INGEST_LAST_WAYS];
};

/* The module ref of mapping m (borrowing its path and build-id). */
struct module_ref ingest_mapping_ref(const struct state_mapping *m);
/* The unwinder's find callback (unwind_find_fn): m's ref, false when m is
 * NULL. */
bool ingest_module_of(const struct state_mapping *m, struct module_ref *out);

/* mode FP ignores registers and stack copies; DWARF and HYBRID unwind
 * samples that carry them. */
void ingest_init(struct ingest *g, struct store_writer *w, enum unwind_mode mode);
/* The machine the records come from (a perf.data file's header says;
 * the host's by default): its registers and unwinding rules. Before the
 * first sample. */
void ingest_set_arch(struct ingest *g, enum unwind_arch a);
void ingest_release(struct ingest *g);
/* Read Python frames from live CPython processes (the recorder, when the
 * targets can be read): see pyframes.h. */
void ingest_enable_python(struct ingest *g);

/* Off-CPU recording: samples whose id is a switch id are the stacks of
 * threads switching out; PERF_RECORD_SWITCH(_CPU_WIDE) records end the
 * intervals. Each interval is written as a rec_offcpu. */
void ingest_enable_offcpu(struct ingest *g);
void ingest_add_switch_id(struct ingest *g, uint64_t id);
/* Wakers: samples whose id is a wake id are sched:sched_waking hits (raw
 * data with common_flags at flags_off, the woken pid at pid_off); the
 * first wake-up of a thread off the CPU is written with its interval as
 * a rec_waker, with the waker's stack unwound like a sample. */
void ingest_enable_wakers(struct ingest *g, uint32_t flags_off, uint32_t pid_off);
void ingest_add_wake_id(struct ingest *g, uint64_t id);
/* The same for wake-ups by any thread, without stacks (-p, CMD): those
 * of threads outside the recorded processes are kept as WAKER_OTHER with
 * the waker's name (from /proc while live), interrupts as above. */
void ingest_add_foreign_wake_id(struct ingest *g, uint64_t id);
/* Tell the writer which threads are off the CPU as of now (CLOCK_MONOTONIC
 * ns, the events' clock), for readers of the growing file; no-op without
 * off-CPU recording. Cheap: one entry per thread. */
void ingest_checkpoint(struct ingest *g, uint64_t now);
/* Write the intervals still open at end_time (flagged OFFCPU_F_OPEN). */
void ingest_finish(struct ingest *g, uint64_t end_time);
/* Reason bucket of a kernel stack (leaf first), from the names of its
 * frames in /proc/kallsyms (cached per address); OFFCPU_OTHER when no
 * frame says. Preemption is not in the stack: the caller checks it. */
enum offcpu_reason ingest_offcpu_reason(struct ingest *g, const uint64_t *kframes, size_t nk);
/* What a user function in a futex wait's stack says: OFFCPU_LOCK (a
 * mutex or rwlock: pthread_mutex_lock, __lll_lock_wait, Rust's
 * lock_contended, ...), OFFCPU_WAIT (pthread_cond_wait, sem_wait,
 * pthread_join, std::condition_variable, Rust's Condvar::wait, ...), or
 * OFFCPU_OTHER when it says neither (name may be NULL). */
enum offcpu_reason ingest_wait_by_name(const char *name);

/* Handle one record laid out by f. Malformed records are counted in
 * bad_records and skipped, unknown types in unknown_records. */
void ingest_record(struct ingest *g, const struct perf_format *f, const struct perf_event_header *h);
/* A PERF_RECORD_SAMPLE the caller parsed already (perf_sample_parse). */
void ingest_sample(struct ingest *g, const struct perf_format *f, const struct perf_sample *s);

/* Seed what existed before recording started (attaching to a process). */
void ingest_seed_comm(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, const char *name);
void ingest_seed_mapping(struct ingest *g, uint32_t pid, uint64_t time, const struct state_mapping *m);
/* The mapping an MMAP or MMAP2 record (perf_mmap_parse()) describes:
 * m->path borrows mm->name. */
struct perf_mmap;
void ingest_mapping_of_mmap(const struct perf_mmap *mm, struct state_mapping *m);
/* Seed the executable mappings and thread names of a running process
 * from /proc. */
void ingest_seed_proc(struct ingest *g, int pid, uint64_t time);
/* The same from the text of a /proc/PID/maps file f; build_ids reads the
 * build-id of each file named (false: never open them). Lines that do not
 * parse are skipped, and so are mappings pid has already (same addresses,
 * offset and path). Returns how many mappings were added. */
size_t ingest_seed_maps(struct ingest *g, uint32_t pid, uint64_t time, FILE *f, bool build_ids);

/* ---- a recording that goes on in another file (stax agent) ----
 *
 * A live recording may end one file and go on in the next without
 * stopping its events (rotate.c): ingest_end_file() at the time t up to
 * which every record was handled, then the caller writes the symbols
 * (ingest_put_symbols) and ends the file, and ingest_new_file() starts
 * the next one. Each file reads alone: it names the processes and
 * threads alive at its start (COMM) and their executable mappings
 * (MAPPING, numbered from 1 again), and its stacks are its own. What
 * the last file needed and the next does not is let go: the processes
 * that exited, their threads and mappings, the stack table. */

/* What ingest_new_file() kept and let go. */
struct ingest_carry {
	uint64_t procs, maps, tasks;   /* kept: processes, mappings, names */
	uint64_t procs_dropped;        /* processes that had exited */
	uint64_t procs_evicted;        /* alive, beyond max_procs: the least
					* recently sampled (their next sample
					* reads them from /proc again) */
};

/* The file's part ends at t: every record up to t was handled, none
 * after. The off-CPU intervals still open are written as open at t
 * (OFFCPU_F_OPEN); their rest goes on in the next file. */
void ingest_end_file(struct ingest *g, uint64_t t);
/* Go on in w (a new file, its header META written) from time t, keeping
 * at most max_procs live processes (0: no limit). */
void ingest_new_file(struct ingest *g, struct store_writer *w, uint64_t t, size_t max_procs,
		     struct ingest_carry *c);
/* Keep the names each file's symbols chunk wrote for the next file
 * (symbol/chunk.h's cache): call once, before the first file ends. */
void ingest_keep_symbols(struct ingest *g);
/* The cache's bytes, hits and misses (0 without one). */
void ingest_symbols_cache(const struct ingest *g, uint64_t *bytes, uint64_t *hits, uint64_t *misses);
/* About how many bytes the ingester holds for the current file (stack
 * nodes, mappings, processes, names; not the unwinder's tables): what a
 * recorder that may start a new file at any time keeps under a cap. */
size_t ingest_file_bytes(const struct ingest *g);

/* Append a symbol for every distinct frame address (call at the end,
 * after a flush; the caller flushes the CHUNK_SYMBOLS chunk). */
void ingest_put_symbols(struct ingest *g);
/* Read what the JIT symbol files of the recorded processes gained since
 * the last call, every one of them (live recordings: ingest_put_symbols
 * calls it once more at the end; the sample path polls every 50 ms of
 * sample time, a file that is not there less and less often). */
void ingest_poll_jit(struct ingest *g);
/* The kept copy of pid's perf map or jitdump path (NULL: none). */
const struct ingest_jitfile *ingest_jitfile(const struct ingest *g, uint32_t pid, bool dump,
					   const char *path);

#endif
