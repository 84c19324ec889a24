/* table-private.h - what table.c (compiling a module's CFI into its table)
 * and rows.c (the rows for code no CFI covers, and the roots) share. */
#ifndef STAX_UNWIND_TABLE_PRIVATE_H
#define STAX_UNWIND_TABLE_PRIVATE_H

#include "unwind/table.h"

#include <libelf.h>
#include <stdbool.h>

/* Rows where no CFI covers them: x86-64's signal trampolines found by
 * their bytes, _init and _fini, PLT stubs; aarch64's code that makes no
 * frame and PLT stubs. */
void utable_add_nocfi_rows(Elf *elf, struct utable *t);
/* The functions of roots.h's list in elf's symbol tables into t->roots;
 * false when elf has no symbol table. */
bool utable_find_roots(Elf *elf, struct utable *t);
/* glibc's makecontext trampoline (__start_context) as a ROOT_K_CONTEXT. */
void utable_add_start_context(Elf *elf, struct utable *t);

#endif
