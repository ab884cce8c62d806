/* brig_state_format_time (the state file's "created"), which computes the
 * UTC calendar date itself, against glibc's gmtime_r + strftime. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "container/state.h"
#include "tap.h"

static char *
reference (int64_t sec, long nsec)
{
  time_t t = (time_t) sec;
  struct tm tm;
  char base[64], *out;

  gmtime_r (&t, &tm);
  strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  if (asprintf (&out, "%s.%09ldZ", base, nsec) < 0)
    abort ();
  return out;
}

static bool
same (int64_t sec, long nsec)
{
  char *a = brig_state_format_time (sec, nsec), *b = reference (sec, nsec);
  bool ok = strcmp (a, b) == 0;
  if (!ok)
    tap_diag ("%" PRId64 ".%09ld: brig %s, glibc %s", sec, nsec, a, b);
  free (a);
  free (b);
  return ok;
}

int
main (void)
{
  /* The epoch, leap days, century years (2100 is not a leap year, 2000
   * is), the ends of months and years, before the epoch, far ahead. */
  static const int64_t fixed[] = {
    0, 59, 86399, 86400, 951782400 /* 2000-02-29 */, 951868799, 951868800,
    4107542400 /* 2100-03-01 */, 4107456000, 1798761599 /* 2026-12-31 23:59:59 */,
    1798761600, -1, -86400, -86401, 253402300799 /* 9999-12-31 23:59:59 */,
    68256000 /* 1972-02-29 */, 1709164800 /* 2024-02-29 */,
  };
  bool ok = true;
  uint64_t x = 88172645463325252ULL;

  tap_plan (3);
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    ok &= same (fixed[i], 0);
  tap_ok (ok, "fixed dates (epoch, leap days, century years, before 1970, year 9999)");

  ok = true;
  for (int i = 0; i < 200000; i++)
    {
      /* xorshift64: any second from 1900 to 2400. */
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      int64_t sec = -2208988800LL + (int64_t) (x % 15778800000ULL);
      ok &= same (sec, (long) (x % 1000000000ULL));
      if (!ok)
        break;
    }
  tap_ok (ok, "200000 random seconds between 1900 and 2400 match gmtime_r");

  {
    char *a = brig_state_format_time (1798761599, 800651409);
    tap_ok (strcmp (a, "2026-12-31T23:59:59.800651409Z") == 0, "RFC 3339 with nanoseconds: %s", a);
    free (a);
  }
  return tap_done ();
}
