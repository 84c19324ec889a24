/* golayout.c - the runtime layout of an aarch64 Go program, from its
 * DWARF (golayout.h). */
#include "ingest/golayout.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <string.h>

#include "lib/elffile.h"
#include "lib/util.h"
#include "module/module.h"

/* The runtime's structures and the members the reader follows: where
 * each member's offset goes (an index into want[]'s results). */
enum { GO_G_M, GO_G_SCHED, GO_G_STACK, GO_M_G0, GO_M_CURG, GO_BUF_SP, GO_BUF_PC, GO_BUF_LR,
       GO_BUF_BP, GO_STACK_HI, GO_N };

static const struct {
	const char *type, *member;
} want[GO_N] = {
	[GO_G_M] = { "runtime.g", "m" },
	[GO_G_SCHED] = { "runtime.g", "sched" },
	[GO_G_STACK] = { "runtime.g", "stack" },
	[GO_M_G0] = { "runtime.m", "g0" },
	[GO_M_CURG] = { "runtime.m", "curg" },
	[GO_BUF_SP] = { "runtime.gobuf", "sp" },
	[GO_BUF_PC] = { "runtime.gobuf", "pc" },
	[GO_BUF_LR] = { "runtime.gobuf", "lr" },
	[GO_BUF_BP] = { "runtime.gobuf", "bp" },
	[GO_STACK_HI] = { "runtime.stack", "hi" },
};

/* The members of structure type die that want[] names: their offsets
 * into off[], their bits into *found. */
static void members(Dwarf_Die *type, const char *name, uint64_t off[GO_N], unsigned *found)
{
	Dwarf_Die m;
	if (dwarf_child(type, &m) != 0)
		return;
	do {
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *mn = dwarf_diename(&m);
		if (dwarf_tag(&m) != DW_TAG_member || !mn ||
		    !dwarf_attr(&m, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &w) != 0)
			continue;
		for (int i = 0; i < GO_N; i++)
			if (!strcmp(want[i].type, name) && !strcmp(want[i].member, mn)) {
				off[i] = w;
				*found |= 1u << i;
			}
	} while (dwarf_siblingof(&m, &m) == 0);
}

/* The four structures, from the top-level DIEs of every unit (Go puts
 * the runtime's types in the runtime's unit; the walk stops once all
 * are found). */
static unsigned find_types(Dwarf *dw, uint64_t off[GO_N])
{
	Dwarf_Off cu = 0, next;
	size_t hsize;
	unsigned found = 0, types = 0;

	while (types != 15u && dwarf_nextcu(dw, cu, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cud, d;
		if (dwarf_offdie(dw, cu + hsize, &cud) && dwarf_child(&cud, &d) == 0) {
			do {
				const char *n;
				int k;
				if (dwarf_tag(&d) != DW_TAG_structure_type || !(n = dwarf_diename(&d)))
					continue;
				k = !strcmp(n, "runtime.g") ? 0 : !strcmp(n, "runtime.m") ? 1 :
				    !strcmp(n, "runtime.gobuf") ? 2 : !strcmp(n, "runtime.stack") ? 3 : -1;
				if (k < 0 || (types & (1u << k)))
					continue;
				types |= 1u << k;
				members(&d, n, off, &found);
			} while (types != 15u && dwarf_siblingof(&d, &d) == 0);
		}
		cu = next;
	}
	return found;
}

bool golayout_read(const char *path, const uint8_t *bid, size_t bid_size, struct moment_goproc *gp)
{
	struct module *mod = module_get(path, bid, bid_size);
	uint64_t off[GO_N] = { 0 };
	unsigned found = 0;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Dwarf *dw;
	int fd;
	Elf *e = module_open(mod, &fd);

	module_put(mod);
	if (!e)
		return false;
	if (gelf_getehdr(e, &eh) && eh.e_machine == EM_AARCH64 &&
	    (elf_file_section(e, ".go.buildinfo", &sh) || elf_file_section(e, ".note.go.buildid", &sh)) &&
	    (dw = dwarf_begin_elf(e, DWARF_C_READ, NULL)) != NULL) {
		found = find_types(dw, off);
		dwarf_end(dw);
	}
	module_close(e, fd);
	if (found != (1u << GO_N) - 1)
		return false;
	for (int i = 0; i < GO_N; i++)
		if (off[i] > UINT16_MAX - 8)
			return false;
	memset(gp, 0, sizeof(*gp));
	gp->g_m = (uint16_t)off[GO_G_M];
	gp->m_g0 = (uint16_t)off[GO_M_G0];
	gp->m_curg = (uint16_t)off[GO_M_CURG];
	gp->g_sched = (uint16_t)off[GO_G_SCHED];
	gp->buf_sp = (uint16_t)off[GO_BUF_SP];
	gp->buf_pc = (uint16_t)off[GO_BUF_PC];
	gp->buf_lr = (uint16_t)off[GO_BUF_LR];
	gp->buf_bp = (uint16_t)off[GO_BUF_BP];
	gp->g_stack_hi = (uint16_t)(off[GO_G_STACK] + off[GO_STACK_HI]);
	return true;
}
