/* libFuzzer target for brig cp's tar reader (runtime/lib/tar.c): on the
 * host it reads archives the container side wrote, and inside the
 * container archives a tenant may have made. The input is served through a
 * memfd, as a pipe would serve it; every entry's data is read to its end.
 * ASan/UBSan watch the reads; the harness checks what tar.h promises. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../runtime/lib/tar.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static struct brig_tar t;
  static char buf[8192];
  struct brig_tar_entry e = { 0 };
  brig_error err = { 0 };
  int fd = memfd_create ("tar", MFD_CLOEXEC), r;

  if (fd < 0)
    return 0;
  if (write (fd, data, size) != (ssize_t) size || lseek (fd, 0, SEEK_SET) != 0)
    {
      close (fd);
      return 0;
    }
  brig_tar_init (&t, fd);
  while ((r = brig_tar_read_header (&t, &e, &err)) == 1)
    {
      uint64_t got = 0;
      ssize_t k;
      if (e.name == NULL || e.name[0] == '\0' || strlen (e.name) >= 4096
          || (e.link && strlen (e.link) >= 4096) || e.mode > 07777)
        abort ();
      while ((k = brig_tar_read_data (&t, buf, sizeof buf, &err)) > 0)
        got += (uint64_t) k;
      if (got > e.size || (k == 0 && got != e.size))
        abort ();
      if (k < 0)
        break;
    }
  if (r < 0 && err.msg == NULL)
    abort ();
  brig_tar_entry_clear (&e);
  brig_error_clear (&err);
  close (fd);
  return 0;
}
