/* symbol.c - the symbol session: modules and lookups.
 *
 * A session takes each distinct module (by build-id, else by path) from
 * the module cache (module/module.h) on first use and holds its symbol
 * part, built once per module and shared with every other session of
 * the process; a module that failed to open is held too, so a missing
 * file is not retried millions of times. The last module used is
 * remembered, since consecutive lookups tend to hit the same one.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "lib/elffile.h"
#include "lib/hash.h"
#include "lib/util.h"
#include "module/module.h"
#include "symbol/symcache.h"

#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#define MAX_BUILD_ID MODULE_MAX_BUILD_ID

/* A module the session asked for: its key, and while held its module
 * and symbol part (both NULL once released by sym_session_release()). */
struct slot {
	uint8_t kind;        /* 'b': key is the build-id, 'p': the path */
	void *key;
	size_t len;
	struct module *mod;
	struct sym_module *m;
};

struct sym_session {
	bool demangle;
	bool lines;
	bool debuginfod;
	struct sym_frame frames[SYM_MAX_INLINE + 1]; /* last lookup's chain */
	struct slot *slots;
	size_t nslots, cap_slots;
	struct hmap index; /* hash of module key -> index in slots */

	/* The ref that resolved to last_mod, for the fast path. */
	struct sym_module *last_mod;
	char *last_path;
	size_t last_path_cap;
	uint8_t last_bid[MAX_BUILD_ID];
	size_t last_bid_size;

	struct sym_kallsyms *kernel; /* loaded on first kernel lookup */

	struct jit_proc *jits;        /* per process, JIT symbols */
	size_t njits, cap_jits;
};

struct jit_proc {
	uint32_t pid;
	bool map_given, map_tried;
	bool map_warned; /* said why /tmp/perf-PID.map was skipped */
	struct sym_jit *j;
};

struct sym_session *sym_session_new(void)
{
	struct sym_session *s = xcalloc(1, sizeof(*s));
	s->demangle = true;
	s->lines = true;
	s->debuginfod = getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS");
	hmap_init(&s->index);
	sym_elf_init();
	return s;
}

static void module_free(void *part)
{
	struct sym_module *m = part;
	free(m->segs);
	sym_table_release(&m->table);
	sym_arena_release(&m->strings);
	sym_dwarf_free(m->dwarf);
	free(m->dwarf_path);
	free(m->fdes);
	if (m->map)
		munmap(m->map, m->map_size);
	free(m);
}

/* Let go of slot i's module. */
static void slot_release(struct slot *sl)
{
	if (sl->m)
		module_part_put(sl->mod, MODULE_SYMBOLS);
	module_put(sl->mod);
	sl->m = NULL;
	sl->mod = NULL;
}

void sym_session_free(struct sym_session *s)
{
	size_t i;
	if (!s)
		return;
	for (i = 0; i < s->nslots; i++) {
		slot_release(&s->slots[i]);
		free(s->slots[i].key);
	}
	free(s->slots);
	hmap_release(&s->index);
	free(s->last_path);
	sym_kallsyms_free(s->kernel);
	for (i = 0; i < s->njits; i++)
		sym_jit_free(s->jits[i].j);
	free(s->jits);
	free(s);
}

void sym_set_demangle(struct sym_session *s, bool on)
{
	s->demangle = on;
}

void sym_set_lines(struct sym_session *s, bool on)
{
	s->lines = on;
}

void sym_set_debuginfod(struct sym_session *s, bool on)
{
	s->debuginfod = on;
}

/* Take symbols from debug ELF d (then close it); true when it had any. */
static bool use_debug(Elf *d, int fd, struct sym_module *m, const char *source)
{
	bool ok = d && sym_elf_add_symbols(d, SHT_SYMTAB, &m->table, &m->strings) > 0;
	if (ok)
		m->source = source;
	module_close(d, fd);
	return ok;
}

/* Take d (found as debug file kind, or the binary itself for -1) as m's
 * DWARF file when it has DWARF; closes d either way. */
static bool take_dwarf(struct sym_module *m, Elf *d, int fd, const char *found, int kind,
		       const char *source)
{
	bool ok = d && found && module_elf_has_dwarf(d);
	if (ok) {
		m->dwarf_path = xstrdup(found);
		m->dwarf_kind = kind;
		m->dwarf_source = source;
	}
	module_close(d, fd);
	return ok;
}

/* Where m's DWARF is, in the order of symbol.h. The symbols may have come
 * from elsewhere (a binary stripped of its DWARF keeps .symtab). When
 * debuginfod provides the file, it also fills a symbol table that is
 * still empty or only the dynamic one. */
static void find_dwarf(struct sym_module *m, struct module *mod, Elf *e, bool debuginfod)
{
	const char *found = NULL;
	int fd = -1;
	Elf *d;

	m->dwarf_source = SYM_DW_NONE;
	if (e && module_is_file(mod) && module_elf_has_dwarf(e)) {
		m->dwarf_path = xstrdup(module_path(mod));
		m->dwarf_kind = -1;
		m->dwarf_source = SYM_DW_BINARY;
		return;
	}
	d = module_open_debug(mod, MODULE_DEBUG_BUILD_ID, &fd, &found);
	if (take_dwarf(m, d, fd, found, MODULE_DEBUG_BUILD_ID, SYM_DW_DEBUG_FILE))
		return;
	if (e && module_is_file(mod)) {
		d = module_open_debug(mod, MODULE_DEBUG_LINK, &fd, &found);
		if (take_dwarf(m, d, fd, found, MODULE_DEBUG_LINK, SYM_DW_DEBUGLINK))
			return;
	}
	if (debuginfod && m->build_id_size &&
	    (d = module_open_debug(mod, MODULE_DEBUG_DEBUGINFOD, &fd, &found))) {
		if ((!strcmp(m->source, SYM_SRC_NONE) || !strcmp(m->source, SYM_SRC_DYNSYM)) &&
		    sym_elf_add_symbols(d, SHT_SYMTAB, &m->table, &m->strings)) {
			m->source = SYM_SRC_DEBUGINFOD;
			if (!m->nsegs)
				sym_elf_segments(d, m);
			m->opened = true;
		}
		take_dwarf(m, d, fd, found, MODULE_DEBUG_DEBUGINFOD, SYM_DW_DEBUGINFOD);
	}
}

/* Build mod's symbol part (module_part()); *arg is whether debuginfod
 * may be asked. A binary now at the path with another build-id than the
 * module's is another binary (module_open() refuses it): its debug
 * file by build-id still gives the program headers and symbols. */
static void *module_build(struct module *mod, void *arg)
{
	struct sym_module *m = xcalloc(1, sizeof(*m));
	const char *path = module_path(mod);
	bool own_file = module_is_file(mod);
	const uint8_t *bid;
	size_t bid_size = module_build_id(mod, &bid);
	void *mini_buf = NULL;
	int fd = -1, dfd;
	Elf *e, *d;
	struct cache_key key;
	struct stat st;
	bool use_cache = false;

	m->mod = mod;
	m->name = sym_arena_strdup(&m->strings, path_base(path));
	m->source = SYM_SRC_NONE;
	if (bid_size <= sizeof(m->build_id)) {
		memcpy(m->build_id, bid, bid_size);
		m->build_id_size = bid_size;
	}
	e = module_open(mod, &fd);
	if (!e) {
		/* The file is gone or replaced; a debug file for the right
		 * build keeps the program headers and the symbol table. */
		d = module_open_debug(mod, MODULE_DEBUG_BUILD_ID, &dfd, NULL);
		if (d) {
			m->opened = true;
			sym_elf_segments(d, m);
			use_debug(d, dfd, m, SYM_SRC_DEBUG_FILE);
		}
		goto out;
	}
	/* a big file's table, built before: from the symbol cache */
	use_cache = fd >= 0 && !fstat(fd, &st) && st.st_size >= SYMCACHE_MIN_FILE &&
		    cache_key_of(e, fd, path, bid, bid_size, &key);
	if (use_cache && symcache_load(&key, m)) {
		find_dwarf(m, mod, e, *(const bool *)arg);
		module_close(e, fd);
		return m;
	}
	m->opened = true;
	sym_elf_segments(e, m);
	if (sym_elf_add_symbols(e, SHT_SYMTAB, &m->table, &m->strings)) {
		m->source = SYM_SRC_SYMTAB;
		goto out;
	}
	d = module_open_debug(mod, MODULE_DEBUG_BUILD_ID, &dfd, NULL);
	if (use_debug(d, dfd, m, SYM_SRC_DEBUG_FILE))
		goto out;
	if (own_file) {
		d = module_open_debug(mod, MODULE_DEBUG_LINK, &dfd, NULL);
		if (use_debug(d, dfd, m, SYM_SRC_DEBUGLINK))
			goto out;
	}
	/* MiniDebugInfo holds only what .dynsym lacks: use both. */
	d = module_mini_debuginfo(e, &mini_buf);
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
	find_dwarf(m, mod, e, *(const bool *)arg);
	/* names the tables lack, made up as perf and objdump do: after the
	 * others, which they must not replace */
	if (e && own_file) {
		sym_elf_add_plt(e, &m->table, &m->strings);
		sym_elf_add_entry(e, &m->table, &m->strings);
		sym_elf_add_start_context(e, &m->table, &m->strings);
	}
	/* without a full symbol table, the FDEs still say where each
	 * function starts and ends */
	if (e && strcmp(m->source, SYM_SRC_SYMTAB) && strcmp(m->source, SYM_SRC_DEBUG_FILE) &&
	    strcmp(m->source, SYM_SRC_DEBUGLINK) && strcmp(m->source, SYM_SRC_DEBUGINFOD))
		m->nfdes = sym_elf_fde_ranges(e, &m->fdes);
	if (e && sym_elf_changed(e)) {
		/* cut short while read: what came from past its new end was
		 * zeros, so none of it is trusted */
		warn("cannot read %s: it changed while being read; its symbols are left out", path);
		sym_table_release(&m->table);
		memset(&m->table, 0, sizeof(m->table));
		m->nfdes = 0;
		m->source = SYM_SRC_NONE;
	}
	sym_table_finish(&m->table);
	if (use_cache && symcache_wanted(m) && !sym_elf_changed(e))
		symcache_store(&key, m);
	module_close(e, fd);
	return m;
}

/* A module's key in the session: its build-id when the ref has one,
 * else its path. The kind byte keeps a path from ever equalling a
 * build-id. */
static void module_key(const struct module_ref *r, uint8_t *kind,
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

static bool slot_has_key(const struct slot *sl, uint8_t kind, const void *key, size_t len)
{
	return sl->kind == kind && sl->len == len && !memcmp(sl->key, key, len);
}

/* The slot of this key, or -1. */
static long module_slot(const struct sym_session *s, uint8_t kind, const void *key, size_t len,
			uint64_t h)
{
	uint32_t idx;
	size_t i;

	if (hmap_get(&s->index, h, &idx) && idx < s->nslots &&
	    slot_has_key(&s->slots[idx], kind, key, len))
		return idx;
	/* a hash collision: a scan (never in practice) */
	for (i = 0; i < s->nslots; i++)
		if (slot_has_key(&s->slots[i], kind, key, len))
			return (long)i;
	return -1;
}

void sym_session_release(struct sym_session *s, const struct module_ref *r)
{
	const void *key;
	uint8_t kind;
	size_t len;
	long slot;

	module_key(r, &kind, &key, &len);
	slot = module_slot(s, kind, key, len, hash_mix(hash_bytes(key, len), kind));
	if (slot < 0 || !s->slots[slot].m)
		return;
	if (s->last_mod == s->slots[slot].m)
		s->last_mod = NULL;
	slot_release(&s->slots[slot]);
}

static bool same_ref(const struct sym_session *s, const struct module_ref *r)
{
	size_t n = r->build_id ? r->build_id_size : 0;
	return s->last_mod && r->path && !strcmp(s->last_path, r->path) &&
	       n == s->last_bid_size && (!n || !memcmp(r->build_id, s->last_bid, n));
}

static struct sym_module *module_get_sym(struct sym_session *s, const struct module_ref *r)
{
	struct slot *sl;
	const void *key;
	uint8_t kind;
	uint64_t h;
	uint32_t idx;
	size_t len;
	long slot;
	const char *path = r->path ? r->path : "";

	if (same_ref(s, r))
		return s->last_mod;
	module_key(r, &kind, &key, &len);
	h = hash_mix(hash_bytes(key, len), kind);
	slot = module_slot(s, kind, key, len, h);
	if (slot < 0) {
		GROW(s->slots, s->cap_slots, s->nslots + 1);
		sl = &s->slots[s->nslots];
		memset(sl, 0, sizeof(*sl));
		sl->kind = kind;
		sl->key = xmalloc(len ? len : 1);
		memcpy(sl->key, key, len);
		sl->len = len;
		if (!hmap_get(&s->index, h, &idx))
			hmap_put(&s->index, h, (uint32_t)s->nslots);
		s->nslots++;
	} else {
		sl = &s->slots[slot];
	}
	if (!sl->m) {
		/* new, or released before: taken again */
		sl->mod = module_get(path, r->build_id && r->build_id_size <= MAX_BUILD_ID ?
					   r->build_id : NULL, r->build_id ? r->build_id_size : 0);
		sl->m = module_part(sl->mod, MODULE_SYMBOLS, module_build, module_free,
				    &s->debuginfod);
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
	s->last_mod = sl->m;
	return sl->m;
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

/* The FDE range holding vaddr, or NULL. */
static const struct sym_range *module_fde(const struct sym_module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nfdes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->fdes[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && vaddr < m->fdes[lo - 1].end)
		return &m->fdes[lo - 1];
	return NULL;
}

static struct sym_dwarf *module_dwarf(struct sym_module *m)
{
	if (!m->dwarf_tried) {
		m->dwarf_tried = true;
		if (m->dwarf_path)
		{
			int fd;
			Elf *e = m->dwarf_kind < 0 ? module_open(m->mod, &fd) :
				 module_open_debug(m->mod, m->dwarf_kind, &fd, NULL);
			m->dwarf = sym_dwarf_open(e, fd, m->build_id, m->build_id_size);
		}
	}
	return m->dwarf;
}

void sym_lookup(struct sym_session *s, const struct module_ref *r,
		uint64_t addr, struct sym_result *out)
{
	struct sym_module *m = module_get_sym(s, r);
	struct sym_entry *e = NULL;
	struct sym_dwarf *d;
	uint64_t vaddr;
	size_t n;

	memset(out, 0, sizeof(*out));
	out->module = m->name;
	out->file_offset = addr - r->start + r->pgoff;
	out->source = m->source;
	if (!module_vaddr(m, out->file_offset, &vaddr))
		return;
	out->has_vaddr = true;
	out->func_vaddr = vaddr;
	if (m->table.nsyms && (e = sym_table_find(&m->table, vaddr)) != NULL) {
		out->name = sym_entry_name(e, &m->strings, s->demangle);
		out->sym_offset = vaddr - e->start;
	} else {
		const struct sym_range *r = module_fde(m, vaddr);
		if (r) {
			out->func_vaddr = r->start;
			out->fde = true;
		}
	}
	if (!s->lines || !(d = module_dwarf(m)))
		return;
	n = sym_dwarf_frames(d, vaddr, s->frames, ARRAY_SIZE(s->frames), &m->strings, s->demangle);
	if (!n)
		return;
	out->file = s->frames[n - 1].file;
	out->line = s->frames[n - 1].line;
	out->inlined = s->frames;
	out->ninlined = n - 1;
	if (!out->name && s->frames[n - 1].name) {
		/* DWARF knows a function the symbol tables do not */
		out->name = s->frames[n - 1].name;
		out->sym_offset = 0;
	}
}

bool sym_function_range(struct sym_session *s, const struct module_ref *r, uint64_t addr,
			uint64_t *vaddr, uint64_t *size, uint64_t *file_offset)
{
	struct sym_module *m = module_get_sym(s, r);
	struct sym_entry *e;
	uint64_t va, off = addr - r->start + r->pgoff;
	size_t i;

	uint64_t start, end;
	const struct sym_range *fr;

	if (!module_vaddr(m, off, &va))
		return false;
	if ((e = sym_table_find(&m->table, va))) {
		start = e->start;
		end = e->end;
	} else if ((fr = module_fde(m, va))) {
		/* a stripped binary: the function is its FDE's range */
		start = fr->start;
		end = fr->end;
	} else {
		return false;
	}
	*vaddr = start;
	*size = end - start;
	*file_offset = off - (va - start);
	for (i = 0; i < m->nsegs; i++)
		if (start >= m->segs[i].vaddr && start - m->segs[i].vaddr < m->segs[i].filesz)
			*file_offset = start - m->segs[i].vaddr + m->segs[i].offset;
	return true;
}

size_t sym_boundaries(struct sym_session *s, const struct module_ref *r, uint64_t lo, uint64_t hi,
		      uint64_t *out, size_t max)
{
	struct sym_module *m = module_get_sym(s, r);
	size_t n = 0, i;

	for (i = 0; i < m->table.nsyms && n < max; i++)
		if (m->table.syms[i].start >= lo && m->table.syms[i].start < hi)
			out[n++] = m->table.syms[i].start;
	for (i = 0; i < m->nfdes && n < max; i++)
		if (m->fdes[i].start >= lo && m->fdes[i].start < hi)
			out[n++] = m->fdes[i].start;
	if (n < max)
		n += sym_dwarf_line_addrs(module_dwarf(m), lo, hi, out + n, max - n);
	return n;
}

bool sym_source_line(struct sym_session *s, const struct module_ref *r, uint64_t vaddr,
		     const char **file, uint32_t *line)
{
	struct sym_module *m = module_get_sym(s, r);
	struct sym_dwarf *d = module_dwarf(m);
	struct sym_frame f[SYM_MAX_INLINE + 1];
	size_t n;

	if (!d || !(n = sym_dwarf_frames(d, vaddr, f, ARRAY_SIZE(f), &m->strings, s->demangle)) ||
	    !f[0].file)
		return false;
	*file = f[0].file;
	*line = f[0].line;
	return true;
}

const char *sym_module_dwarf_source(struct sym_session *s, const struct module_ref *r)
{
	struct sym_module *m = module_get_sym(s, r);
	return m->dwarf_source ? m->dwarf_source : SYM_DW_NONE;
}

void sym_module_sources(struct sym_session *s, const struct module_ref *m, char *out,
			size_t outlen)
{
	const char *src;
	size_t nsyms;
	if (!sym_module_info(s, m, &src, &nsyms))
		src = "not found";
	snprintf(out, outlen, "%s, lines from %s", src, sym_module_dwarf_source(s, m));
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

bool sym_kernel_function(struct sym_session *s, uint64_t addr, const char **name, uint64_t *start,
			 uint64_t *end)
{
	const char *module;
	struct sym_entry *e;

	if (!s->kernel)
		s->kernel = sym_kallsyms_load();
	e = sym_kallsyms_find(s->kernel, addr, &module);
	if (!e || e->end <= e->start)
		return false;
	*name = sym_kallsyms_name(s->kernel, e, s->demangle);
	*start = e->start;
	*end = e->end;
	return true;
}

size_t sym_read_build_id(const char *path, uint8_t *out, size_t max)
{
	struct module *mod = module_get(path, NULL, 0);
	const uint8_t *bid;
	size_t n = module_build_id(mod, &bid);

	if (n > max)
		n = 0;
	memcpy(out, bid, n);
	module_put(mod);
	return n;
}

bool sym_module_info(struct sym_session *s, const struct module_ref *r,
		     const char **source, size_t *nsyms)
{
	struct sym_module *m = module_get_sym(s, r);
	*source = m->source;
	*nsyms = m->table.nsyms;
	return m->opened;
}

/* ---- JIT ---- */

static struct jit_proc *jit_proc(struct sym_session *s, uint32_t pid)
{
	size_t i;
	for (i = 0; i < s->njits; i++)
		if (s->jits[i].pid == pid)
			return &s->jits[i];
	GROW(s->jits, s->cap_jits, s->njits + 1);
	s->jits[s->njits] = (struct jit_proc){ pid, false, false, false, sym_jit_new() };
	return &s->jits[s->njits++];
}

void sym_jit_set_perfmap(struct sym_session *s, uint32_t pid, const void *data, size_t size)
{
	struct jit_proc *jp = jit_proc(s, pid);
	char what[64];
	struct err err;
	snprintf(what, sizeof(what), "perf-%u.map", pid);
	if (sym_jit_add_perfmap(jp->j, data, size, what, &err) < 0)
		warn("%s", err.msg);
	jp->map_given = true;
}

void sym_jit_add_dump(struct sym_session *s, uint32_t pid, const char *path)
{
	struct jit_proc *jp = jit_proc(s, pid);
	struct err err;
	void *data;
	size_t size;
	int ret = sym_jit_read_file(path, &data, &size, &err);
	if (ret == -EPERM || ret == -EFBIG || ret == -EINVAL)
		warn("%s", err.msg);
	if (ret)
		return;
	if (sym_jit_add_jitdump(jp->j, data, size, path_base(path), &err) < 0)
		warn("%s", err.msg);
	free(data);
}

void sym_jit_add_dump_data(struct sym_session *s, uint32_t pid, const void *data, size_t size,
			   const char *name)
{
	struct jit_proc *jp = jit_proc(s, pid);
	struct err err;
	if (sym_jit_add_jitdump(jp->j, data, size, name, &err) < 0)
		warn("%s", err.msg);
}

bool sym_jit_read_perfmap(struct sym_session *s, uint32_t pid, void **data, size_t *size)
{
	struct jit_proc *jp = jit_proc(s, pid);
	char path[64];
	struct err why;
	int ret;

	jp->map_tried = true;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	ret = sym_jit_read_file(path, data, size, &why);
	if ((ret == -EPERM || ret == -EFBIG || ret == -EINVAL) && !jp->map_warned) {
		warn("%s", why.msg);
		jp->map_warned = true;
	}
	if (ret)
		return false;
	sym_jit_set_perfmap(s, pid, *data, *size);
	return true;
}

bool sym_lookup_jit(struct sym_session *s, uint32_t pid, uint64_t addr, struct sym_result *out)
{
	struct jit_proc *jp = jit_proc(s, pid);
	const char *name;
	uint64_t off;

	if (!jp->map_given && !jp->map_tried) {
		void *data;
		size_t size;
		if (sym_jit_read_perfmap(s, pid, &data, &size))
			free(data);
		jp = jit_proc(s, pid);
	}
	name = sym_jit_find(jp->j, addr, &off);
	if (!name)
		return false;
	memset(out, 0, sizeof(*out));
	out->name = name;
	out->sym_offset = off;
	out->module = sym_jit_source(jp->j);
	out->file_offset = addr;
	out->source = "jit";
	return true;
}

void sym_lookup_user(struct sym_session *s, const struct module_ref *m, uint32_t map_pid,
		     uint32_t pid, uint64_t addr, struct sym_result *out)
{
	if (m && !sym_path_is_anon(m->path)) {
		sym_lookup(s, m, addr, out);
		return;
	}
	if ((m || pid) && sym_lookup_jit(s, m ? map_pid : pid, addr, out))
		return;
	if (pid && sym_lookup_jit(s, pid, addr, out))
		return;
	memset(out, 0, sizeof(*out));
	out->module = m && m->path && *m->path ? path_base(m->path) : "[unknown]";
	out->file_offset = m ? addr - m->start + m->pgoff : addr;
}

bool sym_path_is_anon(const char *path)
{
	return !path || !*path || !strncmp(path, "//anon", 6) || !strncmp(path, "[anon", 5) ||
	       !strncmp(path, "/memfd:", 7) || !strcmp(path, "[heap]");
}

bool sym_path_is_jitdump(const char *path)
{
	const char *b = path ? path_base(path) : "";
	size_t n = strlen(b);
	return !strncmp(b, "jit-", 4) && n > 9 && !strcmp(b + n - 5, ".dump");
}
