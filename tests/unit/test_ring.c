/* test_ring.c - ring buffer sizes: perf's -m syntax (ring_parse_pages) and
 * the default from the rate and the record size (ring_default_pages). */
#include "test.h"
#include "lib/util.h"
#include "record/ring.h"

#include <string.h>

#define PAGE 4096

/* parses s to want pages (0: must be refused, with a reason) */
static void parse(const char *s, size_t want)
{
	char name[128];
	struct err why = { 0 };
	size_t pages = 0;
	int ret = ring_parse_pages(s, PAGE, &pages, &why);
	if (want) {
		snprintf(name, sizeof(name), "ring: -m '%s' is %zu pages", s, want);
		CHECK(ret == 0 && pages == want, name);
	} else {
		snprintf(name, sizeof(name), "ring: -m '%s' is refused with a reason", s);
		CHECK(ret < 0 && why.msg[0], name);
	}
}

int main(void)
{
	struct err why = { 0 };
	size_t pages;

	/* pages: a power of two */
	parse("1", 1);
	parse("512", 512);
	parse("262144", 262144);
	parse("3", 0);
	parse("1025", 0);
	parse("0", 0);
	parse("524288", 0);           /* 2 GiB: above the 1 GiB limit */
	/* sizes: rounded up to a power-of-two number of pages */
	parse("4K", 1);
	parse("5K", 2);
	parse("8k", 2);
	parse("100B", 1);
	parse("4097B", 2);
	parse("2M", 512);
	parse("3M", 1024);
	parse("640K", 256);
	parse("1G", 262144);
	parse("2G", 0);
	parse("0K", 0);
	/* not numbers */
	parse("", 0);
	parse("x", 0);
	parse("-1", 0);
	parse("4KB", 0);
	parse("4X", 0);
	parse("1.5M", 0);
	parse(" 4", 0);
	parse("99999999999999999999999", 0);
	ring_parse_pages("3", PAGE, &pages, &why);
	CHECK(strstr(why.msg, "power of two") && strstr(why.msg, "2 or 4"),
	      "ring: -m 3 says it must be a power of two and offers 2 or 4");

	/* the default: 500 ms of samples at the rate, a power of two, 1 MiB
	 * to 64 MiB */
	CHECK(ring_default_pages(999, 33264, PAGE) == 4096,
	      "ring: default at 999 Hz with 32 KiB stack copies is 16 MiB");
	CHECK(ring_default_pages(99, 33264, PAGE) == 512,
	      "ring: default at 99 Hz with 32 KiB stack copies is 2 MiB");
	CHECK(ring_default_pages(999, 336, PAGE) == 256,
	      "ring: default at 999 Hz of frame-pointer samples is the 1 MiB minimum");
	CHECK(ring_default_pages(100000, 33264, PAGE) == 16384,
	      "ring: default at 100 kHz with stack copies is the 64 MiB maximum");
	CHECK(ring_default_pages(~0ull, 65536, PAGE) == 16384,
	      "ring: default at an absurd rate does not overflow");
	TEST_DONE();
}
