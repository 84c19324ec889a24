/* annotate.c - one function's disassembly with samples per instruction.
 *
 * The function is found by name among the sampled functions (the one
 * holding the code, not an inlined helper), or by an address one of its
 * samples has. Its bytes are read from the binary its mapping names (so
 * the binary must still be there), disassembled with capstone, and each
 * instruction gets the samples whose leaf frame is exactly its address.
 * Source lines from DWARF (the innermost inlined function's line) are
 * printed above the instructions where they change, with the text of the
 * line when the source file is readable.
 *
 * A kernel function's bytes come from the running kernel (/proc/kcore, or
 * a BPF program: sym_kernel_code(), root only), its range from
 * /proc/kallsyms, when kallsyms
 * names the same function at the sampled addresses (the recording is of
 * this boot: with KASLR another boot's addresses name other code).
 */
#include "view/view.h"
#include "symbol/symbol.h"
#include "module/module.h"
#include "lib/json.h"
#include "lib/util.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FUNC_BYTES (16u << 20)
#define MAX_BOUNDS 65536
#define HOT_LINES 3

/* capstone is opened on first use (see load_library): only annotate
 * needs it, and linking it cost every command ~1 ms of start-up. */
#ifndef CAPSTONE_SONAME
#define CAPSTONE_SONAME "libcapstone.so.4"
#endif
static struct {
	__typeof__(cs_open) *open;
	__typeof__(cs_disasm) *disasm;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
} cs_fn;
static const char *const cs_names[] = { "cs_open", "cs_disasm", "cs_free", "cs_close" };

struct hit {
	uint64_t addr;      /* runtime address of a leaf frame */
	uint64_t mapping;
};

struct insn_row {
	uint64_t vaddr;
	uint64_t size;
	uint64_t count;
	bool undecoded;     /* bytes capstone could not decode */
	char text[224];
	const char *file;
	uint32_t line;
	int line_idx;       /* index in lines, -1 none */
};

struct line_row {
	const char *file;
	uint32_t line;
	uint64_t count;
	bool hot;
};

/* Source text cache: one file at a time is enough (a function's lines
 * come from a handful of files, mostly in runs). */
struct src_cache {
	char *path;
	char **lines;
	size_t nlines;
};

static void src_release(struct src_cache *c)
{
	size_t i;
	for (i = 0; i < c->nlines; i++)
		free(c->lines[i]);
	free(c->lines);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

static const char *src_line(struct src_cache *c, const char *path, uint32_t line)
{
	if (!path || !line)
		return NULL;
	if (!c->path || strcmp(c->path, path)) {
		FILE *f;
		char buf[4096];
		size_t cap = 0;
		src_release(c);
		c->path = xstrdup(path);
		f = fopen(path, "re");
		if (!f)
			return NULL;
		while (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\r\n")] = '\0';
			GROW(c->lines, cap, c->nlines + 1);
			c->lines[c->nlines++] = xstrdup(buf);
		}
		fclose(f);
	}
	return line <= c->nlines ? c->lines[line - 1] : NULL;
}

static int cmp_hit(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

static int cmp_line_count(const void *a, const void *b)
{
	const struct line_row *x = *(const struct line_row *const *)a, *y = *(const struct line_row *const *)b;
	return (x->count < y->count) - (x->count > y->count);
}

static bool same_func(const struct prof_func *a, const struct prof_func *b)
{
	return a && b && a->known == b->known && a->kernel == b->kernel &&
	       !strcmp(a->name, b->name) && !strcmp(a->module, b->module);
}

/* Pick the function as callers and callees do (view_find_funcs). The
 * mapping with the most samples of it is the one read. */
static uint32_t find_target(const struct profile *p, const char *what, struct err *err)
{
	bool *set = xcalloc(p->nfuncs + 1, sizeof(*set));
	uint32_t f = view_find_funcs(p, what, set, err);

	free(set);
	return f;
}

/* size bytes at file offset off of mapping m's binary: its module's
 * (module/module.h), so a file now at the path that is another build
 * is not read. */
static int read_bytes(const struct prof_mapping *m, uint64_t off, uint64_t size, uint8_t **out)
{
	struct module *mod = module_get(m->path, m->build_id, m->build_id_size);
	int fd;
	Elf *e = module_open(mod, &fd);
	uint8_t *b;
	size_t got = 0;
	ssize_t n;

	module_put(mod);
	if (!e || fd < 0) {
		module_close(e, fd);
		return -ENOENT;
	}
	b = xmalloc(size ? size : 1);
	while (got < size && (n = pread(fd, b + got, size - got, (off_t)(off + got))) > 0)
		got += (size_t)n;
	module_close(e, fd);
	if (got < size) {
		free(b);
		return -EIO;
	}
	*out = b;
	return 0;
}

/* Do two mappings map the same file (by build-id, else by path)? */
static bool same_file(const struct prof_mapping *a, const struct prof_mapping *b)
{
	if (a->build_id_size && b->build_id_size)
		return a->build_id_size == b->build_id_size &&
		       !memcmp(a->build_id, b->build_id, a->build_id_size);
	return a->path && b->path && !strcmp(a->path, b->path);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Sort and drop repeats. */
static void sort_bounds(uint64_t *b, size_t *n)
{
	size_t i, k;
	qsort(b, *n, sizeof(*b), cmp_u64);
	for (i = k = 0; i < *n; i++)
		if (!k || b[k - 1] != b[i])
			b[k++] = b[i];
	*n = k;
}

/* The smallest boundary above at, UINT64_MAX for none. */
static uint64_t next_bound(const uint64_t *b, size_t n, uint64_t at)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b[mid] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n ? b[lo] : UINT64_MAX;
}

/* The target of a direct jump, call or loop ("jne 0x1238"). */
static bool branch_target(const char *mnemonic, const char *ops, uint64_t *to)
{
	char *end;
	if (mnemonic[0] != 'j' && strcmp(mnemonic, "call") && strncmp(mnemonic, "loop", 4))
		return false;
	if (strncmp(ops, "0x", 2))
		return false;
	*to = strtoull(ops, &end, 16);
	return !*end;
}

/* What annotate shows, computed once (annotate_compute) and printed as
 * text or JSON. */
struct annotation {
	const struct prof_func *func;     /* the target */
	const struct prof_mapping *map;   /* the mapping with most of its samples (NULL: kernel) */
	bool kernel;                      /* a kernel function (sym_kernel_code) */
	const char *path;                 /* the file read: map->path, or where the kernel's code came from */
	struct module_ref ref;
	struct sym_session *ss;
	uint64_t fvaddr, fsize, foff;     /* its ELF address, size, file offset */
	uint8_t *code;                    /* its bytes */
	struct hit *hits;                 /* its samples: leaf addresses, then ELF addresses */
	size_t nhits;
	uint64_t kept;                    /* samples the filter keeps */
	uint64_t total, elsewhere;        /* its samples; of them outside its bytes */
	struct insn_row *rows;
	size_t nrows, ninsn, nundecoded;
	struct line_row *lines, **order;  /* order: lines, most samples first */
	size_t nlines;
};

static void annotation_release(struct annotation *a)
{
	if (a->ss)
		sym_session_free(a->ss);
	free(a->code);
	free(a->hits);
	free(a->rows);
	free(a->lines);
	free(a->order);
}

/* The samples whose leaf is in the target (a->hits, as runtime
 * addresses) and the mapping most of them are in (a->map). */
static int collect_hits(const struct profile *p, const struct view_filter *f, const char *what,
			struct annotation *a, struct err *err)
{
	uint64_t *per_map = xcalloc(p->nmaps + 1, sizeof(*per_map));
	uint32_t best_map = 0;
	size_t i, hitcap = 0;

	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		if (!view_keep(p, f, s))
			continue;
		a->kept++;
		nd = profile_node(p, s->stack);
		/* the leaf's own frame: skip the inline frames above it */
		while (nd && (nd->flags & NODE_F_INLINE))
			nd = profile_node(p, nd->parent);
		if (!nd || (nd->flags & 0xff) != (a->kernel ? NODE_KERNEL : NODE_USER) ||
		    !same_func(profile_func(p, nd->func), a->func))
			continue;
		nd = profile_node(p, s->stack);
		GROW(a->hits, hitcap, a->nhits + 1);
		a->hits[a->nhits++] = (struct hit){ nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0), nd->mapping };
		if (nd->mapping <= p->nmaps)
			per_map[nd->mapping]++;
	}
	for (i = 1; i <= p->nmaps; i++)
		if (per_map[i] > per_map[best_map])
			best_map = (uint32_t)i;
	free(per_map);
	if ((!best_map && !a->kernel) || !a->nhits)
		return err_set(err, -1, "%s has no samples of its own here (it is only a caller; see stax top)",
			       what);
	if (!a->kernel) {
		a->map = &p->maps[best_map - 1];
		a->path = a->map->path;
	}
	return 0;
}

/* The kernel function a->func holding kernel address addr: its range
 * from this boot's kallsyms and its bytes from /proc/kcore; a->hits
 * outside it are counted apart (a->elsewhere). */
static int locate_kernel(struct annotation *a, uint64_t addr, struct err *err)
{
	const char *name = NULL;
	uint64_t end;
	size_t i, j;

	a->ss = sym_session_new();
	if (!sym_kernel_function(a->ss, addr, &name, &a->fvaddr, &end)) {
		struct sym_result r;
		memset(&r, 0, sizeof(r));
		sym_lookup_kernel(a->ss, addr, &r);
		if (!r.source || strcmp(r.source, "kallsyms")) /* none: hidden or unreadable */
			return err_set(err, -EACCES, "%s is a kernel function: /proc/kallsyms hides the kernel's "
				       "addresses from this user, so its code cannot be found (run as root)",
				       a->func->name);
	}
	if (!name || strcmp(name, a->func->name))
		return err_set(err, -1, "%s is a kernel function of another boot: this boot's /proc/kallsyms "
			       "names %s at 0x%" PRIx64 " (the code read is the running kernel's)",
			       a->func->name, name ? name : "nothing", addr);
	a->fsize = end - a->fvaddr;
	if (a->fsize > MAX_FUNC_BYTES)
		return err_set(err, -1, "%s: %" PRIu64 " bytes to the next kernel symbol, too many", a->func->name,
			       a->fsize);
	a->code = xmalloc(a->fsize);
	if (sym_kernel_code(a->fvaddr, a->code, a->fsize, &a->path, err))
		return -1;
	for (i = 0; i < a->nhits; i++)
		if (a->hits[i].addr < a->fvaddr || a->hits[i].addr >= end)
			a->hits[i].addr = UINT64_MAX;
	if (a->nhits) /* none yet for the page's frame (locate_node) */
		qsort(a->hits, a->nhits, sizeof(*a->hits), cmp_hit);
	for (j = a->nhits; j > 0 && a->hits[j - 1].addr == UINT64_MAX; j--)
		a->elsewhere++;
	a->nhits = j;
	return 0;
}

/* The target's range and bytes in its binary, and every sample of it as
 * an ELF address of that binary: from every mapping of the same file
 * (several processes, or the file mapped twice); the rest (another file
 * of the same name, or a function of the same name elsewhere in it) is
 * counted apart (a->elsewhere) and dropped. */
static int locate(const struct profile *p, const char *what, struct annotation *a, struct err *err)
{
	const struct prof_mapping *m = a->map;
	size_t i, j;

	if (a->kernel)
		return locate_kernel(a, a->hits[0].addr, err);
	a->ref = profile_mapping_ref(m);
	a->ss = sym_session_new();
	for (i = 0; i < a->nhits && a->hits[i].mapping != (uint64_t)(m - p->maps) + 1; i++)
		;
	if (!sym_function_range(a->ss, &a->ref, a->hits[i].addr, &a->fvaddr, &a->fsize, &a->foff) ||
	    !a->fsize || a->fsize > MAX_FUNC_BYTES)
		return err_set(err, -1, "cannot find %s in %s (the binary changed or is gone; annotate needs it)",
			       what, m->path);
	if (read_bytes(m, a->foff, a->fsize, &a->code))
		return err_set(err, -1, "cannot read %s from %s (annotate needs the binary)", what, m->path);
	for (i = 0; i < a->nhits; i++) {
		struct hit *h = &a->hits[i];
		const struct prof_mapping *hm = h->mapping && h->mapping <= p->nmaps ? &p->maps[h->mapping - 1] : NULL;
		uint64_t off;
		if (!hm || hm->start > h->addr || (hm != m && !same_file(hm, m))) {
			h->addr = UINT64_MAX;
			continue;
		}
		off = h->addr - hm->start + hm->pgoff;
		h->addr = off >= a->foff && off - a->foff < a->fsize ? off - a->foff + a->fvaddr : UINT64_MAX;
	}
	qsort(a->hits, a->nhits, sizeof(*a->hits), cmp_hit);
	for (j = a->nhits; j > 0 && a->hits[j - 1].addr == UINT64_MAX; j--)
		a->elsewhere++;
	a->nhits = j;
	return 0;
}

/* One row of bytes capstone cannot decode, [at, next). */
static void undecoded_row(struct insn_row *r, const struct annotation *a, uint64_t at, uint64_t next)
{
	size_t k;
	uint64_t b;
	memset(r, 0, sizeof(*r));
	r->vaddr = at;
	r->size = next - at;
	r->undecoded = true;
	k = (size_t)snprintf(r->text, sizeof(r->text), "(%" PRIu64 " bytes capstone cannot decode:", r->size);
	for (b = at; b < next && b < at + 12 && k < sizeof(r->text); b++)
		k += (size_t)snprintf(r->text + k, sizeof(r->text) - k, " %02x", a->code[b - a->fvaddr]);
	if (k < sizeof(r->text))
		snprintf(r->text + k, sizeof(r->text) - k, "%s)", next > at + 12 ? " ..." : "");
}

/* The target's instructions (a->rows). Decoding resumes after bytes
 * capstone cannot decode only at known instruction starts: the sampled
 * addresses, line-table rows, symbol and FDE starts, and the targets of
 * the branches decoded so far; never byte by byte. */
static int disassemble(struct annotation *a, struct err *err)
{
	uint64_t end = a->fvaddr + a->fsize, *bound, at;
	size_t nbound = a->nhits, boundcap = a->nhits + MAX_BOUNDS + 1, rowcap = 0, i;
	cs_insn *insn = NULL;
	csh cs = 0;

	if (!cs_fn.open && load_library(CAPSTONE_SONAME, ARRAY_SIZE(cs_names), cs_names, (void **)&cs_fn, err)) {
		err_append(err, " (install it: apt-get install libcapstone4)");
		return -1;
	}
	if (cs_fn.open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return err_set(err, -1, "capstone cannot disassemble x86-64 (reinstall libcapstone4)");
	bound = xmalloc(boundcap * sizeof(*bound));
	for (i = 0; i < a->nhits; i++)
		bound[i] = a->hits[i].addr;
	if (!a->kernel)
		nbound += sym_boundaries(a->ss, &a->ref, a->fvaddr, end, bound + nbound, MAX_BOUNDS);
	sort_bounds(bound, &nbound);
	for (at = a->fvaddr; at < end;) {
		size_t got = cs_fn.disasm(cs, a->code + (at - a->fvaddr), end - at, at, 1, &insn);
		uint64_t b = next_bound(bound, nbound, at), next; /* the next known boundary after at */
		struct insn_row *r;
		GROW(a->rows, rowcap, a->nrows + 1);
		r = &a->rows[a->nrows++];
		if (got == 1 && (b == UINT64_MAX || b >= at + insn[0].size)) {
			memset(r, 0, sizeof(*r));
			r->vaddr = at;
			r->size = insn[0].size;
			snprintf(r->text, sizeof(r->text), "%s%s%s", insn[0].mnemonic,
				 insn[0].op_str[0] ? " " : "", insn[0].op_str);
			if (branch_target(insn[0].mnemonic, insn[0].op_str, &next) && next > at && next < end) {
				GROW(bound, boundcap, nbound + 1);
				bound[nbound++] = next;
				sort_bounds(bound, &nbound);
			}
			a->ninsn++;
			at += insn[0].size;
		} else {
			/* undecodable, or an instruction that would run over a
			 * known boundary (so it is garbage): show the bytes up
			 * to the next boundary */
			next = b != UINT64_MAX && b < end ? b : end;
			undecoded_row(r, a, at, next);
			a->nundecoded++;
			at = next;
		}
		if (got)
			cs_fn.free(insn, got);
		insn = NULL;
	}
	free(bound);
	cs_fn.close(&cs);
	return 0;
}

/* Samples per instruction and per source line (a->lines; a->order with
 * the HOT_LINES hottest marked). */
static void count_rows(struct annotation *a)
{
	size_t i, j, linecap = 0;
	uint64_t in_func = 0;

	for (i = 0; i < a->nrows; i++) {
		struct insn_row *r = &a->rows[i];
		size_t lo = 0, hi = a->nhits;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (a->hits[mid].addr < r->vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < a->nhits && a->hits[lo].addr < r->vaddr + r->size; lo++)
			r->count++;
		in_func += r->count;
		r->line_idx = -1;
		if (!a->kernel && sym_source_line(a->ss, &a->ref, r->vaddr, &r->file, &r->line)) {
			for (j = 0; j < a->nlines; j++)
				if (a->lines[j].line == r->line && !strcmp(a->lines[j].file, r->file))
					break;
			if (j == a->nlines) {
				GROW(a->lines, linecap, a->nlines + 1);
				a->lines[a->nlines++] = (struct line_row){ r->file, r->line, 0, false };
			}
			a->lines[j].count += r->count;
			r->line_idx = (int)j;
		}
	}
	a->total = in_func + a->elsewhere;
	a->order = xcalloc(a->nlines + 1, sizeof(*a->order));
	for (i = 0; i < a->nlines; i++)
		a->order[i] = &a->lines[i];
	qsort(a->order, a->nlines, sizeof(*a->order), cmp_line_count);
	for (i = 0; i < a->nlines && i < HOT_LINES && a->order[i]->count; i++)
		a->order[i]->hot = true;
}

static double share_of(uint64_t n, uint64_t total)
{
	return total ? 100.0 * n / total : 0.0;
}

static void annotate_json(const struct annotation *a, struct src_cache *sc, FILE *out)
{
	struct jw w;
	size_t i;

	jw_begin(&w, out);
	jw_str(&w, "function", a->func->name);
	jw_str(&w, "module", a->func->module);
	jw_str(&w, "path", a->path);
	jw_addr(&w, "start", a->fvaddr);
	jw_u64(&w, "size", a->fsize);
	jw_u64(&w, "samples", a->total);
	jw_u64(&w, "samples_kept", a->kept);
	jw_u64(&w, "samples_elsewhere", a->elsewhere);
	jw_array(&w, "instructions");
	for (i = 0; i < a->nrows; i++) {
		const struct insn_row *r = &a->rows[i];
		jw_object(&w, NULL);
		jw_addr(&w, "addr", r->vaddr);
		jw_u64(&w, "samples", r->count);
		jw_double(&w, "percent", share_of(r->count, a->total), 2);
		jw_str(&w, "asm", r->text);
		if (r->undecoded) {
			jw_bool(&w, "undecoded", true);
			jw_u64(&w, "bytes", r->size);
		}
		if (r->file) {
			jw_str(&w, "file", r->file);
			if (r->line)
				jw_u64(&w, "line", r->line);
		}
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_array(&w, "lines");
	for (i = 0; i < a->nlines; i++) {
		const struct line_row *l = a->order[i];
		jw_object(&w, NULL);
		jw_str(&w, "file", l->file);
		if (l->line)
			jw_u64(&w, "line", l->line);
		jw_u64(&w, "samples", l->count);
		jw_double(&w, "percent", share_of(l->count, a->total), 2);
		jw_str(&w, "source", src_line(sc, l->file, l->line));
		jw_object_end(&w);
	}
	jw_array_end(&w);
	jw_end(&w);
}

static void annotate_text(const struct annotation *a, bool color, struct src_cache *sc, FILE *out)
{
	const struct prof_func *tf = a->func;
	size_t i;

	fprintf(out, "%s (%s, %s) at 0x%" PRIx64 ", %" PRIu64 " bytes: %" PRIu64 " samples (%.1f%% of %" PRIu64 ")\n",
		tf->name, tf->module, a->path, a->fvaddr, a->fsize, a->total, share_of(a->total, a->kept),
		a->kept);
	if (a->elsewhere)
		fprintf(out, "%" PRIu64 " of them at addresses outside this function's bytes (another function"
			" named %s in %s, or another build of it): not in the listing\n", a->elsewhere, tf->name,
			tf->module);
	if (a->nundecoded)
		fprintf(out, "%zu byte range%s capstone cannot decode, shown with their samples; decoding resumes"
			" at known instruction starts (samples, line rows, symbols, FDEs, branch targets)\n",
			a->nundecoded, a->nundecoded == 1 ? "" : "s");
	if (a->nlines) {
		fputs("hottest lines:\n", out);
		for (i = 0; i < a->nlines && i < HOT_LINES && a->order[i]->count; i++)
			/* "%.0u" prints nothing for line 0 (no line) */
			fprintf(out, "  %6.2f%% %8" PRIu64 "  %s%s%.0u\n", share_of(a->order[i]->count, a->total),
				a->order[i]->count, path_base(a->order[i]->file), a->order[i]->line ? ":" : "",
				a->order[i]->line);
	}
	fprintf(out, "\n%8s %8s  %-12s %s\n", "PERCENT", "SAMPLES", "ADDRESS", "INSTRUCTION");
	for (i = 0; i < a->nrows; i++) {
		const struct insn_row *r = &a->rows[i], *prev = i ? &a->rows[i - 1] : NULL;
		bool hot = r->line_idx >= 0 && a->lines[r->line_idx].hot;
		if (r->file && (!prev || r->line != prev->line || strcmp(r->file, prev->file ? prev->file : ""))) {
			const char *text = src_line(sc, r->file, r->line);
			const struct line_row *lr = &a->lines[r->line_idx];
			char share[32] = "";
			if (lr->count && a->total)
				snprintf(share, sizeof(share), "  [%.1f%%]", share_of(lr->count, a->total));
			fprintf(out, "%s%25s %s%s%.0u%s%s%s%s\n", hot && color ? "\033[1;31m" : "", "",
				path_base(r->file), r->line ? ":" : "", r->line, text ? "  " : "",
				text ? text : "", share, hot && color ? "\033[0m" : "");
		}
		if (r->count)
			fprintf(out, "%s%7.2f%% %8" PRIu64 "%s  %-12" PRIx64 " %s\n", color && hot ? "\033[31m" : "",
				share_of(r->count, a->total), r->count, color && hot ? "\033[0m" : "", r->vaddr, r->text);
		else
			fprintf(out, "%8s %8s  %-12" PRIx64 " %s\n", "", "", r->vaddr, r->text);
	}
	if (!a->ninsn)
		fputs("(capstone decoded no instructions)\n", out);
}

/* Find the target, its samples, its bytes, its instructions and lines. */
static int annotate_compute(const struct profile *p, const struct view_filter *f, const char *what,
			    struct annotation *a, struct err *err)
{
	uint32_t target = find_target(p, what, err);

	memset(a, 0, sizeof(*a));
	if (!target)
		return -1;
	if (!(a->func = profile_func(p, target)))
		return err_set(err, -1, "no function %s", what);
	a->kernel = a->func->kernel;
	if (collect_hits(p, f, what, a, err) || locate(p, what, a, err) || disassemble(a, err))
		return -1;
	count_rows(a);
	return 0;
}

/* ---- a Python function: samples per source line ---- */

struct py_line {
	const char *file;
	uint32_t line;
	uint64_t self, total;   /* innermost Python frame there; anywhere */
};

static int cmp_py_line(const void *a, const void *b)
{
	const struct py_line *x = a, *y = b;
	int c = strcmp(x->file ? x->file : "", y->file ? y->file : "");
	return c ? c : (x->line > y->line) - (x->line < y->line);
}

/* The lines of a Python function read from the interpreter (each frame
 * carries its line): the samples whose innermost Python frame it is, at
 * each line (self), and those it is anywhere in, at each line (total,
 * once per sample and line). */
static int annotate_python(const struct profile *p, const struct view_filter *f, uint32_t target, bool json,
			   FILE *out)
{
	const struct prof_func *tf = profile_func(p, target);
	struct py_line *v = NULL;
	size_t n = 0, cap = 0, i, k;
	uint64_t kept = 0, self = 0, total = 0;
	struct src_cache sc = { 0 };
	size_t seen[64];

	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		bool inner = true;
		size_t nseen = 0;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		for (nd = profile_node(p, s->stack); nd && (nd->flags & 0xff) != NODE_ROOT;
		     nd = profile_node(p, nd->parent)) {
			const struct prof_func *fn = profile_func(p, nd->func);
			struct py_line key = { nd->file, nd->line, 0, 0 };
			size_t j;
			if (!profile_func_is_python(fn))
				continue;
			if (same_func(fn, tf)) {
				for (k = 0; k < n && cmp_py_line(&v[k], &key); k++)
					;
				if (k == n) {
					GROW(v, cap, n + 1);
					v[n++] = key;
				}
				v[k].self += inner;
				self += inner;
				/* total: once per sample and line (a recursion on
				 * the same line counts once) */
				for (j = 0; j < nseen && seen[j] != k; j++)
					;
				if (j == nseen && nseen < ARRAY_SIZE(seen)) {
					seen[nseen++] = k;
					v[k].total++;
				}
			}
			inner = false;
		}
		total += nseen > 0;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_py_line);
	if (json) {
		struct jw w;
		jw_begin(&w, out);
		jw_str(&w, "function", tf->name);
		jw_str(&w, "module", tf->module);
		jw_bool(&w, "python", true);
		jw_u64(&w, "samples", self);
		jw_u64(&w, "samples_total", total);
		jw_u64(&w, "samples_kept", kept);
		jw_array(&w, "lines");
		for (i = 0; i < n; i++) {
			jw_object(&w, NULL);
			jw_str(&w, "file", v[i].file);
			if (v[i].line)
				jw_u64(&w, "line", v[i].line);
			jw_u64(&w, "samples", v[i].self);
			jw_u64(&w, "samples_total", v[i].total);
			jw_double(&w, "percent", share_of(v[i].self, self), 2);
			jw_str(&w, "source", src_line(&sc, v[i].file, v[i].line));
			jw_object_end(&w);
		}
		jw_array_end(&w);
		jw_end(&w);
	} else {
		fprintf(out, "%s (%s): the innermost Python frame of %" PRIu64 " samples (%.1f%% of %" PRIu64
			"), in the stack of %" PRIu64 "; per line (the line each frame was at):\n", tf->name,
			tf->module, self, share_of(self, kept), kept, total);
		fprintf(out, "\n%8s %8s %8s  %s\n", "PERCENT", "SAMPLES", "TOTAL", "LINE");
		for (i = 0; i < n; i++) {
			const char *text = src_line(&sc, v[i].file, v[i].line);
			fprintf(out, "%7.2f%% %8" PRIu64 " %8" PRIu64 "  %s:%u%s%s\n", share_of(v[i].self, self),
				v[i].self, v[i].total, v[i].file ? path_base(v[i].file) : "?", v[i].line,
				text ? "  " : "", text ? text : "");
		}
		if (!n)
			fputs("(no samples of it)\n", out);
	}
	src_release(&sc);
	free(v);
	return 0;
}

int view_annotate(const struct profile *p, const struct view_filter *f, const char *what,
		  bool json, bool color, FILE *out, struct err *err)
{
	struct annotation a;
	struct src_cache sc = { 0 };
	uint32_t target;
	const struct prof_func *tf;
	int ret;

	/* a Python frame read from the interpreter: its lines, not code */
	target = find_target(p, what, err);
	if (!target)
		return -1;
	tf = profile_func(p, target);
	if (tf && !strcmp(tf->module, PYFRAME_MODULE))
		return annotate_python(p, f, target, json, out);
	ret = annotate_compute(p, f, what, &a, err);

	if (!ret && json)
		annotate_json(&a, &sc, out);
	else if (!ret)
		annotate_text(&a, color, &sc, out);
	src_release(&sc);
	annotation_release(&a);
	return ret;
}

/* ---- the disassembly of the function holding a frame (stax serve) ---- */

/* The ELF address of node nd's code in the file of mapping m (a return
 * address taken one byte back, into its call, unless start: then the
 * instruction start it is), or UINT64_MAX when nd is not in that file or
 * not in [foff, foff + fsize). */
static uint64_t node_vaddr(const struct profile *p, const struct prof_node *nd, const struct prof_mapping *m,
			   uint64_t fvaddr, uint64_t fsize, uint64_t foff, bool start)
{
	const struct prof_mapping *nm;
	uint64_t addr, off;
	if (!m) { /* the kernel's code: addresses as they are */
		if ((nd->flags & 0xff) != NODE_KERNEL)
			return UINT64_MAX;
		addr = nd->addr - ((nd->flags & NODE_F_RA) && !start ? 1 : 0);
		return addr >= fvaddr && addr - fvaddr < fsize ? addr : UINT64_MAX;
	}
	if ((nd->flags & 0xff) != NODE_USER || !nd->mapping || nd->mapping > p->nmaps)
		return UINT64_MAX;
	nm = &p->maps[nd->mapping - 1];
	if (nm != m && !same_file(nm, m))
		return UINT64_MAX;
	addr = nd->addr - ((nd->flags & NODE_F_RA) && !start ? 1 : 0);
	if (addr < nm->start || addr >= nm->end)
		return UINT64_MAX;
	off = addr - nm->start + nm->pgoff;
	return off >= foff && off - foff < fsize ? off - foff + fvaddr : UINT64_MAX;
}

/* The function holding node nd's code (a->map, a->ref, its range and
 * bytes), and the frames' addresses in it as a->hits: where decoding must
 * resume (a return address is the start of the instruction after its
 * call). */
static int locate_node(const struct profile *p, const struct prof_node *nd, const struct prof_func *fn,
		       struct annotation *a, struct err *err)
{
	uint64_t v;
	size_t i, hitcap = 0;
	if ((nd->flags & 0xff) == NODE_KERNEL && fn) {
		a->func = fn;
		a->kernel = true;
		if (locate_kernel(a, nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0), err))
			return -1;
		goto hits;
	}
	if ((nd->flags & 0xff) != NODE_USER || !nd->mapping || nd->mapping > p->nmaps)
		return err_set(err, -1, "%s is in no mapped file (JIT or anonymous code): no binary to read",
			       fn ? fn->name : "this frame");
	a->map = &p->maps[nd->mapping - 1];
	a->ref = profile_mapping_ref(a->map);
	a->ss = sym_session_new();
	v = nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0);
	if (!sym_function_range(a->ss, &a->ref, v, &a->fvaddr, &a->fsize, &a->foff) || !a->fsize ||
	    a->fsize > MAX_FUNC_BYTES)
		return err_set(err, -1, "cannot find %s in %s (the binary changed or is gone)",
			       fn ? fn->name : "the function", a->map->path);
	if (read_bytes(a->map, a->foff, a->fsize, &a->code))
		return err_set(err, -1, "cannot read %s from %s (the binary changed or is gone)",
			       fn ? fn->name : "the function", a->map->path);
	a->path = a->map->path;
hits:
	for (i = 0; i < p->nnodes; i++) {
		v = node_vaddr(p, &p->nodes[i], a->map, a->fvaddr, a->fsize, a->foff, true);
		if (v == UINT64_MAX)
			continue;
		GROW(a->hits, hitcap, a->nhits + 1);
		a->hits[a->nhits++] = (struct hit){ v, 0 };
	}
	qsort(a->hits, a->nhits, sizeof(*a->hits), cmp_hit);
	return 0;
}

int view_disasm(const struct profile *p, uint32_t node, struct view_disasm *d, struct err *err)
{
	const struct prof_node *nd = profile_node(p, node);
	const struct prof_func *fn = nd ? profile_func(p, nd->func) : NULL;
	struct annotation a;
	size_t i;
	int ret = -1;

	memset(d, 0, sizeof(*d));
	memset(&a, 0, sizeof(a));
	if (!nd || (nd->flags & 0xff) == NODE_ROOT)
		return err_set(err, -1, "no such frame");
	if (locate_node(p, nd, fn, &a, err) || disassemble(&a, err))
		goto out;
	d->path = a.path;
	d->start = a.fvaddr;
	d->size = a.fsize;
	d->file_offset = a.foff;
	d->mapping = a.map ? (uint32_t)(a.map - p->maps) + 1 : 0;
	d->kernel = a.kernel;
	d->insns = xcalloc(a.nrows + 1, sizeof(*d->insns));
	for (i = 0; i < a.nrows; i++) {
		struct view_insn *in = &d->insns[i];
		in->addr = a.rows[i].vaddr;
		in->size = a.rows[i].size;
		in->undecoded = a.rows[i].undecoded;
		memcpy(in->text, a.rows[i].text, sizeof(in->text));
		if (a.kernel || !sym_source_line(a.ss, &a.ref, in->addr, &in->file, &in->line))
			in->file = NULL, in->line = 0;
	}
	d->n = a.nrows;
	/* the session owns the line table's file names: d keeps it */
	d->ss = a.ss;
	a.ss = NULL;
	ret = 0;
out:
	annotation_release(&a);
	return ret;
}

long view_disasm_row(const struct profile *p, const struct view_disasm *d, uint32_t node)
{
	const struct prof_node *nd = profile_node(p, node);
	uint64_t v;
	size_t lo = 0, hi = d->n;
	if (!nd || !d->n || (!d->mapping && !d->kernel))
		return -1;
	v = node_vaddr(p, nd, d->kernel ? NULL : &p->maps[d->mapping - 1], d->start, d->size, d->file_offset,
		       false);
	if (v == UINT64_MAX)
		return -1;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (d->insns[mid].addr + d->insns[mid].size <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->insns[lo].addr <= v ? (long)lo : -1;
}

void view_disasm_release(struct view_disasm *d)
{
	free(d->insns);
	if (d->ss)
		sym_session_free(d->ss);
	memset(d, 0, sizeof(*d));
}

int view_kernel_offsets(const char *name, const uint64_t *addr, size_t n, uint64_t *off)
{
	struct sym_session *ss = sym_session_new();
	size_t i, found = 0;
	for (i = 0; i < n; i++) {
		struct sym_result r;
		memset(&r, 0, sizeof(r));
		sym_lookup_kernel(ss, addr[i], &r);
		/* this boot's kallsyms must name the same function there */
		if (r.name && !strcmp(r.name, name)) {
			off[i] = r.sym_offset;
			found++;
		} else {
			off[i] = UINT64_MAX;
		}
	}
	sym_session_free(ss);
	return (int)found;
}
