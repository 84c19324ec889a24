#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lib/util.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void (*oom_handler)(void);

void set_oom_handler(void (*fn)(void))
{
	__atomic_store_n(&oom_handler, fn, __ATOMIC_RELEASE);
}

static void oom(void)
{
	void (*fn)(void) = __atomic_load_n(&oom_handler, __ATOMIC_ACQUIRE);
	if (fn)
		fn();
	fputs("stax: error: out of memory\n", stderr);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	va_end(ap);
	return p;
}

void grow_array(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	if (need <= *cap)
		return;
	while (n < need)
		n *= 2;
	*p = xrealloc(*p, n * elem);
	*cap = n;
}

static bool errors_printed;

bool error_printed(void)
{
	return __atomic_load_n(&errors_printed, __ATOMIC_RELAXED);
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char buf[4096];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(stderr, "stax: %s%s\n", prefix, buf);
}

void die(const char *fmt, ...)
{
	va_list ap;
	__atomic_store_n(&errors_printed, true, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
	exit(1);
}

int error(const char *fmt, ...)
{
	va_list ap;
	__atomic_store_n(&errors_printed, true, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static warn_sink_fn sink_fn;
static void *sink_arg;

void warn_set_sink(warn_sink_fn fn, void *arg)
{
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_arg = arg;
	pthread_mutex_unlock(&sink_lock);
}

void warn_print(const char *msg)
{
	fprintf(stderr, "stax: warning: %s\n", msg);
}

void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&sink_lock);
	if (sink_fn) {
		char buf[4096];
		vsnprintf(buf, sizeof(buf), fmt, ap);
		sink_fn(sink_arg, buf);
	} else {
		vmsg("warning: ", fmt, ap);
	}
	pthread_mutex_unlock(&sink_lock);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void note_progress(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "\rstax: %s", buf);
}

void note_progress_clear(void)
{
	fputs("\r\033[K", stderr);
}

void bug_at(const char *file, int line, const char *msg)
{
	fprintf(stderr, "stax: BUG at %s:%d: %s\n", file, line, msg);
	abort();
}

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool show_progress(void)
{
	const char *ci = getenv("CI");
	if (ci && *ci && strcmp(ci, "0") && strcmp(ci, "false"))
		return false;
	return isatty(2);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *path_base(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

void format_size(char *out, size_t n, uint64_t bytes)
{
	if (bytes >= 10ull << 20)
		snprintf(out, n, "%.1f MiB", bytes / 1048576.0);
	else if (bytes >= 10ull << 10)
		snprintf(out, n, "%.1f KiB", bytes / 1024.0);
	else
		snprintf(out, n, "%" PRIu64 " bytes", bytes);
}

void format_size_exact(char *out, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;
	uint64_t v = bytes;
	while (v >= 1024 && !(v & 1023) && u + 1 < ARRAY_SIZE(units)) {
		v >>= 10;
		u++;
	}
	if (u || bytes < 1024)
		snprintf(out, n, "%" PRIu64 " %s", v, units[u]);
	else
		format_size(out, n, bytes);
}

int load_library(const char *soname, size_t n, const char *const names[], void *fns[],
		 struct err *e)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	size_t i;
	if (!h)
		return err_set(e, -ENOENT, "%s", dlerror());
	for (i = 0; i < n; i++) {
		fns[i] = dlsym(h, names[i]);
		if (!fns[i]) {
			memset(fns, 0, n * sizeof(*fns));
			dlclose(h);
			return err_set(e, -ENOENT, "%s has no %s", soname, names[i]);
		}
	}
	return 0;
}

int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t r = write(fd, b, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!r)
			return -EIO;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}
