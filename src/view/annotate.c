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

/* Pick the function: as callers and callees do (view_find_funcs), a
 * user-space one. The mapping with the most samples of it is the one
 * read. */
static uint32_t find_target(const struct profile *p, const char *what, struct err *err)
{
	bool *set = xcalloc(p->nfuncs + 1, sizeof(*set));
	uint32_t f = view_find_funcs(p, what, set, err);
	const struct prof_func *fn = f ? profile_func(p, f) : NULL;

	free(set);
	if (fn && fn->kernel) {
		err_set(err, -1, "%s is a kernel function (annotate reads user-space binaries)",
			 fn->name);
		return 0;
	}
	return fn ? f : 0;
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

int view_annotate(const struct profile *p, const struct view_filter *f, const char *what,
		  bool json, bool color, FILE *out, struct err *err)
{
	uint32_t target = find_target(p, what, err), best_map = 0;
	const struct prof_func *tf = profile_func(p, target);
	struct hit *hits = NULL;
	size_t nhits = 0, hitcap = 0, i, j, ninsn = 0, nrows = 0, rowcap = 0, nlines = 0, linecap = 0;
	size_t nbound = 0, boundcap = 0, nundecoded = 0;
	uint64_t total = 0, kept = 0, in_func = 0, elsewhere = 0, *per_map = NULL, fvaddr, fsize, foff;
	uint64_t *bound = NULL, at;
	struct sym_session *ss = NULL;
	struct insn_row *rows = NULL;
	struct line_row *lines = NULL, **order = NULL;
	const struct prof_mapping *m;
	struct module_ref ref;
	struct src_cache sc = { 0 };
	uint8_t *code = NULL;
	cs_insn *insn = NULL;
	csh cs = 0;
	int ret = -1;

	if (!target)
		return -1;
	per_map = xcalloc(p->nmaps + 1, sizeof(*per_map));
	for (i = 0; i < p->nsamples; i++) {
		const struct rec_sample *s = &p->samples[i];
		const struct prof_node *nd;
		if (!view_keep(p, f, s))
			continue;
		kept++;
		nd = profile_node(p, s->stack);
		/* the leaf's own frame: skip the inline frames above it */
		while (nd && (nd->flags & NODE_F_INLINE))
			nd = profile_node(p, nd->parent);
		if (!nd || (nd->flags & 0xff) != NODE_USER || !same_func(profile_func(p, nd->func), tf))
			continue;
		nd = profile_node(p, s->stack);
		GROW(hits, hitcap, nhits + 1);
		hits[nhits++] = (struct hit){ nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0), nd->mapping };
		if (nd->mapping <= p->nmaps)
			per_map[nd->mapping]++;
	}
	for (i = 1; i <= p->nmaps; i++)
		if (per_map[i] > per_map[best_map])
			best_map = (uint32_t)i;
	if (!best_map || !nhits) {
		err_set(err, -1, "%s has no samples of its own here (it is only a caller; see stax top)", what);
		goto out;
	}
	m = &p->maps[best_map - 1];
	ref = profile_mapping_ref(m);
	ss = sym_session_new();
	for (i = 0; i < nhits && hits[i].mapping != best_map; i++)
		;
	if (!sym_function_range(ss, &ref, hits[i].addr, &fvaddr, &fsize, &foff) || !fsize ||
	    fsize > MAX_FUNC_BYTES) {
		err_set(err, -1, "cannot find %s in %s (the binary changed or is gone; annotate needs it)",
			 what, m->path);
		goto out;
	}
	if (read_bytes(m, foff, fsize, &code)) {
		err_set(err, -1, "cannot read %s from %s (annotate needs the binary)", what, m->path);
		goto out;
	}
	/* Every sample of the function, as an ELF address of this module:
	 * from every mapping of the same file (several processes, or the
	 * file mapped twice); the rest (another file of the same name, or a
	 * function of the same name elsewhere in it) is counted apart. */
	for (i = 0; i < nhits; i++) {
		const struct prof_mapping *hm = hits[i].mapping && hits[i].mapping <= p->nmaps ?
						&p->maps[hits[i].mapping - 1] : NULL;
		uint64_t off;
		if (!hm || hm->start > hits[i].addr || (hm != m && !same_file(hm, m))) {
			hits[i].addr = UINT64_MAX;
			continue;
		}
		off = hits[i].addr - hm->start + hm->pgoff;
		hits[i].addr = off >= foff && off - foff < fsize ? off - foff + fvaddr : UINT64_MAX;
	}
	qsort(hits, nhits, sizeof(*hits), cmp_hit);
	for (j = nhits; j > 0 && hits[j - 1].addr == UINT64_MAX; j--)
		elsewhere++;
	nhits = j;
	if (!cs_fn.open && load_library(CAPSTONE_SONAME, ARRAY_SIZE(cs_names), cs_names,
					(void **)&cs_fn, err)) {
		err_append(err, " (install it: apt-get install libcapstone4)");
		goto out;
	}
	if (cs_fn.open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		err_set(err, -1, "capstone cannot disassemble x86-64 (reinstall libcapstone4)");
		goto out;
	}
	/* where decoding may resume after bytes capstone cannot decode: the
	 * sampled addresses, line-table rows, symbol and FDE starts, and the
	 * targets of the branches decoded so far; never byte by byte */
	nbound = nhits;
	bound = xmalloc((nhits + MAX_BOUNDS + 1) * sizeof(*bound));
	for (i = 0; i < nhits; i++)
		bound[i] = hits[i].addr;
	nbound += sym_boundaries(ss, &ref, fvaddr, fvaddr + fsize, bound + nbound, MAX_BOUNDS);
	boundcap = nhits + MAX_BOUNDS + 1;
	sort_bounds(bound, &nbound);
	for (at = fvaddr; at < fvaddr + fsize;) {
		size_t k = 0, got;
		uint64_t next, b;
		struct insn_row *r;
		got = cs_fn.disasm(cs, code + (at - fvaddr), fsize - (at - fvaddr), at, 1, &insn);
		/* the next known boundary after at */
		b = next_bound(bound, nbound, at);
		if (got == 1 && (b == UINT64_MAX || b >= at + insn[0].size)) {
			GROW(rows, rowcap, nrows + 1);
			r = &rows[nrows++];
			memset(r, 0, sizeof(*r));
			r->vaddr = at;
			r->size = insn[0].size;
			snprintf(r->text, sizeof(r->text), "%s%s%s", insn[0].mnemonic,
				 insn[0].op_str[0] ? " " : "", insn[0].op_str);
			if (branch_target(insn[0].mnemonic, insn[0].op_str, &next) && next > at &&
			    next < fvaddr + fsize) {
				GROW(bound, boundcap, nbound + 1);
				bound[nbound++] = next;
				sort_bounds(bound, &nbound);
			}
			ninsn++;
			at += insn[0].size;
		} else {
			/* undecodable, or an instruction that would run over a
			 * known boundary (so it is garbage): show the bytes up
			 * to the next boundary */
			next = b != UINT64_MAX && b < fvaddr + fsize ? b : fvaddr + fsize;
			GROW(rows, rowcap, nrows + 1);
			r = &rows[nrows++];
			memset(r, 0, sizeof(*r));
			r->vaddr = at;
			r->size = next - at;
			r->undecoded = true;
			k = (size_t)snprintf(r->text, sizeof(r->text), "(%" PRIu64 " bytes capstone cannot decode:",
					     r->size);
			for (b = at; b < next && b < at + 12 && k < sizeof(r->text); b++)
				k += (size_t)snprintf(r->text + k, sizeof(r->text) - k, " %02x", code[b - fvaddr]);
			if (k < sizeof(r->text))
				snprintf(r->text + k, sizeof(r->text) - k, "%s)", next > at + 12 ? " ..." : "");
			nundecoded++;
			at = next;
		}
		if (got)
			cs_fn.free(insn, got);
		insn = NULL;
	}
	for (i = 0; i < nrows; i++) {
		struct insn_row *r = &rows[i];
		size_t lo = 0, hi = nhits;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (hits[mid].addr < r->vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nhits && hits[lo].addr < r->vaddr + r->size; lo++)
			r->count++;
		in_func += r->count;
		r->line_idx = -1;
		if (sym_source_line(ss, &ref, r->vaddr, &r->file, &r->line)) {
			for (j = 0; j < nlines; j++)
				if (lines[j].line == r->line && !strcmp(lines[j].file, r->file))
					break;
			if (j == nlines) {
				GROW(lines, linecap, nlines + 1);
				lines[nlines++] = (struct line_row){ r->file, r->line, 0, false };
			}
			lines[j].count += r->count;
			r->line_idx = (int)j;
		}
	}
	total = in_func + elsewhere;
	order = xcalloc(nlines + 1, sizeof(*order));
	for (i = 0; i < nlines; i++)
		order[i] = &lines[i];
	qsort(order, nlines, sizeof(*order), cmp_line_count);
	for (i = 0; i < nlines && i < HOT_LINES && order[i]->count; i++)
		order[i]->hot = true;

	if (json) {
		fputs(JSON_OPEN "\"function\":", out);
		json_str(out, tf->name);
		fputs(",\"module\":", out);
		json_str(out, tf->module);
		fputs(",\"path\":", out);
		json_str(out, m->path);
		fputs(",\"start\":", out);
		json_addr(out, fvaddr);
		fprintf(out, ",\"size\":%" PRIu64 ",\"samples\":%" PRIu64
			",\"samples_kept\":%" PRIu64 ",\"samples_elsewhere\":%" PRIu64 ",\"instructions\":[",
			fsize, total, kept, elsewhere);
		for (i = 0; i < nrows; i++) {
			fputs(i ? ",{\"addr\":" : "{\"addr\":", out);
			json_addr(out, rows[i].vaddr);
			fprintf(out, ",\"samples\":%" PRIu64 ",\"percent\":%.2f,\"asm\":", rows[i].count,
				total ? 100.0 * rows[i].count / total : 0.0);
			json_str(out, rows[i].text);
			if (rows[i].undecoded)
				fprintf(out, ",\"undecoded\":true,\"bytes\":%" PRIu64, rows[i].size);
			if (rows[i].file) {
				fputs(",\"file\":", out);
				json_str(out, rows[i].file);
				if (rows[i].line)
					fprintf(out, ",\"line\":%u", rows[i].line);
			}
			fputc('}', out);
		}
		fputs("],\"lines\":[", out);
		for (i = 0; i < nlines; i++) {
			const char *text = src_line(&sc, order[i]->file, order[i]->line);
			fprintf(out, "%s{\"file\":", i ? "," : "");
			json_str(out, order[i]->file);
			if (order[i]->line)
				fprintf(out, ",\"line\":%u", order[i]->line);
			fprintf(out, ",\"samples\":%" PRIu64 ",\"percent\":%.2f,\"source\":",
				order[i]->count, total ? 100.0 * order[i]->count / total : 0.0);
			if (text)
				json_str(out, text);
			else
				fputs("null", out);
			fputc('}', out);
		}
		fputs("]}\n", out);
		ret = 0;
		goto out;
	}
	fprintf(out, "%s (%s, %s) at 0x%" PRIx64 ", %" PRIu64 " bytes: %" PRIu64 " samples (%.1f%% of %" PRIu64 ")\n",
		tf->name, tf->module, m->path, fvaddr, fsize, total, kept ? 100.0 * total / kept : 0.0, kept);
	if (elsewhere)
		fprintf(out, "%" PRIu64 " of them at addresses outside this function's bytes (another function"
			" named %s in %s, or another build of it): not in the listing\n", elsewhere, tf->name,
			tf->module);
	if (nundecoded)
		fprintf(out, "%zu byte range%s capstone cannot decode, shown with their samples; decoding resumes"
			" at known instruction starts (samples, line rows, symbols, FDEs, branch targets)\n",
			nundecoded, nundecoded == 1 ? "" : "s");
	if (nlines) {
		fputs("hottest lines:\n", out);
		for (i = 0; i < nlines && i < HOT_LINES && order[i]->count; i++)
			/* "%.0u" prints nothing for line 0 (no line) */
			fprintf(out, "  %6.2f%% %8" PRIu64 "  %s%s%.0u\n",
				total ? 100.0 * order[i]->count / total : 0.0, order[i]->count,
				path_base(order[i]->file), order[i]->line ? ":" : "", order[i]->line);
	}
	fprintf(out, "\n%8s %8s  %-12s %s\n", "PERCENT", "SAMPLES", "ADDRESS", "INSTRUCTION");
	for (i = 0; i < nrows; i++) {
		const struct insn_row *r = &rows[i];
		bool hot = r->line_idx >= 0 && lines[r->line_idx].hot;
		if (r->file && (!i || r->line != rows[i - 1].line || strcmp(r->file, rows[i - 1].file ? rows[i - 1].file : ""))) {
			const char *text = src_line(&sc, r->file, r->line);
			const struct line_row *lr = &lines[r->line_idx];
			char share[32] = "";
			if (lr->count && total)
				snprintf(share, sizeof(share), "  [%.1f%%]", 100.0 * lr->count / total);
			fprintf(out, "%s%25s %s%s%.0u%s%s%s%s\n", hot && color ? "\033[1;31m" : "", "",
				path_base(r->file), r->line ? ":" : "", r->line, text ? "  " : "",
				text ? text : "", share,
				hot && color ? "\033[0m" : "");
		}
		if (r->count)
			fprintf(out, "%s%7.2f%% %8" PRIu64 "%s  %-12" PRIx64 " %s\n", color && hot ? "\033[31m" : "",
				total ? 100.0 * r->count / total : 0.0, r->count, color && hot ? "\033[0m" : "",
				r->vaddr, r->text);
		else
			fprintf(out, "%8s %8s  %-12" PRIx64 " %s\n", "", "", r->vaddr, r->text);
	}
	if (!ninsn)
		fputs("(capstone decoded no instructions)\n", out);
	ret = 0;
out:
	free(bound);
	if (cs)
		cs_fn.close(&cs);
	src_release(&sc);
	free(code);
	free(rows);
	free(lines);
	free(order);
	free(hits);
	free(per_map);
	if (ss)
		sym_session_free(ss);
	return ret;
}
