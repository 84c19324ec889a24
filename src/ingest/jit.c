/* jit.c - JIT code in the sample path (state: struct ingest_jit).
 *
 * Code without CFI in anonymous memory is recognised by its bytes (read
 * from the live process, mappings up to 1 MiB copied once); a jitdump's
 * UNWINDING_INFO records give tables for the code it loads; the JIT
 * symbol files (/tmp/perf-PID.map, jitdumps) are read while they grow, so
 * a file deleted before the recording stops still names its code.
 */
#include "ingest/ingest-private.h"
#include "symbol/symbol.h"
#include "unwind/jitcfi.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define JIT_POLL_NS 50000000ull   /* sample time between reads of JIT files */
/* A JIT candidate (a process with anonymous executable memory) whose
 * file is not there is asked less and less often, up to this: most such
 * processes never write one (sanitizer runtimes, libffi trampolines),
 * and each ask is a stat of /proc/PID and an open. A runtime that writes
 * its map late and deletes it before it exits has it read if it lives
 * this long after writing it. */
#define JIT_POLL_MAX_NS 400000000ull

/* Mappings up to this size are copied whole on first use and kept: JIT
 * runtimes fill a code arena before making it executable (CPython's
 * trampolines), so the copy stays right, even after the process exits. */
#define CODE_COPY_MAX (1u << 20)

static bool read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return pid && process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Read code of the current sample's process (unwind_read_code_fn). Only
 * anonymous memory is read: file-backed code has CFI or symbols. */
bool ingest_jit_read_code(void *arg, uint64_t addr, uint8_t *buf, size_t len)
{
	struct ingest *g = arg;
	uint32_t id = state_find(&g->st, g->cur_pid, addr), at;
	const struct state_mapping *m = state_mapping(&g->st, id);

	if (m && m->path[0] == '/')
		return false;
	if (!m || m->end - m->start > CODE_COPY_MAX)
		return g->live && read_mem(g->cur_pid, addr, buf, len);
	if (addr < m->start || len > m->end - addr)
		return false;
	if (!hmap_get(&g->jit.code_index, id, &at)) {
		struct ingest_code cc = { NULL, 0 };
		if (!g->live)
			return false;
		cc.bytes = xmalloc(m->end - m->start);
		if (read_mem(g->cur_pid, m->start, cc.bytes, m->end - m->start)) {
			cc.len = m->end - m->start;
		} else {
			free(cc.bytes);
			cc.bytes = NULL;
		}
		GROW(g->jit.code, g->jit.codecap, g->jit.ncode + 1);
		g->jit.code[g->jit.ncode++] = cc;
		at = (uint32_t)g->jit.ncode;
		hmap_put(&g->jit.code_index, id, at);
	}
	if (!g->jit.code[at - 1].bytes)
		return false;
	memcpy(buf, g->jit.code[at - 1].bytes + (addr - m->start), len);
	return true;
}

/* Unwind tables from the jitdump of the current sample's process
 * (unwind_jit_table_fn). A miss reads the file again (from where the last
 * read stopped) when it grew, at most every 10 ms: the program appends
 * its code loads while it runs. */
const struct utable *ingest_jit_table(void *arg, uint64_t pc)
{
	struct ingest *g = arg;
	struct ingest_jitdump *d = NULL;
	const struct utable *t;
	uint64_t now;
	size_t i, size;
	void *data;
	struct err why;
	int ret;

	for (i = 0; i < g->jit.ndumps && !d; i++)
		if (g->jit.dumps[i].pid == g->cur_pid)
			d = &g->jit.dumps[i];
	if (!d)
		return NULL;
	if ((t = jit_cfi_find(d->cfi, pc)))
		return t;
	now = now_ns();
	if (d->checked && now - d->checked < 10000000ull)
		return NULL;
	d->checked = now;
	ret = sym_jit_read_file(d->path, &data, &size, &why);
	if (ret < 0) {
		if (ret != -ENOENT && !d->warned)
			warn("not unwinding with %s: %s", d->path, ret == -EPERM ? why.msg : strerror(-ret));
		d->warned = true;
		return NULL;
	}
	if (size != d->size && jit_cfi_add(d->cfi, data, size, &d->off, &why) < 0 &&
	    !d->warned) {
		warn("not unwinding with %s: %s", d->path, why.msg);
		d->warned = true;
	}
	d->size = size;
	free(data);
	return jit_cfi_find(d->cfi, pc);
}

/* ---- JIT symbol files, read while they exist ---- */

static void jitfile_note(struct ingest *g, uint32_t pid, bool dump, const char *path)
{
	char buf[64];
	struct ingest_jitfile *jf;

	if (!dump) {
		snprintf(buf, sizeof(buf), "/tmp/perf-%u.map", pid);
		path = buf;
	}
	if ((jf = (struct ingest_jitfile *)ingest_jitfile(g, pid, dump, path))) {
		jf->done = false; /* the pid came back: another process */
		jf->next = jf->gap = 0;
		jf->uid = -1;
		return;
	}
	GROW(g->jit.files, g->jit.filecap, g->jit.nfiles + 1);
	jf = &g->jit.files[g->jit.nfiles++];
	memset(jf, 0, sizeof(*jf));
	jf->pid = pid;
	jf->dump = dump;
	jf->uid = -1;
	jf->path = xstrdup(path);
}

const struct ingest_jitfile *ingest_jitfile(const struct ingest *g, uint32_t pid, bool dump,
					   const char *path)
{
	for (size_t i = 0; i < g->jit.nfiles; i++) {
		const struct ingest_jitfile *jf = &g->jit.files[i];
		if (jf->pid == pid && jf->dump == dump && (!dump || !strcmp(jf->path, path)))
			return jf;
	}
	return NULL;
}

/* Read what jf's file gained. The file is trusted as at stop (a regular
 * file, not writable by others, owned by root, by us, or by the user of
 * the process it describes); one that fails is left for the reading at
 * stop to warn about. JIT files only grow: a shorter one is read anew. */
static void jitfile_poll(struct ingest_jitfile *jf, uint64_t now)
{
	struct stat st;
	char proc[32];
	size_t want;
	bool alive;
	int fd;

	if (jf->done || now < jf->next)
		return;
	/* read once more after the process exited (it may have written
	 * its last lines at exit), then no more: a system-wide recording
	 * sees thousands of processes come and go */
	snprintf(proc, sizeof(proc), "/proc/%u", jf->pid);
	alive = stat(proc, &st) == 0;
	if (alive && jf->uid < 0)
		jf->uid = (long)st.st_uid;
	jf->done = !alive;
	fd = open(jf->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		/* not there (yet, or any more): keep what was read, ask later */
		jf->gap = jf->gap ? MIN(2 * jf->gap, JIT_POLL_MAX_NS) : JIT_POLL_NS;
		jf->next = now + jf->gap;
		return;
	}
	jf->gap = 0;
	if (fstat(fd, &st) || sym_jit_check_file(jf->path, &st, jf->uid, NULL) < 0 ||
	    (size_t)st.st_size == jf->len)
		goto out;
	if ((size_t)st.st_size < jf->len)
		jf->len = 0;
	want = (size_t)st.st_size;
	if (want > jf->cap) {
		jf->data = xrealloc(jf->data, want);
		jf->cap = want;
	}
	while (jf->len < want) {
		ssize_t n = pread(fd, jf->data + jf->len, want - jf->len, (off_t)jf->len);
		if (n <= 0)
			break;
		jf->len += (size_t)n;
	}
out:
	close(fd);
}

/* The JIT files due at sample time now (UINT64_MAX: all of them). */
static void poll_jit(struct ingest *g, uint64_t now)
{
	if (!g->live)
		return;
	for (size_t i = 0; i < g->jit.nfiles; i++)
		jitfile_poll(&g->jit.files[i], now);
}

void ingest_poll_jit(struct ingest *g)
{
	poll_jit(g, UINT64_MAX);
}

void ingest_jit_init(struct ingest_jit *j)
{
	hmap_init(&j->code_index);
}

void ingest_jit_release(struct ingest_jit *j)
{
	size_t i;
	for (i = 0; i < j->ncode; i++)
		free(j->code[i].bytes);
	free(j->code);
	hmap_release(&j->code_index);
	for (i = 0; i < j->ndumps; i++) {
		free(j->dumps[i].path);
		jit_cfi_free(j->dumps[i].cfi);
	}
	free(j->dumps);
	for (i = 0; i < j->nfiles; i++) {
		free(j->files[i].path);
		free(j->files[i].data);
	}
	free(j->files);
}

void ingest_jit_mapped(struct ingest *g, uint32_t pid, const struct state_mapping *m)
{
	/* JIT code: read its symbol files while they exist */
	if (g->live && sym_path_is_anon(m->path))
		jitfile_note(g, pid, false, NULL);
	else if (g->live && sym_path_is_jitdump(m->path))
		jitfile_note(g, pid, true, m->path);
}

void ingest_jit_dump_mapped(struct ingest_jit *j, uint32_t pid, const char *path)
{
	size_t i = 0;
	while (i < j->ndumps && j->dumps[i].pid != pid)
		i++;
	if (i < j->ndumps)
		return;
	GROW(j->dumps, j->dumpcap, j->ndumps + 1);
	memset(&j->dumps[i], 0, sizeof(j->dumps[i]));
	j->dumps[i].pid = pid;
	j->dumps[i].path = xstrdup(path);
	j->dumps[i].cfi = jit_cfi_new();
	j->ndumps++;
}

void ingest_jit_carry(struct ingest_jit *j, const struct ingest_keep *k)
{
	struct hmap old = j->code_index;
	size_t i, n;

	j->samples = j->frames = 0;
	/* code copies: those of the mappings kept, under their new ids */
	hmap_init(&j->code_index);
	for (i = 0; i < old.cap; i++) {
		uint32_t id = (uint32_t)old.slots[i].key, at = old.slots[i].val;
		if (!old.slots[i].used)
			continue;
		if (id < k->nremap && k->remap[id]) {
			hmap_put(&j->code_index, k->remap[id], at);
		} else {
			free(j->code[at - 1].bytes);
			j->code[at - 1].bytes = NULL;
			j->code[at - 1].len = 0;
		}
	}
	hmap_release(&old);
	/* compact the copies (index + 1 in the map) */
	{
		uint32_t *to = xcalloc(j->ncode + 1, sizeof(*to));
		size_t m = 0;
		for (i = 0; i < j->code_index.cap; i++)
			if (j->code_index.slots[i].used)
				to[j->code_index.slots[i].val] = 1;
		for (i = 1; i <= j->ncode; i++)
			if (to[i]) {
				j->code[m] = j->code[i - 1];
				to[i] = (uint32_t)++m;
			}
		for (i = 0; i < j->code_index.cap; i++)
			if (j->code_index.slots[i].used)
				j->code_index.slots[i].val = to[j->code_index.slots[i].val];
		j->ncode = m;
		free(to);
	}
	for (i = n = 0; i < j->ndumps; i++) {
		if (!ingest_keeps(k, j->dumps[i].pid)) {
			free(j->dumps[i].path);
			jit_cfi_free(j->dumps[i].cfi);
			continue;
		}
		j->dumps[n++] = j->dumps[i];
	}
	j->ndumps = n;
	for (i = n = 0; i < j->nfiles; i++) {
		if (!ingest_keeps(k, j->files[i].pid)) {
			free(j->files[i].path);
			free(j->files[i].data);
			continue;
		}
		j->files[n++] = j->files[i];
	}
	j->nfiles = n;
}

void ingest_jit_sampled(struct ingest *g, uint64_t time)
{
	if (g->jit.nfiles && g->live && time - g->jit.polled >= JIT_POLL_NS) {
		g->jit.polled = time;
		poll_jit(g, time);
	}
}
