/* module.c - the module cache, opening a binary and its debug files,
 * and the parts built from them (module.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "module/module.h"

#include <elf.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "lib/debugfile.h"
#include "lib/elffile.h"
#include "lib/hash.h"
#include "lib/util.h"

#define BUCKETS 256   /* chains of the cache (a recording maps ~10-1000 files) */

/* What tells modules apart: 'b' a build-id, 'i' a file's identity
 * (st_dev, st_ino, size, mtime in ns), 'p' a path (no file to stat). */
struct module_key {
	uint8_t kind;
	size_t len;
	uint8_t *bytes;
	uint64_t hash;
};

struct part {
	pthread_mutex_t lock;
	void *obj;
	module_free_fn free_fn;
	unsigned holders;
};

struct module {
	struct module *next;        /* in its bucket */
	struct module_key key;
	unsigned refs;              /* under cache_lock */
	char *path;
	bool is_file;

	/* under lock (recursive: the debug search opens the binary) */
	pthread_mutex_t lock;
	uint8_t bid[MODULE_MAX_BUILD_ID];
	size_t bid_size;
	bool bid_given, bid_known;
	struct { bool tried; char *path; } debug[MODULE_NDEBUG];

	struct part parts[MODULE_NPARTS];
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct module *buckets[BUCKETS];
static size_t nmodules;

/* ---- the vDSO: the same image in every process on this kernel ---- */

static size_t vdso_size(const uint8_t *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	/* The image runs to the end of its section headers. */
	size_t size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(img + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD)
			size = MAX(size, ph[i].p_offset + ph[i].p_filesz);
	return size;
}

static Elf *vdso_open(void)
{
	const uint8_t *img = (const uint8_t *)getauxval(AT_SYSINFO_EHDR);
	size_t size = img ? vdso_size(img) : 0;
	Elf *e;

	if (!size)
		return NULL;
	elf_file_init();
	e = elf_memory((char *)img, size);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		e = NULL;
	}
	return e;
}

/* ---- the cache ---- */

static void key_of(const char *path, const uint8_t *bid, size_t bid_size, struct module_key *k)
{
	struct stat st;
	uint8_t vbid[MODULE_MAX_BUILD_ID];

	if (!strcmp(path, MODULE_VDSO) && !bid_size) {
		Elf *e = vdso_open();
		if (e) {
			bid_size = elf_file_build_id(e, vbid, sizeof(vbid));
			bid = vbid;
			elf_end(e);
		}
	}
	if (bid_size) {
		k->kind = 'b';
		k->len = bid_size;
		k->bytes = xmalloc(bid_size);
		memcpy(k->bytes, bid, bid_size);
	} else if (path[0] != '[' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		uint64_t id[4] = { (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
				   (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
				   (uint64_t)st.st_mtim.tv_nsec };
		k->kind = 'i';
		k->len = sizeof(id);
		k->bytes = xmalloc(sizeof(id));
		memcpy(k->bytes, id, sizeof(id));
	} else {
		k->kind = 'p';
		k->len = strlen(path);
		k->bytes = (uint8_t *)xstrdup(path);
	}
	k->hash = hash_mix(hash_bytes(k->bytes, k->len), k->kind);
}

static bool key_equal(const struct module_key *a, const struct module_key *b)
{
	return a->kind == b->kind && a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

static struct module *module_new(const char *path, const uint8_t *bid, size_t bid_size,
				 struct module_key *k)
{
	struct module *m = xcalloc(1, sizeof(*m));
	pthread_mutexattr_t ma;

	m->key = *k;
	m->refs = 1;
	m->path = xstrdup(path);
	m->is_file = strcmp(path, MODULE_VDSO) != 0;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&m->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	for (int i = 0; i < MODULE_NPARTS; i++)
		pthread_mutex_init(&m->parts[i].lock, NULL);
	if (bid_size) {
		memcpy(m->bid, bid, bid_size);
		m->bid_size = bid_size;
		m->bid_given = m->bid_known = true;
	} else if (k->kind == 'b') {
		/* the vDSO's, read for the key */
		memcpy(m->bid, k->bytes, k->len);
		m->bid_size = k->len;
		m->bid_known = true;
	}
	return m;
}

struct module *module_get(const char *path, const uint8_t *bid, size_t bid_size)
{
	struct module_key k;
	struct module *m;

	if (!path)
		path = "";
	if (!bid || bid_size > MODULE_MAX_BUILD_ID)
		bid_size = 0;
	key_of(path, bid, bid_size, &k);
	pthread_mutex_lock(&cache_lock);
	for (m = buckets[k.hash % BUCKETS]; m; m = m->next)
		if (m->key.hash == k.hash && key_equal(&m->key, &k))
			break;
	if (m) {
		m->refs++;
		free(k.bytes);
	} else {
		m = module_new(path, bid, bid_size, &k);
		m->next = buckets[k.hash % BUCKETS];
		buckets[k.hash % BUCKETS] = m;
		nmodules++;
	}
	pthread_mutex_unlock(&cache_lock);
	return m;
}

struct module *module_ref(struct module *m)
{
	pthread_mutex_lock(&cache_lock);
	m->refs++;
	pthread_mutex_unlock(&cache_lock);
	return m;
}

void module_put(struct module *m)
{
	struct module **pp;
	bool last;

	if (!m)
		return;
	pthread_mutex_lock(&cache_lock);
	last = --m->refs == 0;
	if (last) {
		for (pp = &buckets[m->key.hash % BUCKETS]; *pp != m; pp = &(*pp)->next)
			;
		*pp = m->next;
		nmodules--;
	}
	pthread_mutex_unlock(&cache_lock);
	if (!last)
		return;
	for (int i = 0; i < MODULE_NPARTS; i++) {
		struct part *p = &m->parts[i];
		if (p->obj) {
			/* a holder that did not put it: still freed with its module */
			p->free_fn(p->obj);
		}
		pthread_mutex_destroy(&p->lock);
	}
	for (int i = 0; i < MODULE_NDEBUG; i++)
		free(m->debug[i].path);
	pthread_mutex_destroy(&m->lock);
	free(m->key.bytes);
	free(m->path);
	free(m);
}

size_t module_count(void)
{
	pthread_mutex_lock(&cache_lock);
	size_t n = nmodules;
	pthread_mutex_unlock(&cache_lock);
	return n;
}

/* ---- facts ---- */

const char *module_path(const struct module *m)
{
	return m->path;
}

bool module_is_file(const struct module *m)
{
	return m->is_file;
}

size_t module_build_id(struct module *m, const uint8_t **bid)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	if (!m->bid_known) {
		int fd;
		Elf *e = module_open(m, &fd); /* reads the file's */
		module_close(e, fd);
		m->bid_known = true;
	}
	n = m->bid_size;
	pthread_mutex_unlock(&m->lock);
	*bid = m->bid;
	return n;
}

/* ---- opening ---- */

void module_close(Elf *e, int fd)
{
	elf_file_close(e, fd);
}

/* Does e belong to m: the same build-id, when both have one? Records
 * the file's build-id as the module's when none was given. */
static bool same_build(struct module *m, Elf *e)
{
	uint8_t got[MODULE_MAX_BUILD_ID];
	size_t n = elf_file_build_id(e, got, sizeof(got));
	bool ok = true;

	pthread_mutex_lock(&m->lock);
	if (m->bid_known && m->bid_size)
		ok = !n || (n == m->bid_size && !memcmp(got, m->bid, n));
	else if (!m->bid_known) {
		memcpy(m->bid, got, n);
		m->bid_size = n;
		m->bid_known = true;
	}
	pthread_mutex_unlock(&m->lock);
	return ok;
}

/* The copy perf's build-id cache keeps of build bid, as perf record and
 * perf archive leave it ($PERF_BUILDID_DIR, else ~/.debug:
 * .build-id/XX/REST/elf, or vdso for a vDSO), or NULL: how a perf.data
 * file recorded on another machine finds its binaries here. */
static Elf *buildid_cache_open(const uint8_t *bid, size_t n, bool vdso, int *fd)
{
	const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char hex[2 * MODULE_MAX_BUILD_ID + 1];
	char *path;
	Elf *e;

	if (!n || n > MODULE_MAX_BUILD_ID)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	if (dir && *dir)
		path = xasprintf("%s/.build-id/%.2s/%s/%s", dir, hex, hex + 2, vdso ? "vdso" : "elf");
	else if (home && *home)
		path = xasprintf("%s/.debug/.build-id/%.2s/%s/%s", home, hex, hex + 2,
				 vdso ? "vdso" : "elf");
	else
		return NULL;
	e = elf_file_open(path, fd);
	free(path);
	return e;
}

Elf *module_open(struct module *m, int *fd)
{
	Elf *e;

	*fd = -1;
	e = m->is_file ? elf_file_open(m->path, fd) : vdso_open();
	if (e && !same_build(m, e)) {
		elf_file_close(e, *fd);
		*fd = -1;
		e = NULL;
	}
	/* not here (a recording of another machine): perf's cache of it */
	if (!e && m->bid_given && (e = buildid_cache_open(m->bid, m->bid_size,
							  !strcmp(m->path, MODULE_VDSO), fd)) &&
	    !same_build(m, e)) {
		elf_file_close(e, *fd);
		*fd = -1;
		e = NULL;
	}
	return e;
}

/* Look for the debug file of kind k: open, with its path in *found. */
static Elf *debug_search(struct module *m, enum module_debug k, int *fd, char **found)
{
	const uint8_t *bid;
	size_t n = module_build_id(m, &bid);
	Elf *d = NULL, *e;
	int efd;

	*fd = -1;
	switch (k) {
	case MODULE_DEBUG_BUILD_ID:
		d = debug_file_by_build_id(bid, n, fd, found);
		break;
	case MODULE_DEBUG_LINK:
		if (m->is_file && (e = module_open(m, &efd))) {
			d = debug_file_by_link(e, m->path, bid, n, fd, found);
			module_close(e, efd);
		}
		break;
	case MODULE_DEBUG_DEBUGINFOD:
		if (n && (*found = module_debuginfod_find(bid, n)) &&
		    !(d = elf_file_open(*found, fd))) {
			free(*found);
			*found = NULL;
		}
		break;
	default:
		break;
	}
	return d;
}

Elf *module_open_debug(struct module *m, enum module_debug k, int *fd, const char **path)
{
	Elf *d = NULL;
	char *found = NULL;

	*fd = -1;
	if (path)
		*path = NULL;
	if ((unsigned)k >= MODULE_NDEBUG)
		return NULL;
	pthread_mutex_lock(&m->lock);
	if (!m->debug[k].tried) {
		m->debug[k].tried = true;
		d = debug_search(m, k, fd, &found);
		if (d)
			m->debug[k].path = found;
		else
			free(found);
	} else if (m->debug[k].path) {
		/* found before: the same file, if it still is this build's */
		d = elf_file_open(m->debug[k].path, fd);
		if (d && !same_build(m, d)) {
			elf_file_close(d, *fd);
			*fd = -1;
			d = NULL;
		}
	}
	if (d && path)
		*path = m->debug[k].path;
	pthread_mutex_unlock(&m->lock);
	return d;
}

/* ---- parts ---- */

void *module_part(struct module *m, enum module_part p, module_build_fn build,
		  module_free_fn free_fn, void *arg)
{
	struct part *pt = &m->parts[p];
	void *obj;

	pthread_mutex_lock(&pt->lock);
	if (!pt->obj) {
		pt->obj = build(m, arg);
		pt->free_fn = free_fn;
	}
	pt->holders++;
	obj = pt->obj;
	pthread_mutex_unlock(&pt->lock);
	return obj;
}

/* Part p when it is built (held when hold), else NULL at once: not
 * built, or being built by another thread (which holds its lock). */
static void *part_peek(struct module *m, enum module_part p, bool hold)
{
	struct part *pt = &m->parts[p];
	void *obj;

	if (pthread_mutex_trylock(&pt->lock))
		return NULL;
	obj = pt->obj;
	if (obj && hold)
		pt->holders++;
	pthread_mutex_unlock(&pt->lock);
	return obj;
}

void *module_part_try(struct module *m, enum module_part p)
{
	return part_peek(m, p, true);
}

bool module_part_ready(struct module *m, enum module_part p)
{
	return part_peek(m, p, false) != NULL;
}

void module_part_put(struct module *m, enum module_part p)
{
	struct part *pt = &m->parts[p];
	void *obj = NULL;

	pthread_mutex_lock(&pt->lock);
	if (pt->holders && --pt->holders == 0) {
		obj = pt->obj;
		pt->obj = NULL;
	}
	pthread_mutex_unlock(&pt->lock);
	if (obj)
		pt->free_fn(obj);
}

/* ---- glibc's makecontext trampoline ---- */

/* Does e's .dynsym define name? */
static bool defines(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
		size_t n = d && d->d_buf && entsize ? d->d_size / entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *s;
			if (gelf_getsym(d, (int)i, &sym) && sym.st_shndx != SHN_UNDEF &&
			    (s = elf_strptr(e, sh.sh_link, sym.st_name)) && !strcmp(s, name))
				return true;
		}
	}
	return false;
}

uint64_t module_elf_start_context(Elf *e, uint64_t *size)
{
	/* mov %rbx,%rsp; mov (%rsp),%rdi; test %rdi,%rdi */
	static const uint8_t code[] = { 0x48, 0x89, 0xdc, 0x48, 0x8b, 0x3c, 0x24, 0x48, 0x85, 0xff };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	*size = 0;
	if (!e || !defines(e, "makecontext"))
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		const uint8_t *p = memmem(d->d_buf, d->d_size, code, sizeof(code));
		if (!p)
			continue;
		/* it ends in hlt after calling exit */
		size_t off = (size_t)(p - (const uint8_t *)d->d_buf), n = sizeof(code);
		while (off + n < d->d_size && n < 64 && p[n] != 0xf4)
			n++;
		*size = n + 1;
		return sh.sh_addr + off;
	}
	return 0;
}
