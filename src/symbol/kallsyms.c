/* kallsyms.c - kernel symbols from /proc/kallsyms.
 *
 * kallsyms has no sizes: a text symbol ends where the next symbol (of any
 * type) of the same module starts. The last symbol of a module ends at the
 * module's end from /proc/modules when that is readable; otherwise it
 * covers nothing, because guessing would name the wrong function. When
 * kptr_restrict hides addresses (all zero), the table stays empty.
 *
 * Reading /proc/kallsyms costs ~25 ms of kernel time (it formats 120,000
 * lines), more than answering a whole query, so the parsed table is kept
 * in $XDG_CACHE_HOME/stax/kallsyms (else ~/.cache/stax/kallsyms), valid
 * for the same boot, user and /proc/modules contents. Symbols that come
 * and go without a module change (BPF programs, ftrace trampolines) may
 * be missing from a cached table; STAX_NO_CACHE=1 reads the kernel's.
 * The cache file is mapped and searched in place (a query names a few
 * dozen kernel functions of 150,000): loading it is one checking pass,
 * not a copy of every symbol.
 */
#include "symbol/symbol-private.h"
#include "lib/buf.h"
#include "lib/hash.h"
#include "lib/safefile.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define KERNEL_MODULE "[kernel.kallsyms]"

struct ksym {
	uint64_t addr;
	const char *name;
	uint32_t mod;   /* index into mods; 0 is the kernel itself */
	uint8_t text;
	uint8_t global;
};

struct kmod {
	const char *name;    /* "[modname]" */
	uint64_t start, end; /* from /proc/modules; end == 0: unknown */
};

struct sym_kallsyms {
	struct sym_table table;
	uint32_t *mod_of; /* parallel to table.syms */
	struct kmod *mods;
	size_t nmods, cap_mods;
	struct sym_arena strings;

	/* Loaded from the cache: its symbols are used where they lie (the
	 * table above stays empty), and an entry is made for each one a
	 * lookup returns. */
	const uint8_t *csyms;     /* ncsyms x struct cache_sym, sorted by start */
	size_t ncsyms;
	const char *cblob;        /* names; cblob[cblob_size - 1] == '\0' */
	size_t cblob_size;
	void *cmap;               /* the file's mapping (munmap), or NULL */
	size_t cmap_size;
	void *ccopy;              /* or a copy of its bytes (free) */
	struct hmap centries;     /* symbol index -> index in centv */
	struct sym_entry **centv;
	size_t ncentv, cap_centv;
};

static uint32_t mod_index(struct sym_kallsyms *k, const char *name, size_t len)
{
	size_t i;
	char *s;

	/* Symbols of one module are contiguous: search from the last. */
	for (i = k->nmods; i-- > 1;)
		if (strlen(k->mods[i].name) == len + 2 &&
		    !memcmp(k->mods[i].name + 1, name, len))
			return (uint32_t)i;
	GROW(k->mods, k->cap_mods, k->nmods + 1);
	s = xmalloc(len + 3);
	s[0] = '[';
	memcpy(s + 1, name, len);
	s[len + 1] = ']';
	s[len + 2] = '\0';
	k->mods[k->nmods].name = sym_arena_strdup(&k->strings, s);
	k->mods[k->nmods].start = k->mods[k->nmods].end = 0;
	free(s);
	return (uint32_t)k->nmods++;
}

/* Bounds of loaded modules from f (/proc/modules): "name size refs deps
 * state 0xaddr ...". */
static void read_module_bounds(struct sym_kallsyms *k, FILE *f)
{
	char *line = NULL;
	size_t cap = 0, i;

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char name[256], addr[32];
		unsigned long long size;
		uint64_t base;
		if (sscanf(line, "%255s %llu %*s %*s %*s %31s", name, &size, addr) != 3)
			continue;
		if (parse_u64(addr, &base) || !base || base + size < base)
			continue;
		for (i = 1; i < k->nmods; i++)
			if (strlen(k->mods[i].name) == strlen(name) + 2 &&
			    !memcmp(k->mods[i].name + 1, name, strlen(name))) {
				k->mods[i].start = base;
				k->mods[i].end = base + size;
			}
	}
	free(line);
}

static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	size_t ua = 0, ub = 0;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* Aliases: text first, then global, then fewer leading '_'. */
	if (a->text != b->text)
		return a->text ? -1 : 1;
	if (a->global != b->global)
		return a->global ? -1 : 1;
	while (a->name[ua] == '_')
		ua++;
	while (b->name[ub] == '_')
		ub++;
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}


/* ---- the cache ----
 *
 * Layout (little-endian):
 *   offset size  meaning
 *   0      8     magic "STAXKSY1"
 *   8      8     key: boot id, uid, /proc/modules, kptr_restrict
 *   16     8     nsyms
 *   24     8     nmods (>= 1: [kernel.kallsyms] first)
 *   32     8     blob_size (names, each NUL-terminated)
 *   40     nsyms x {u64 start, u64 end, u32 name, u32 mod}, sorted by start
 *          nmods x {u64 start, u64 end, u32 name, u32 pad}
 *          the names
 */

#define CACHE_MAGIC "STAXKSY1"

struct cache_header {
	char magic[8];
	uint64_t key;            /* boot id, uid and /proc/modules */
	uint64_t nsyms, nmods, blob_size;
};
_Static_assert(sizeof(struct cache_header) == 40, "kallsyms cache header");

struct cache_sym {
	uint64_t start, end;
	uint32_t name, mod;      /* name: offset in the blob */
};
_Static_assert(sizeof(struct cache_sym) == 24, "kallsyms cache symbol");

struct cache_mod {
	uint64_t start, end;
	uint32_t name, pad;
};
_Static_assert(sizeof(struct cache_mod) == 24, "kallsyms cache module");

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static uint64_t hash_file(uint64_t h, const char *path)
{
	char buf[4096];
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fnv(h, path, strlen(path));
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		h = fnv(h, buf, (size_t)r);
	close(fd);
	return h;
}

#define CACHE_NAME "kallsyms"

static uint64_t cache_key(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uid_t uid = geteuid();
	h = hash_file(h, "/proc/sys/kernel/random/boot_id");
	h = hash_file(h, "/proc/modules");
	h = hash_file(h, "/proc/sys/kernel/kptr_restrict");
	return fnv(h, &uid, sizeof(uid));
}

/* Use a cache file's bytes [data, data + size), which must stay valid as
 * long as k, for k's symbols; false (k untouched) when they are stale or
 * malformed: a corrupt cache is never trusted, the kernel's table is read
 * instead. Every symbol is checked here (one pass over the file), so the
 * lookups can binary-search the bytes as they are. */
static bool cache_parse(struct sym_kallsyms *k, const uint8_t *data, size_t size, uint64_t key)
{
	const uint8_t *p = data + sizeof(struct cache_header);
	struct cache_header h;
	struct cache_sym cs;
	struct cache_mod cm;
	const uint8_t *mods;
	const char *blob;
	uint64_t prev = 0;
	size_t i;

	if (size < sizeof(h))
		return false;
	memcpy(&h, data, sizeof(h));
	if (memcmp(h.magic, CACHE_MAGIC, 8) || h.key != key || h.nsyms > (1u << 24) ||
	    h.nmods > (1u << 16) || h.blob_size > (1u << 28) || !h.nmods || !h.blob_size)
		return false;
	/* the sizes are bounded above, so these products cannot wrap */
	if (size - sizeof(h) != h.nsyms * sizeof(cs) + h.nmods * sizeof(cm) + h.blob_size)
		return false;
	mods = p + h.nsyms * sizeof(cs);
	blob = (const char *)mods + h.nmods * sizeof(cm);
	/* every name ends inside the blob */
	if (blob[h.blob_size - 1] != '\0')
		return false;
	for (i = 0; i < h.nsyms; i++) {
		memcpy(&cs, p + i * sizeof(cs), sizeof(cs));
		if (cs.name >= h.blob_size || cs.mod >= h.nmods || cs.end <= cs.start ||
		    cs.start < prev)
			return false;
		prev = cs.start;
	}
	for (i = 0; i < h.nmods; i++) {
		memcpy(&cm, mods + i * sizeof(cm), sizeof(cm));
		if (cm.name >= h.blob_size)
			return false;
	}
	k->mods = xrealloc(k->mods, h.nmods * sizeof(*k->mods));
	k->cap_mods = k->nmods = h.nmods;
	for (i = 0; i < h.nmods; i++) {
		memcpy(&cm, mods + i * sizeof(cm), sizeof(cm));
		k->mods[i].name = blob + cm.name;
		k->mods[i].start = cm.start;
		k->mods[i].end = cm.end;
	}
	k->csyms = p;
	k->ncsyms = h.nsyms;
	k->cblob = blob;
	k->cblob_size = h.blob_size;
	return true;
}

/* Fill k from the cache file; false (k untouched) when it is missing,
 * not ours, stale or malformed. */
static bool cache_load(struct sym_kallsyms *k, uint64_t key)
{
	struct stat sb;
	void *map;
	int fd, dfd;
	bool ok = false;

	if ((dfd = sym_cache_dir(NULL, false)) < 0)
		return false;
	fd = openat(dfd, CACHE_NAME, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	close(dfd);
	if (fd < 0)
		return false;
	/* a regular file of ours that only we can read, of a size a real
	 * table can have */
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != geteuid() ||
	    (sb.st_mode & 077) || sb.st_size < (off_t)sizeof(struct cache_header) ||
	    sb.st_size > (off_t)1 << 30)
		goto out;
	/* a quick look at the header before mapping it all */
	{
		struct cache_header h;
		if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
		    memcmp(h.magic, CACHE_MAGIC, 8) || h.key != key)
			goto out;
	}
	map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (map == MAP_FAILED)
		goto out;
	ok = cache_parse(k, map, (size_t)sb.st_size, key);
	if (ok) {
		k->cmap = map;
		k->cmap_size = (size_t)sb.st_size;
	} else {
		munmap(map, (size_t)sb.st_size);
	}
out:
	close(fd);
	return ok;
}

/* The cache file's bytes for k, appended to b. */
static void cache_serialize(const struct sym_kallsyms *k, uint64_t key, struct buf *b)
{
	struct cache_header h;
	struct buf names = BUF_INIT;
	size_t i, at = b->len;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.key = key;
	h.nsyms = k->table.nsyms;
	h.nmods = k->nmods;
	buf_add(b, &h, sizeof(h));
	for (i = 0; i < k->table.nsyms; i++) {
		struct cache_sym cs = { k->table.syms[i].start, k->table.syms[i].end,
					(uint32_t)names.len, k->mod_of[i] };
		buf_add(&names, k->table.syms[i].name, strlen(k->table.syms[i].name) + 1);
		buf_add(b, &cs, sizeof(cs));
	}
	for (i = 0; i < k->nmods; i++) {
		struct cache_mod cm = { k->mods[i].start, k->mods[i].end, (uint32_t)names.len, 0 };
		buf_add(&names, k->mods[i].name, strlen(k->mods[i].name) + 1);
		buf_add(b, &cm, sizeof(cm));
	}
	buf_add(b, names.data, names.len);
	h.blob_size = names.len;
	memcpy(b->data + at, &h, sizeof(h));
	buf_release(&names);
}

void sym_kallsyms_to_cache(const struct sym_kallsyms *k, uint64_t key, struct buf *b)
{
	cache_serialize(k, key, b);
}

/* Write k to the cache (best effort: a failure only costs time later).
 * The table holds the kernel's addresses: it is written only when it has
 * real ones (this process can read them in /proc/kallsyms: see load()),
 * into the user's own cache directory
 * (sym_cache_dir()), as a new file of mode 0600 renamed into place, never
 * through a link someone else put there. */
static void cache_save(const struct sym_kallsyms *k, uint64_t key)
{
	struct buf b = BUF_INIT;
	int dfd;

	if (!k->table.nsyms || (dfd = sym_cache_dir(NULL, true)) < 0)
		return;
	cache_serialize(k, key, &b);
	safe_replace_write(dfd, CACHE_NAME, &(struct safe_piece){ b.data, b.len }, 1);
	close(dfd);
	buf_release(&b);
}

static struct sym_kallsyms *load(void);

/* A load started early on a thread of its own, taken by the next
 * sym_kallsyms_load(): the kernel's formatting of kallsyms (or reading
 * the cache) overlaps with reading samples. */
static pthread_t prefetch_thread;
static bool prefetch_started;
static struct sym_kallsyms *prefetched;

static void *prefetch_main(void *arg)
{
	(void)arg;
	prefetched = load();
	return NULL;
}

void sym_kernel_prefetch(void)
{
	if (!prefetch_started && !pthread_create(&prefetch_thread, NULL, prefetch_main, NULL))
		prefetch_started = true;
}

struct sym_kallsyms *sym_kallsyms_load(void)
{
	struct sym_kallsyms *k;
	if (prefetch_started) {
		pthread_join(prefetch_thread, NULL);
		prefetch_started = false;
		k = prefetched;
		prefetched = NULL;
		if (k)
			return k;
	}
	return load();
}

static struct sym_kallsyms *kallsyms_new(void)
{
	struct sym_kallsyms *k = xcalloc(1, sizeof(*k));
	GROW(k->mods, k->cap_mods, 1);
	k->mods[0].name = KERNEL_MODULE;
	k->nmods = 1;
	return k;
}

/* Kernel symbols never nest: cover[i] is just end. */
static void kallsyms_cover(struct sym_kallsyms *k)
{
	size_t i, n = k->table.nsyms;
	k->table.cover = xmalloc((n ? n : 1) * sizeof(*k->table.cover));
	for (i = 0; i < n; i++)
		k->table.cover[i] = i ? MAX(k->table.cover[i - 1], k->table.syms[i].end)
				      : k->table.syms[i].end;
}

/* Fill an empty k from the text of /proc/kallsyms (f) and /proc/modules
 * (modules; either may be NULL). Lines that do not parse are skipped. */
static void kallsyms_parse(struct sym_kallsyms *k, FILE *f, FILE *modules)
{
	struct ksym *ks = NULL;
	size_t nks = 0, cap_ks = 0, i, j, n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	/* Line: "ffffffff81000000 T _stext" optionally "\t[module]". */
	while (f && (len = getline(&line, &cap, f)) > 0) {
		char *p = line, *end, *name, *mod;
		uint64_t addr;
		char type;

		if (line[len - 1] == '\n')
			line[--len] = '\0';
		addr = strtoull(p, &end, 16);
		if (end == p || *end != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		name = end + 3;
		if (!addr || !*name)
			continue; /* hidden by kptr_restrict */
		mod = strchr(name, '\t');
		GROW(ks, cap_ks, nks + 1);
		ks[nks].addr = addr;
		ks[nks].text = type == 't' || type == 'T' || type == 'w' || type == 'W';
		ks[nks].global = type >= 'A' && type <= 'Z';
		ks[nks].mod = 0;
		if (mod) {
			char *close;
			*mod++ = '\0';
			close = strchr(mod, ']');
			if (mod[0] == '[' && close && close > mod + 1)
				ks[nks].mod = mod_index(k, mod + 1, (size_t)(close - mod - 1));
		}
		ks[nks].name = sym_arena_strdup(&k->strings, name);
		nks++;
	}
	free(line);
	read_module_bounds(k, modules);

	if (nks)
		qsort(ks, nks, sizeof(*ks), ksym_cmp);
	k->table.syms = xcalloc(nks ? nks : 1, sizeof(*k->table.syms));
	k->mod_of = xcalloc(nks ? nks : 1, sizeof(*k->mod_of));
	for (i = 0; i < nks; i = j) {
		uint64_t end = 0;
		for (j = i + 1; j < nks && ks[j].addr == ks[i].addr; j++)
			;
		if (!ks[i].text)
			continue;
		if (j < nks && ks[j].mod == ks[i].mod)
			end = ks[j].addr;
		else if (k->mods[ks[i].mod].end > ks[i].addr &&
			 k->mods[ks[i].mod].start <= ks[i].addr)
			end = k->mods[ks[i].mod].end;
		if (j < nks && end > ks[j].addr)
			end = ks[j].addr;
		if (end <= ks[i].addr)
			continue;
		k->table.syms[n].start = ks[i].addr;
		k->table.syms[n].end = end;
		k->table.syms[n].name = ks[i].name;
		k->table.syms[n].dname = NULL;
		k->mod_of[n] = ks[i].mod;
		n++;
	}
	k->table.nsyms = n;
	free(ks);
}

/* Whether this process sees the kernel's addresses in /proc/kallsyms
 * (kptr_restrict and CAP_SYSLOG decide; hidden ones read as zeros), from
 * its first line. The cache holds those addresses: it is read and written
 * only by a process that could read them from the kernel itself. */
static bool addresses_visible(void)
{
	char buf[64];
	ssize_t n;
	int fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strtoull(buf, NULL, 16) != 0;
}

static struct sym_kallsyms *load(void)
{
	struct sym_kallsyms *k = kallsyms_new();
	uint64_t key = cache_key();
	bool visible = addresses_visible();
	FILE *f, *mf;

	if (visible && cache_load(k, key))
		return k;
	f = fopen("/proc/kallsyms", "re");
	if (f) {
		mf = fopen("/proc/modules", "re");
		kallsyms_parse(k, f, mf);
		if (mf)
			fclose(mf);
		fclose(f);
		if (visible)
			cache_save(k, key);
	}
	kallsyms_cover(k);
	return k;
}

/* For the fuzz target: the same parsers over bytes in memory. */
static FILE *mem_file(const void *data, size_t size)
{
	return size ? fmemopen((void *)data, size, "r") : NULL;
}

struct sym_kallsyms *sym_kallsyms_from_text(const char *text, size_t len, const char *modules,
					    size_t mlen)
{
	struct sym_kallsyms *k = kallsyms_new();
	FILE *f = mem_file(text, len), *mf = mem_file(modules, mlen);
	kallsyms_parse(k, f, mf);
	if (f)
		fclose(f);
	if (mf)
		fclose(mf);
	kallsyms_cover(k);
	return k;
}

struct sym_kallsyms *sym_kallsyms_from_cache(const void *data, size_t size, uint64_t key)
{
	struct sym_kallsyms *k = kallsyms_new();
	/* k keeps its own copy: the symbols are used in place */
	k->ccopy = xmalloc(size ? size : 1);
	if (size)
		memcpy(k->ccopy, data, size);
	if (!cache_parse(k, k->ccopy, size, key)) {
		sym_kallsyms_free(k);
		return NULL;
	}
	return k;
}

void sym_kallsyms_free(struct sym_kallsyms *k)
{
	if (!k)
		return;
	size_t i;
	sym_table_release(&k->table);
	free(k->mod_of);
	free(k->mods);
	for (i = 0; i < k->ncentv; i++)
		free(k->centv[i]);
	free(k->centv);
	hmap_release(&k->centries);
	if (k->cmap)
		munmap(k->cmap, k->cmap_size);
	free(k->ccopy);
	sym_arena_release(&k->strings);
	free(k);
}

bool sym_kallsyms_empty(const struct sym_kallsyms *k)
{
	return !k->table.nsyms && !k->ncsyms;
}

/* The cached symbol covering addr, as an entry of k (made on first use);
 * NULL when none does or the symbol is out of bounds. */
static struct sym_entry *cached_find(struct sym_kallsyms *k, uint64_t addr, const char **module)
{
	struct cache_sym cs;
	struct sym_entry *e;
	size_t lo = 0, hi = k->ncsyms;
	uint32_t idx;

	while (lo < hi) { /* first symbol starting above addr */
		size_t mid = lo + (hi - lo) / 2;
		memcpy(&cs, k->csyms + mid * sizeof(cs), sizeof(cs));
		if (cs.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	memcpy(&cs, k->csyms + (lo - 1) * sizeof(cs), sizeof(cs));
	if (addr >= cs.end)
		return NULL;
	*module = k->mods[cs.mod].name;
	if (hmap_get(&k->centries, lo - 1, &idx))
		return k->centv[idx];
	e = xcalloc(1, sizeof(*e));
	e->start = cs.start;
	e->end = cs.end;
	e->name = k->cblob + cs.name;
	GROW(k->centv, k->cap_centv, k->ncentv + 1);
	k->centv[k->ncentv] = e;
	hmap_put(&k->centries, lo - 1, (uint32_t)k->ncentv++);
	return e;
}

struct sym_entry *sym_kallsyms_find(struct sym_kallsyms *k, uint64_t addr,
				    const char **module)
{
	struct sym_entry *e;
	size_t i;

	*module = KERNEL_MODULE;
	if (k->ncsyms && (e = cached_find(k, addr, module)) != NULL)
		return e;
	e = k->ncsyms ? NULL : sym_table_find(&k->table, addr);
	if (e) {
		*module = k->mods[k->mod_of[e - k->table.syms]].name;
		return e;
	}
	/* No symbol; still say which module the address is in if known. */
	for (i = 1; i < k->nmods; i++)
		if (k->mods[i].end && addr >= k->mods[i].start && addr < k->mods[i].end)
			*module = k->mods[i].name;
	return NULL;
}

const char *sym_kallsyms_name(struct sym_kallsyms *k, struct sym_entry *e, bool demangle)
{
	return sym_entry_name(e, &k->strings, demangle);
}
