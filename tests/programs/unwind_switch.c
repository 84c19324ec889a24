/* unwind_switch.c - work run on a fresh stack segment, the way Rust's
 * stacker grows rustc's stack: psm's rust_psm_on_stack (the same
 * instructions and CFI as the psm crate's x86-64 assembly, under the same
 * name, which is how stax knows it) moves rsp to an mmap'd segment and
 * calls the callback there. The caller's frames stay on the thread's own
 * stack, outside the stack copy of a sample taken on the segment.
 * Expected samples, root first:
 *   _start;...;main;run_switched;rust_psm_on_stack;on_segment;hot   ~100%
 * Built without frame pointers (gcc): the kernel's frame-pointer chain
 * cannot reach main; the live recorder reads the thread's stack instead.
 * usage: unwind_switch [SCALE]   (about 1 s of CPU at scale 1)
 */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

void rust_psm_on_stack(uintptr_t data, uintptr_t ret, void (*cb)(uintptr_t, uintptr_t),
		       void *sp);
__asm__(".text\n"
	".globl rust_psm_on_stack\n"
	".type rust_psm_on_stack,@function\n"
	"rust_psm_on_stack:\n"
	".cfi_startproc\n"
	"pushq %rbp\n"
	".cfi_def_cfa %rsp, 16\n"
	".cfi_offset %rbp, -16\n"
	"movq %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"movq %rcx, %rsp\n"
	"callq *%rdx\n"
	"movq %rbp, %rsp\n"
	"popq %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"retq\n"
	".cfi_endproc\n"
	".size rust_psm_on_stack, .-rust_psm_on_stack\n");

static volatile uint64_t sink;

static NOINLINE void hot(uint64_t n)
{
	uint64_t x = sink;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + i;
	sink = x;
}

static NOINLINE void on_segment(uintptr_t data, uintptr_t ret)
{
	hot(data);
	*(volatile uintptr_t *)ret = 1;
	KEEP_FRAME();
}

static NOINLINE int run_switched(void *top, uint64_t n)
{
	volatile uintptr_t done = 0;
	rust_psm_on_stack((uintptr_t)n, (uintptr_t)&done, on_segment, top);
	KEEP_FRAME();
	return (int)done;
}

int main(int argc, char **argv)
{
	double scale = arg_scale(argc, argv, 1, 1.0);
	size_t size = 1 << 20;
	char *seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
			 -1, 0);
	if (seg == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (long k = 0; k < (long)(400 * scale); k++)
		if (!run_switched(seg + size - 64, 1000000))
			return 1;
	printf("done\n");
	return 0;
}
