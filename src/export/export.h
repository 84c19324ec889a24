/* export.h - write a profile in formats other tools read.
 *
 * Every exporter writes the samples filter f keeps. They return 0, or -1
 * after printing "stax: error: ..." when writing failed.
 *
 *   pprof       profile.proto, gzip-compressed (go tool pprof, pprof.me,
 *               Grafana Pyroscope): functions, locations (one per address),
 *               lines and mappings; values "samples/count" and
 *               "cpu/nanoseconds" (or "events/count" for non-clock events);
 *               thread name and tid as labels
 *   speedscope  speedscope's JSON file format, one sampled profile per
 *               thread, samples in time order with their weights
 *   chrome      the Chrome trace event format (chrome://tracing, Perfetto):
 *               per thread, consecutive samples sharing frames become one
 *               complete ("X") slice per frame
 */
#ifndef STAX_EXPORT_EXPORT_H
#define STAX_EXPORT_EXPORT_H

#include "lib/util.h"
#include "view/view.h"

#include <stdio.h>

/* Write the samples f keeps to out in one format. 0, or -errno (-1 when
 * there is none) with the reason in *e for the caller to print. */
int export_pprof(const struct profile *p, const struct view_filter *f, FILE *out, struct err *e);
int export_speedscope(const struct profile *p, const struct view_filter *f, FILE *out, struct err *e);
int export_chrome(const struct profile *p, const struct view_filter *f, FILE *out, struct err *e);

/* Indices of the samples f keeps, ordered by (pid, tid, time); *n is the
 * count. The caller frees the array. */
size_t *export_thread_order(const struct profile *p, const struct view_filter *f, size_t *n);
/* Weight of a sample in the profile's unit: ns for clock events, else 1. */
uint64_t export_weight(const struct profile *p, const struct rec_sample *s);

#endif
