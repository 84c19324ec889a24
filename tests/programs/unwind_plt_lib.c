/* unwind_plt_lib.c - build/libunwind_plt.so for unwind_plt.c: one tiny
 * exported function, reached through the caller's PLT. */
unsigned long plt_tiny(unsigned long x)
{
	unsigned long y = x * 6364136223846793005UL + 1442695040888963407UL;
	__asm__ volatile("" : "+r"(y));
	return y;
}
