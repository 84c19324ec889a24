/* unwind_asmcfa_asm.S - two CFI shapes of OpenSSL's x86-64 assembly.
 *
 * rax_frame(n): keeps its entry stack pointer in rax and says so in its
 *   CFI (CFA = rax + 8, as aesni_gcm_encrypt does), realigns rsp, and
 *   calls rax_leaf(n), whose CFI says nothing of rax, which it leaves
 *   alone (as _aesni_ctr32_ghash_6x).
 * below_frame(n): saves its entry stack pointer just below rsp, in the
 *   red zone, and its CFA is read from there (DW_OP_breg7 -8; DW_OP_deref;
 *   DW_OP_plus_uconst 8, as sha512_block_data_order_avx2 does), then
 *   loops n times. No stack copy holds what lies below rsp.
 */
	.text

	.globl rax_frame
	.type rax_frame, @function
rax_frame:
	.cfi_startproc
	mov	%rsp, %rax
	.cfi_def_cfa_register %rax
	push	%rbx
	.cfi_offset %rbx, -16
	sub	$64, %rsp
	and	$-32, %rsp
	call	rax_leaf
	mov	-8(%rax), %rbx
	.cfi_restore %rbx
	mov	%rax, %rsp
	.cfi_def_cfa_register %rsp
	ret
	.cfi_endproc
	.size rax_frame, .-rax_frame

	.type rax_leaf, @function
rax_leaf:
	.cfi_startproc
1:	dec	%rdi
	jnz	1b
	ret
	.cfi_endproc
	.size rax_leaf, .-rax_leaf

	.globl below_frame
	.type below_frame, @function
below_frame:
	.cfi_startproc
	mov	%rsp, %rax
	.cfi_def_cfa_register %rax
	sub	$128, %rsp
	and	$-64, %rsp
	mov	%rax, -8(%rsp)
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 -8; DW_OP_deref; DW_OP_plus_uconst 8 */
	.cfi_escape 0x0f, 0x05, 0x77, 0x78, 0x06, 0x23, 0x08
1:	dec	%rdi
	jnz	1b
	mov	-8(%rsp), %rsp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size below_frame, .-below_frame

	.section .note.GNU-stack, "", @progbits
