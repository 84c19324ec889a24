/* recover.c - names and mappings from /proc when their records were lost
 * (see recover.h). */
#include "record/recover.h"
#include "record/ingest.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* recover_proc.flags */
#define RP_NAMED 1u     /* a COMM, FORK, seed or recovery named it */
#define RP_TRIED 2u     /* /proc was read for it as an unknown process */
#define RP_GONE 4u      /* ... and it had gone: its samples are unrecovered */
#define RP_COUNTED 8u   /* counted in recovered_procs */
#define RP_EXITED 16u   /* its main thread exited at exit_time */

/* tid flags */
#define RT_NAMED 1u     /* a COMM or FORK of the thread was seen */
#define RT_TRIED 2u     /* its comm was read from /proc */

/* Losses closer together than this are one epoch: after a loss each
 * process is checked once, not once per LOST record. */
#define EPOCH_NS 100000000ull

/* User-space addresses on x86-64 (below the canonical hole); anything
 * else in a user chain is not a pc a mapping could hold. */
#define USER_MAX 0x800000000000ull

void recover_init(struct recover *r)
{
	memset(r, 0, sizeof(*r));
	hmap_init(&r->proc_index);
	hmap_init(&r->tids);
}

void recover_release(struct recover *r)
{
	hmap_release(&r->proc_index);
	hmap_release(&r->tids);
	free(r->procs);
	memset(r, 0, sizeof(*r));
}

static struct recover_proc *proc_find(struct recover *r, uint32_t pid)
{
	uint32_t at;
	return hmap_get(&r->proc_index, pid, &at) ? &r->procs[at] : NULL;
}

/* The entry of pid, made (unknown: no flags) when there is none. The
 * pointer is valid until the next call that may add one. */
static struct recover_proc *proc_get(struct recover *r, uint32_t pid)
{
	struct recover_proc *p = proc_find(r, pid);
	if (p)
		return p;
	GROW(r->procs, r->proccap, r->nprocs + 1);
	p = &r->procs[r->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->checked_epoch = r->epoch;
	hmap_put(&r->proc_index, pid, (uint32_t)r->nprocs++);
	return p;
}

bool recover_has_name(const struct recover *r, uint32_t pid)
{
	uint32_t at;
	return hmap_get(&r->proc_index, pid, &at) && (r->procs[at].flags & RP_NAMED);
}

static uint32_t tid_flags(const struct recover *r, uint32_t tid)
{
	uint32_t v;
	return hmap_get(&r->tids, tid, &v) ? v : 0;
}

void recover_note_comm(struct ingest *g, uint32_t pid, uint32_t tid, const char *name)
{
	struct recover *r = &g->recover;
	if (!r->on)
		return;
	hmap_put(&r->tids, tid, tid_flags(r, tid) | RT_NAMED);
	if (tid == pid) {
		struct recover_proc *p = proc_get(r, pid);
		snprintf(p->name, sizeof(p->name), "%s", name);
		p->flags = (p->flags | RP_NAMED) & ~(RP_EXITED | RP_GONE);
	}
}

void recover_note_fork(struct ingest *g, uint32_t pid, uint32_t ppid, uint32_t tid)
{
	struct recover *r = &g->recover;
	struct recover_proc *parent, *child;
	if (!r->on)
		return;
	/* a thread is named after its process until it names itself */
	hmap_put(&r->tids, tid, RT_NAMED);
	if (pid == ppid)
		return;
	proc_get(r, ppid);
	child = proc_get(r, pid); /* may move procs */
	parent = proc_find(r, ppid);
	child->flags = parent->flags & RP_NAMED;

	memcpy(child->name, parent->name, sizeof(child->name));
	child->miss_gen = child->miss_epoch = 0;
	child->checked_epoch = r->epoch;
}

void recover_note_exit(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct recover *r = &g->recover;
	struct recover_proc *p;
	if (!r->on)
		return;
	/* A dying task still runs (and is sampled) after its EXIT record:
	 * it keeps its name. A pid used again comes with a FORK; when that
	 * was lost, a pc in none of the old mappings finds the new name. */
	(void)tid;
	if (tid != pid || !(p = proc_find(r, pid)))
		return;
	p->flags |= RP_EXITED;
	p->exit_time = time;
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
 * those it does not have yet, at time. Returns how many were added, or
 * -errno when the file cannot be opened. */
static int read_maps(struct ingest *g, uint32_t pid, uint64_t time)
{
	char path[64];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = (int)ingest_seed_maps(g, pid, time, f, true);
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
	struct recover_proc *p = proc_get(r, pid);
	if (!(p->flags & RP_COUNTED)) {
		p->flags |= RP_COUNTED;
		r->recovered_procs++;
	}
}

/* A process no record named: its name, its thread's and its mappings. */
static void recover_unknown(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct recover *r = &g->recover;
	char name[64], tname[64];
	struct recover_proc *p;
	int maps;

	proc_get(r, pid)->flags |= RP_TRIED;
	if (read_comm(pid, 0, name, sizeof(name)) ||
	    (maps = read_maps(g, pid, time)) < 0) {
		p = proc_get(r, pid);
		p->flags |= RP_GONE;
		r->unrecovered_procs++;
		return;
	}
	put_comm(g, pid, pid, time, name, 0);
	if (tid != pid && !read_comm(pid, tid, tname, sizeof(tname))) {
		put_comm(g, pid, tid, time, tname, 0);
		hmap_put(&r->tids, tid, RT_NAMED | RT_TRIED);
	}
	count_proc(r, pid);
	p = proc_get(r, pid);
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
	struct recover_proc *p;
	char name[64], exe[4096], link[64];
	bool renamed;
	int added = 0;

	if (read_comm(pid, 0, name, sizeof(name)))
		return; /* gone, but known: its samples have a name */
	p = proc_get(r, pid);
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

void recover_sample(struct ingest *g, uint32_t pid, uint32_t tid, uint64_t time, uint64_t pc)
{
	struct recover *r = &g->recover;
	struct recover_proc *p;
	uint32_t tf;

	if (!r->on || !pid)
		return;
	p = proc_find(r, pid);
	if (!p || !(p->flags & RP_NAMED)) {
		if (!p || !(p->flags & RP_TRIED))
			recover_unknown(g, pid, tid, time);
		p = proc_get(r, pid);
		if (p->flags & RP_GONE) {
			r->unrecovered_samples++;
			return;
		}
	}
	if (tid != pid && !((tf = tid_flags(r, tid)) & (RT_NAMED | RT_TRIED))) {
		char tname[64];
		hmap_put(&r->tids, tid, tf | RT_TRIED);
		if (!read_comm(pid, tid, tname, sizeof(tname))) {
			put_comm(g, pid, tid, time, tname, 0);
			r->recovered_threads++;
		}
		p = proc_get(r, pid);
	}
	if (pc >= 4096 && pc < USER_MAX && !state_find(&g->st, pid, pc)) {
		uint64_t gen = state_gen(&g->st, pid);
		if (gen != p->miss_gen || r->epoch != p->miss_epoch) {
			recover_known(g, pid, time, true);
			p = proc_get(r, pid);
			p->miss_gen = state_gen(&g->st, pid);
			p->miss_epoch = r->epoch;
			p->checked_epoch = r->epoch;
		}
	}
	if (p->checked_epoch != r->epoch && !(p->flags & RP_EXITED)) {
		p->checked_epoch = r->epoch;
		recover_known(g, pid, time, false);
	}
}
