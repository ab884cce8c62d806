/* brig cp's tar stream (runtime/lib/tar.c): what the writer writes the
 * reader reads back (pax records where a ustar field is too small: long
 * names and link targets, large ids and sizes), GNU long names, and the
 * damaged or short archives the reader must refuse by entry.
 * tests/fuzz/fuzz_tar.c runs the reader on random input. */
#include <sys/mman.h>

#include "tar.c"
#include "tap.h"

static int
memfd (void)
{
  return memfd_create ("tar", MFD_CLOEXEC);
}

static char *
repeat (char c, size_t n)
{
  char *s = xmalloc0 (n + 1);
  memset (s, c, n);
  return s;
}

static void
roundtrip (void)
{
  struct brig_tar w, r;
  brig_error err = { 0 };
  _cleanup_free_ char *longname = repeat ('n', 300), *longlink = repeat ('l', 200);
  struct brig_tar_entry in[] = {
    { .name = "f", .type = BRIG_TAR_FILE, .mode = 04755, .uid = 1000, .gid = 1001, .size = 5,
      .mtime = { 981173106, 0 } },
    { .name = longname, .type = BRIG_TAR_FILE, .mode = 0600, .size = 0 },
    { .name = "s", .link = longlink, .type = BRIG_TAR_SYMLINK, .mode = 0777 },
    { .name = "h", .link = "f", .type = BRIG_TAR_HARDLINK, .mode = 0644 },
    { .name = "big-ids", .type = BRIG_TAR_DIR, .mode = 0755, .uid = 3000000, .gid = 4000000 },
    { .name = "huge", .type = BRIG_TAR_FILE, .mode = 0644, .size = 9ULL << 30 },
  };
  struct brig_tar_entry e = { 0 };
  char data[8];
  int fd = memfd (), n = (int) (sizeof in / sizeof in[0]);
  bool ok = true;

  brig_tar_init (&w, fd);
  for (int i = 0; i < n; i++)
    {
      ok = ok && brig_tar_write_header (&w, &in[i], &err) == 0;
      if (in[i].size == 5)
        ok = ok && brig_tar_write_data (&w, "hello", 5, &err) == 0
             && brig_tar_write_pad (&w, 5, &err) == 0;
    }
  ok = ok && brig_tar_flush (&w, &err) == 0;
  tap_ok (ok, "the writer writes every entry");
  lseek (fd, 0, SEEK_SET);
  brig_tar_init (&r, fd);
  for (int i = 0; i < n; i++)
    {
      int got = brig_tar_read_header (&r, &e, &err);
      tap_ok (got == 1 && strcmp (e.name, in[i].name) == 0 && e.type == in[i].type
              && e.mode == in[i].mode && e.uid == in[i].uid && e.gid == in[i].gid
              && e.size == in[i].size && e.mtime.tv_sec == in[i].mtime.tv_sec
              && ((e.link == NULL && in[i].link == NULL)
                  || (e.link && in[i].link && strcmp (e.link, in[i].link) == 0)),
              "entry %d (%.20s%s) reads back as written", i, in[i].name,
              strlen (in[i].name) > 20 ? "..." : "");
      if (i == 0)
        tap_ok (brig_tar_read_data (&r, data, sizeof data, &err) == 5
                && memcmp (data, "hello", 5) == 0
                && brig_tar_read_data (&r, data, sizeof data, &err) == 0,
                "its data, then the end of it");
    }
  /* the last header promised 9 GiB that are not there */
  ssize_t k = brig_tar_read_data (&r, data, sizeof data, &err);
  tap_ok (k < 0 && err.msg && strstr (err.msg, "tar entry 6:"),
          "data promised and missing is an error naming the entry (%s)", err.msg);
  brig_error_clear (&err);
  brig_tar_entry_clear (&e);
  close (fd);
}

static void
gnu_and_damaged (void)
{
  struct ustar h;
  struct brig_tar t;
  struct brig_tar_entry e = { 0 };
  brig_error err = { 0 };
  _cleanup_free_ char *longname = repeat ('g', 150);
  char block[512] = { 0 };
  int fd = memfd ();

  /* a GNU long name: a 'L' entry whose data is the name, then the entry */
  header_fill (&h, "././@LongLink", 'L', 0644, 0, 0, 151, 0, NULL);
  write (fd, &h, sizeof h);
  memcpy (block, longname, 150);
  write (fd, block, sizeof block);
  header_fill (&h, "short", BRIG_TAR_FILE, 0644, 0, 0, 0, 0, NULL);
  write (fd, &h, sizeof h);
  /* then a header with a wrong checksum */
  header_fill (&h, "bad", BRIG_TAR_FILE, 0644, 0, 0, 0, 0, NULL);
  h.name[0] = 'B';
  write (fd, &h, sizeof h);
  lseek (fd, 0, SEEK_SET);
  brig_tar_init (&t, fd);
  tap_ok (brig_tar_read_header (&t, &e, &err) == 1 && strcmp (e.name, longname) == 0,
          "a GNU long name is the entry's name");
  int got = brig_tar_read_header (&t, &e, &err);
  tap_ok (got < 0 && err.msg && strstr (err.msg, "tar entry 2: a damaged header"),
          "a damaged header is refused by its number (%s)", err.msg);
  brig_error_clear (&err);
  brig_tar_entry_clear (&e);
  close (fd);

  /* a pax record set larger than the reader takes */
  fd = memfd ();
  header_fill (&h, "././@PaxHeader", 'x', 0644, 0, 0, BRIG_TAR_PAX_MAX + 1, 0, NULL);
  write (fd, &h, sizeof h);
  lseek (fd, 0, SEEK_SET);
  brig_tar_init (&t, fd);
  tap_ok (brig_tar_read_header (&t, &e, &err) < 0, "pax records over 1 MiB are refused");
  brig_error_clear (&err);
  close (fd);

  /* a name with ".." is the extractor's to refuse; an empty stream ends */
  fd = memfd ();
  brig_tar_init (&t, fd);
  tap_ok (brig_tar_read_header (&t, &e, &err) == 0, "an empty stream is an empty archive");
  close (fd);
}

int
main (void)
{
  tap_plan (13);
  roundtrip ();
  gnu_and_damaged ();
  return tap_done ();
}
