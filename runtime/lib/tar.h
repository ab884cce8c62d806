/* A small tar stream reader and writer for `brig cp` (container/copy.h):
 * POSIX ustar headers, pax extended headers ('x': path, linkpath, size,
 * uid, gid, mtime) where a field does not fit, and on reading also GNU
 * long names ('L', 'K') and base-256 numbers, which GNU tar writes. The
 * reader judges every header (checksum, sizes, names) because it reads
 * archives a tenant made; it knows nothing of files, only of the stream. */
#ifndef BRIG_TAR_H
#define BRIG_TAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

/* The entry types brig reads and writes (the ustar typeflag). */
enum {
  BRIG_TAR_FILE = '0', BRIG_TAR_HARDLINK = '1', BRIG_TAR_SYMLINK = '2',
  BRIG_TAR_CHAR = '3', BRIG_TAR_BLOCK = '4', BRIG_TAR_DIR = '5', BRIG_TAR_FIFO = '6',
};

/* What the reader accepts at most in one pax record set or long name. */
#define BRIG_TAR_PAX_MAX (1024 * 1024)

struct brig_tar_entry {
  char *name;                 /* malloc'd; as in the archive (no "./" trimming) */
  char *link;                 /* malloc'd symlink or hardlink target, or NULL */
  int type;                   /* BRIG_TAR_* */
  mode_t mode;                /* permission bits (07777) */
  uid_t uid;
  gid_t gid;
  uint64_t size;              /* data bytes (files only) */
  struct timespec mtime;
};

/* A stream over one fd with a buffer; for reading or for writing. */
struct brig_tar {
  int fd;
  unsigned long long entries; /* headers read or written, for messages */
  uint64_t left;              /* data bytes of the current entry not yet read */
  uint64_t pad;               /* padding after them */
  size_t pos, len;            /* buffer window (reading) or fill (writing) */
  unsigned char buf[64 * 1024];
};

/* Start a stream on fd (the caller keeps the fd). */
void brig_tar_init (struct brig_tar *t, int fd);

/* Free the strings of an entry and zero it. */
void brig_tar_entry_clear (struct brig_tar_entry *e);

/* Write e's header (with a pax header before it when a field needs one). */
int brig_tar_write_header (struct brig_tar *t, const struct brig_tar_entry *e, brig_error *err);

/* Write n data bytes of the current entry. */
int brig_tar_write_data (struct brig_tar *t, const void *p, size_t n, brig_error *err);

/* Pad the data of an entry of size bytes to the 512-byte block. */
int brig_tar_write_pad (struct brig_tar *t, uint64_t size, brig_error *err);

/* The two zero blocks that end an archive, and flush. */
int brig_tar_write_end (struct brig_tar *t, brig_error *err);

/* Flush what is buffered. */
int brig_tar_flush (struct brig_tar *t, brig_error *err);

/* Read the next entry into e (the data of the one before is skipped):
 * 1 an entry, 0 the end of the archive, or -errno with "tar entry N: ...". */
int brig_tar_read_header (struct brig_tar *t, struct brig_tar_entry *e, brig_error *err);

/* Read up to n data bytes of the current entry: the count, 0 at its end,
 * or -errno (a short archive is -EPROTO). */
ssize_t brig_tar_read_data (struct brig_tar *t, void *p, size_t n, brig_error *err);

#endif
