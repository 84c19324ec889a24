/* kallsyms.c - kernel symbols from /proc/kallsyms.
 *
 * kallsyms has no sizes: a text symbol ends where the next symbol (of any
 * type) of the same module starts. The last symbol of a module ends at the
 * module's end from /proc/modules when that is readable; otherwise it
 * covers nothing, because guessing would name the wrong function. When
 * kptr_restrict hides addresses (all zero), the table stays empty.
 */
#include "symbol/symbol-private.h"
#include "lib/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct sym_kallsyms *sym_kallsyms_load(void)
{
	struct sym_kallsyms *k = xcalloc(1, sizeof(*k));
	struct ksym *ks = NULL;
	size_t nks = 0, cap_ks = 0, i, j, n = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	GROW(k->mods, k->cap_mods, 1);
	k->mods[0].name = KERNEL_MODULE;
	k->nmods = 1;

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
