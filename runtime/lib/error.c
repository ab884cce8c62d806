#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

static int
ret_code (const brig_error *err)
{
  return err->code ? -err->code : -EINVAL;
}

int
brig_error_set (brig_error *err, int errnum, const char *fmt, ...)
{
  char *head = NULL;
  va_list ap;

  if (err == NULL)
    return errnum ? -errnum : -EINVAL;
  va_start (ap, fmt);
  if (vasprintf (&head, fmt, ap) < 0)
    head = NULL;
  va_end (ap);
  free (err->msg);
  err->msg = NULL;
  err->code = errnum;
  if (head && errnum)
    {
      if (asprintf (&err->msg, "%s: %s", head, strerror (errnum)) < 0)
        err->msg = NULL;
      free (head);
    }
  else
    err->msg = head;
  return ret_code (err);
}

int
brig_error_say (brig_error *err, int errnum, const char *fmt, ...)
{
  char *msg = NULL;
  va_list ap;

  if (err == NULL)
    return errnum ? -errnum : -EINVAL;
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    msg = NULL;
  va_end (ap);
  free (err->msg);
  err->msg = msg;
  err->code = errnum;
  return ret_code (err);
}

int
brig_error_wrap (brig_error *err, const char *fmt, ...)
{
  char *head = NULL, *joined = NULL;
  va_list ap;

  if (err == NULL)
    return -EINVAL;
  va_start (ap, fmt);
  if (vasprintf (&head, fmt, ap) < 0)
    head = NULL;
  va_end (ap);
  if (head == NULL)
    return ret_code (err);
  if (asprintf (&joined, "%s: %s", head, err->msg ? err->msg : "unknown error") >= 0)
    {
      free (err->msg);
      err->msg = joined;
    }
  free (head);
  return ret_code (err);
}

int
brig_error_set_raw (brig_error *err, int errnum, const char *msg)
{
  if (err == NULL)
    return errnum ? -errnum : -EINVAL;
  free (err->msg);
  err->msg = strdup (msg ? msg : "unknown error");
  err->code = errnum;
  return ret_code (err);
}

void
brig_error_clear (brig_error *err)
{
  if (err == NULL)
    return;
  free (err->msg);
  err->msg = NULL;
  err->code = 0;
}
