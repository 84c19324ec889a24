/* symbol.c - the symbol session: module cache and lookups.
 *
 * Each distinct module (by build-id, else by path) is parsed once, on
 * first use, and kept until the session is freed, including modules that
 * failed to open (so a missing file is not retried millions of times).
 * The last module used is remembered, since consecutive lookups tend to
 * hit the same one.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "lib/hash.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#define VDSO_NAME "[vdso]"
#define MAX_BUILD_ID 64

struct sym_session {
	bool demangle;
	struct sym_module **mods;
	size_t nmods, cap_mods;
	struct hmap index; /* hash of module key -> index in mods */

	/* The ref that resolved to last_mod, for the fast path. */
	struct sym_module *last_mod;
	char *last_path;
	size_t last_path_cap;
	uint8_t last_bid[MAX_BUILD_ID];
	size_t last_bid_size;

	struct sym_kallsyms *kernel; /* loaded on first kernel lookup */
};

struct sym_session *sym_session_new(void)
{
	struct sym_session *s = xcalloc(1, sizeof(*s));
	s->demangle = true;
	hmap_init(&s->index);
	sym_elf_init();
	return s;
}

static void module_free(struct sym_module *m)
{
	free(m->key);
	free(m->segs);
	sym_table_release(&m->table);
	sym_arena_release(&m->strings);
	free(m);
}

void sym_session_free(struct sym_session *s)
{
	size_t i;
	if (!s)
		return;
	for (i = 0; i < s->nmods; i++)
		module_free(s->mods[i]);
	free(s->mods);
	hmap_release(&s->index);
	free(s->last_path);
	sym_kallsyms_free(s->kernel);
	free(s);
}

void sym_set_demangle(struct sym_session *s, bool on)
{
	s->demangle = on;
}

/* This process's vDSO, copied out of memory (the kernel maps the same
 * image into every process). NULL when there is none. */
static Elf *vdso_open(void **image)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR), start, end, size = 0;
	char line[512];
	FILE *f;
	Elf *e;

	*image = NULL;
	if (!base)
		return NULL;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") &&
		    sscanf(line, "%lx-%lx", &start, &end) == 2 && start == base) {
			size = end - start;
			break;
		}
	fclose(f);
	if (!size)
		return NULL;
	*image = xmalloc(size);
	memcpy(*image, (const void *)(uintptr_t)base, size);
	e = elf_memory(*image, size);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		free(*image);
		*image = NULL;
		return NULL;
	}
	return e;
}

/* Take symbols from debug ELF d (then close it); true when it had any. */
static bool use_debug(Elf *d, int fd, struct sym_module *m, const char *source)
{
	bool ok = d && sym_elf_add_symbols(d, SHT_SYMTAB, &m->table, &m->strings) > 0;
	if (ok)
		m->source = source;
	sym_elf_close(d, fd);
	return ok;
}

/* Fill m from the file at path. want is the build-id the recording saw
 * (may be NULL): a file with a different build-id is a different binary,
 * and its symbols are not used. */
static void module_load(struct sym_module *m, const char *path,
			const uint8_t *want, size_t want_size)
{
	uint8_t bid[MAX_BUILD_ID];
	size_t bid_size = 0;
	void *image = NULL, *mini_buf = NULL;
	int fd = -1, dfd;
	Elf *e, *d;

	m->source = SYM_SRC_NONE;
	if (want_size > MAX_BUILD_ID)
		want = NULL, want_size = 0;
	if (!strcmp(path, VDSO_NAME))
		e = vdso_open(&image);
	else
		e = sym_elf_open(path, &fd);
	if (e)
		bid_size = sym_elf_build_id(e, bid, sizeof(bid));
	if (e && want && bid_size &&
	    (bid_size != want_size || memcmp(bid, want, want_size))) {
		sym_elf_close(e, fd);
		e = NULL;
		fd = -1;
	}
	if (want) {
		memcpy(bid, want, want_size);
		bid_size = want_size;
	}
	if (!e) {
		/* The file is gone or replaced; a debug file for the right
		 * build keeps the program headers and the symbol table. */
		d = sym_debug_by_build_id(want, want_size, &dfd);
		if (d) {
			m->opened = true;
			sym_elf_segments(d, m);
			use_debug(d, dfd, m, SYM_SRC_DEBUG_FILE);
		}
		goto out;
	}
	m->opened = true;
	sym_elf_segments(e, m);
	if (sym_elf_add_symbols(e, SHT_SYMTAB, &m->table, &m->strings)) {
		m->source = SYM_SRC_SYMTAB;
		goto out;
	}
	if (bid_size > 0 && bid_size <= MAX_BUILD_ID) {
		d = sym_debug_by_build_id(bid, bid_size, &dfd);
		if (use_debug(d, dfd, m, SYM_SRC_DEBUG_FILE))
			goto out;
	}
	if (image == NULL) {
		d = sym_debug_by_link(e, path, bid, bid_size, &dfd);
		if (use_debug(d, dfd, m, SYM_SRC_DEBUGLINK))
			goto out;
	}
	/* MiniDebugInfo holds only what .dynsym lacks: use both. */
	d = sym_debug_mini(e, &mini_buf);
	if (d) {
		size_t n = sym_elf_add_symbols(d, SHT_SYMTAB, &m->table, &m->strings);
		elf_end(d);
		free(mini_buf);
		if (n) {
			sym_elf_add_symbols(e, SHT_DYNSYM, &m->table, &m->strings);
			m->source = SYM_SRC_MINIDEBUGINFO;
			goto out;
		}
	}
	if (sym_elf_add_symbols(e, SHT_DYNSYM, &m->table, &m->strings))
		m->source = SYM_SRC_DYNSYM;
out:
	sym_table_finish(&m->table);
	sym_elf_close(e, fd);
	free(image);
}

/* A module's cache key: its build-id when the ref has one, else its path.
 * The kind byte keeps a path from ever equalling a build-id. */
static void module_key(const struct sym_module_ref *r, uint8_t *kind,
		       const void **key, size_t *len)
{
	if (r->build_id && r->build_id_size && r->build_id_size <= MAX_BUILD_ID) {
		*kind = 'b';
		*key = r->build_id;
		*len = r->build_id_size;
	} else {
		*kind = 'p';
		*key = r->path ? r->path : "";
		*len = strlen(*key);
	}
}

static bool module_has_key(const struct sym_module *m, uint8_t kind,
			   const void *key, size_t len)
{
	return m->key_kind == kind && m->key_len == len && !memcmp(m->key, key, len);
}

static bool same_ref(const struct sym_session *s, const struct sym_module_ref *r)
{
	size_t n = r->build_id ? r->build_id_size : 0;
	return s->last_mod && r->path && !strcmp(s->last_path, r->path) &&
	       n == s->last_bid_size && (!n || !memcmp(r->build_id, s->last_bid, n));
}

static struct sym_module *module_get(struct sym_session *s, const struct sym_module_ref *r)
{
	struct sym_module *m = NULL;
	const void *key;
	uint8_t kind;
	uint64_t h;
	uint32_t idx;
	size_t i, len, bid_size;
	const char *path = r->path ? r->path : "";

	if (same_ref(s, r))
		return s->last_mod;
	module_key(r, &kind, &key, &len);
	h = hash_mix(hash_bytes(key, len), kind);
	if (hmap_get(&s->index, h, &idx) && module_has_key(s->mods[idx], kind, key, len)) {
		m = s->mods[idx];
	} else {
		/* A hash collision: fall back to a scan (never in practice). */
		for (i = 0; i < s->nmods && !m; i++)
			if (module_has_key(s->mods[i], kind, key, len))
				m = s->mods[i];
	}
	if (!m) {
		bid_size = r->build_id ? r->build_id_size : 0;
		m = xcalloc(1, sizeof(*m));
		m->key_kind = kind;
		m->key = xmalloc(len ? len : 1);
		memcpy(m->key, key, len);
		m->key_len = len;
		m->name = sym_arena_strdup(&m->strings, path_base(path));
		module_load(m, path, bid_size ? r->build_id : NULL, bid_size);
		GROW(s->mods, s->cap_mods, s->nmods + 1);
		if (!hmap_get(&s->index, h, &idx))
			hmap_put(&s->index, h, (uint32_t)s->nmods);
		s->mods[s->nmods++] = m;
	}

	len = strlen(path) + 1;
	if (len > s->last_path_cap) {
		s->last_path = xrealloc(s->last_path, len);
		s->last_path_cap = len;
	}
	memcpy(s->last_path, path, len);
	s->last_bid_size = r->build_id && r->build_id_size <= MAX_BUILD_ID ?
			   r->build_id_size : 0;
	if (s->last_bid_size)
		memcpy(s->last_bid, r->build_id, s->last_bid_size);
	s->last_mod = m;
	return m;
}

/* ELF virtual address of a file offset, through the PT_LOAD segment that
 * holds it. False when no segment does (then no symbol can match). */
static bool module_vaddr(const struct sym_module *m, uint64_t off, uint64_t *vaddr)
{
	size_t i;
	if (!m->nsegs) {
		*vaddr = off;
		return true;
	}
	for (i = 0; i < m->nsegs; i++) {
		const struct sym_seg *g = &m->segs[i];
		if (off >= g->offset && off - g->offset < g->filesz) {
			*vaddr = off - g->offset + g->vaddr;
			return true;
		}
	}
	return false;
}

void sym_lookup(struct sym_session *s, const struct sym_module_ref *r,
		uint64_t addr, struct sym_result *out)
{
	struct sym_module *m = module_get(s, r);
	struct sym_entry *e;
	uint64_t vaddr;

	out->name = NULL;
	out->sym_offset = 0;
	out->module = m->name;
	out->file_offset = addr - r->start + r->pgoff;
	out->source = m->source;
	if (!m->table.nsyms || !module_vaddr(m, out->file_offset, &vaddr))
		return;
	e = sym_table_find(&m->table, vaddr);
	if (!e)
		return;
	out->name = sym_entry_name(e, &m->strings, s->demangle);
	out->sym_offset = vaddr - e->start;
}

void sym_lookup_kernel(struct sym_session *s, uint64_t addr, struct sym_result *out)
{
	struct sym_entry *e;

	if (!s->kernel)
		s->kernel = sym_kallsyms_load();
	e = sym_kallsyms_find(s->kernel, addr, &out->module);
	out->name = NULL;
	out->sym_offset = 0;
	out->file_offset = addr;
	out->source = sym_kallsyms_empty(s->kernel) ? SYM_SRC_NONE : SYM_SRC_KALLSYMS;
	if (!e)
		return;
	/* Kernel Rust symbols are v0-mangled, so demangle here too. */
	out->name = sym_kallsyms_name(s->kernel, e, s->demangle);
	out->sym_offset = addr - e->start;
}

size_t sym_read_build_id(const char *path, uint8_t *out, size_t max)
{
	int fd;
	Elf *e = sym_elf_open(path, &fd);
	size_t n;
	if (!e)
		return 0;
	n = sym_elf_build_id(e, out, max);
	sym_elf_close(e, fd);
	return n;
}

bool sym_module_info(struct sym_session *s, const struct sym_module_ref *r,
		     const char **source, size_t *nsyms)
{
	struct sym_module *m = module_get(s, r);
	*source = m->source;
	*nsyms = m->table.nsyms;
	return m->opened;
}
