/* Reading documents from files (the error helper is the parser's). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci_internal.h"

void *
oci_parse_file (const oci_type *t, const char *path, oci_error *err)
{
  const char *base = strrchr (path, '/');
  struct stat st;
  char *buf = NULL;
  size_t len = 0, cap;
  int fd;

  base = base ? base + 1 : path;
  if (err != NULL)
    err->msg = NULL;

  fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    {
      int e = errno;
      oci_set_error (err, e, "open %s: %s", path, strerror (e));
      return NULL;
    }
  if (fstat (fd, &st) < 0)
    {
      int e = errno;
      close (fd);
      oci_set_error (err, e, "stat %s: %s", path, strerror (e));
      return NULL;
    }
  if (S_ISREG (st.st_mode) && (uintmax_t) st.st_size > OCI_MAX_DOCUMENT)
    {
      close (fd);
      oci_set_error (err, EFBIG, "%s: file too large (%jd bytes, limit %zu MiB)", base,
                 (intmax_t) st.st_size, OCI_MAX_DOCUMENT >> 20);
      return NULL;
    }

  /* Regular files are read in one go; pipes and the like grow the buffer. */
  cap = S_ISREG (st.st_mode) ? (size_t) st.st_size + 1 : 65536;
  for (;;)
    {
      if (len == cap || buf == NULL)
        {
          if (buf != NULL)
            cap *= 2;
          char *nb = realloc (buf, cap);
          if (nb == NULL)
            {
              free (buf);
              close (fd);
              oci_set_error (err, ENOMEM, "read %s: %s", path, strerror (ENOMEM));
              return NULL;
            }
          buf = nb;
        }
      ssize_t n = read (fd, buf + len, cap - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int e = errno;
          free (buf);
          close (fd);
          oci_set_error (err, e, "read %s: %s", path, strerror (e));
          return NULL;
        }
      if (n == 0)
        break;
      len += (size_t) n;
      if (len > OCI_MAX_DOCUMENT)
        {
          free (buf);
          close (fd);
          oci_set_error (err, EFBIG, "%s: file too large (more than %zu bytes, limit %zu MiB)", base,
                     OCI_MAX_DOCUMENT, OCI_MAX_DOCUMENT >> 20);
          return NULL;
        }
    }
  close (fd);

  void *obj = oci_parse_data (t, buf, len, base, err);
  int e = errno;
  free (buf);
  errno = e;
  return obj;
}
