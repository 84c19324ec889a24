/* elf-prog.c - the tiny program the crafted ELF seeds of the fuzz corpus
 * are made from (tests/fuzz/make-elf-corpus.sh): a few functions with
 * CFI, calls through the PLT, an inlined function (DWARF inline chains),
 * a musl-style signal return trampoline without CFI, which the unwinder
 * recognises by its bytes, and its own _start (built with -nostartfiles,
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

/* mov $15,%rax; syscall (rt_sigreturn), never called */
__asm__(".text\n.globl restore_rt\n.type restore_rt,@function\nrestore_rt:\n"
	"\tmov $15, %rax\n\tsyscall\n\t.size restore_rt, .-restore_rt\n");

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
