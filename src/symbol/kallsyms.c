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
 */
#include "symbol/symbol-private.h"
#include "lib/buf.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	char *blob;       /* names, when loaded from the cache */
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

/* Bounds of loaded modules: "name size refs deps state 0xaddr ...". */
static void read_module_bounds(struct sym_kallsyms *k)
{
	FILE *f = fopen("/proc/modules", "re");
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
	fclose(f);
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


/* ---- the cache ---- */

#define CACHE_MAGIC "STAXKSY1"

struct cache_header {
	char magic[8];
	uint64_t key;            /* boot id, uid and /proc/modules */
	uint64_t nsyms, nmods, blob_size;
};

struct cache_sym {
	uint64_t start, end;
	uint32_t name, mod;      /* name: offset in the blob */
};

struct cache_mod {
	uint64_t start, end;
	uint32_t name, pad;
};

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

/* The cache file's path, or false when there is no home to keep it in. */
static bool cache_path(char *out, size_t n, bool create)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[4096];
	const char *ne = getenv("STAX_NO_CACHE");

	if (ne && *ne && strcmp(ne, "0"))
		return false;
	if (xdg && *xdg == '/')
		snprintf(dir, sizeof(dir), "%s/stax", xdg);
	else if (home && *home == '/')
		snprintf(dir, sizeof(dir), "%s/.cache/stax", home);
	else
		return false;
	if (create) {
		char parent[4096];
		snprintf(parent, sizeof(parent), "%s", dir);
		*strrchr(parent, '/') = '\0';
		if (mkdir(parent, 0700) && errno != EEXIST)
			return false;
		if (mkdir(dir, 0700) && errno != EEXIST)
			return false;
	}
	return (size_t)snprintf(out, n, "%s/kallsyms", dir) < n;
}

static uint64_t cache_key(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	uid_t uid = geteuid();
	h = hash_file(h, "/proc/sys/kernel/random/boot_id");
	h = hash_file(h, "/proc/modules");
	h = hash_file(h, "/proc/sys/kernel/kptr_restrict");
	return fnv(h, &uid, sizeof(uid));
}

/* Fill k from the cache file; false (k untouched) when it is missing,
 * stale or malformed. */
static bool cache_load(struct sym_kallsyms *k, uint64_t key)
{
	char path[4200];
	struct cache_header h;
	struct cache_sym *cs = NULL;
	struct cache_mod *cm = NULL;
	char *blob = NULL;
	struct stat sb;
	size_t i, need;
	int fd;
	bool ok = false;

	if (!cache_path(path, sizeof(path), false))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &sb) || sb.st_uid != geteuid() || (sb.st_mode & 022) ||
	    read(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, CACHE_MAGIC, 8) || h.key != key ||
	    h.nsyms > (1u << 24) || h.nmods > (1u << 16) || h.blob_size > (1u << 28) || !h.nmods)
		goto out;
	need = sizeof(h) + h.nsyms * sizeof(*cs) + h.nmods * sizeof(*cm) + h.blob_size;
	if ((uint64_t)sb.st_size != need)
		goto out;
	cs = xmalloc(h.nsyms * sizeof(*cs) + 1);
	cm = xmalloc(h.nmods * sizeof(*cm));
	blob = xmalloc(h.blob_size + 1);
	if (read(fd, cs, h.nsyms * sizeof(*cs)) != (ssize_t)(h.nsyms * sizeof(*cs)) ||
	    read(fd, cm, h.nmods * sizeof(*cm)) != (ssize_t)(h.nmods * sizeof(*cm)) ||
	    read(fd, blob, h.blob_size) != (ssize_t)h.blob_size)
		goto out;
	blob[h.blob_size] = '\0';
	for (i = 0; i < h.nsyms; i++)
		if (cs[i].name >= h.blob_size || cs[i].mod >= h.nmods ||
		    cs[i].end <= cs[i].start || (i && cs[i].start < cs[i - 1].start))
			goto out;
	for (i = 0; i < h.nmods; i++)
		if (cm[i].name >= h.blob_size)
			goto out;
	k->mods = xrealloc(k->mods, h.nmods * sizeof(*k->mods));
	k->cap_mods = k->nmods = h.nmods;
	for (i = 0; i < h.nmods; i++) {
		k->mods[i].name = blob + cm[i].name;
		k->mods[i].start = cm[i].start;
		k->mods[i].end = cm[i].end;
	}
	k->table.syms = xcalloc(h.nsyms ? h.nsyms : 1, sizeof(*k->table.syms));
	k->mod_of = xcalloc(h.nsyms ? h.nsyms : 1, sizeof(*k->mod_of));
	for (i = 0; i < h.nsyms; i++) {
		k->table.syms[i].start = cs[i].start;
		k->table.syms[i].end = cs[i].end;
		k->table.syms[i].name = blob + cs[i].name;
		k->mod_of[i] = cs[i].mod;
	}
	k->table.nsyms = h.nsyms;
	k->blob = blob;
	blob = NULL;
	ok = true;
out:
	free(cs);
	free(cm);
	free(blob);
	close(fd);
	return ok;
}

/* Write k to the cache (best effort: a failure only costs time later). */
static void cache_save(const struct sym_kallsyms *k, uint64_t key)
{
	char path[4200], tmp[4300];
	struct cache_header h;
	struct buf b = BUF_INIT, names = BUF_INIT;
	size_t i;
	int fd;

	if (!k->table.nsyms || !cache_path(path, sizeof(path), true))
		return;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.key = key;
	h.nsyms = k->table.nsyms;
	h.nmods = k->nmods;
	buf_add(&b, &h, sizeof(h));
	for (i = 0; i < k->table.nsyms; i++) {
		struct cache_sym cs = { k->table.syms[i].start, k->table.syms[i].end,
					(uint32_t)names.len, k->mod_of[i] };
		buf_add(&names, k->table.syms[i].name, strlen(k->table.syms[i].name) + 1);
		buf_add(&b, &cs, sizeof(cs));
	}
	for (i = 0; i < k->nmods; i++) {
		struct cache_mod cm = { k->mods[i].start, k->mods[i].end, (uint32_t)names.len, 0 };
		buf_add(&names, k->mods[i].name, strlen(k->mods[i].name) + 1);
		buf_add(&b, &cm, sizeof(cm));
	}
	buf_add(&b, names.data, names.len);
	((struct cache_header *)b.data)->blob_size = names.len;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		bool ok = write(fd, b.data, b.len) == (ssize_t)b.len;
		close(fd);
		if (!ok || rename(tmp, path))
			unlink(tmp);
	}
	buf_release(&b);
	buf_release(&names);
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

static struct sym_kallsyms *load(void)
{
	struct sym_kallsyms *k = xcalloc(1, sizeof(*k));
	struct ksym *ks = NULL;
	size_t nks = 0, cap_ks = 0, i, j, n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t key;
	FILE *f;

	GROW(k->mods, k->cap_mods, 1);
	k->mods[0].name = KERNEL_MODULE;
	k->nmods = 1;
	key = cache_key();
	if (cache_load(k, key)) {
		n = k->table.nsyms;
		goto done;
	}

	f = fopen("/proc/kallsyms", "re");
	if (!f)
		goto done;
	/* Line: "ffffffff81000000 T _stext" optionally "\t[module]". */
	while ((len = getline(&line, &cap, f)) > 0) {
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
	fclose(f);
	read_module_bounds(k);

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
	cache_save(k, key);
done:
	/* Kernel symbols never nest: cover[i] is just end. */
	k->table.cover = xmalloc((n ? n : 1) * sizeof(*k->table.cover));
	for (i = 0; i < n; i++)
		k->table.cover[i] = i ? MAX(k->table.cover[i - 1], k->table.syms[i].end)
				      : k->table.syms[i].end;
	return k;
}

void sym_kallsyms_free(struct sym_kallsyms *k)
{
	if (!k)
		return;
	sym_table_release(&k->table);
	free(k->mod_of);
	free(k->mods);
	free(k->blob);
	sym_arena_release(&k->strings);
	free(k);
}

bool sym_kallsyms_empty(const struct sym_kallsyms *k)
{
	return !k->table.nsyms;
}

struct sym_entry *sym_kallsyms_find(struct sym_kallsyms *k, uint64_t addr,
				    const char **module)
{
	struct sym_entry *e = sym_table_find(&k->table, addr);
	size_t i;

	*module = KERNEL_MODULE;
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
