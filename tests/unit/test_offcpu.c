/* test_offcpu.c - off-CPU intervals from switch samples and SWITCH records.
 *
 * Feeds the ingester kernel-format records (the layout perf_event_open
 * gives the recorder with --off-cpu) and reads the recording back:
 * pairing of switch-out and switch-in, preemption, stale and lost
 * records, exits, and intervals still open at the end. */
#include "test.h"
#include "profile/profile.h"
#include "ingest/ingest.h"
#include "store/writer.h"
#include "lib/buf.h"
#include "lib/util.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define SWITCH_ID 7
#define CLOCK_ID 8

static const struct perf_format fmt = {
	.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
	.sample_id_all = true,
};

static uint64_t rec[64];

static void put_u32x2(size_t *n, uint32_t a, uint32_t b)
{
	rec[(*n)++] = (uint64_t)a | (uint64_t)b << 32;
}

/* A sample of event id by tid at time t with a one-frame user stack. */
static void sample(struct ingest *g, uint64_t id, uint32_t tid, uint64_t t)
{
	struct perf_event_header *h = (void *)rec;
	size_t n = 1;
	rec[n++] = id;
	rec[n++] = 0x401000;                 /* ip */
	put_u32x2(&n, 100, tid);
	rec[n++] = t;
	put_u32x2(&n, 1, 0);                 /* cpu, res */
	rec[n++] = id == SWITCH_ID ? 1 : 1000000;
	rec[n++] = 2;                        /* callchain */
	rec[n++] = PERF_CONTEXT_USER;
	rec[n++] = 0x401000;
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(n * 8);
	ingest_record(g, &fmt, h);
}

/* A PERF_RECORD_SWITCH of tid at t (misc: SWITCH_OUT, OUT_PREEMPT). */
static void sw(struct ingest *g, uint16_t misc, uint32_t tid, uint64_t t)
{
	struct perf_event_header *h = (void *)rec;
	size_t n = 1;
	put_u32x2(&n, 100, tid);
	rec[n++] = t;
	put_u32x2(&n, 1, 0);
	rec[n++] = SWITCH_ID;
	h->type = PERF_RECORD_SWITCH;
	h->misc = misc;
	h->size = (uint16_t)(n * 8);
	ingest_record(g, &fmt, h);
}

static void task_exit(struct ingest *g, uint32_t tid, uint64_t t)
{
	struct perf_event_header *h = (void *)rec;
	size_t n = 1;
	put_u32x2(&n, 100, 1);
	put_u32x2(&n, tid, 1);
	rec[n++] = t;
	put_u32x2(&n, 100, tid);             /* sample_id */
	rec[n++] = t;
	put_u32x2(&n, 1, 0);
	rec[n++] = SWITCH_ID;
	h->type = PERF_RECORD_EXIT;
	h->misc = 0;
	h->size = (uint16_t)(n * 8);
	ingest_record(g, &fmt, h);
}

static const struct rec_offcpu *find(const struct profile *p, uint32_t tid, uint64_t start)
{
	size_t i;
	for (i = 0; i < p->noffcpu; i++)
		if (p->offcpu[i].tid == tid && p->offcpu[i].start == start)
			return &p->offcpu[i];
	return NULL;
}

static size_t count_tid(const struct profile *p, uint32_t tid)
{
	size_t i, n = 0;
	for (i = 0; i < p->noffcpu; i++)
		n += p->offcpu[i].tid == tid;
	return n;
}

/* The address of kernel function name + 8 from /proc/kallsyms (a return
 * address inside it), 0 when hidden or absent. */
static uint64_t ksym(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long a;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");
	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name) && a)
			found = a + 8;
	if (f)
		fclose(f);
	return found;
}

/* Reasons from real kernel stacks (leaf first), as the kernel has them. */
static void test_reasons(struct ingest *g)
{
	uint64_t sched = ksym("schedule"), wfc = ksym("wait_for_completion_io_timeout"),
		 fsync = ksym("__x64_sys_fsync"), folio = ksym("filemap_read_folio"),
		 dofault = ksym("__do_fault"), exc = ksym("exc_page_fault"),
		 mutex = ksym("__mutex_lock.constprop.0"), kwrite = ksym("ksys_write");
	if (!sched || !wfc || !fsync || !folio || !dofault || !exc || !kwrite) {
		printf("skip - offcpu: reasons from kernel stacks: /proc/kallsyms hides the addresses (not root?)\n");
		return;
	}
	uint64_t fsync_stack[] = { sched, wfc, fsync };
	CHECK(ingest_offcpu_reason(g, fsync_stack, 3) == OFFCPU_WRITE,
	      "offcpu: fsync waiting in wait_for_completion_io_timeout is a write, not a poll");
	uint64_t fault_stack[] = { sched, folio, dofault, exc };
	CHECK(ingest_offcpu_reason(g, fault_stack, 4) == OFFCPU_FAULT,
	      "offcpu: a major fault reading the page (filemap_read_folio under __do_fault) is a fault");
	uint64_t fault_in_write[] = { sched, folio, dofault, exc, kwrite };
	CHECK(ingest_offcpu_reason(g, fault_in_write, 5) == OFFCPU_FAULT,
	      "offcpu: a fault taken inside write() is a fault");
	if (mutex) {
		uint64_t lock_in_write[] = { sched, mutex, kwrite };
		CHECK(ingest_offcpu_reason(g, lock_in_write, 3) == OFFCPU_LOCK,
		      "offcpu: a kernel mutex taken inside write() is a lock");
	}
	uint64_t bare[] = { sched };
	CHECK(ingest_offcpu_reason(g, bare, 1) == OFFCPU_OTHER, "offcpu: schedule alone is other");
}

/* Futex waits: the user function that says lock or wait, by name as
 * glibc, libstdc++, Rust and Go have them (demangled). */
static void test_wait_names(void)
{
	static const struct { const char *name; enum offcpu_reason want; } cases[] = {
		{ "__GI___lll_lock_wait", OFFCPU_LOCK }, { "__lll_lock_wait_private", OFFCPU_LOCK },
		{ "___pthread_mutex_lock", OFFCPU_LOCK }, { "__pthread_mutex_cond_lock", OFFCPU_LOCK },
		{ "__pthread_rwlock_wrlock_full64", OFFCPU_LOCK },
		{ "std::sys::sync::mutex::futex::Mutex::lock_contended", OFFCPU_LOCK },
		{ "std::sys::sync::rwlock::futex::RwLock::read_contended", OFFCPU_LOCK },
		{ "runtime.lock2", OFFCPU_LOCK },
		{ "___pthread_cond_wait", OFFCPU_WAIT }, { "__pthread_cond_wait_common", OFFCPU_WAIT },
		{ "pthread_cond_timedwait@@GLIBC_2.3.2", OFFCPU_WAIT }, { "__new_sem_wait_slow64", OFFCPU_WAIT },
		{ "__pthread_clockjoin_ex", OFFCPU_WAIT }, { "pthread_barrier_wait", OFFCPU_WAIT },
		{ "std::condition_variable::wait(std::unique_lock<std::mutex>&)", OFFCPU_WAIT },
		{ "std::sys::sync::condvar::futex::Condvar::wait_optional_timeout", OFFCPU_WAIT },
		{ "std::thread::park", OFFCPU_WAIT }, { "runtime.notesleep", OFFCPU_WAIT },
		/* generic helpers and everything else let the caller decide */
		{ "__futex_abstimed_wait_common64", OFFCPU_OTHER }, { "futex_wait", OFFCPU_OTHER },
		{ "std::sys::pal::unix::futex::futex_wait", OFFCPU_OTHER }, { "runtime.futexsleep", OFFCPU_OTHER },
		{ "main", OFFCPU_OTHER }, { "take_lock", OFFCPU_OTHER }, { NULL, OFFCPU_OTHER },
	};
	size_t i;
	char what[200];
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(what, sizeof(what), "offcpu: a futex wait in %s is %s", cases[i].name ? cases[i].name : "(no name)",
			 cases[i].want == OFFCPU_LOCK ? "lock" : cases[i].want == OFFCPU_WAIT ? "wait" : "undecided");
		CHECK(ingest_wait_by_name(cases[i].name) == cases[i].want, what);
	}
}

int main(void)
{
	char path[] = "/tmp/stax-test-offcpu.XXXXXX";
	struct store_writer w;
	struct ingest g;
	struct profile p;
	const struct rec_offcpu *o;
	int fd = mkstemp(path);

	if (fd < 0 || store_writer_open(&w, path)) {
		printf("not ok - offcpu: cannot create %s\n", path);
		return 1;
	}
	close(fd);
	ingest_init(&g, &w, UNWIND_MODE_FP);
	ingest_enable_offcpu(&g);
	ingest_add_switch_id(&g, SWITCH_ID);

	/* tid 10: switch-out sample, its SWITCH_OUT record (the kernel's
	 * stack copy took 10 ns of the thread's CPU), then the switch-in */
	sample(&g, SWITCH_ID, 10, 1000);
	sw(&g, PERF_RECORD_MISC_SWITCH_OUT, 10, 1010);
	sw(&g, 0, 10, 5000);
	/* tid 10 again: preempted, no stack sample */
	sw(&g, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, 10, 6000);
	sw(&g, 0, 10, 6500);
	/* a CPU sample is a sample, not an interval */
	sample(&g, CLOCK_ID, 10, 7000);
	/* tid 11: a switch-out that arrives after the switch-in that follows it */
	sw(&g, 0, 11, 9000);
	sample(&g, SWITCH_ID, 11, 8000);
	sw(&g, 0, 11, 9500);
	/* tid 12: the switch-in of the first switch-out was lost */
	sample(&g, SWITCH_ID, 12, 10000);
	sample(&g, SWITCH_ID, 12, 20000000);
	sw(&g, 0, 12, 20001000);
	/* tid 13 exits: its last switch-out is no wait */
	task_exit(&g, 13, 30000000);
	sample(&g, SWITCH_ID, 13, 30000100);
	sw(&g, PERF_RECORD_MISC_SWITCH_OUT, 13, 30000101);
	/* tid 14: still off the CPU when recording stops */
	sample(&g, SWITCH_ID, 14, 35000000);
	ingest_finish(&g, 40000000);
	test_reasons(&g);
	test_wait_names();
	store_flush(&w, CHUNK_DATA);
	store_writer_close(&w);
	ingest_release(&g);

	if (profile_load_err(&p, path, NULL)) {
		printf("not ok - offcpu: the recording does not load\n");
		unlink(path);
		return 1;
	}
	p.no_live_symbols = true;
	CHECK(p.nsamples == 1, "offcpu: the cpu-clock sample is a sample, switch samples are not");
	o = find(&p, 10, 1010);
	CHECK(o && o->duration == 3990 && o->stack && o->reason == OFFCPU_OTHER && !(o->flags & OFFCPU_F_OPEN),
	      "offcpu: switch-out sample + SWITCH_OUT + switch-in = one interval from the record's time, with the sample's stack");
	o = find(&p, 10, 6000);
	CHECK(o && o->duration == 500 && o->reason == OFFCPU_PREEMPT && !o->stack,
	      "offcpu: SWITCH_OUT_PREEMPT without a sample: preempted, no stack");
	CHECK(count_tid(&p, 10) == 2, "offcpu: tid 10 has exactly two intervals");
	CHECK(count_tid(&p, 11) == 0, "offcpu: a switch-out older than the last switch-in is dropped");
	o = find(&p, 12, 20000000);
	CHECK(o && o->duration == 1000 && count_tid(&p, 12) == 1,
	      "offcpu: a lost switch-in does not stretch an interval over CPU time");
	CHECK(count_tid(&p, 13) == 0, "offcpu: the switch-out after an exit is no interval");
	o = find(&p, 14, 35000000);
	CHECK(o && o->duration == 5000000 && (o->flags & OFFCPU_F_OPEN),
	      "offcpu: an interval open at the end ends there, flagged open");
	CHECK(p.noffcpu == 4, "offcpu: four intervals in all");
	profile_release(&p);
	unlink(path);
	TEST_DONE();
}
