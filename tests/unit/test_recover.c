/* test_recover.c - names and mappings from /proc when the kernel's records
 * of a process were lost (src/ingest/recover.c), against real processes:
 *   - a live child with a named thread that no record named: its name,
 *     its thread's name and its mappings are read once;
 *   - a child that has exited: counted, with its samples, and /proc is
 *     not read again for it;
 *   - tasks sampled after their release (pid or tid -1): a thread keeps
 *     its process's name, a process's samples are counted released and
 *     named [exited], and /proc is not read for them;
 *   - a child whose exec records were lost (FORK seen, then it ran
 *     /bin/sleep): the exec is found and its mappings read;
 *   - a child renamed after a LOST record: its new name is found;
 *   - a known, consistent process and recovery turned off: nothing read.
 * Samples are kernel-format records fed to the ingester as the recorder
 * does; the recording is read back to check the names. */
#include "test.h"
#include "profile/profile.h"
#include "ingest/ingest.h"
#include "store/writer.h"
#include "lib/util.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const struct perf_format fmt = {
	.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
	.sample_id_all = true,
};

static uint64_t rec[64];

static void put_u32x2(size_t *n, uint32_t a, uint32_t b)
{
	rec[(*n)++] = (uint64_t)a | (uint64_t)b << 32;
}

static void put_id(size_t *n, uint32_t pid, uint32_t tid, uint64_t t)
{
	put_u32x2(n, pid, tid);
	rec[(*n)++] = t;
	put_u32x2(n, 0, 0); /* cpu */
}

static void feed(struct ingest *g, uint32_t type, uint16_t misc, size_t n)
{
	struct perf_event_header *h = (void *)rec;
	h->type = type;
	h->misc = misc;
	h->size = (uint16_t)(n * 8);
	ingest_record(g, &fmt, h);
}

/* A sample of pid/tid at t, taken in user mode at pc. */
static void sample(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t t, uint64_t pc)
{
	size_t n = 1;
	rec[n++] = pc;
	put_u32x2(&n, pid, tid);
	rec[n++] = t;
	put_u32x2(&n, 0, 0);
	rec[n++] = 1000000;
	rec[n++] = 2;
	rec[n++] = PERF_CONTEXT_USER;
	rec[n++] = pc;
	feed(g, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, n);
}

static void fork_rec(struct ingest *g, uint32_t pid, uint32_t ppid, uint64_t t)
{
	size_t n = 1;
	put_u32x2(&n, pid, ppid);
	put_u32x2(&n, pid, ppid);
	rec[n++] = t;
	put_id(&n, ppid, ppid, t);
	feed(g, PERF_RECORD_FORK, 0, n);
}

static void lost_rec(struct ingest *g, uint64_t t)
{
	size_t n = 1;
	rec[n++] = 0;   /* id */
	rec[n++] = 100; /* lost */
	put_id(&n, 0, 0, t);
	feed(g, PERF_RECORD_LOST, 0, n);
}

/* ---- the children ---- */

static int cmd_pipe[2], ack_pipe[2], tid_pipe[2];

static void *named_thread(void *arg)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	(void)arg;
	prctl(PR_SET_NAME, "rec-thread");
	if (write(tid_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	for (;;)
		pause();
	return NULL;
}

/* The live child: names itself, starts a named thread (its tid goes up
 * the pipe), then renames itself ('r') or the thread ('t') when told. */
static void child_main(void)
{
	pthread_t t;
	pid_t tid;
	char c, path[64];
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
	close(cmd_pipe[1]);
	prctl(PR_SET_NAME, "rec-child");
	if (pthread_create(&t, NULL, named_thread, NULL) ||
	    read(tid_pipe[0], &tid, sizeof(tid)) != sizeof(tid) ||
	    write(ack_pipe[1], &tid, sizeof(tid)) != sizeof(tid))
		_exit(1);
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	while (read(cmd_pipe[0], &c, 1) == 1) {
		if (c == 'r')
			prctl(PR_SET_NAME, "rec-renamed");
		if (c == 't') {
			FILE *f = fopen(path, "w");
			if (!f || fputs("rec-thread2", f) < 0 || fclose(f))
				_exit(1);
		}
		if (write(ack_pipe[1], &c, 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* The start of an executable mapping of path in pid's /proc/PID/maps. */
static uint64_t exec_mapping(pid_t pid, const char *base)
{
	char path[64], line[512];
	unsigned long long start = 0;
	FILE *f;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		char perms[8];
		const char *name = strrchr(line, '/');
		if (sscanf(line, "%llx-%llx %7s", &s, &e, perms) == 3 && strchr(perms, 'x') && name &&
		    !strncmp(name + 1, base, strlen(base))) {
			start = s;
			break;
		}
	}
	fclose(f);
	return start;
}

static bool exe_is(pid_t pid, const char *base)
{
	char path[64], target[4096];
	ssize_t n;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return false;
	target[n] = '\0';
	return !strcmp(path_base(target), base);
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

int main(void)
{
	char path[] = "/tmp/stax-test-recover.XXXXXX";
	struct store_writer w, w2;
	struct ingest g, off;
	struct profile p;
	pid_t live, dead, execd, tid = 0;
	uint64_t pc = (uint64_t)(uintptr_t)&child_main, sleep_pc;
	const struct state_mapping *m;
	int fd = mkstemp(path), status, i;
	char c;

	if (fd < 0 || pipe(cmd_pipe) || pipe(ack_pipe) || pipe(tid_pipe)) {
		printf("not ok - recover: cannot set up (%s)\n", path);
		return 1;
	}
	close(fd);
	/* the child starts threads that allocate: fork it before the
	 * writer starts its compressor thread, which may hold the
	 * allocator's lock (AddressSanitizer's) at the fork */
	live = fork();
	if (live == 0)
		child_main();
	if (read(ack_pipe[0], &tid, sizeof(tid)) != sizeof(tid) || live < 0) {
		printf("not ok - recover: the child did not start\n");
		return 1;
	}
	if (store_writer_open(&w, path)) {
		printf("not ok - recover: cannot open %s\n", path);
		return 1;
	}
	dead = fork();
	if (dead == 0)
		_exit(0);
	waitpid(dead, &status, 0);
	execd = fork();
	if (execd == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(127);
	}
	/* /proc/PID/exe names the new program before the exec has mapped
	 * it (begin_new_exec, then the ELF loader): wait for both */
	for (i = 0; i < 500 && !(exe_is(execd, "sleep") && exec_mapping(execd, "sleep")); i++)
		sleep_ms(10);
	sleep_pc = exec_mapping(execd, "sleep");

	ingest_init(&g, &w, UNWIND_MODE_FP);
	g.live = true;
	g.recover.on = true;
	/* this process as the recorder seeds one: named, mapped */
	ingest_seed_comm(&g, (uint32_t)getpid(), (uint32_t)getpid(), 100, "test_recover");
	ingest_seed_proc(&g, getpid(), 100);

	/* 1. a live process no record named, sampled in its named thread */
	sample(&g, (uint32_t)live, (uint32_t)tid, 1000, pc);
	CHECK(g.recover.recovered_procs == 1 && g.recover.unrecovered_procs == 0,
	      "recover: a live process no record named is read from /proc");
	m = state_mapping(&g.st, state_find(&g.st, (uint32_t)live, pc));
	CHECK(m && m->path[0] == '/', "recover: its mappings are read: the sampled pc has its file");
	sample(&g, (uint32_t)live, (uint32_t)tid, 2000, pc);
	sample(&g, (uint32_t)live, (uint32_t)live, 2100, pc);
	CHECK(g.recover.recovered_procs == 1 && g.recover.recovered_threads == 0,
	      "recover: once named, its next samples read nothing");

	/* 2. a process that has exited: counted, with its samples, once */
	sample(&g, (uint32_t)dead, (uint32_t)dead, 3000, pc);
	sample(&g, (uint32_t)dead, (uint32_t)dead, 3100, pc);
	CHECK(g.recover.unrecovered_procs == 1 && g.recover.unrecovered_samples == 2,
	      "recover: an exited process is counted once, with its 2 samples");

	/* 2b. tasks sampled after they were released (pid or tid -1, the
	 * end of do_exit): a thread's sample keeps its process's name, and
	 * a process's are counted released, even after such a thread's */
	sample(&g, (uint32_t)live, 0xffffffffu, 3200, pc);
	sample(&g, 0xffffffffu, 0xffffffffu, 3300, pc);
	sample(&g, 0xffffffffu, 0xffffffffu, 3400, pc);
	CHECK(g.recover.released_samples == 2 && g.recover.unrecovered_procs == 1 &&
	      g.recover.unrecovered_samples == 2 && g.recover.recovered_threads == 0,
	      "recover: released tasks (-1): 2 samples of a process counted released, a thread's not");

	/* 3. a fork seen, its exec lost: the exec is found from /proc */
	if (sleep_pc && exe_is(execd, "sleep")) {
		fork_rec(&g, (uint32_t)execd, (uint32_t)getpid(), 4000);
		sample(&g, (uint32_t)execd, (uint32_t)execd, 5000, sleep_pc + 16);
		m = state_mapping(&g.st, state_find(&g.st, (uint32_t)execd, sleep_pc + 16));
		CHECK(m && !strcmp(path_base(m->path), "sleep") && g.recover.recovered_procs == 2,
		      "recover: a lost exec: the new program's mappings are read");
	} else {
		printf("not ok - recover: /bin/sleep did not start in the child\n");
		test_failed = 1;
	}

	/* 4. renamed after a loss: the first sample after the LOST record
	 * finds the new name */
	c = 'r';
	if (write(cmd_pipe[1], &c, 1) != 1 || read(ack_pipe[0], &c, 1) != 1)
		test_failed = 1;
	c = 't';
	if (write(cmd_pipe[1], &c, 1) != 1 || read(ack_pipe[0], &c, 1) != 1)
		test_failed = 1;
	sample(&g, (uint32_t)live, (uint32_t)live, 6000, pc);
	CHECK(g.recover.recovered_procs == 2, "recover: a rename without a loss is not looked for");
	lost_rec(&g, 6500);
	sample(&g, (uint32_t)live, (uint32_t)live, 7000, pc);
	sample(&g, (uint32_t)live, (uint32_t)live, 7100, pc);
	sample(&g, (uint32_t)live, (uint32_t)tid, 7200, pc);
	CHECK(g.recover.recovered_threads == 1, "recover: after a LOST record a thread's rename is found");

	/* 5. recovery off (a perf.data file): nothing is read */
	{
		char path2[] = "/tmp/stax-test-recover2.XXXXXX";
		int fd2 = mkstemp(path2);
		if (fd2 >= 0 && !store_writer_open(&w2, path2)) {
			close(fd2);
			ingest_init(&off, &w2, UNWIND_MODE_FP);
			sample(&off, (uint32_t)live, (uint32_t)tid, 1000, pc);
			CHECK(off.recover.recovered_procs == 0 && !state_find(&off.st, (uint32_t)live, pc),
			      "recover: off, as for perf.data: /proc is not read");
			ingest_release(&off);
			store_writer_close(&w2);
		}
		unlink(path2);
	}

	store_flush(&w, CHUNK_DATA);
	store_writer_close(&w);
	ingest_release(&g);
	kill(live, SIGKILL);
	kill(execd, SIGKILL);
	waitpid(live, &status, 0);
	waitpid(execd, &status, 0);

	if (profile_load_err(&p, path, NULL)) {
		printf("not ok - recover: the recording does not load\n");
		unlink(path);
		return 1;
	}
	CHECK(!strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)live, 1000), "rec-child"),
	      "recover: the recovered process is named rec-child at its first sample");
	CHECK(!strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)live, 900), "rec-child"),
	      "recover: a sample before the name was read (another cpu's, taken later) has it too");
	CHECK(!strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)tid, 1000), "rec-thread"),
	      "recover: its thread is named rec-thread");
	CHECK(!strcmp(profile_comm(&p, (uint32_t)dead, (uint32_t)dead, 3000), "[unknown]"),
	      "recover: the exited process stays [unknown]");
	CHECK(!strcmp(profile_comm(&p, 0xffffffffu, 0xffffffffu, 3300), "[exited]") &&
	      !strcmp(profile_comm(&p, (uint32_t)live, 0xffffffffu, 3200), "rec-child"),
	      "recover: a released task is [exited]; a released thread has its process's name");
	CHECK(!strcmp(profile_comm(&p, (uint32_t)execd, (uint32_t)execd, 4500), "test_recover") &&
	      !strcmp(profile_comm(&p, (uint32_t)execd, (uint32_t)execd, 5000), "sleep"),
	      "recover: the lost exec: test_recover after the fork, sleep from the sample on");
	{
		bool exec_flag = false;
		size_t k;
		for (k = 0; k < p.ncomms; k++)
			if (p.comms[k].pid == (uint32_t)execd && (p.comms[k].flags & COMM_F_EXEC))
				exec_flag = true;
		CHECK(exec_flag, "recover: the lost exec is written as a COMM with the exec flag");
	}
	CHECK(!strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)tid, 7100), "rec-thread") &&
	      !strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)tid, 7200), "rec-thread2"),
	      "recover: the thread is rec-thread2 from its first sample after the loss");
	CHECK(!strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)live, 6000), "rec-child") &&
	      !strcmp(profile_comm(&p, (uint32_t)live, (uint32_t)live, 7000), "rec-renamed"),
	      "recover: after a LOST record the rename is found (rec-renamed from the next sample)");
	profile_release(&p);
	unlink(path);
	TEST_DONE();
}
