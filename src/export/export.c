/* export.c - what the exporters share (export.h): the samples in thread order, a sample's weight. */
#include "export/export.h"
#include "lib/util.h"

#include <stdlib.h>
#include <string.h>


static int cmp_thread_time(const void *a, const void *b, void *arg)
{
	const struct profile *order_p = arg;
	const struct rec_sample *x = &order_p->samples[*(const size_t *)a];
	const struct rec_sample *y = &order_p->samples[*(const size_t *)b];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

size_t *export_thread_order(const struct profile *p, const struct view_filter *f, size_t *n)
{
	size_t *idx = xmalloc((p->nsamples + 1) * sizeof(*idx)), i, k = 0;
	for (i = 0; i < p->nsamples; i++)
		if (view_keep(p, f, &p->samples[i]))
			idx[k++] = i;
	qsort_r(idx, k, sizeof(*idx), cmp_thread_time, (void *)p);
	*n = k;
	return idx;
}

uint64_t export_weight(const struct profile *p, const struct rec_sample *s)
{
	const char *clock = profile_meta(p, "event_is_clock");
	return clock && !strcmp(clock, "1") ? s->weight : 1;
}
