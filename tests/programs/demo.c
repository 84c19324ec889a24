/* demo.c - the program "make run" profiles: a tiny request-log analyzer.
 *
 * It makes a synthetic web-server log in memory, then for each of a few
 * "files": parses it into latencies, smooths them, and renders a text
 * histogram. Where the time goes (cpu-clock, measured with perf):
 *
 *   main;analyze_file;smooth_latencies (;kernel_weight)  ~60%  compute
 *   main;analyze_file;render_report;draw_bar             ~30%  render
 *   main;analyze_file;parse_log;parse_line, make_log     ~10%  parse
 * (smooth_latencies has most of the 60% as self time; kernel_weight ~5%.)
 *
 * All hot code is our own (no libc/libm in loops), so a frame-pointer
 * build gives complete stacks. Build: clang -O2 -g -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer (tests/programs/Makefile, target "demo").
 *
 * usage: demo [SCALE]   about 2 s of CPU at scale 1; prints a summary.
 */
#define _GNU_SOURCE
#include "common.h"

#include <stdio.h>
#include <string.h>

#define LINES 100000           /* requests per log */
#define WINDOW 24              /* smoothing half-width */
#define BUCKETS 40             /* histogram rows */
#define WIDTH 4000             /* histogram row width (characters) */

static char logbuf[LINES * 40];
static unsigned latency[LINES];
static double smooth[LINES];
static char canvas[BUCKETS][WIDTH + 1];
volatile unsigned long sink;

/* Append n in decimal; returns the new end. */
static char *put_uint(char *p, unsigned n)
{
	char tmp[12];
	int k = 0;
	do
		tmp[k++] = '0' + n % 10;
	while (n /= 10);
	while (k)
		*p++ = tmp[--k];
	return p;
}

/* "GET /item/ID 200 LATENCYms\n", pseudo-random but the same every run. */
NOINLINE size_t make_log(unsigned seed)
{
	char *p = logbuf;
	unsigned x = seed, i;
	for (i = 0; i < LINES; i++) {
		x = x * 1103515245u + 12345u;
		memcpy(p, "GET /item/", 10);
		p = put_uint(p + 10, x >> 20);
		memcpy(p, " 200 ", 5);
		p = put_uint(p + 5, 5 + (x >> 8) % 400);
		memcpy(p, "ms\n", 3);
		p += 3;
	}
	return p - logbuf;
}

/* The latency field of one line; *end is set past the newline. */
NOINLINE unsigned parse_line(const char *line, const char **end)
{
	const char *p = line;
	unsigned field = 0, value = 0;
	for (; *p != '\n'; p++) {
		if (*p == ' ')
			field++, value = 0;
		else if (field == 2 && *p >= '0' && *p <= '9')
			value = value * 10 + (*p - '0');
	}
	*end = p + 1;
	return value;
}

NOINLINE size_t parse_log(size_t len)
{
	const char *p = logbuf, *end = logbuf + len;
	size_t n = 0;
	while (p < end && n < LINES)
		latency[n++] = parse_line(p, &p);
	KEEP_FRAME();
	return n;
}

/* A smooth bump, 1 at d = 0 and 0 at |d| = WINDOW+1 (no libm). */
NOINLINE double kernel_weight(int d)
{
	double t = (double)d / (WINDOW + 1);
	double u = 1 - t * t;
	return u * u * u;
}

NOINLINE void smooth_latencies(size_t n)
{
	size_t i;
	int d;
	for (i = 0; i < n; i++) {
		double sum = 0, wsum = 0;
		for (d = -WINDOW; d <= WINDOW; d++) {
			long j = (long)i + d;
			double w;
			if (j < 0 || j >= (long)n)
				continue;
			w = kernel_weight(d);
			sum += w * latency[j];
			wsum += w;
		}
		smooth[i] = sum / wsum;
	}
	KEEP_FRAME();
}

/* One histogram row: a bar of len characters shaded by its height. */
NOINLINE void draw_bar(char *row, unsigned len, unsigned salt)
{
	unsigned i, x = salt;
	static const char shade[] = " .:-=+*#%@";
	for (i = 0; i < WIDTH; i++) {
		x = x * 1664525u + 1013904223u;
		__asm__ volatile("" : "+r"(x));
		row[i] = i < len ? shade[(x >> 28) % 9 + 1] : ' ';
	}
	row[WIDTH] = 0;
}

NOINLINE unsigned long render_report(size_t n, int passes)
{
	unsigned count[BUCKETS] = { 0 }, max = 1;
	unsigned long check = 0;
	size_t i;
	int b, pass;
	for (i = 0; i < n; i++) {
		b = (int)(smooth[i] / 10.5);
		count[b < BUCKETS ? b : BUCKETS - 1]++;
	}
	for (b = 0; b < BUCKETS; b++)
		if (count[b] > max)
			max = count[b];
	for (pass = 0; pass < passes; pass++)
		for (b = 0; b < BUCKETS; b++) {
			draw_bar(canvas[b], (unsigned)((double)count[b] * WIDTH / max), b + pass);
			check += (unsigned char)canvas[b][WIDTH / 2];
		}
	KEEP_FRAME();
	return check;
}

NOINLINE unsigned long analyze_file(unsigned seed)
{
	size_t len = make_log(seed);
	size_t n = parse_log(len);
	unsigned long r;
	smooth_latencies(n);
	r = render_report(n, 68);
	KEEP_FRAME();
	return r + n;
}

int main(int argc, char **argv)
{
	int files = (int)(44 * arg_scale(argc, argv, 1, 1.0)), f;
	unsigned long check = 0;
	if (files < 1)
		files = 1;
	for (f = 0; f < files; f++)
		check += analyze_file(42 + f);
	sink = check;
	printf("demo: analyzed %d logs of %d requests (checksum %lu)\n", files, LINES, check % 100000);
	return 0;
}
