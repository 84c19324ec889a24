/* elf-prog.c - the tiny program the crafted ELF seeds of the fuzz corpus
 * are made from (tests/fuzz/make-elf-corpus.sh): a few functions with
 * CFI, calls through the PLT, an inlined function (DWARF inline chains),
 * musl-style signal return trampolines without CFI, which the unwinder
 * recognises by its bytes (and Go's, with CFI), a function whose CFA is a
 * DWARF expression (SLOW rows), crti-style _init and _fini without CFI,
 * and its own _start (built with -nostartfiles,
 * so the files stay small: a few KB) whose CFI ends the stack. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int leaf(int x)
{
	return x * 3 + 1;
}

static inline int twice(int x)
{
	return leaf(x) + leaf(x + 1);
}

__attribute__((noinline)) int mid(int x)
{
	return twice(x) + twice(x * 2);
}

/* mov $15,%rax; syscall (rt_sigreturn), never called; the byte before it
 * (its row starts there) without CFI too */
__asm__(".text\n\thlt\n.globl restore_rt\n.type restore_rt,@function\nrestore_rt:\n"
	"\tmov $15, %rax\n\tsyscall\n\t.size restore_rt, .-restore_rt\n");

/* Two more trampolines back to back, first in a section of their own
 * (the crafted seeds move it: to address 0, onto .text, to the top of
 * the address space), and Go's shape: runtime.sigreturn with the CFI of
 * a plain function after int3 padding (a seed with .go.buildinfo takes
 * the Go search). Never called. */
__asm__(".section tramp,\"ax\",@progbits\n.globl restore_rt2\n.type restore_rt2,@function\n"
	"restore_rt2:\n\tmov $15, %rax\n\tsyscall\n\tmov $15, %rax\n\tsyscall\n"
	"\t.size restore_rt2, .-restore_rt2\n"
	".text\n.globl go_sigreturn\n.type go_sigreturn,@function\ngo_sigreturn:\n"
	"\t.cfi_startproc\n\tint3\n\tmov $15, %rax\n\tsyscall\n\tint3\n\t.cfi_endproc\n"
	"\t.size go_sigreturn, .-go_sigreturn\n");

/* CFA = *(rbp - 8) (a DWARF expression, the DRAP shape gcc uses when it
 * realigns the stack): no compiled rule expresses it, so its rows are
 * SLOW and the interpreter runs again at lookup. Never called. */
__asm__(".text\n.globl slow_cfa\n.type slow_cfa,@function\nslow_cfa:\n"
	"\t.cfi_startproc\n\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset rbp, -16\n"
	"\tmov %rsp, %rbp\n\tlea 16(%rbp), %rax\n\tpush %rax\n"
	"\t.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06\n\tand $-64, %rsp\n\tmov %rbp, %rsp\n"
	"\tpop %rbp\n\t.cfi_def_cfa rsp, 8\n\tret\n\t.cfi_endproc\n\t.size slow_cfa, .-slow_cfa\n");

/* _init and _fini as glibc's crti.o makes them (no CFI; DT_INIT and
 * DT_FINI by -Wl,-init,-fini in make-elf-corpus.sh): sub $8,%rsp; ...;
 * add $8,%rsp; ret. */
__asm__(".text\n.globl prog_init\n.type prog_init,@function\nprog_init:\n"
	"\tendbr64\n\tsub $8, %rsp\n\tnop\n\tadd $8, %rsp\n\tret\n\t.size prog_init, .-prog_init\n"
	".globl prog_fini\n.type prog_fini,@function\nprog_fini:\n"
	"\tsub $8, %rsp\n\tadd $8, %rsp\n\tret\n\t.size prog_fini, .-prog_fini\n");

int main(int argc, char **argv)
{
	printf("%d\n", mid(argc));
	return argc > 5 ? atoi(argv[1]) : 0;
}

__asm__(".text\n.globl _start\n.type _start,@function\n_start:\n"
	"\t.cfi_startproc\n\t.cfi_undefined rip\n"
	"\txor %ebp, %ebp\n\tmov (%rsp), %edi\n\tlea 8(%rsp), %rsi\n"
	"\tcall main\n\tmov %eax, %edi\n\tcall exit\n"
	"\t.cfi_endproc\n\t.size _start, .-_start\n");
