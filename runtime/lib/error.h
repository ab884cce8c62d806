/* Errors in libbrig: functions return 0 or a negative errno value and fill a
 * brig_error with a message chain, outermost context first:
 *   "create: mount /proc: Permission denied". */
#ifndef BRIG_ERROR_H
#define BRIG_ERROR_H

#include <errno.h>
#include <stdarg.h>

typedef struct brig_error {
  int code;   /* positive errno, or 0 when the message carries no errno */
  char *msg;  /* malloc'd; NULL when no error was recorded */
} brig_error;

/* Record an error: msg = printf(fmt) + ": " + strerror(errnum) (when errnum
 * is non-zero). Replaces any earlier message. Returns -errnum, or -EINVAL
 * when errnum is 0, so callers can `return brig_error_set (...)`. */
int brig_error_set (brig_error *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Record a message that is a complete sentence as it stands: the same as
 * brig_error_set but without the strerror(errnum) text, which would only
 * restate it ("...: drop it: Operation not permitted"); errnum is still the
 * code, and -errnum (-EINVAL when 0) is returned. */
int brig_error_say (brig_error *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* Prefix the recorded message with printf(fmt) + ": ". Returns -code (or
 * -EINVAL when there is no errno). */
int brig_error_wrap (brig_error *err, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Record a message received verbatim (from the container init over the sync
 * socket). Returns -errnum or -EINVAL. */
int brig_error_set_raw (brig_error *err, int errnum, const char *msg);

/* Forget the recorded error. */
void brig_error_clear (brig_error *err);

/* Convenience: set from errno. */
#define brig_error_errno(err, ...) brig_error_set ((err), errno, __VA_ARGS__)

#endif
