/* walltime.h - wall-clock times as people write them on a command line
 * (--since and --until of the query commands).
 *
 * journalctl's --since is the model. Accepted, in local time unless a
 * zone follows:
 *   HH:MM[:SS[.FRAC]]                 today
 *   YYYY-MM-DD                        that day at 00:00
 *   YYYY-MM-DD HH:MM[:SS[.FRAC]]      (or a T for the space: ISO 8601)
 *   then optionally a zone: Z, UTC, +HH:MM, -HHMM or +HH
 *   @SECONDS[.FRAC]                   Unix time
 *   now, today, yesterday, tomorrow   (the last three: 00:00 local)
 *   -N UNIT..., +N UNIT..., N UNIT... ago   before (after) now: -10m,
 *                                     -1h30m, "1h 30min ago", -90s;
 *                                     UNIT s, sec, m, min, h, d, w (and
 *                                     their long names); a number alone
 *                                     is seconds
 * Fields are checked (month 1-12, a day its month has, hour 0-23,
 * minute and second 0-59); a local time that does not exist (skipped by
 * a change to summer time) is refused.
 */
#ifndef STAX_LIB_WALLTIME_H
#define STAX_LIB_WALLTIME_H

#include "lib/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The current wall-clock time (CLOCK_REALTIME), Unix ns. */
uint64_t walltime_now(void);
/* s as Unix ns into *out; now_ns is the base of the forms without a
 * date. Returns 0, or -1 with "cannot read 'S' as a time (use ...)" in
 * *e. Reads only up to s's NUL. */
int walltime_parse(const char *s, uint64_t now_ns, uint64_t *out, struct err *e);
/* "YYYY-MM-DD HH:MM:SS ZONE" in local time (".mmm" after the seconds
 * when ns is not whole seconds); utc: in UTC, "...Z". */
void walltime_format(uint64_t ns, bool utc, char *buf, size_t size);

#endif
