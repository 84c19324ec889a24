/* test_walltime.c - --since and --until times (lib/walltime.c): every
 * form walltime.h lists, in UTC and in a zone with summer time (a POSIX
 * TZ rule, so no tzdata is needed), and the forms it refuses. */
#include "lib/walltime.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NS 1000000000ull

/* 2026-12-05 15:30:45.250 UTC, a Saturday */
static const uint64_t now = 1796484645ull * NS + 250000000ull;

static uint64_t at(const char *s)
{
	uint64_t v = 0;
	struct err e;
	if (walltime_parse(s, now, &v, &e))
		return UINT64_MAX;
	return v;
}

static int refused(const char *s)
{
	uint64_t v;
	struct err e;
	return walltime_parse(s, now, &v, &e) && strstr(e.msg, "cannot read '") && strstr(e.msg, "(use HH:MM");
}

int main(void)
{
	char buf[64];

	setenv("TZ", "UTC0", 1);
	tzset();
	CHECK(at("2026-12-05 15:30:45") == 1796484645ull * NS, "date and time");
	CHECK(at("2026-12-05T15:30:45Z") == 1796484645ull * NS, "ISO 8601 with Z");
	CHECK(at("2026-12-05T15:30:45.5Z") == 1796484645ull * NS + 500000000ull, "a fraction of a second");
	CHECK(at("2026-12-05 14:00") == 1796479200ull * NS, "seconds may be left out");
	CHECK(at("2026-12-05") == 1796428800ull * NS, "a date alone is its midnight");
	CHECK(at("14:00") == 1796479200ull * NS, "a time alone is today");
	CHECK(at("9:05:30") == 1796428800ull * NS + (9 * 3600 + 5 * 60 + 30) * NS, "a one-digit hour");
	CHECK(at("2026-12-05T16:30:45+01:00") == 1796484645ull * NS, "a zone +HH:MM");
	CHECK(at("2026-12-05 10:30:45 -0500") == 1796484645ull * NS, "a zone -HHMM after a space");
	CHECK(at("2026-12-05 15:30:45 UTC") == 1796484645ull * NS, "UTC");
	CHECK(at("@1796484645") == 1796484645ull * NS, "@UNIX_SECONDS");
	CHECK(at("@1796484645.25") == 1796484645ull * NS + 250000000ull, "@UNIX_SECONDS.FRAC");
	CHECK(at("now") == now, "now");
	CHECK(at("today") == 1796428800ull * NS, "today");
	CHECK(at("yesterday") == (1796428800ull - 86400) * NS, "yesterday");
	CHECK(at("tomorrow") == (1796428800ull + 86400) * NS, "tomorrow");
	CHECK(at("-10m") == now - 600 * NS, "-10m");
	CHECK(at("-1h30m") == now - 5400 * NS, "-1h30m");
	CHECK(at("-1h 30min") == now - 5400 * NS, "-1h 30min");
	CHECK(at("2 hours ago") == now - 7200 * NS, "2 hours ago");
	CHECK(at("-90") == now - 90 * NS, "a number alone is seconds");
	CHECK(at("+1.5s") == now + 1500000000ull, "+1.5s");
	CHECK(at("  14:00  ") == 1796479200ull * NS, "spaces around");

	CHECK(refused("14"), "an hour alone");
	CHECK(refused("25:00"), "hour 25");
	CHECK(refused("14:60"), "minute 60");
	CHECK(refused("14:00:61"), "second 61");
	CHECK(refused("2026-02-30"), "February 30");
	CHECK(refused("2026-13-01"), "month 13");
	CHECK(refused("2026-12-05 14"), "a date and an hour alone");
	CHECK(refused("14:00 +25:00"), "a zone beyond 23 hours");
	CHECK(refused("14:00 CET"), "a zone by name other than UTC");
	CHECK(refused("-10x"), "an unknown unit");
	CHECK(refused("10m"), "a span without - or ago");
	CHECK(refused("+10m ago"), "+ and ago");
	CHECK(refused("1969-12-31"), "before 1970");
	CHECK(refused("@"), "@ alone");
	CHECK(refused(""), "empty");
	CHECK(refused("14:00:00.1234567890"), "more than 9 digits of a second");
	CHECK(refused("yesterday 14:00"), "yesterday with a time (not a form)");

	walltime_format(1796484645ull * NS, true, buf, sizeof(buf));
	CHECK(!strcmp(buf, "2026-12-05 15:30:45Z"), "format in UTC");
	walltime_format(1796484645ull * NS + 250000000ull, true, buf, sizeof(buf));
	CHECK(!strcmp(buf, "2026-12-05 15:30:45.250Z"), "format with milliseconds");

	/* Central European time: UTC+1, summer time UTC+2 from the last
	 * Sunday of March 02:00 to the last Sunday of October 03:00 */
	setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
	tzset();
	CHECK(at("2026-12-05 16:30:45") == 1796484645ull * NS, "local time in winter (UTC+1)");
	CHECK(at("16:30:45") == 1796484645ull * NS, "a time alone, local");
	CHECK(at("2026-07-01 14:00") == 1782907200ull * NS, "local time in summer (UTC+2)");
	CHECK(at("2026-07-01 14:00Z") == 1782914400ull * NS, "a zone overrides local time");
	CHECK(refused("2026-03-29 02:30"), "a local time summer time skipped");
	CHECK(at("today") == 1796425200ull * NS, "today is local midnight");
	walltime_format(1796484645ull * NS, false, buf, sizeof(buf));
	CHECK(!strcmp(buf, "2026-12-05 16:30:45 CET"), "format in local time with its zone");
	TEST_DONE();
}
