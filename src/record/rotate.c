/* rotate.c - a recording that goes on from one file to the next
 * (record_files in recorder.h, used by stax agent).
 *
 * The events, their rings and the drain thread stay as they are; at a
 * time t up to which every record was handled (and none after: drain()
 * sorts by time), the file ends as a recording that stops there (the
 * waits still open written as open, the symbols of its addresses, its
 * closing META, END), and the next begins at t with what the ingester
 * carries over (ingest_new_file: the live processes' names and
 * mappings, numbered from 1). The records after t were never handled:
 * they go into the next file, so nothing falls between two files. The
 * next file is created before the last one ends, so a file that cannot
 * be created (a name taken, a full disk) leaves the recording in the
 * file it has, to be tried again a second later.
 */
#include "record/recorder-private.h"
#include "record/moment.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A new file is tried again this long after one could not be made. */
#define RETRY_NS 1000000000ull
/* ... and for at least this long (or one --rotate): then the recording
 * ends with the current file, which would grow without end (a directory
 * removed, a disk full that retention cannot free) */
#define RETRY_GIVE_UP_NS (60ull * 1000000000ull)

uint64_t rec_wall_of(uint64_t mono_ns)
{
	struct timespec rt, mt;
	uint64_t r, m;
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mt);
	r = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	m = (uint64_t)mt.tv_sec * 1000000000ull + (uint64_t)mt.tv_nsec;
	return m >= mono_ns ? r - (m - mono_ns) : r + (mono_ns - m);
}

const char *rec_output(const struct recorder *r)
{
	return r->o->files ? r->path : r->o->output;
}

/* The resident memory of this process, in bytes (0: unknown). */
static uint64_t rss_bytes(void)
{
	unsigned long long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");
	long page = sysconf(_SC_PAGESIZE);
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return page > 0 ? res * (uint64_t)page : 0;
}

int rec_files_first(struct recorder *r)
{
	const struct record_files *f = r->o->files;
	struct err why;
	int fd, e, tries;

	err_set(&why, 0, "%s", "");
	/* a name taken (a file of this second, of a run just before) is
	 * free a second later: try the next seconds' names a few times */
	for (tries = 0;; tries++) {
		fd = f->open_next(f->arg, rec_wall_of(now_ns()), r->path, sizeof(r->path), &why);
		if ((fd != -EEXIST && fd != -EAGAIN) || tries == 3)
			break;
		usleep(1000000 - (useconds_t)(rec_wall_of(now_ns()) % 1000000000ull / 1000));
	}
	if (fd < 0)
		return err_set(r->err, -1, "%s", why.msg[0] ? why.msg : strerror(-fd));
	e = store_writer_open_fd(&r->w, fd);
	if (e)
		return err_set(r->err, -1, "cannot write %s: %s (check the file system)", r->path, strerror(-e));
	r->file_seq = 1;
	return 0;
}

void rec_files_meta(struct recorder *r)
{
	const struct record_files *f = r->o->files;
	if (!f)
		return;
	store_put_meta(&r->w, "agent", "1");
	store_put_meta_u64(&r->w, "file_seq", r->file_seq);
	store_put_meta_u64(&r->w, "rotate_ns", f->rotate_ns);
	store_put_meta_u64(&r->w, "max_processes", f->max_procs);
	store_put_meta_u64(&r->w, "file_cap_bytes", f->file_cap);
}

/* What this file's start carried over from the last one, and let go. */
static void carry_meta(struct recorder *r)
{
	store_put_meta_u64(&r->w, "carried_processes", r->kept.procs);
	store_put_meta_u64(&r->w, "carried_mappings", r->kept.maps);
	store_put_meta_u64(&r->w, "dropped_processes", r->kept.procs_dropped);
	store_put_meta_u64(&r->w, "evicted_processes", r->kept.procs_evicted);
}

void rec_files_end_meta(struct recorder *r)
{
	struct unwind_stats us;
	if (!r->o->files)
		return;
	store_put_meta(&r->w, "file_end", r->end_why ? r->end_why : "stop");
	store_put_meta_u64(&r->w, "files_ended_at_cap", r->cap_ends);
	if (r->ing.unwinder) {
		unwind_get_stats(r->ing.unwinder, &us);
		store_put_meta_u64(&r->w, "unwind_tables_held", us.held);
		store_put_meta_u64(&r->w, "unwind_tables_released", us.released);
	}
	store_put_meta_u64(&r->w, "state_bytes", ingest_file_bytes(&r->ing));
	{
		uint64_t bytes, hits, misses;
		ingest_symbols_cache(&r->ing, &bytes, &hits, &misses);
		store_put_meta_u64(&r->w, "symbol_cache_bytes", bytes);
		store_put_meta_u64(&r->w, "symbol_cache_hits", hits);
		store_put_meta_u64(&r->w, "symbol_cache_misses", misses);
	}
	store_put_meta_u64(&r->w, "rss_bytes", rss_bytes());
}

/* The stats of the file being ended. */
static void file_stats(const struct recorder *r, struct record_file_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = r->ing.samples;
	st->lost = r->ing.lost + r->ing.lost_samples;
	st->bytes = r->w.bytes;
	st->start_ns = r->start_ns;
	st->end_ns = r->end_ns;
	st->why = r->end_why ? r->end_why : "stop";
}

void rec_files_done(struct recorder *r)
{
	const struct record_files *f = r->o->files;
	struct record_file_stats st;
	if (!f || !f->file_done)
		return;
	file_stats(r, &st);
	f->file_done(f->arg, r->path, &st);
}

/* End the current file at t (every record up to t handled, none after)
 * and go on in the new file fd called name. -1 when the current file
 * could not be written (write_failed() said so; fd is closed). */
static int switch_file(struct recorder *r, uint64_t t, int fd, const char *name)
{
	const struct record_files *f = r->o->files;
	struct record_file_stats st;
	int e;

	ingest_end_file(&r->ing, t);
	r->end_ns = t;
	e = store_flush(&r->w, CHUNK_DATA);
	if (!e) {
		ingest_put_symbols(&r->ing);
		e = store_flush(&r->w, CHUNK_SYMBOLS);
	}
	if (!e)
		e = store_sync(&r->w);
	if (!e) {
		rec_put_end_meta(r, 0);
		e = store_writer_close(&r->w);
	}
	if (e) {
		close(fd);
		rec_write_failed(r);
		return -1;
	}
	file_stats(r, &st);
	if (f->file_done)
		f->file_done(f->arg, r->path, &st);
	/* the next file */
	snprintf(r->path, sizeof(r->path), "%s", name);
	e = store_writer_open_fd(&r->w, fd);
	if (e) {
		/* the last file is whole; there is no current one to end */
		error("cannot write %s: %s (stopped recording; check the file system)", r->path, strerror(-e));
		r->failed = r->no_file = true;
		r->fail_ns = now_ns();
		return -1;
	}
	r->file_seq++;
	r->start_ns = t;
	r->end_ns = 0;
	rec_put_header_meta(r);
	ingest_new_file(&r->ing, &r->w, t, f->max_procs, &r->kept);
	carry_meta(r);
	return 0;
}

void rec_files_rotate(struct recorder *r, uint64_t t, const char *why)
{
	const struct record_files *f = r->o->files;
	uint64_t now = now_ns();
	char name[sizeof(r->path)];
	struct err e;
	int fd;

	err_set(&e, 0, "%s", "");
	fd = f->open_next(f->arg, rec_wall_of(t), name, sizeof(name), &e);
	if (fd < 0) {
		/* -EAGAIN: a file was started in this second already, the
		 * next second's name is free: no news */
		if (!r->retry_ns && fd != -EAGAIN)
			warn("cannot start the next file: %s (going on in %s; trying again every second)",
			     e.msg[0] ? e.msg : strerror(-fd), r->path);
		if (!r->retry_since)
			r->retry_since = now;
		if (fd != -EAGAIN && now - r->retry_since >= MAX(RETRY_GIVE_UP_NS, f->rotate_ns)) {
			error("cannot start a new file for %.0f s: %s (stopping; %s ends here, and a service"
			      " manager may start stax again)", (now - r->retry_since) / 1e9,
			      e.msg[0] ? e.msg : strerror(-fd), r->path);
			r->end_why = "no next file";
			r->files_stop = true;
		}
		r->retry_ns = now + RETRY_NS;
		return;
	}
	r->retry_ns = r->retry_since = 0;
	r->end_why = why;
	if (switch_file(r, t, fd, name))
		return;
	r->end_why = NULL;
	if (!strcmp(why, "cap"))
		r->cap_ends++;
	r->rotate_asked = false;
	r->next_rotate_ns = f->rotate_ns ? t + f->rotate_ns : 0;
	if (r->moment)
		moment_compact(r->moment);
	/* the tables of what ran in the last file only */
	if (r->ing.unwinder) {
		unwind_trim(r->ing.unwinder);
		r->last_trim_ns = now;
	}
	/* what the last file's symbols and state took goes back to the
	 * system, not only to malloc's free lists: the resident memory of a
	 * recorder that runs for weeks is what it holds */
	malloc_trim(0);
}

/* Why the current file should end now (NULL: it should not). */
static const char *due(struct recorder *r, uint64_t now)
{
	const struct record_files *f = r->o->files;
	if (r->retry_ns && now < r->retry_ns)
		return NULL;
	if (r->rotate_asked)
		return "SIGHUP";
	if (r->next_rotate_ns && now >= r->next_rotate_ns)
		return "rotate";
	/* the cap is looked at once a second: it walks the mappings */
	if (f->file_cap && now - r->cap_checked_ns >= 1000000000ull) {
		r->cap_checked_ns = now;
		if (ingest_file_bytes(&r->ing) > f->file_cap)
			return "cap";
	}
	return NULL;
}

void rec_files_step(struct recorder *r)
{
	const struct record_files *f = r->o->files;
	uint64_t now = now_ns();
	const char *why;

	if (!f || r->failed)
		return;
	if (!r->next_rotate_ns && f->rotate_ns)
		r->next_rotate_ns = r->start_ns + f->rotate_ns;
	/* only between batches: every record up to r->safe handled, the
	 * rest (newer) waits in carry for the next file */
	why = due(r, now);
	if (why && r->pos == r->nrefs && r->safe > r->start_ns && r->safe != UINT64_MAX)
		rec_files_rotate(r, r->safe, why);
	if (r->ing.unwinder && f->trim_ns && now - r->last_trim_ns >= f->trim_ns) {
		unwind_trim(r->ing.unwinder);
		r->last_trim_ns = now;
	}
	if (f->tick && now - r->last_tick_ns >= 1000000000ull) {
		r->last_tick_ns = now;
		f->tick(f->arg);
	}
}
