/* recover.c - names and mappings from /proc when their records were lost
 * (see recover.h). */
#include "ingest/recover.h"
#include "ingest/ingest.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* recover_task.flags */
#define RT_NAMED 1u     /* a COMM, FORK, seed or recovery named it */
#define RT_TRIED 2u     /* /proc was read for it as an unknown process or thread */
#define RT_GONE 4u      /* ... and the process had gone: its samples are unrecovered */
#define RT_COUNTED 8u   /* counted in recovered_procs */
#define RT_EXITED 16u   /* the process's main thread exited at exit_time */
#define RT_THREAD_EXITED 32u /* a thread (not the main one): its EXIT came */

/* Losses closer together than this are one epoch: after a loss each
 * process and thread is checked once, not once per LOST record. */
#define EPOCH_NS 250000000ull

/* User-space addresses on x86-64 (below the canonical hole); anything
 * else in a user chain is not a pc a mapping could hold. */
#define USER_MAX 0x800000000000ull

/* The pid or tid the kernel gives a task sampled after it was released
 * (the end of do_exit): -1. No /proc entry is or was that number. */
#define TASK_RELEASED 0xffffffffu

void recover_init(struct recover *r)
{
	memset(r, 0, sizeof(*r));
	hmap_init(&r->index);
}

void recover_release(struct recover *r)
{
	hmap_release(&r->index);
	free(r->tasks);
	memset(r, 0, sizeof(*r));
}

static struct recover_task *task_find(struct recover *r, uint32_t tid)
{
	uint32_t at;
	return hmap_get(&r->index, tid, &at) ? &r->tasks[at] : NULL;
}

/* The entry of tid (of process pid), made unknown (no flags) when there
 * is none. The pointer is valid until the next call that may add one. */
static struct recover_task *task_get(struct recover *r, uint32_t pid, uint32_t tid)
{
	struct recover_task *t = task_find(r, tid);
	if (t) {
		t->pid = pid;
		return t;
	}
	GROW(r->tasks, r->taskcap, r->ntasks + 1);
	t = &r->tasks[r->ntasks];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid;
	t->checked_epoch = r->epoch;
	hmap_put(&r->index, tid, (uint32_t)r->ntasks++);
	return t;
}

bool recover_has_name(const struct recover *r, uint32_t pid)
{
	uint32_t at;
	return hmap_get(&r->index, pid, &at) && (r->tasks[at].flags & RT_NAMED);
}

void recover_note_comm(struct ingest *g, uint32_t pid, uint32_t tid, const char *name)
{
	struct recover *r = &g->recover;
	struct recover_task *t;
	if (!r->on)
		return;
	t = task_get(r, pid, tid);
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->flags = (t->flags | RT_NAMED) & ~(RT_EXITED | RT_GONE | RT_THREAD_EXITED);
}

/* A new process or thread carries the name a reader gives it without a
 * COMM of its own: its process's, or for a process its parent's. */
void recover_note_fork(struct ingest *g, uint32_t pid, uint32_t ppid, uint32_t tid)
{
	struct recover *r = &g->recover;
	struct recover_task *from, *t;
	if (!r->on)
		return;
	task_get(r, ppid, ppid);
	t = task_get(r, pid, tid); /* may move tasks */
	from = task_find(r, ppid);
	t->flags = from->flags & RT_NAMED;
	memcpy(t->name, from->name, sizeof(t->name));
	t->miss_gen = t->miss_epoch = 0;
	t->checked_epoch = r->epoch;
}

void recover_note_exit(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct recover *r = &g->recover;
	struct recover_task *p;
	if (!r->on)
		return;
	/* A dying task still runs (and is sampled) after its EXIT record:
	 * it keeps its name. A pid used again comes with a FORK; when that
	 * was lost, a pc in none of the old mappings finds the new name. */
	if (tid != pid) {
		if ((p = task_find(r, tid)))
			p->flags |= RT_THREAD_EXITED;
		return;
	}
	if (!(p = task_find(r, pid)))
		return;
	p->flags |= RT_EXITED;
	p->exit_time = time;
}

bool recover_exited(const struct recover *r, uint32_t pid)
{
	uint32_t at;
	return hmap_get(&r->index, pid, &at) && (r->tasks[at].flags & RT_EXITED);
}

void recover_carry(struct ingest *g, const struct hmap *pids, uint64_t t)
{
	struct recover *r = &g->recover;
	size_t i, n = 0;
	uint32_t v;

	hmap_release(&r->index);
	hmap_init(&r->index);
	for (i = 0; i < r->ntasks; i++) {
		struct recover_task *k = &r->tasks[i];
		if (!hmap_get(pids, k->pid, &v) || !v || (k->flags & RT_THREAD_EXITED))
			continue;
		if (k->flags & RT_NAMED) {
			struct rec_comm c;
			memset(&c, 0, sizeof(c));
			c.pid = k->pid;
			c.tid = k->tid;
			c.time = t;
			store_put_comm(g->w, &c, k->name);
		}
		r->tasks[n] = *k;
		hmap_put(&r->index, k->tid, (uint32_t)n);
		n++;
	}
	r->ntasks = n;
	if (r->ntasks < r->taskcap / 4) {
		r->taskcap = MAX(r->ntasks, (size_t)16);
		r->tasks = xrealloc(r->tasks, r->taskcap * sizeof(*r->tasks));
	}
	r->recovered_procs = r->recovered_threads = 0;
	r->unrecovered_procs = r->unrecovered_samples = r->released_samples = 0;
}

void recover_note_lost(struct ingest *g)
{
	struct recover *r = &g->recover;
	uint64_t now;
	if (!r->on)
		return;
	now = now_ns();
	if (r->epoch && now - r->epoch_ns < EPOCH_NS)
		return;
	r->epoch++;
	r->epoch_ns = now;
}

/* Read /proc/PID/comm, or /proc/PID/task/TID/comm when tid is not 0,
 * into name (newline removed). 0 or -errno (-ENOENT: gone). */
static int read_comm(uint32_t pid, uint32_t tid, char *name, size_t n)
{
	char path[64];
	ssize_t len;
	int fd, ret = 0;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = read(fd, name, n - 1);
	if (len < 0) {
		ret = -errno;
		len = 0;
	}
	close(fd);
	name[len] = '\0';
	name[strcspn(name, "\n")] = '\0';
	return ret;
}

/* Whether a mapping of pid's current image is of the file path. */
static bool maps_path(struct state *st, uint32_t pid, const char *path)
{
	uint32_t idx;
	size_t i;
	if (!hmap_get(&st->proc_index, pid, &idx))
		return false;
	for (i = 0; i < st->procs[idx].nranges; i++) {
		const struct state_mapping *m = state_mapping(st, st->procs[idx].ranges[i].id);
		if (m && m->path && !strcmp(m->path, path))
			return true;
	}
	return false;
}

/* Read pid's executable mappings from /proc/PID/maps into the state,
 * those it does not have yet, at time, with their device and inode as a
 * kernel MMAP2 record has them (no build-id: opening every file of every
 * process would cost most when the recorder is already behind). Returns
 * how many were added, or -errno when the file cannot be opened. */
static int read_maps(struct ingest *g, uint32_t pid, uint64_t time)
{
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = (int)ingest_seed_maps(g, pid, time, f, false);
	fclose(f);
	return n;
}

/* Write a COMM of pid/tid at time (flags COMM_F_EXEC: an exec that the
 * records missed, which also starts a new image of the process). */
static void put_comm(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, const char *name,
		     uint32_t flags)
{
	struct rec_comm c;
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.tid = tid;
	c.time = time;
	c.flags = flags;
	if (flags & COMM_F_EXEC)
		state_exec(&g->st, pid);
	store_put_comm(g->w, &c, name);
	recover_note_comm(g, pid, tid, name);
}

static void count_proc(struct recover *r, uint32_t pid)
{
	struct recover_task *p = task_get(r, pid, pid);
	if (!(p->flags & RT_COUNTED)) {
		p->flags |= RT_COUNTED;
		r->recovered_procs++;
	}
}

/* A process no record named: its name, its thread's and its mappings. */
static void recover_unknown(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct recover *r = &g->recover;
	char name[64], tname[64];
	struct recover_task *p;

	task_get(r, pid, pid)->flags |= RT_TRIED;
	if (read_comm(pid, 0, name, sizeof(name)) || read_maps(g, pid, time) < 0) {
		task_get(r, pid, pid)->flags |= RT_GONE;
		r->unrecovered_procs++;
		return;
	}
	put_comm(g, pid, pid, time, name, 0);
	if (tid != pid && !read_comm(pid, tid, tname, sizeof(tname))) {
		put_comm(g, pid, tid, time, tname, 0);
		task_get(r, pid, tid)->flags |= RT_TRIED;
	}
	count_proc(r, pid);
	p = task_get(r, pid, pid);
	p->miss_gen = state_gen(&g->st, pid);
	p->miss_epoch = r->epoch;
	p->checked_epoch = r->epoch;
}

/* A known process whose name in /proc may differ from the records' (a
 * lost exec or rename), or whose pc is in no mapping (lost MMAPs): bring
 * the name and the mappings up to date. check_maps: read the maps even
 * when the name is unchanged. */
static void recover_known(struct ingest *g, uint32_t pid, uint64_t time, bool check_maps)
{
	struct recover *r = &g->recover;
	struct recover_task *p;
	char name[64], exe[4096], link[64];
	bool renamed;
	int added = 0;

	if (read_comm(pid, 0, name, sizeof(name)))
		return; /* gone, but known: its samples have a name */
	p = task_get(r, pid, pid);
	renamed = strncmp(name, p->name, sizeof(p->name) - 1) != 0;
	if (renamed) {
		/* an exec when the executable is none of the mapped files */
		ssize_t n;
		uint32_t flags = 0;
		snprintf(link, sizeof(link), "/proc/%u/exe", pid);
		n = readlink(link, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (!maps_path(&g->st, pid, exe))
				flags = COMM_F_EXEC;
		}
		put_comm(g, pid, pid, time, name, flags);
		check_maps = true;
	}
	if (check_maps)
		added = read_maps(g, pid, time);
	if (renamed || added > 0)
		count_proc(r, pid);
}

/* A thread whose name in /proc may differ from the one the records gave
 * (its COMM lost): write its name when it does. */
static void recover_thread_name(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct recover_task *t;
	char name[64];
	if (read_comm(pid, tid, name, sizeof(name)))
		return;
	t = task_get(&g->recover, pid, tid);
	if (!(t->flags & RT_NAMED) || strncmp(name, t->name, sizeof(t->name) - 1)) {
		put_comm(g, pid, tid, time, name, 0);
		g->recover.recovered_threads++;
	}
}

void recover_sample(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, uint64_t pc)
{
	struct recover *r = &g->recover;
	struct recover_task *p, *t;

	if (!r->on || !pid)
		return;
	if (pid == TASK_RELEASED) {
		/* whichever process it was, no record or /proc can say:
		 * named [exited] (profile_comm()) */
		r->released_samples++;
		return;
	}
	p = task_find(r, pid);
	if (!p || !(p->flags & RT_NAMED)) {
		if (!p || !(p->flags & RT_TRIED))
			recover_unknown(g, pid, tid, time);
		p = task_get(r, pid, pid);
		if (p->flags & RT_GONE) {
			r->unrecovered_samples++;
			return;
		}
	}
	if (tid != pid && tid != TASK_RELEASED) { /* a released thread has its process's name */
		t = task_find(r, tid);
		if (!t || !(t->flags & (RT_NAMED | RT_TRIED))) {
			task_get(r, pid, tid)->flags |= RT_TRIED;
			recover_thread_name(g, pid, tid, time);
		} else if (t->checked_epoch != r->epoch) {
			t->checked_epoch = r->epoch;
			recover_thread_name(g, pid, tid, time);
		}
		p = task_get(r, pid, pid);
	}
	if (pc >= 4096 && pc < USER_MAX && !state_find(&g->st, pid, pc)) {
		uint64_t gen = state_gen(&g->st, pid);
		if (gen != p->miss_gen || r->epoch != p->miss_epoch) {
			recover_known(g, pid, time, true);
			p = task_get(r, pid, pid);
			p->miss_gen = state_gen(&g->st, pid);
			p->miss_epoch = r->epoch;
			p->checked_epoch = r->epoch;
		}
	}
	if (p->checked_epoch != r->epoch && !(p->flags & RT_EXITED)) {
		p->checked_epoch = r->epoch;
		recover_known(g, pid, time, false);
	}
}

/* ---- seeding from /proc ---- */

/* Whether path (from a MMAP record) names the same as maps_path (from
 * /proc/PID/maps, which says "" for anonymous memory and adds
 * " (deleted)" to files removed since). */
static bool same_path(const char *path, const char *maps_path)
{
	size_t n = strlen(maps_path), d = strlen(" (deleted)");
	if (!*maps_path)
		return !*path || !strcmp(path, "//anon");
	if (!strcmp(path, maps_path))
		return true;
	return n > d && !strcmp(maps_path + n - d, " (deleted)") && strlen(path) == n - d &&
	       !strncmp(path, maps_path, n - d);
}

/* Whether pid has the mapping m (read from /proc) already. */
static bool has_mapping(struct ingest *g, uint32_t pid, const struct state_mapping *m)
{
	const struct state_mapping *old = state_mapping(&g->st, state_find(&g->st, pid, m->start));
	return old && old->start == m->start && old->end == m->end && old->pgoff == m->pgoff &&
	       same_path(old->path, m->path);
}

size_t ingest_seed_maps(struct ingest *g, uint32_t pid, uint64_t time, FILE *f, bool build_ids)
{
	char *line = NULL;
	size_t cap = 0, added = 0;
	ssize_t len;

	/* getline, not a fixed buffer: a long path must not be split into a
	 * second "line" that parses as a mapping of its own */
	while ((len = getline(&line, &cap, f)) > 0) {
		struct state_mapping m;
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		memset(&m, 0, sizeof(m));
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
			   &off, &maj, &min, &ino, &pos) < 7 || !strchr(perms, 'x') ||
		    start >= end || pos > len)
			continue;
		line[strcspn(line, "\n")] = 0;
		m.start = start;
		m.end = end;
		m.pgoff = off;
		m.maj = maj;
		m.min = min;
		m.inode = ino;
		m.path = line + pos;
		if (has_mapping(g, pid, &m))
			continue;
		if (build_ids && m.path[0] == '/')
			m.build_id_size = (uint8_t)sym_read_build_id(m.path, m.build_id, 20);
		ingest_seed_mapping(g, pid, time, &m);
		added++;
	}
	free(line);
	return added;
}

void ingest_seed_proc(struct ingest *g, int pid, uint64_t time)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return;
	ingest_seed_maps(g, (uint32_t)pid, time, f, true);
	fclose(f);
}
