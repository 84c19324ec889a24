/* unwind_nocfi_asm.S - nocfi_leaf(n): n dependent multiply-adds, with a
 * frame pointer and deliberately no .cfi directives (no unwind info). */
	.text
	.globl nocfi_leaf
	.type nocfi_leaf, @function
nocfi_leaf:
	push %rbp
	mov %rsp, %rbp
	mov %rdi, %rax
	mov %rdi, %rcx
	movabs $6364136223846793005, %rdx
	test %rcx, %rcx
	je 2f
1:
	imul %rdx, %rax
	add $1442695040888963407 & 0x7fffffff, %rax
	dec %rcx
	jne 1b
2:
	pop %rbp
	ret
	.size nocfi_leaf, .-nocfi_leaf
	.section .note.GNU-stack,"",@progbits
