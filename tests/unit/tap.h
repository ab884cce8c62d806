/* A minimal TAP producer for brig's C unit tests. */
#ifndef BRIG_TAP_H
#define BRIG_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_n, tap_failed;

static inline void
tap_plan (int n)
{
  printf ("1..%d\n", n);
  fflush (stdout);
}

static inline bool __attribute__ ((format (printf, 2, 3)))
tap_ok (bool cond, const char *fmt, ...)
{
  va_list ap;
  printf ("%sok %d - ", cond ? "" : "not ", ++tap_n);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  fflush (stdout);
  if (!cond)
    tap_failed++;
  return cond;
}

static inline void __attribute__ ((format (printf, 1, 2)))
tap_diag (const char *fmt, ...)
{
  va_list ap;
  printf ("# ");
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  printf ("\n");
  fflush (stdout);
}

static inline int
tap_done (void)
{
  return tap_failed ? 1 : 0;
}

#endif
