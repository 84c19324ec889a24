/* table.c - sorted function-symbol tables and the string arena.
 *
 * Invariant after sym_table_finish(): syms[] is sorted by start, starts
 * are unique, every entry has start < end, and cover[i] is the largest
 * end among syms[0..i] (so a lookup knows when an earlier, enclosing
 * symbol may still cover an address).
 */
#include "symbol/symbol.h"
#include "symbol/symbol-private.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64 * 1024)

struct sym_arena_chunk {
	struct sym_arena_chunk *next;
	size_t used, cap;
	char data[];
};

void sym_arena_release(struct sym_arena *a)
{
	struct sym_arena_chunk *c = a->head, *next;
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

char *sym_arena_strndup(struct sym_arena *a, const char *s, size_t n)
{
	struct sym_arena_chunk *c = a->head;
	char *p;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = MAX((size_t)ARENA_CHUNK, n + 1);
		c = xmalloc(sizeof(*c) + cap);
		c->used = 0;
		c->cap = cap;
		/* A big string gets its own chunk behind the current one, so
		 * the current chunk's free space is not wasted. */
		if (a->head && cap > ARENA_CHUNK) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	memcpy(p, s, n);
	p[n] = '\0';
	c->used += n + 1;
	return p;
}

char *sym_arena_strdup(struct sym_arena *a, const char *s)
{
	return sym_arena_strndup(a, s, strlen(s));
}

void sym_table_release(struct sym_table *t)
{
	free(t->syms);
	free(t->cover);
	free(t->cand);
	memset(t, 0, sizeof(*t));
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* Order by address; among aliases of one address the best name comes
 * first: global before weak before local, then a sized symbol, then the
 * name with fewer leading underscores ("malloc" over "__libc_malloc"),
 * then by name so the choice never depends on input order. */
static int cand_cmp(const void *pa, const void *pb)
{
	const struct sym_cand *a = pa, *b = pb;
	size_t ua, ub;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->bind_rank != b->bind_rank)
		return a->bind_rank < b->bind_rank ? -1 : 1;
	if (a->has_size != b->has_size)
		return a->has_size ? -1 : 1;
	ua = leading_underscores(a->name);
	ub = leading_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Sort the candidates as cand_cmp orders them: a stable radix sort of
 * (start, index) pairs by start, 11 bits a pass, then each run of one
 * start by cand_cmp. A big library has hundreds of thousands of
 * candidates; qsort's merge sort of the 48-byte candidates was 15% of
 * the recorder's CPU in a recording of rustc (librustc_driver, libLLVM). */
#define RADIX_BITS 11

struct cand_key {
	uint64_t start;
	size_t i;
};

void sym_table_sort(struct sym_table *t)
{
	size_t n = t->ncand, i, j, *count;
	struct cand_key *a, *b, *swap;
	struct sym_cand *out;
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned shift;

	if (n < 2)
		return;
	a = xmalloc(n * sizeof(*a));
	b = xmalloc(n * sizeof(*b));
	count = xmalloc(((size_t)1 << RADIX_BITS) * sizeof(*count));
	for (i = 0; i < n; i++) {
		a[i].start = t->cand[i].start;
		a[i].i = i;
		lo = MIN(lo, a[i].start);
		hi = MAX(hi, a[i].start);
	}
	for (shift = 0; shift < 64 && ((hi - lo) >> shift); shift += RADIX_BITS) {
		size_t sum = 0, c;
		memset(count, 0, ((size_t)1 << RADIX_BITS) * sizeof(*count));
		for (i = 0; i < n; i++)
			count[((a[i].start - lo) >> shift) & ((1u << RADIX_BITS) - 1)]++;
		for (i = 0; i < (size_t)1 << RADIX_BITS; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			b[count[((a[i].start - lo) >> shift) & ((1u << RADIX_BITS) - 1)]++] = a[i];
		swap = a;
		a = b;
		b = swap;
	}
	out = xmalloc(n * sizeof(*out));
	for (i = 0; i < n; i++)
		out[i] = t->cand[a[i].i];
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && out[j].start == out[i].start; j++)
			;
		if (j - i > 1)
			qsort(out + i, j - i, sizeof(*out), cand_cmp);
	}
	free(t->cand);
	t->cand = out;
	t->cap_cand = n;
	free(a);
	free(b);
	free(count);
}

const char *sym_table_cand_name(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->ncand;

	/* the first candidate at addr is the best (cand_cmp) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->cand[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->ncand && t->cand[lo].start == addr ? t->cand[lo].name : NULL;
}

void sym_table_finish(struct sym_table *t)
{
	size_t i, j, n = 0;
	uint64_t sized_end = 0; /* the largest end of a sized symbol so far */

	sym_table_sort(t);
	t->syms = xcalloc(t->ncand ? t->ncand : 1, sizeof(*t->syms));
	for (i = 0; i < t->ncand; i = j) {
		const struct sym_cand *best = &t->cand[i];
		uint64_t size = 0, sec_start = 0, sec_end = 0, end;

		for (j = i; j < t->ncand && t->cand[j].start == best->start; j++) {
			size = MAX(size, t->cand[j].size);
			if (t->cand[j].sec_end && !sec_end) {
				sec_start = t->cand[j].sec_start;
				sec_end = t->cand[j].sec_end;
			}
		}
		if (size) {
			end = best->start + size;
			if (end < best->start) /* wraps: corrupt */
				continue;
		} else {
			/* Size 0: up to the next symbol, inside the section,
			 * where no sized symbol says better (a label inside an
			 * assembly function is not the function's name). */
			if (best->start < sized_end)
				continue;
			if (j < t->ncand)
				end = t->cand[j].start;
			else
				end = sec_end;
			if (sec_end) {
				if (best->start < sec_start || best->start >= sec_end)
					continue;
				end = MIN(end, sec_end);
			}
			/* capped; with nothing after it and no section known,
			 * the cap is all there is */
			if (best->max_len && best->start + best->max_len > best->start &&
			    (end <= best->start || end - best->start > best->max_len))
				end = best->start + best->max_len;
		}
		if (end <= best->start)
			continue;
		if (size)
			sized_end = MAX(sized_end, end);
		t->syms[n].start = best->start;
		t->syms[n].end = end;
		t->syms[n].name = best->name;
		t->syms[n].dname = NULL;
		n++;
	}
	t->nsyms = n;
	free(t->cand);
	t->cand = NULL;
	t->ncand = t->cap_cand = 0;

	t->cover = xmalloc((n ? n : 1) * sizeof(*t->cover));
	for (i = 0; i < n; i++)
		t->cover[i] = i ? MAX(t->cover[i - 1], t->syms[i].end) : t->syms[i].end;
}

/* Symbols nested in a larger one are rare (hand-written assembly); look
 * back at most this many entries for an enclosing symbol. */
#define MAX_NEST_WALK 16

struct sym_entry *sym_table_find(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nsyms, i, steps;

	/* Find the last entry with start <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	for (i = lo - 1, steps = 0; steps < MAX_NEST_WALK; i--, steps++) {
		if (t->cover[i] <= addr)
			return NULL;
		if (addr < t->syms[i].end)
			return &t->syms[i];
		if (!i)
			break;
	}
	return NULL;
}

const char *sym_entry_name(struct sym_entry *e, struct sym_arena *a, bool demangle)
{
	char *d;
	if (!demangle)
		return e->name;
	if (!e->dname) {
		d = sym_demangle(e->name);
		e->dname = d ? sym_arena_strdup(a, d) : e->name;
		free(d);
	}
	return e->dname;
}
