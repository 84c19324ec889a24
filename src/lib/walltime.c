/* walltime.c - wall-clock times as people write them (walltime.h). */
#include "lib/walltime.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define NS 1000000000ull
/* Times after this (year 2262 in ns) do not fit a uint64_t of ns. */
#define MAX_SECONDS 9000000000ll

uint64_t walltime_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* Reading position: s up to its NUL. */
struct rd {
	const char *p;
};

/* Exactly min..max digits as a number; -1 when there are none or more. */
static long digits(struct rd *r, int min, int max)
{
	long v = 0;
	int n = 0;
	while (n < max && isdigit((unsigned char)r->p[n])) {
		v = v * 10 + (r->p[n] - '0');
		n++;
	}
	if (n < min || isdigit((unsigned char)r->p[n]))
		return -1;
	r->p += n;
	return v;
}

static bool eat(struct rd *r, char c)
{
	if (*r->p != c)
		return false;
	r->p++;
	return true;
}

static void skip_space(struct rd *r)
{
	while (*r->p == ' ' || *r->p == '\t')
		r->p++;
}

/* ".FRAC" (1 to 9 digits) as ns; 0 when absent; -1 when malformed. */
static long frac(struct rd *r)
{
	long v = 0;
	int n = 0;
	if (!eat(r, '.'))
		return 0;
	while (isdigit((unsigned char)*r->p) && n < 9) {
		v = v * 10 + (*r->p++ - '0');
		n++;
	}
	if (!n || isdigit((unsigned char)*r->p))
		return -1;
	for (; n < 9; n++)
		v *= 10;
	return v;
}

/* HH:MM[:SS[.FRAC]] */
static bool clock_time(struct rd *r, struct tm *tm, long *ns)
{
	long h = digits(r, 1, 2), m, s = 0;
	if (h < 0 || !eat(r, ':') || (m = digits(r, 2, 2)) < 0)
		return false;
	if (eat(r, ':') && ((s = digits(r, 2, 2)) < 0 || (*ns = frac(r)) < 0))
		return false;
	if (h > 23 || m > 59 || s > 59)
		return false;
	tm->tm_hour = (int)h;
	tm->tm_min = (int)m;
	tm->tm_sec = (int)s;
	return true;
}

/* A zone after a time: Z, UTC, +HH:MM, -HHMM, +HH. *has: one was given. */
static bool zone(struct rd *r, bool *has, long *off)
{
	int sign;
	long h, m = 0;
	size_t n;
	skip_space(r);
	*has = false;
	*off = 0;
	if (!*r->p)
		return true;
	if ((*r->p == 'Z' || *r->p == 'z') && !r->p[1]) {
		r->p++;
		*has = true;
		return true;
	}
	if (!strncasecmp(r->p, "UTC", 3) && !r->p[3]) {
		r->p += 3;
		*has = true;
		return true;
	}
	if (*r->p != '+' && *r->p != '-')
		return false;
	sign = *r->p++ == '-' ? -1 : 1;
	n = strspn(r->p, "0123456789");
	if (n == 4) {           /* HHMM */
		h = (r->p[0] - '0') * 10 + (r->p[1] - '0');
		m = (r->p[2] - '0') * 10 + (r->p[3] - '0');
		r->p += 4;
	} else if ((h = digits(r, 2, 2)) < 0 || (eat(r, ':') && (m = digits(r, 2, 2)) < 0)) {
		return false;
	}
	if (h > 23 || m > 59)
		return false;
	*has = true;
	*off = sign * (h * 3600 + m * 60);
	return true;
}

/* tm (a calendar time, fields as given) in local time or at UTC+off, as
 * Unix seconds; false when the fields do not name a time that exists. */
static bool to_seconds(const struct tm *given, bool utc, long off, long long *out)
{
	struct tm tm = *given;
	time_t t;
	tm.tm_isdst = -1;
	t = utc ? timegm(&tm) : mktime(&tm);
	if (t == (time_t)-1)
		return false;
	/* normalization moved a field: Feb 30, or a local time a change
	 * to summer time skipped */
	if (tm.tm_year != given->tm_year || tm.tm_mon != given->tm_mon || tm.tm_mday != given->tm_mday ||
	    tm.tm_hour != given->tm_hour || tm.tm_min != given->tm_min || tm.tm_sec != given->tm_sec)
		return false;
	*out = (long long)t - (utc ? off : 0);
	return true;
}

/* A calendar date, a time of day or both, with a zone. */
static bool absolute(struct rd *r, uint64_t now_ns, long long *secs, long *ns)
{
	struct tm tm;
	long y, mo, d, off;
	bool has_zone, date = false;
	struct rd save = *r;

	memset(&tm, 0, sizeof(tm));
	*ns = 0;
	if ((y = digits(r, 4, 4)) >= 0 && eat(r, '-')) {
		if ((mo = digits(r, 1, 2)) < 0 || !eat(r, '-') || (d = digits(r, 1, 2)) < 0)
			return false;
		if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31)
			return false;
		tm.tm_year = (int)(y - 1900);
		tm.tm_mon = (int)(mo - 1);
		tm.tm_mday = (int)d;
		date = true;
		if (*r->p == 'T' || *r->p == 't' || *r->p == ' ') {
			struct rd t = *r;
			t.p++;
			skip_space(&t);
			if (isdigit((unsigned char)*t.p)) {
				*r = t;
				if (!clock_time(r, &tm, ns))
					return false;
			}
		}
	} else {
		*r = save;
		if (!clock_time(r, &tm, ns))
			return false;
	}
	if (!zone(r, &has_zone, &off) || *r->p)
		return false;
	if (!date) {
		/* today, in the zone given or here */
		time_t now = (time_t)(now_ns / NS);
		struct tm today;
		if (has_zone) {
			now += off;
			gmtime_r(&now, &today);
		} else {
			localtime_r(&now, &today);
		}
		tm.tm_year = today.tm_year;
		tm.tm_mon = today.tm_mon;
		tm.tm_mday = today.tm_mday;
	}
	return to_seconds(&tm, has_zone, off, secs);
}

/* N UNIT [N UNIT ...]: ns; false when malformed. */
static bool span(struct rd *r, long double *out)
{
	static const struct { const char *name; double secs; } units[] = {
		{ "seconds", 1 }, { "second", 1 }, { "secs", 1 }, { "sec", 1 }, { "s", 1 },
		{ "minutes", 60 }, { "minute", 60 }, { "mins", 60 }, { "min", 60 }, { "m", 60 },
		{ "hours", 3600 }, { "hour", 3600 }, { "h", 3600 },
		{ "days", 86400 }, { "day", 86400 }, { "d", 86400 },
		{ "weeks", 604800 }, { "week", 604800 }, { "w", 604800 },
	};
	int parts = 0;
	*out = 0;
	for (;;) {
		long double v = 0, scale = 1;
		int n = 0;
		size_t i;
		skip_space(r);
		if (!isdigit((unsigned char)*r->p))
			break;
		while (isdigit((unsigned char)*r->p) && n++ < 12)
			v = v * 10 + (*r->p++ - '0');
		if (eat(r, '.'))
			while (isdigit((unsigned char)*r->p) && n++ < 18)
				v += (*r->p++ - '0') * (scale /= 10);
		if (isdigit((unsigned char)*r->p))
			return false;
		skip_space(r);
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t len = strlen(units[i].name);
			if (!strncasecmp(r->p, units[i].name, len) && !isalpha((unsigned char)r->p[len])) {
				r->p += len;
				break;
			}
		}
		if (i == sizeof(units) / sizeof(units[0])) {
			/* a number alone is seconds, and only as the last part */
			if (isalpha((unsigned char)*r->p) && strncasecmp(r->p, "ago", 3))
				return false;
			*out += v * NS;
			parts++;
			break;
		}
		*out += v * units[i].secs * NS;
		parts++;
	}
	return parts > 0;
}

/* now, today, yesterday, tomorrow; -SPAN, +SPAN, SPAN ago */
static int relative(const char *s, uint64_t now_ns, long long *secs, long *ns, uint64_t *out)
{
	static const char *const days[] = { "yesterday", "today", "tomorrow" };
	struct rd r = { s };
	long double d;
	int sign = 0, i;

	for (i = 0; i < 3; i++)
		if (!strcasecmp(s, days[i])) {
			time_t now = (time_t)(now_ns / NS);
			struct tm tm;
			localtime_r(&now, &tm);
			tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
			tm.tm_mday += i - 1;
			tm.tm_isdst = -1;
			*secs = (long long)mktime(&tm);
			*ns = 0;
			return 1;
		}
	if (!strcasecmp(s, "now")) {
		*out = now_ns;
		return 2;
	}
	if (*s == '-' || *s == '+') {
		sign = *s == '-' ? -1 : 1;
		r.p++;
	}
	if (!isdigit((unsigned char)*r.p) || !span(&r, &d))
		return 0;
	skip_space(&r);
	if (!sign && !strncasecmp(r.p, "ago", 3)) {
		sign = -1;
		r.p += 3;
		skip_space(&r);
	}
	if (!sign || *r.p)
		return 0;
	d = now_ns + sign * d;
	if (d < 0 || d > (long double)MAX_SECONDS * NS)
		return 0;
	*out = (uint64_t)d;
	return 2;
}

int walltime_parse(const char *s, uint64_t now_ns, uint64_t *out, struct err *e)
{
	long long secs = 0;
	long ns = 0;
	struct rd r;
	int rel;

	while (*s == ' ' || *s == '\t')
		s++;
	r.p = s;
	if ((rel = relative(s, now_ns, &secs, &ns, out)) == 2)
		return 0;
	if (!rel && *s == '@') {
		struct rd a = { s + 1 };
		long long v = 0;
		int n = 0;
		while (isdigit((unsigned char)*a.p) && n++ < 11)
			v = v * 10 + (*a.p++ - '0');
		if (!n || (ns = frac(&a)) < 0 || *a.p)
			goto bad;
		secs = v;
		rel = 1;
	}
	if (!rel && !absolute(&r, now_ns, &secs, &ns))
		goto bad;
	if (secs < 0 || secs > MAX_SECONDS)
		goto bad;
	*out = (uint64_t)secs * NS + (uint64_t)ns;
	return 0;
bad:
	return err_set(e, -1, "cannot read '%.100s' as a time (use HH:MM[:SS], YYYY-MM-DD [HH:MM[:SS]],"
		       " either with a zone such as Z or +01:00 (2026-12-05T14:00:00Z), @UNIX_SECONDS, now,"
		       " today, yesterday, or a time ago: -10m, -1h30m, '2h ago')", s);
}

void walltime_format(uint64_t ns, bool utc, char *buf, size_t size)
{
	time_t t = (time_t)(ns / NS);
	unsigned ms = (unsigned)(ns % NS / 1000000);
	struct tm tm;
	char day[32], zone[16] = "Z";
	if (utc)
		gmtime_r(&t, &tm);
	else
		localtime_r(&t, &tm);
	strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm);
	if (!utc && !strftime(zone, sizeof(zone), " %Z", &tm))
		zone[0] = 0;
	if (ns % NS >= 1000000)
		snprintf(buf, size, "%s.%03u%s", day, ms, zone);
	else
		snprintf(buf, size, "%s%s", day, zone);
}
