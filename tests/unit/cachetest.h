/* cachetest.h - what the cache tests (test_tcache.c, test_symcache.c)
 * share: the entry of a cache directory, and clearing it.
 */
#ifndef STAX_TEST_CACHETEST_H
#define STAX_TEST_CACHETEST_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one entry file of cache directory dir (tests keep one at a time)
 * into out; false when there is none. */
static inline bool cache_entry_path(const char *dir, char *out, size_t n)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "ls %s 2>/dev/null | head -n 1", dir);
	FILE *p = popen(cmd, "r");
	char name[128] = "";
	bool ok = p && fgets(name, sizeof(name), p);
	if (p)
		pclose(p);
	name[strcspn(name, "\n")] = 0;
	if (!ok || !name[0])
		return false;
	snprintf(out, n, "%s/%s", dir, name);
	return true;
}

static inline void cache_clear(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# %s failed\n", cmd);
}

#endif
