/* jit.c - symbols of JIT-compiled code: /tmp/perf-PID.map and jitdump.
 *
 * A perf map is text, one function per line: "START SIZE NAME" with START
 * and SIZE in hex (with or without 0x) and NAME the rest of the line.
 * A jitdump file (jit-PID.dump) is binary, read by lib/jitdump.h; only
 * its code loads (name, address, size) and moves are used here. Both are
 * written by the profiled program, so both are untrusted input: every
 * read is checked against the end of the buffer.
 *
 * The files are only read when they belong to the user reading them or
 * to root and others cannot write them (perf's rule): otherwise another
 * user could make a profile lie about names.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "lib/cursor.h"
#include "lib/hash.h"
#include "lib/jitdump.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A JIT symbol table for one process. */
struct sym_jit {
	struct sym_table table;
	struct sym_arena strings;
	bool finished;
	char *source;  /* "perf-PID.map", "jit-PID.dump" or both */
};

struct sym_jit *sym_jit_new(void)
{
	return xcalloc(1, sizeof(struct sym_jit));
}

void sym_jit_free(struct sym_jit *j)
{
	if (!j)
		return;
	sym_table_release(&j->table);
	sym_arena_release(&j->strings);
	free(j->source);
	free(j);
}

static void jit_add(struct sym_jit *j, uint64_t start, uint64_t size, const char *name, size_t n)
{
	struct sym_table *t = &j->table;
	if (!size || start + size < start || j->finished)
		return;
	GROW(t->cand, t->cap_cand, t->ncand + 1);
	t->cand[t->ncand++] = (struct sym_cand){
		.start = start, .size = size, .name = sym_arena_strndup(&j->strings, name, n),
		.bind_rank = 0, .has_size = 1,
	};
}

static void note_source(struct sym_jit *j, const char *what)
{
	char *s = j->source ? xasprintf("%s, %s", j->source, what) : xstrdup(what);
	free(j->source);
	j->source = s;
}

static bool hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int digits = 0;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, digits++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (digits >= 16)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*p = s;
	*v = x;
	return digits > 0 && s < end && (*s == ' ' || *s == '\t');
}

int sym_jit_add_perfmap(struct sym_jit *j, const char *data, size_t size, const char *what,
			struct err *err)
{
	const char *p = data, *end = data + size;
	size_t lineno = 0, bad = 0, added = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p, *name;
		uint64_t start, len;
		if (!eol)
			eol = end;
		lineno++;
		if (hex_field(&q, eol, &start) && hex_field(&q, eol, &len)) {
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			name = q;
			q = eol;
			while (q > name && (q[-1] == '\r' || q[-1] == ' '))
				q--;
			if (q > name) {
				jit_add(j, start, len, name, (size_t)(q - name));
				added++;
			} else {
				bad++;
			}
		} else if (eol > p) {
			if (!bad && err)
				err_set(err, -1, "%s: line %zu is not \"START SIZE NAME\"", what, lineno);
			bad++;
		}
		p = eol + (eol < end);
	}
	note_source(j, what);
	return bad && !added ? -EINVAL : (int)MIN(added, (size_t)0x7fffffff);
}

int sym_jit_add_jitdump(struct sym_jit *j, const void *data, size_t size, const char *what,
			struct err *err)
{
	struct err why;
	int hsize = jitdump_header(data, size, &why);
	size_t added = 0, pos;
	struct hmap names; /* code_index -> candidate index, for moves */
	struct jitdump_rec r;
	uint32_t idx;

	if (hsize < 0) {
		err_set(err, -1, "%s: %s", what, why.msg);
		return -EINVAL;
	}
	pos = (size_t)hsize;
	hmap_init(&names);
	/* a record of impossible size ends the reading: what came before it
	 * is kept */
	while (jitdump_next(data, size, &pos, &r, &why) > 0) {
		struct jitdump_load l;
		struct jitdump_move m;
		const char *name;

		if (r.id == JITDUMP_CODE_LOAD && jitdump_load(&r, &l)) {
			hmap_put(&names, l.code_index, (uint32_t)j->table.ncand);
			jit_add(j, l.vma ? l.vma : l.code_addr, l.code_size, l.name, l.name_len);
			added++;
		} else if (r.id == JITDUMP_CODE_MOVE && jitdump_move(&r, &m) &&
			   hmap_get(&names, m.code_index, &idx) && idx < j->table.ncand) {
			name = j->table.cand[idx].name;
			hmap_put(&names, m.code_index, (uint32_t)j->table.ncand);
			jit_add(j, m.new_code_addr, m.code_size, name, strlen(name));
		}
	}
	hmap_release(&names);
	note_source(j, what);
	return (int)MIN(added, (size_t)0x7fffffff);
}

const char *sym_jit_find(struct sym_jit *j, uint64_t addr, uint64_t *offset)
{
	struct sym_entry *e;
	if (!j->finished) {
		sym_table_finish(&j->table);
		j->finished = true;
	}
	e = sym_table_find(&j->table, addr);
	if (!e)
		return NULL;
	*offset = addr - e->start;
	return e->name;
}

const char *sym_jit_source(const struct sym_jit *j)
{
	return j->source ? j->source : "";
}

int sym_jit_check_file(const char *path, const struct stat *st, long also_uid, struct err *err)
{
	if (!S_ISREG(st->st_mode)) {
		err_set(err, -1, "ignoring %s: not a regular file", path);
		return -EINVAL;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid() &&
	    (also_uid < 0 || st->st_uid != (uid_t)also_uid)) {
		err_set(err, -1, "ignoring %s: owned by uid %u, not by you, root or the process's"
			 " user (perf's rule)", path, (unsigned)st->st_uid);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		err_set(err, -1, "ignoring %s: writable by other users (chmod go-w %s)", path, path);
		return -EPERM;
	}
	if (st->st_size > SYM_JIT_MAX_FILE) {
		err_set(err, -1, "ignoring %s: larger than %u MiB", path, SYM_JIT_MAX_FILE >> 20);
		return -EFBIG;
	}
	return 0;
}

int sym_jit_read_file(const char *path, void **data, size_t *size, struct err *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), ret = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	ssize_t n;

	*data = NULL;
	*size = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		err_set(err, -1, "ignoring %s: %s", path, strerror(errno));
		goto out;
	}
	if ((ret = sym_jit_check_file(path, &st, -1, err)) < 0)
		goto out;
	buf = xmalloc((size_t)st.st_size + 1);
	while (len < (size_t)st.st_size && (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	*data = buf;
	*size = len;
out:
	close(fd);
	return ret;
}
