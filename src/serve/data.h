/* data.h - the page's data: one compact JSON object of the whole
 * recording (/api/profile; the layout is described in data.c), and the
 * files the page may read through /api/source. */
#ifndef STAX_SERVE_DATA_H
#define STAX_SERVE_DATA_H

#include "view/view.h"
#include "lib/hash.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct serve_data {
	char *json;            /* the body */
	size_t len;
	uint32_t *order;       /* page node index -> profile node id */
	size_t n;
	uint32_t *index;       /* profile node id -> page node index + 1, 0: none */
	size_t nindex;
	/* source files the recording names (frames, functions, and the
	 * lines of the disassemblies served): only these are served */
	struct hmap allowed;
	char **paths;
	size_t npaths, pathcap;
};

/* Build d (released first) from symbolized p; name is the recording's
 * file name, version the server's reload count. Never fails. */
void serve_data_build(struct profile *p, const char *name, uint64_t version, struct serve_data *d);
void serve_data_release(struct serve_data *d);
/* Let the page read path (a source file the recording names). */
void serve_data_allow(struct serve_data *d, const char *path);
bool serve_data_allowed(const struct serve_data *d, const char *path);

#endif
