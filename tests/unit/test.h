/* test.h - the tiny harness every unit test uses.
 *
 * Each tests/unit/test_*.c is a program. It prints one line per check:
 *   "ok - NAME", "not ok - NAME: why", or "skip - NAME: why"
 * and exits 1 when any check failed. tests/run.sh counts the lines.
 */
#ifndef STAX_TEST_H
#define STAX_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test_failed;

#define CHECK(cond, name) do { \
	if (cond) printf("ok - %s\n", (name)); \
	else { printf("not ok - %s: %s (%s:%d)\n", (name), #cond, __FILE__, __LINE__); test_failed = 1; } \
	fflush(stdout); \
} while (0)

#define SKIP(name, why) do { printf("skip - %s: %s\n", (name), (why)); fflush(stdout); } while (0)

#define TEST_DONE() return test_failed ? 1 : 0

#endif
