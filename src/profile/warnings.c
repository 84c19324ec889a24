/* warnings.c - what a reader of a recording must be told: it is still
 * being written, it was cut, chunks of it were damaged, samples were
 * lost or throttled. Every view prints these (cmd/query.c, serve). */
#include "profile/profile.h"
#include "lib/util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Share of samples lost or throttled above which a view warns. */
#define WARN_PERCENT 1.0

static void add(struct prof_warning *w, size_t *n, enum prof_warning_kind kind, const char *fmt, ...)
	PRINTF(4, 5);

static void add(struct prof_warning *w, size_t *n, enum prof_warning_kind kind, const char *fmt, ...)
{
	va_list ap;
	w[*n].kind = kind;
	va_start(ap, fmt);
	vsnprintf(w[*n].text, sizeof(w[*n].text), fmt, ap);
	va_end(ap);
	(*n)++;
}

/* Seconds from the start of the recording to its last sample. */
static double seconds_read(const struct profile *p)
{
	uint64_t start = profile_meta_u64(p, "start_ns");
	if (!start || start > p->first_time)
		start = p->first_time;
	return p->last_time > start ? (p->last_time - start) / 1e9 : 0;
}

size_t profile_warnings(const struct profile *p, struct prof_warning *w)
{
	size_t n = 0;
	uint64_t lost = p->lost_records + p->lost_samples;
	char size[32];

	if (p->partial && p->nsources) {
		/* several recordings: the newest is the one being written */
		const char *newest = p->path;
		size_t i;
		for (i = 0; i < p->nsources; i++)
			if (p->sources[i].state == PROF_SRC_READ)
				newest = p->sources[i].path;
		if (p->live)
			add(w, &n, PROF_W_LIVE, "%s: its newest recording %s is still being recorded: the"
			    " answers cover what it holds so far (%zu samples in all, %.2f s)", p->path,
			    path_base(newest), p->nsamples, seconds_read(p));
		else
			add(w, &n, PROF_W_TRUNCATED, "%s is truncated: it has no end chunk (the recorder was"
			    " killed, or the file was cut); what it holds was read", newest);
	} else if (p->partial && p->live)
		add(w, &n, PROF_W_LIVE, "%s is still being recorded: the answers cover what it holds so far"
		    " (%zu samples, %.2f s)", p->path, p->nsamples, seconds_read(p));
	else if (p->partial) {
		char tail[96] = "";
		if (p->tail) {
			format_size(size, sizeof(size), p->tail);
			snprintf(tail, sizeof(tail), "; its last %s are an incomplete chunk", size);
		}
		add(w, &n, PROF_W_TRUNCATED, "%s is truncated: it has no end chunk (the recorder was killed,"
		    " or the file was cut)%s; the answers cover its first %zu samples (%.2f s)", p->path, tail,
		    p->nsamples, seconds_read(p));
	}
	if (p->damage.chunks) {
		const struct store_damage *d = &p->damage;
		char est[96] = "", nodes[128] = "";
		format_size(size, sizeof(size), d->bytes);
		if (p->data_bytes && p->nsamples && d->bytes)
			snprintf(est, sizeof(est), "; %s may have held about %.0f samples",
				 d->chunks == 1 ? "it" : "they", (double)p->nsamples * d->bytes / p->data_bytes);
		if (p->lost_nodes)
			snprintf(nodes, sizeof(nodes), "; %" PRIu64 " stack frames defined there are missing,"
				 " so the stacks through them end early", p->lost_nodes);
		if (d->regions == 1)
			add(w, &n, PROF_W_DAMAGED, "%s has %" PRIu64 " damaged chunk%s at offset %" PRIu64
			    " (%s: %s): skipped, the rest was read%s%s", p->path, d->chunks,
			    d->chunks == 1 ? "" : "s", d->first, size, d->why, est, nodes);
		else
			add(w, &n, PROF_W_DAMAGED, "%s has %" PRIu64 " damaged chunks in %" PRIu64 " places"
			    " (%s; the first at offset %" PRIu64 ": %s): skipped, the rest was read%s%s", p->path,
			    d->chunks, d->regions, size, d->first, d->why, est, nodes);
	}
	if (lost && lost * 100.0 > WARN_PERCENT * (double)(p->nsamples + lost))
		add(w, &n, PROF_W_LOST, "%s: %" PRIu64 " samples or other records were lost (%.1f%% of"
		    " %" PRIu64 "): %s (stax doctor says what to do)", p->path, lost,
		    100.0 * lost / (double)(p->nsamples + lost), p->nsamples + lost,
		    p->lost_queue == lost ? "the recorder's queue was full: it could not unwind as fast as"
		    " the samples came" : p->lost_queue ? "the kernel's ring buffer filled faster than stax"
		    " emptied it, and the recorder's queue was full" :
		    "the kernel's ring buffer filled faster than stax emptied it");
	if (p->throttles) {
		/* The samples the rate would have taken while the kernel had
		 * sampling throttled: at most its duration times the rate (a
		 * thread off the CPU misses none). For a clock event whose
		 * processes' CPU time is known, no more than the samples short
		 * of that time times the rate either. */
		const char *clock = profile_meta(p, "event_is_clock");
		uint64_t freq = profile_meta_u64(p, "freq"), cpu_ns = profile_meta_u64(p, "cpu_ns");
		double got = (double)(p->nsamples + lost), missed = p->throttled_ns / 1e9 * freq;
		bool bounded = clock && !strcmp(clock, "1") && cpu_ns;
		if (bounded)
			missed = MIN(missed, MAX(0.0, cpu_ns / 1e9 * freq - got));
		if (freq && missed * 100.0 > WARN_PERCENT * (got + missed))
			add(w, &n, PROF_W_THROTTLED, "%s: the kernel throttled sampling %" PRIu64 " time%s, for"
			    " %.1f ms in all: %s %.0f samples (%.1f%%) were not taken"
			    " (kernel.perf_event_max_sample_rate; stax doctor says more)", p->path,
			    p->throttles, p->throttles == 1 ? "" : "s", p->throttled_ns / 1e6,
			    bounded ? "about" : "up to", missed, 100.0 * missed / (got + missed));
		else if (!freq)
			add(w, &n, PROF_W_THROTTLED, "%s: the kernel throttled sampling %" PRIu64 " time%s; how many"
			    " samples that cost is not known (the recording does not say its rate;"
			    " kernel.perf_event_max_sample_rate)", p->path, p->throttles,
			    p->throttles == 1 ? "" : "s");
	}
	return n;
}
