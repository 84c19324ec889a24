/* demangle.c - C++ and Rust names through libiberty.
 *
 * libiberty's auto style recognises Itanium C++ (_Z...), Rust legacy
 * (_ZN...17h<16 hex>E, printed without the hash) and Rust v0 (_R...).
 * A version suffix ("@GLIBCXX_3.4", "@@...") is kept but not fed to the
 * demangler, which would reject the whole name.
 */
#include "symbol/symbol.h"
#include "lib/util.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

char *sym_demangle(const char *name)
{
	const char *at;
	char *base, *d, *out;

	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	at = strchr(name, '@');
	if (!at)
		return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	base = xstrndup(name, (size_t)(at - name));
	d = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	free(base);
	if (!d)
		return NULL;
	out = xasprintf("%s%s", d, at);
	free(d);
	return out;
}
