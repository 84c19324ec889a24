/* roots.c - the list of root and stack-switch functions (roots.h). */
#include "unwind/roots.h"
#include "unwind/unwind.h"

#include <stdint.h>
#include <string.h>

#include "lib/util.h"

static const struct {
	const char *name;
	enum root_kind kind;
} known[] = {
	/* C: main, the libc frames that call it (Debian's libc has no
	 * frame pointers, so a chain may end there), thread and process
	 * start functions */
	{ "main", ROOT_K_ROOT },
	{ "__libc_start_call_main", ROOT_K_ROOT },
	{ "__libc_start_main", ROOT_K_ROOT },
	{ "_start", ROOT_K_ROOT },
	{ "__start", ROOT_K_ROOT },
	{ "start_thread", ROOT_K_ROOT },
	{ "clone", ROOT_K_ROOT },
	{ "clone3", ROOT_K_ROOT },
	{ "__clone", ROOT_K_ROOT },
	{ "__clone3", ROOT_K_ROOT },
	{ "_dl_start_user", ROOT_K_ROOT },  /* ld.so running constructors */
	{ "Py_BytesMain", ROOT_K_ROOT },    /* CPython's main tail-calls it */
	/* a makecontext() context's stack (coroutines, green threads):
	 * found by its code where the symbol is stripped (module.h) */
	{ "__start_context", ROOT_K_CONTEXT },
	/* Go: goroutines start in goexit's frame, Ms in mstart (threads
	 * made by runtime.clone) and the first in rt0_go */
	{ "runtime.goexit", ROOT_K_ROOT },
	{ "runtime.mstart", ROOT_K_ROOT },
	{ "runtime.rt0_go", ROOT_K_ROOT },
	{ "runtime.clone", ROOT_K_ROOT },
	{ "_rt0_amd64", ROOT_K_ROOT },        /* the entry point, before rt0_go */
	{ "_rt0_amd64_linux", ROOT_K_ROOT },
	{ "_rt0_arm64", ROOT_K_ROOT },
	{ "_rt0_arm64_linux", ROOT_K_ROOT },
	/* Go's stack switches onto the g0 (scheduler) stack */
	{ "runtime.systemstack", ROOT_K_SWITCH_G0 },
	{ "runtime.mcall", ROOT_K_SWITCH_G0 },
	{ "runtime.morestack", ROOT_K_SWITCH_G0 },
	{ "runtime.asmcgocall", ROOT_K_SWITCH_G0 },
	/* where a goroutine in systemstack was left (aarch64's switch rule
	 * tells systemstack from mcall and morestack by it) */
	{ "runtime.systemstack_switch", ROOT_K_SWITCHED },
	/* Rust's psm (stacker::grow): CFA = rbp + 16 on the old stack */
	{ "rust_psm_on_stack", ROOT_K_SWITCH_CFI },
	/* Go's signal handler makes the interrupted goroutine look as if
	 * the instruction it stopped at called these (asynchronous
	 * preemption, a fault turned into a panic): the return address
	 * is that instruction itself, symbolized as is (no RA-1) */
	{ "runtime.asyncPreempt", ROOT_K_INJECTED },
	{ "runtime.sigpanic", ROOT_K_INJECTED },
	/* Go's signal handler (its CFI says it is the outermost frame) */
	{ "runtime.sigtramp", ROOT_K_GO_SIGTRAMP },
	/* the vDSO's clock is called on the g0 stack */
	{ "runtime.nanotime1", ROOT_K_SWITCH },
	{ "runtime.walltime", ROOT_K_SWITCH },
	{ "runtime.walltime1", ROOT_K_SWITCH },
};

enum root_kind roots_kind(const char *name, size_t len)
{
	if (len == SIZE_MAX)
		len = strlen(name);
	/* Go's ABI wrappers: "runtime.goexit.abi0" is runtime.goexit */
	if (len > 5 && !memcmp(name + len - 5, ".abi0", 5))
		len -= 5;
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (strlen(known[i].name) == len && !memcmp(known[i].name, name, len))
			return known[i].kind;
	return ROOT_K_NONE;
}

bool unwind_is_root_name(const char *name)
{
	enum root_kind k = roots_kind(name, SIZE_MAX);
	return k == ROOT_K_ROOT || k == ROOT_K_CONTEXT;
}
