/* elfguard.c - see elfguard.h. */
#include "lib/elfguard.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* state: 0 free, 1 being filled or emptied, 2 guarded */
static struct guard {
	int state;
	int changed;
	Elf *elf;
	uintptr_t lo, hi;
} guards[ELFGUARD_SLOTS];

static struct sigaction old_bus;
static uintptr_t page_size;
static int installed; /* 0 no, 1 being installed, 2 yes, 3 failed */

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	size_t i;
	int e = errno;

	for (i = 0; i < ELFGUARD_SLOTS; i++) {
		struct guard *g = &guards[i];
		if (__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) != 2 || a < g->lo || a >= g->hi)
			continue;
		/* zeros where the file ended; the read is retried on return */
		if (mmap((void *)(a & ~(page_size - 1)), page_size, PROT_READ,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			__atomic_store_n(&g->changed, 1, __ATOMIC_RELEASE);
			errno = e;
			return;
		}
		break;
	}
	/* not ours: whoever handled SIGBUS before, or the default */
	if ((old_bus.sa_flags & SA_SIGINFO) && old_bus.sa_sigaction) {
		old_bus.sa_sigaction(sig, si, uc);
	} else if (old_bus.sa_handler != SIG_DFL && old_bus.sa_handler != SIG_IGN) {
		old_bus.sa_handler(sig);
	} else {
		/* a fault repeats on return, now with the default action; a
		 * SIGBUS sent by kill() is sent again */
		signal(SIGBUS, SIG_DFL);
		if (si->si_code <= 0)
			raise(SIGBUS);
	}
	errno = e;
}

static bool install(void)
{
	int want = 0;
	if (__atomic_compare_exchange_n(&installed, &want, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		struct sigaction sa;
		long ps = sysconf(_SC_PAGESIZE);
		page_size = ps > 0 ? (uintptr_t)ps : 4096;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sigbus;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		__atomic_store_n(&installed, sigaction(SIGBUS, &sa, &old_bus) ? 3 : 2, __ATOMIC_RELEASE);
	}
	while ((want = __atomic_load_n(&installed, __ATOMIC_ACQUIRE)) == 1)
		; /* another thread is installing it: a moment */
	return want == 2;
}

Elf *elfguard_begin(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	char *raw;
	size_t n = 0, i;

	if (!e || !install())
		return e;
	raw = elf_rawfile(e, &n);
	if (!raw || !n)
		return e;
	for (i = 0; i < ELFGUARD_SLOTS; i++) {
		struct guard *g = &guards[i];
		int want = 0;
		if (!__atomic_compare_exchange_n(&g->state, &want, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		g->elf = e;
		g->changed = 0;
		g->lo = (uintptr_t)raw;
		g->hi = (uintptr_t)raw + n;
		__atomic_store_n(&g->state, 2, __ATOMIC_RELEASE);
		break;
	}
	return e; /* all slots in use: unguarded, as elf_begin alone */
}

static struct guard *find(Elf *e)
{
	size_t i;
	for (i = 0; e && i < ELFGUARD_SLOTS; i++)
		if (__atomic_load_n(&guards[i].state, __ATOMIC_ACQUIRE) == 2 && guards[i].elf == e)
			return &guards[i];
	return NULL;
}

bool elfguard_changed(Elf *e)
{
	struct guard *g = find(e);
	return g && __atomic_load_n(&g->changed, __ATOMIC_ACQUIRE);
}

bool elfguard_end(Elf *e)
{
	struct guard *g = find(e);
	bool changed = false;
	if (g) {
		changed = __atomic_load_n(&g->changed, __ATOMIC_ACQUIRE);
		/* unguarded before elf_end() unmaps it: a fault in whatever is
		 * mapped there next is not ours */
		__atomic_store_n(&g->state, 1, __ATOMIC_RELEASE);
		g->elf = NULL;
		__atomic_store_n(&g->state, 0, __ATOMIC_RELEASE);
	}
	if (e)
		elf_end(e);
	return changed;
}
