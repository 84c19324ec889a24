/* symbolize.c - give every stack node its function, source line and
 * inline frames.
 *
 * Each distinct (mapping, address, kind, return-address flag) is resolved
 * once into a chain of frames, innermost first, ending with the function
 * that holds the code: from the file's symbols chunk when it has the key,
 * else from the binaries as they are now (the same symbolizer the
 * recorder uses at stop). Then each node takes the first frame of its
 * chain, and the rest become new nodes between it and its caller (see
 * NODE_F_INLINE in profile.h), so every view that walks parents sees
 * inline frames without knowing about them.
 */
#include "profile/profile.h"
#include "symbol/symbol.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kframe {
	uint32_t func;
	uint32_t line;
	const char *file;
	bool inlined;
};

struct symctx {
	struct profile *p;
	const struct prof_sym_opts *o;
	struct stack_table keys;   /* (mapping, addr, kind, ra) -> key id */
	uint32_t *kfirst, *kcount; /* key -> frames fr[kfirst .. +kcount) */
	size_t kcap, kcap2;
	struct kframe *fr;
	size_t nfr, frcap;
	struct hmap files;         /* hash of file name -> index in filev */
	const char **filev;
	size_t nfiles, filecap;
	struct sym_session *ss;
	struct hmap modules;       /* modules whose source is noted */
};

/* Files are shared by many frames: one owned copy each. */
static const char *file_intern(struct symctx *c, const char *f)
{
	uint64_t h;
	uint32_t idx;
	if (!f || !*f)
		return NULL;
	for (h = hash_bytes(f, strlen(f));; h = hash_next(h)) {
		if (!hmap_get(&c->files, h, &idx))
			break;
		if (!strcmp(c->filev[idx], f))
			return c->filev[idx];
	}
	GROW(c->filev, c->filecap, c->nfiles + 1);
	c->filev[c->nfiles] = profile_own(c->p, f, strlen(f));
	hmap_put(&c->files, h, (uint32_t)c->nfiles);
	return c->filev[c->nfiles++];
}

static uint32_t func_intern(struct profile *p, const char *name, const char *module,
			    bool known, bool kernel, const char *file, uint32_t line)
{
	uint64_t h = hash_mix(hash_bytes(name, strlen(name)), hash_bytes(module, strlen(module)));
	uint32_t id;
	h = hash_mix(h, (known ? 1 : 0) | (kernel ? 2 : 0));
	if (file)
		h = hash_mix(hash_mix(h, hash_bytes(file, strlen(file))), line);
	/* probe a chain of keys until the exact function is found or a free one */
	for (;; h = hash_next(h)) {
		const struct prof_func *f;
		if (!hmap_get(&p->func_index, h, &id))
			break;
		f = &p->funcs[id - 1];
		if (!strcmp(f->name, name) && !strcmp(f->module, module) &&
		    f->known == known && f->kernel == kernel && f->line == line &&
		    (f->file == file || (f->file && file && !strcmp(f->file, file))))
			return id;
	}
	GROW(p->funcs, p->funccap, p->nfuncs + 1);
	p->funcs[p->nfuncs] = (struct prof_func){ profile_own(p, name, strlen(name)),
						   profile_own(p, module, strlen(module)), known, kernel,
						   file, file ? line : 0, NULL };
	if (file) {
		/* line 0 (code DWARF gives no line): the file alone. A Python
		 * frame read from the interpreter ("py::QUALNAME:FILE") is
		 * "py::QUALNAME (file.py:LINE)", as py-spy shows it */
		size_t n = strlen(name), fl = strlen(file);
		int shown = (int)n;
		char *l;
		if (!strcmp(module, PYFRAME_MODULE) && !strncmp(name, "py::", 4) && n > fl + 5 &&
		    name[n - fl - 1] == ':' && !strcmp(name + n - fl, file))
			shown = (int)(n - fl - 1);
		l = line ? xasprintf("%.*s (%s:%u)", shown, name, path_base(file), line)
			 : xasprintf("%.*s (%s)", shown, name, path_base(file));
		p->funcs[p->nfuncs].label = profile_own(p, l, strlen(l));
		free(l);
	} else {
		p->funcs[p->nfuncs].label = p->funcs[p->nfuncs].name;
	}
	id = (uint32_t)++p->nfuncs;
	hmap_put(&p->func_index, h, id);
	return id;
}

static uint32_t func_for(struct symctx *c, const char *name, uint64_t offset, const char *module,
			 bool known, bool kernel, const char *file, uint32_t line)
{
	char buf[512], *dm = NULL;
	uint32_t id;
	if (!c->o->lines || !file) {
		file = NULL;
		line = 0;
	}
	if (!module || !*module)
		module = kernel ? "[kernel.kallsyms]" : "[unknown]";
	if (known && name && *name) {
		if (c->o->demangle)
			dm = sym_demangle(name);
		id = func_intern(c->p, dm ? dm : name, module, true, kernel, file, line);
		free(dm);
		return id;
	}
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, module, offset);
	return func_intern(c->p, buf, module, false, kernel, file, line);
}

static void add_frame(struct symctx *c, uint32_t func, const char *file, uint32_t line, bool inlined)
{
	GROW(c->fr, c->frcap, c->nfr + 1);
	c->fr[c->nfr++] = (struct kframe){ func, file ? line : 0, file, inlined };
}

/* Record key k's chain as frames [first, nfr). */
static void key_done(struct symctx *c, uint32_t k, size_t first)
{
	GROW(c->kfirst, c->kcap, k + 1);
	GROW(c->kcount, c->kcap2, k + 1);
	c->kfirst[k] = (uint32_t)first;
	c->kcount[k] = (uint32_t)(c->nfr - first);
}

static void chain_from_file(struct symctx *c, uint32_t k, const struct prof_sym *s)
{
	const struct profile *p = c->p;
	uint32_t kind = s->rs.flags & 0xff;
	size_t first = c->nfr, i;
	bool kernel = kind == NODE_KERNEL;
	const char *module = s->module && *s->module ? s->module : NULL;

	if (!c->o->no_inline)
		for (i = 0; i < s->ninl && s->inl + i < p->nsym_inl; i++) {
			const struct prof_inline *in = &p->sym_inl[s->inl + i];
			const char *f = file_intern(c, in->file);
			add_frame(c, func_for(c, in->name, 0, module ? module : "[unknown]", in->name != NULL,
					      kernel, f, in->line), f, in->line, true);
		}
	{
		const char *f = file_intern(c, s->file);
		add_frame(c, func_for(c, s->name, s->rs.offset, module, s->rs.flags & SYMBOL_F_KNOWN,
				      kernel, f, s->line), f, s->line, false);
	}
	key_done(c, k, first);
}

static void note_module(struct symctx *c, const struct module_ref *ref, const char *module)
{
	uint64_t h = hash_bytes(module, strlen(module));
	uint32_t v;
	char key[300], val[128];
	const char *src;
	size_t nsyms;
	if (hmap_get(&c->modules, h, &v))
		return;
	hmap_put(&c->modules, h, 1);
	snprintf(key, sizeof(key), "symbols:%s", module);
	if (profile_meta(c->p, key))
		return;
	if (!sym_module_info(c->ss, ref, &src, &nsyms))
		src = "not found";
	snprintf(val, sizeof(val), "%s, lines from %s", src, sym_module_dwarf_source(c->ss, ref));
	profile_add_meta(c->p, key, val);
}

static void session_start(struct symctx *c)
{
	const struct profile *p = c->p;
	size_t i;
	c->ss = sym_session_new();
	sym_set_demangle(c->ss, false); /* func_for demangles */
	for (i = 0; i < p->nperfmaps; i++)
		sym_jit_set_perfmap(c->ss, p->perfmaps[i].pid, p->perfmaps[i].data, p->perfmaps[i].size);
	for (i = 0; i < p->nmaps; i++)
		if (sym_path_is_jitdump(p->maps[i].path))
			sym_jit_add_dump(c->ss, p->maps[i].pid, p->maps[i].path);
}

static void chain_live(struct symctx *c, uint32_t k, const struct prof_node *nd, uint32_t pid)
{
	struct profile *p = c->p;
	uint32_t kind = nd->flags & 0xff;
	bool kernel = kind == NODE_KERNEL;
	uint64_t a = nd->addr - ((nd->flags & NODE_F_RA) ? 1 : 0);
	size_t first = c->nfr, i;
	struct sym_result res;
	const char *f;

	memset(&res, 0, sizeof(res));
	if (nd->flags & NODE_F_LOST) {
		/* a stand-in for the frames a damaged chunk defined */
		res.name = "[damaged]";
		res.module = "[damaged]";
	} else if (p->no_live_symbols) {
		res.module = kernel ? NULL : "[unknown]";
		res.file_offset = nd->addr;
	} else {
		const struct prof_mapping *m = nd->mapping && nd->mapping <= p->nmaps ?
					       &p->maps[nd->mapping - 1] : NULL;
		if (!c->ss)
			session_start(c);
		if (kernel) {
			sym_lookup_kernel(c->ss, a, &res);
		} else {
			struct module_ref ref = { 0 };
			if (m)
				ref = profile_mapping_ref(m);
			sym_lookup_user(c->ss, m ? &ref : NULL, m ? m->pid : 0, pid, a, &res);
			if (m && !sym_path_is_anon(m->path) && res.module)
				note_module(c, &ref, res.module);
		}
	}
	if (!c->o->no_inline)
		for (i = 0; i < res.ninlined; i++) {
			const struct sym_frame *in = &res.inlined[i];
			f = file_intern(c, in->file);
			add_frame(c, func_for(c, in->name, 0, res.module, in->name != NULL, kernel, f, in->line),
				  f, in->line, true);
		}
	f = file_intern(c, res.file);
	add_frame(c, func_for(c, res.name, res.name ? res.sym_offset : res.has_vaddr ? res.func_vaddr :
			      res.file_offset, res.module,
			      res.name != NULL, kernel, f, res.line), f, res.line, false);
	key_done(c, k, first);
}

/* Depth of every node, now that parents may come after children. */
static void compute_depths(struct profile *p)
{
	uint32_t *path = NULL;
	size_t cap = 0, i;
	for (i = 0; i < p->nnodes; i++)
		p->nodes[i].depth = UINT32_MAX;
	for (i = 0; i < p->nnodes; i++) {
		size_t n = 0;
		uint32_t id = (uint32_t)(i + 1), d;
		while (id && p->nodes[id - 1].depth == UINT32_MAX && n <= p->nnodes) {
			GROW(path, cap, n + 1);
			path[n++] = id;
			id = p->nodes[id - 1].parent;
		}
		d = id ? p->nodes[id - 1].depth + 1 : 0;
		while (n-- > 0)
			p->nodes[path[n] - 1].depth = d++;
	}
	free(path);
}

void profile_symbolize_opts(struct profile *p, const struct prof_sym_opts *o)
{
	struct symctx c;
	uint32_t *pid = NULL;
	size_t i, loaded = p->nnodes;

	if (p->symbolized)
		return;
	p->symbolized = true;
	p->nnodes_loaded = loaded;
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.o = o;
	stack_table_init(&c.keys);
	hmap_init(&c.files);
	hmap_init(&c.modules);
	/* symbols stored in the file come first */
	for (i = 0; i < p->nsyms; i++) {
		const struct prof_sym *s = &p->syms[i];
		uint32_t kind = s->rs.flags & 0xff, k;
		size_t before = c.keys.n;
		if (kind != NODE_KERNEL && kind != NODE_USER)
			continue;
		k = stack_intern(&c.keys, s->rs.mapping, s->rs.addr, kind, s->rs.flags & NODE_F_RA);
		if (c.keys.n != before)
			chain_from_file(&c, k, s);
	}
	pid = xcalloc(loaded + 1, sizeof(*pid));
	for (i = 0; i < loaded; i++) {
		uint32_t kind = p->nodes[i].flags & 0xff, k, n, j, child, orig_parent;
		size_t before = c.keys.n;
		const struct kframe *fr;
		if (kind == NODE_ROOT) {
			pid[i] = (uint32_t)p->nodes[i].addr;
			continue;
		}
		pid[i] = p->nodes[i].parent && p->nodes[i].parent <= i ? pid[p->nodes[i].parent - 1] : 0;
		k = stack_intern(&c.keys, p->nodes[i].mapping, p->nodes[i].addr, kind,
				 p->nodes[i].flags & NODE_F_RA);
		if (c.keys.n != before)
			chain_live(&c, k, &p->nodes[i], pid[i]);
		fr = &c.fr[c.kfirst[k]];
		n = c.kcount[k];
		/* the node is the innermost frame; the others go between it and its caller */
		p->nodes[i].func = fr[0].func;
		p->nodes[i].file = fr[0].file;
		p->nodes[i].line = fr[0].line;
		if (fr[0].inlined)
			p->nodes[i].flags |= NODE_F_INLINE;
		child = (uint32_t)(i + 1);
		orig_parent = p->nodes[i].parent;
		for (j = 1; j < n; j++) {
			struct prof_node *nn;
			GROW(p->nodes, p->nodecap, p->nnodes + 1);
			nn = &p->nodes[p->nnodes];
			*nn = p->nodes[i];
			nn->flags = (p->nodes[i].flags & ~NODE_F_INLINE) | (fr[j].inlined ? NODE_F_INLINE : 0);
			nn->func = fr[j].func;
			nn->file = fr[j].file;
			nn->line = fr[j].line;
			nn->parent = orig_parent;
			/* nn takes over the original caller; the child points at nn */
			p->nodes[child - 1].parent = (uint32_t)(p->nnodes + 1);
			child = (uint32_t)++p->nnodes;
		}
	}
	if (p->nnodes != loaded)
		compute_depths(p);
	free(pid);
	if (c.ss)
		sym_session_free(c.ss);
	free(c.kfirst);
	free(c.kcount);
	free(c.fr);
	free(c.filev);
	hmap_release(&c.files);
	hmap_release(&c.modules);
	stack_table_release(&c.keys);
}

void profile_symbolize(struct profile *p, bool demangle)
{
	struct prof_sym_opts o = { demangle, false, false };
	profile_symbolize_opts(p, &o);
}

size_t profile_stack_frames(const struct profile *p, uint32_t stack, struct prof_frame *out,
			    size_t max)
{
	size_t n = 0;
	const struct prof_node *nd = profile_node(p, stack);
	uint32_t id = stack;
	while (nd && n < max) {
		if ((nd->flags & 0xff) != NODE_ROOT)
			out[n++] = (struct prof_frame){ id, nd->func, nd->file, nd->line,
							(nd->flags & NODE_F_INLINE) != 0,
							(nd->flags & 0xff) == NODE_KERNEL };
		id = nd->parent;
		nd = profile_node(p, id);
	}
	return n;
}
