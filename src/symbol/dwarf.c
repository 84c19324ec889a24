/* dwarf.c - inline chains and source lines from DWARF, with libdw.
 *
 * A module's DWARF is opened on the first question and kept until the
 * session ends (names and file names are borrowed from libdw's mapped
 * sections, so they stay valid as long as the Dwarf does).
 *
 * Finding the function of an address: libdw's dwarf_getscopes() walks the
 * whole compile unit for every address, which is too slow for a generated
 * file with thousands of functions. Instead each compile unit is indexed
 * once, on first use: its subprograms with code, sorted by address. A
 * lookup is then a binary search plus a walk down that one function's
 * DIE subtree (lexical blocks and inlined subroutines that hold the
 * address). Compile units are found through .debug_aranges when the file
 * has it; otherwise (clang does not emit aranges) every unit is indexed
 * on the first lookup.
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "lib/elffile.h"
#include "lib/hash.h"
#include "lib/buf.h"
#include "lib/elfguard.h"
#include "lib/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_CHAIN 64

struct dw_func {
	uint64_t lo, hi;
	Dwarf_Off die;    /* offset of the subprogram DIE */
};

struct sym_dwarf {
	Dwarf *dw;
	Elf *elf;                /* the Elf dw reads (ours to end) */
	int fd;
	struct sym_dwcache_map cache; /* the cache entry elf is on, if any */
	struct dw_func *funcs;   /* sorted by lo once sorted == nfuncs */
	size_t nfuncs, cap, sorted;
	struct hmap cus;         /* CU offset -> 1: already indexed */
	struct hmap abs;         /* relative file name pointer -> index in absv */
	const char **absv;       /* "comp_dir/file" for relative names (arena) */
	const char **relv;
	size_t nabs, capabs, caprel;
	struct hmap quals;       /* declaration DIE offset -> index in qualv */
	const char **qualv;      /* qualified names made by qualified_name() */
	size_t nqual, capqual;
	bool all_indexed;
	bool have_aranges;
};

/* libdw on the cache entry for key; NULL when there is none usable. */
static Dwarf *open_cached(const struct sym_dwcache_key *key, Elf **elf,
			  struct sym_dwcache_map *cache)
{
	Dwarf *dw;
	if (sym_dwcache_open(key, cache))
		return NULL;
	*elf = elf_memory(cache->image, cache->image_size);
	if (*elf && elf_kind(*elf) == ELF_K_ELF &&
	    (dw = dwarf_begin_elf(*elf, DWARF_C_READ, NULL)) != NULL)
		return dw;
	if (*elf)
		elf_end(*elf);
	*elf = NULL;
	sym_dwcache_unmap(cache);
	return NULL;
}

/* Opening a file whose debug sections are compressed inflates all of
 * them (libdw does it in dwarf_begin_elf); with a build-id, the
 * uncompressed sections are then kept in the DWARF cache, and the next
 * open maps them from there. */
struct sym_dwarf *sym_dwarf_open(Elf *elf, int fd, const uint8_t *bid, size_t bidlen)
{
	struct sym_dwarf *d;
	struct sym_dwcache_key key;
	struct sym_dwcache_map cache = { 0 };
	Dwarf_Aranges *ar;
	size_t nar = 0;
	bool keyed, save = false;
	Dwarf *dw = NULL;
	Elf *celf = NULL;

	if (!elf)
		return NULL;
	keyed = fd >= 0 && sym_dwcache_key_of(fd, bid, bidlen, &key) == 0;
	if (keyed && (dw = open_cached(&key, &celf, &cache)) != NULL) {
		elf_file_close(elf, fd);
		elf = celf;
		fd = -1;
	} else {
		save = keyed && sym_dwcache_wanted(elf);
		dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		if (!dw)
			goto fail;
		if (save)
			sym_dwcache_save(&key, elf);
	}
	d = xcalloc(1, sizeof(*d));
	d->dw = dw;
	d->elf = elf;
	d->fd = fd;
	d->cache = cache;
	hmap_init(&d->cus);
	hmap_init(&d->abs);
	hmap_init(&d->quals);
	d->have_aranges = dwarf_getaranges(dw, &ar, &nar) == 0 && nar > 0;
	return d;
fail:
	elf_file_close(elf, fd);
	return NULL;
}

bool sym_dwarf_from_cache(const struct sym_dwarf *d)
{
	return d && d->cache.map;
}

void sym_dwarf_free(struct sym_dwarf *d)
{
	if (!d)
		return;
	dwarf_end(d->dw);
	elfguard_end(d->elf);
	sym_dwcache_unmap(&d->cache);
	if (d->fd >= 0)
		close(d->fd);
	free(d->funcs);
	free(d->absv);
	free(d->relv);
	free(d->qualv);
	hmap_release(&d->quals);
	hmap_release(&d->cus);
	hmap_release(&d->abs);
	free(d);
}

static void add_func(struct sym_dwarf *d, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		GROW(d->funcs, d->cap, d->nfuncs + 1);
		d->funcs[d->nfuncs++] = (struct dw_func){ lo, hi, dwarf_dieoffset(die) };
	}
}

/* Subprograms with code under die: at the top of a unit, and inside
 * namespaces and classes (C++ member functions defined in the class). */
static void index_children(struct sym_dwarf *d, Dwarf_Die *parent, int level)
{
	Dwarf_Die c;
	if (level > 8 || dwarf_child(parent, &c) != 0)
		return;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			add_func(d, &c);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_module:
			index_children(d, &c, level + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_func(const void *a, const void *b)
{
	const struct dw_func *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	/* the narrower range first: it is the more specific one */
	return (x->hi > y->hi) - (x->hi < y->hi);
}

static void index_cu(struct sym_dwarf *d, Dwarf_Die *cu)
{
	uint64_t key = dwarf_dieoffset(cu);
	uint32_t v;
	if (hmap_get(&d->cus, key, &v))
		return;
	hmap_put(&d->cus, key, 1);
	index_children(d, cu, 0);
}

static void index_all(struct sym_dwarf *d)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	d->all_indexed = true;
	while (dwarf_nextcu(d->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(d->dw, off + hsize, &cu))
			index_cu(d, &cu);
		off = next;
	}
}

static void sort_funcs(struct sym_dwarf *d)
{
	if (d->sorted == d->nfuncs)
		return;
	qsort(d->funcs, d->nfuncs, sizeof(*d->funcs), cmp_func);
	d->sorted = d->nfuncs;
}

/* The subprogram DIE whose code holds addr. */
static bool find_func(struct sym_dwarf *d, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die cu;
	size_t lo = 0, hi, i;

	if (d->have_aranges && dwarf_addrdie(d->dw, addr, &cu))
		index_cu(d, &cu);
	else if (!d->all_indexed)
		index_all(d);
	sort_funcs(d);
	hi = d->nfuncs;
	while (lo < hi) { /* first range with lo > addr */
		size_t mid = (lo + hi) / 2;
		if (d->funcs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges rarely nest; look back a few for one that holds addr */
	for (i = lo; i-- > 0 && lo - i <= 16;)
		if (addr < d->funcs[i].hi)
			return dwarf_offdie(d->dw, d->funcs[i].die, out) != NULL;
	return false;
}

static bool has_pc_attr(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

/* Walk down from parent to the innermost scope holding addr, appending
 * each inlined subroutine on the way to chain (outermost first). */
static bool descend(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, size_t *n, int level)
{
	Dwarf_Die c;
	if (level > 64 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		int tag = dwarf_tag(&c);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (!has_pc_attr(&c)) {
			/* a block without addresses can still hold inlined code */
			if (tag != DW_TAG_inlined_subroutine && descend(&c, addr, chain, n, level + 1))
				return true;
			continue;
		}
		if (dwarf_haspc(&c, addr) != 1)
			continue;
		if (tag == DW_TAG_inlined_subroutine && *n < MAX_CHAIN)
			chain[(*n)++] = c;
		descend(&c, addr, chain, n, level + 1);
		return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

static bool is_cplusplus(Dwarf_Die *cu)
{
	Dwarf_Attribute at;
	Dwarf_Word lang = 0;
	if (!dwarf_attr(cu, DW_AT_language, &at) || dwarf_formudata(&at, &lang))
		return false;
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

#define QUAL_DEPTH 4

/* A C++ function's name qualified by the scopes its declaration is in,
 * for the DIEs that have no linkage name to demangle: GCC gives none to
 * a lambda's operator(), so every inlined lambda would be a bare
 * "operator()" and all of them would merge. The closure type has no name
 * either; it is shown as {lambda:LINE}, its line of declaration.
 * Example: "geo::Engine::run::{lambda:38}::operator()". Cached by the
 * declaration's offset; NULL when die has no name. */
static const char *qualified_name(struct sym_dwarf *d, Dwarf_Die *die, struct sym_arena *a,
				  int depth)
{
	Dwarf_Die decl = *die, tmp, *scopes = NULL;
	Dwarf_Attribute at;
	const char *name, *fn;
	struct buf b = BUF_INIT;
	uint32_t idx;
	int i, ns, hop;

	for (hop = 0; hop < 8; hop++) {
		if ((dwarf_attr(&decl, DW_AT_abstract_origin, &at) ||
		     dwarf_attr(&decl, DW_AT_specification, &at)) && dwarf_formref_die(&at, &tmp))
			decl = tmp;
		else
			break;
	}
	if (!(fn = dwarf_diename(&decl)))
		return NULL;
	if (hmap_get(&d->quals, dwarf_dieoffset(&decl), &idx))
		return d->qualv[idx];
	ns = depth < QUAL_DEPTH ? dwarf_getscopes_die(&decl, &scopes) : -1;
	/* scopes[0] is decl itself, then its parents out to the CU */
	for (i = ns - 1; i >= 1; i--) {
		Dwarf_Die *sc = &scopes[i];
		Dwarf_Word line = 0;
		switch (dwarf_tag(sc)) {
		case DW_TAG_namespace:
			name = dwarf_diename(sc);
			buf_printf(&b, "%s::", name ? name : "(anonymous namespace)");
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if ((name = dwarf_diename(sc)) != NULL) {
				buf_printf(&b, "%s::", name);
			} else {
				if (dwarf_attr(sc, DW_AT_decl_line, &at))
					dwarf_formudata(&at, &line);
				buf_printf(&b, "{%s:%llu}::", strcmp(fn, "operator()") ? "anonymous" : "lambda",
					 (unsigned long long)line);
			}
			break;
		case DW_TAG_subprogram:
			/* a lambda inside a function: that function, itself
			 * qualified through its own declaration */
			name = qualified_name(d, sc, a, depth + 1);
			if (name)
				buf_printf(&b, "%s::", name);
			break;
		default:
			break;
		}
	}
	free(scopes);
	buf_printf(&b, "%s", fn);
	buf_add_u8(&b, 0);
	name = sym_arena_strdup(a, (const char *)b.data);
	buf_release(&b);
	GROW(d->qualv, d->capqual, d->nqual + 1);
	d->qualv[d->nqual] = name;
	hmap_put(&d->quals, dwarf_dieoffset(&decl), (uint32_t)d->nqual++);
	return name;
}

static const char *die_name(struct sym_dwarf *d, Dwarf_Die *die, Dwarf_Die *cu,
			    struct sym_arena *a, bool demangle)
{
	Dwarf_Attribute at;
	const char *s = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		s = dwarf_formstring(&at);
	if (s && !demangle)
		return s;
	if (s) {
		char *dm = sym_demangle(s);
		if (dm) {
			const char *r = sym_arena_strdup(a, dm);
			free(dm);
			return r;
		}
	}
	if (!s && is_cplusplus(cu) && (s = qualified_name(d, die, a, 0)) != NULL)
		return s;
	if (dwarf_attr_integrate(die, DW_AT_name, &at))
		return dwarf_formstring(&at);
	return s;
}

/* File name at index idx of the unit's file table; NULL when out of range. */
static const char *file_at(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* A relative file name made absolute with the unit's DW_AT_comp_dir, so
 * a source file can be opened from anywhere; one copy per name (libdw's
 * strings live as long as the Dwarf, so their pointers are the keys). */
static const char *absolute(struct sym_dwarf *d, Dwarf_Die *cu, const char *f, struct sym_arena *a)
{
	Dwarf_Attribute at;
	const char *dir;
	uint64_t key;
	uint32_t idx;
	char *j;
	if (!f || f[0] == '/')
		return f;
	key = (uint64_t)(uintptr_t)f;
	for (;; key = hash_mix(key, 0x61)) {
		if (!hmap_get(&d->abs, key, &idx))
			break;
		if (d->relv[idx] == f)
			return d->absv[idx];
	}
	dir = dwarf_attr(cu, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL;
	GROW(d->absv, d->capabs, d->nabs + 1);
	GROW(d->relv, d->caprel, d->nabs + 1);
	if (dir && *dir) {
		j = xasprintf("%s/%s", dir, f);
		d->absv[d->nabs] = sym_arena_strdup(a, j);
		free(j);
	} else {
		d->absv[d->nabs] = f;
	}
	d->relv[d->nabs] = f;
	hmap_put(&d->abs, key, (uint32_t)d->nabs);
	return d->absv[d->nabs++];
}

size_t sym_dwarf_frames(struct sym_dwarf *d, uint64_t addr, struct sym_frame *out,
			size_t max, struct sym_arena *a, bool demangle)
{
	Dwarf_Die fn, cu, *chain;
	Dwarf_Line *line;
	const char *file = NULL;
	uint32_t lineno = 0;
	size_t n = 0, k = 0, i;

	if (!d || !max)
		return 0;
	if (!find_func(d, addr, &fn)) {
		/* no function DIE (assembly): a line is still worth having */
		if (d->have_aranges && dwarf_addrdie(d->dw, addr, &cu) &&
		    (line = dwarf_getsrc_die(&cu, addr)) != NULL) {
			int l = 0;
			dwarf_lineno(line, &l);
			out[0] = (struct sym_frame){ NULL, dwarf_linesrc(line, NULL, NULL),
						     (uint32_t)(l > 0 ? l : 0), false };
			return 1;
		}
		return 0;
	}
	if (!dwarf_diecu(&fn, &cu, NULL, NULL))
		return 0;
	if ((line = dwarf_getsrc_die(&cu, addr)) != NULL) {
		int l = 0;
		dwarf_lineno(line, &l);
		file = dwarf_linesrc(line, NULL, NULL);
		lineno = (uint32_t)(l > 0 ? l : 0);
	}
	chain = xmalloc(MAX_CHAIN * sizeof(*chain));
	descend(&fn, addr, chain, &k, 0);
	/* innermost first: chain[k-1] ... chain[0], then the function; each
	 * outer frame's line is the call site of the frame inside it */
	for (i = k; i-- > 0 && n < max;) {
		Dwarf_Attribute at;
		Dwarf_Word cf = 0, cl = 0;
		out[n++] = (struct sym_frame){ die_name(d, &chain[i], &cu, a, demangle), file, lineno, true };
		file = NULL;
		lineno = 0;
		if (dwarf_attr(&chain[i], DW_AT_call_file, &at) && dwarf_formudata(&at, &cf) == 0)
			file = file_at(&cu, cf);
		if (dwarf_attr(&chain[i], DW_AT_call_line, &at) && dwarf_formudata(&at, &cl) == 0)
			lineno = (uint32_t)cl;
	}
	if (n < max)
		out[n++] = (struct sym_frame){ die_name(d, &fn, &cu, a, demangle), file, lineno, false };
	for (i = 0; i < n; i++)
		out[i].file = absolute(d, &cu, out[i].file, a);
	free(chain);
	return n;
}

size_t sym_dwarf_line_addrs(struct sym_dwarf *d, uint64_t lo, uint64_t hi, uint64_t *out, size_t max)
{
	Dwarf_Die fn, cu;
	Dwarf_Lines *lines;
	size_t nl = 0, i, n = 0;

	if (!d || !max || lo >= hi)
		return 0;
	if (find_func(d, lo, &fn)) {
		if (!dwarf_diecu(&fn, &cu, NULL, NULL))
			return 0;
	} else if (!d->have_aranges || !dwarf_addrdie(d->dw, lo, &cu)) {
		return 0;
	}
	if (dwarf_getsrclines(&cu, &lines, &nl))
		return 0;
	for (i = 0; i < nl && n < max; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		if (l && !dwarf_lineaddr(l, &a) && a >= lo && a < hi)
			out[n++] = a;
	}
	return n;
}
