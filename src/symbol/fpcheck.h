/* fpcheck.h - does a binary keep frame pointers?
 *
 * Looks at the first instructions of every function symbol: a function
 * built with frame pointers starts with push %rbp; mov %rsp,%rbp (after an
 * optional endbr64). Used by stax doctor to name the modules that break
 * frame-pointer stacks.
 */
#ifndef STAX_SYMBOL_FPCHECK_H
#define STAX_SYMBOL_FPCHECK_H

#include <stdbool.h>
#include <stddef.h>

struct fp_report {
	size_t functions;      /* function symbols with code looked at */
	size_t with_fp;        /* of those, starting with the frame-pointer prologue */
	bool has_eh_frame;     /* .eh_frame present (DWARF unwinding possible) */
	bool has_debug_frame;
	bool has_symtab;
};

struct module;
/* Fill r for module m's binary (judged once per module: its MODULE_FP
 * part). Returns 0, or -ENOENT when it cannot be opened (or is another
 * build), -EINVAL when it is not usable ELF, -EIO when it changed while
 * being read. */
int fp_check_module(struct module *m, struct fp_report *r);
/* The same for the file at path. */
int fp_check_file(const char *path, struct fp_report *r);

#endif
