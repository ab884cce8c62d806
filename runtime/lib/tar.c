/* The tar stream of `brig cp`: ustar headers with pax records where a field
 * does not fit. See tar.h. Written from POSIX.1-2008 "pax" (the ustar
 * header and the extended header records). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tar.h"
#include "utils.h"

#define BLOCK 512

struct ustar {
  char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8];
  char type, linkname[100], magic[6], version[2], uname[32], gname[32];
  char devmajor[8], devminor[8], prefix[155], pad[12];
};
_Static_assert (sizeof (struct ustar) == BLOCK, "ustar header is one block");

void
brig_tar_init (struct brig_tar *t, int fd)
{
  t->fd = fd;
  t->entries = 0;
  t->left = t->pad = 0;
  t->pos = t->len = 0;
}

void
brig_tar_entry_clear (struct brig_tar_entry *e)
{
  free (e->name);
  free (e->link);
  memset (e, 0, sizeof *e);
}

/* ---- writing ---- */

int
brig_tar_flush (struct brig_tar *t, brig_error *err)
{
  if (t->len && brig_write_all (t->fd, t->buf, t->len) < 0)
    return brig_error_errno (err, "write the tar stream");
  t->len = 0;
  return 0;
}

static int
put (struct brig_tar *t, const void *p, size_t n, brig_error *err)
{
  const unsigned char *s = p;

  /* large writes go straight out once the buffer is empty */
  if (n >= sizeof t->buf)
    {
      if (brig_tar_flush (t, err) < 0)
        return -EIO;
      if (brig_write_all (t->fd, s, n) < 0)
        return brig_error_errno (err, "write the tar stream");
      return 0;
    }
  if (t->len + n > sizeof t->buf && brig_tar_flush (t, err) < 0)
    return -EIO;
  memcpy (t->buf + t->len, s, n);
  t->len += n;
  return 0;
}

static int
put_zeros (struct brig_tar *t, size_t n, brig_error *err)
{
  static const unsigned char zero[BLOCK];

  while (n > 0)
    {
      size_t k = n < BLOCK ? n : BLOCK;
      if (put (t, zero, k, err) < 0)
        return -EIO;
      n -= k;
    }
  return 0;
}

/* An octal field of w bytes (w-1 digits and a NUL): false if v does not fit. */
static bool
octal (char *f, size_t w, uint64_t v)
{
  for (size_t i = w - 1; i-- > 0; v >>= 3)
    f[i] = (char) ('0' + (v & 7));
  f[w - 1] = '\0';
  return v == 0;
}

/* One pax record "LEN KEY=VALUE\n", LEN counting itself. */
static void
pax_record (char **buf, size_t *len, const char *key, const char *val)
{
  size_t body = strlen (key) + strlen (val) + 3, n = body + 1;
  char digits[24];

  while (snprintf (digits, sizeof digits, "%zu", n), strlen (digits) + body != n)
    n = strlen (digits) + body;
  *buf = realloc (*buf, *len + n + 1);
  if (*buf == NULL)
    abort ();
  snprintf (*buf + *len, n + 1, "%zu %s=%s\n", n, key, val);
  *len += n;
}

static uint16_t
header_sum (const struct ustar *h)
{
  const unsigned char *b = (const unsigned char *) h;
  unsigned sum = 0;

  for (size_t i = 0; i < BLOCK; i++)
    sum += (i >= offsetof (struct ustar, chksum) && i < offsetof (struct ustar, chksum) + 8)
           ? ' ' : b[i];
  return (uint16_t) sum;
}

static void
header_fill (struct ustar *h, const char *name, int type, mode_t mode, uint64_t uid,
             uint64_t gid, uint64_t size, int64_t mtime, const char *link)
{
  memset (h, 0, sizeof *h);
  memcpy (h->name, name, strnlen (name, sizeof h->name));
  octal (h->mode, sizeof h->mode, mode & 07777);
  octal (h->uid, sizeof h->uid, uid);
  octal (h->gid, sizeof h->gid, gid);
  octal (h->size, sizeof h->size, size);
  octal (h->mtime, sizeof h->mtime, mtime < 0 ? 0 : (uint64_t) mtime);
  h->type = (char) type;
  if (link)
    memcpy (h->linkname, link, strnlen (link, sizeof h->linkname));
  memcpy (h->magic, "ustar", 6);
  memcpy (h->version, "00", 2);
  snprintf (h->chksum, sizeof h->chksum, "%06o", header_sum (h));
  h->chksum[7] = ' ';
}

int
brig_tar_write_header (struct brig_tar *t, const struct brig_tar_entry *e, brig_error *err)
{
  struct ustar h;
  _cleanup_free_ char *pax = NULL;
  size_t paxlen = 0;
  char num[32];
  struct ustar probe;
  bool size_fits = octal (probe.size, sizeof probe.size, e->size);
  bool uid_fits = octal (probe.uid, sizeof probe.uid, e->uid);
  bool gid_fits = octal (probe.gid, sizeof probe.gid, e->gid);

  if (strlen (e->name) > sizeof h.name)
    pax_record (&pax, &paxlen, "path", e->name);
  if (e->link && strlen (e->link) > sizeof h.linkname)
    pax_record (&pax, &paxlen, "linkpath", e->link);
  if (!size_fits)
    pax_record (&pax, &paxlen, "size", (snprintf (num, sizeof num, "%" PRIu64, e->size), num));
  if (!uid_fits)
    pax_record (&pax, &paxlen, "uid", (snprintf (num, sizeof num, "%u", (unsigned) e->uid), num));
  if (!gid_fits)
    pax_record (&pax, &paxlen, "gid", (snprintf (num, sizeof num, "%u", (unsigned) e->gid), num));
  if (pax)
    {
      header_fill (&h, "././@PaxHeader", 'x', 0644, 0, 0, paxlen, e->mtime.tv_sec, NULL);
      if (put (t, &h, sizeof h, err) < 0 || put (t, pax, paxlen, err) < 0
          || brig_tar_write_pad (t, paxlen, err) < 0)
        return -EIO;
    }
  header_fill (&h, e->name, e->type, e->mode, uid_fits ? e->uid : 0, gid_fits ? e->gid : 0,
               size_fits ? e->size : 0, e->mtime.tv_sec, e->link);
  t->entries++;
  return put (t, &h, sizeof h, err);
}

int
brig_tar_write_data (struct brig_tar *t, const void *p, size_t n, brig_error *err)
{
  return put (t, p, n, err);
}

int
brig_tar_write_pad (struct brig_tar *t, uint64_t size, brig_error *err)
{
  return put_zeros (t, (size_t) ((BLOCK - size % BLOCK) % BLOCK), err);
}

int
brig_tar_write_end (struct brig_tar *t, brig_error *err)
{
  if (put_zeros (t, 2 * BLOCK, err) < 0)
    return -EIO;
  return brig_tar_flush (t, err);
}

/* ---- reading ---- */

/* Make n (<= the buffer) bytes available at t->buf + t->pos: 1, 0 at a
 * clean end of the stream (nothing buffered), or -errno. */
static int
fill (struct brig_tar *t, size_t n)
{
  if (t->len - t->pos >= n)
    return 1;
  memmove (t->buf, t->buf + t->pos, t->len - t->pos);
  t->len -= t->pos;
  t->pos = 0;
  while (t->len < n)
    {
      ssize_t k = read (t->fd, t->buf + t->len, sizeof t->buf - t->len);
      if (k < 0 && errno == EINTR)
        continue;
      if (k < 0)
        return -errno;
      if (k == 0)
        return t->len == 0 ? 0 : -EPROTO;
      t->len += (size_t) k;
    }
  return 1;
}

/* Skip n bytes of the stream. */
static int
skip (struct brig_tar *t, uint64_t n)
{
  while (n > 0)
    {
      size_t k = n < sizeof t->buf ? (size_t) n : sizeof t->buf;
      int r = fill (t, k);
      if (r <= 0)
        return r == 0 ? -EPROTO : r;
      t->pos += k;
      n -= k;
    }
  return 0;
}

/* A numeric field: octal (spaces or NULs around it) or GNU base-256. */
static bool
number (const char *f, size_t w, uint64_t *out)
{
  uint64_t v = 0;
  size_t i = 0;

  if ((unsigned char) f[0] & 0x80)
    {
      if ((unsigned char) f[0] != 0x80)
        return false;     /* negative or too large */
      for (i = 1; i < w; i++)
        {
          if (v >> 56)
            return false;
          v = (v << 8) | (unsigned char) f[i];
        }
      *out = v;
      return true;
    }
  while (i < w && f[i] == ' ')
    i++;
  for (; i < w && f[i] >= '0' && f[i] <= '7'; i++)
    {
      if (v >> 60)
        return false;
      v = (v << 3) | (uint64_t) (f[i] - '0');
    }
  for (; i < w; i++)
    if (f[i] != ' ' && f[i] != '\0')
      return false;
  *out = v;
  return true;
}

static char *
field (const char *f, size_t w)
{
  return strndup (f, strnlen (f, w));
}

/* The data of a pax or long-name entry (size bytes, NUL-terminated). */
static int
read_meta (struct brig_tar *t, uint64_t size, char **out)
{
  char *m;
  uint64_t got = 0;
  int r;

  if (size > BRIG_TAR_PAX_MAX)
    return -E2BIG;
  m = xmalloc0 ((size_t) size + 1);
  while (got < size)
    {
      size_t k = size - got < sizeof t->buf ? (size_t) (size - got) : sizeof t->buf;
      if ((r = fill (t, k)) <= 0)
        {
          free (m);
          return r == 0 ? -EPROTO : r;
        }
      memcpy (m + got, t->buf + t->pos, k);
      t->pos += k;
      got += k;
    }
  *out = m;
  return skip (t, (BLOCK - size % BLOCK) % BLOCK);
}

/* Apply pax records to what the next header gives. */
static int
pax_apply (char *recs, uint64_t size, struct brig_tar_entry *o, bool *has_size, bool *has_mtime)
{
  char *p = recs, *end = recs + size;

  while (p < end)
    {
      char *sp, *eq, *stop;
      unsigned long long n = strtoull (p, &sp, 10);
      if (sp == p || *sp != ' ' || n == 0 || n > (unsigned long long) (end - p)
          || p[n - 1] != '\n')
        return -EBADMSG;
      stop = p + n - 1;
      *stop = '\0';
      eq = strchr (sp + 1, '=');
      if (eq == NULL)
        return -EBADMSG;
      *eq = '\0';
      const char *k = sp + 1, *v = eq + 1;
      if (strcmp (k, "path") == 0)
        free (o->name), o->name = xstrdup (v);
      else if (strcmp (k, "linkpath") == 0)
        free (o->link), o->link = xstrdup (v);
      else if (strcmp (k, "size") == 0)
        o->size = strtoull (v, NULL, 10), *has_size = true;
      else if (strcmp (k, "uid") == 0)
        o->uid = (uid_t) strtoul (v, NULL, 10);
      else if (strcmp (k, "gid") == 0)
        o->gid = (gid_t) strtoul (v, NULL, 10);
      else if (strcmp (k, "mtime") == 0)
        {
          o->mtime.tv_sec = strtoll (v, NULL, 10);
          *has_mtime = true;
        }
      p = stop + 1;
    }
  return 0;
}

static bool
all_zero (const unsigned char *b)
{
  for (size_t i = 0; i < BLOCK; i++)
    if (b[i])
      return false;
  return true;
}

static bool
sum_ok (const struct ustar *h)
{
  uint64_t sum;

  return number (h->chksum, sizeof h->chksum, &sum) && sum == header_sum (h);
}

/* One ustar block into e, with what pax or GNU long-name entries before it
 * already set (pre). */
static int
decode (const struct ustar *h, struct brig_tar_entry *e, const struct brig_tar_entry *pre,
        bool has_size, bool has_mtime)
{
  uint64_t mode, uid, gid, size, mtime;

  if (!sum_ok (h))
    return -EBADMSG;
  if (!number (h->mode, sizeof h->mode, &mode) || !number (h->uid, sizeof h->uid, &uid)
      || !number (h->gid, sizeof h->gid, &gid) || !number (h->size, sizeof h->size, &size)
      || !number (h->mtime, sizeof h->mtime, &mtime) || uid > UINT32_MAX || gid > UINT32_MAX)
    return -EBADMSG;
  e->type = h->type == '\0' ? BRIG_TAR_FILE : h->type;
  e->mode = (mode_t) (mode & 07777);
  e->uid = pre->uid != (uid_t) -1 ? pre->uid : (uid_t) uid;
  e->gid = pre->gid != (gid_t) -1 ? pre->gid : (gid_t) gid;
  e->size = has_size ? pre->size : size;
  e->mtime.tv_sec = has_mtime ? pre->mtime.tv_sec : (time_t) mtime;
  if (pre->name)
    e->name = xstrdup (pre->name);
  else if (memcmp (h->magic, "ustar", 5) == 0 && h->prefix[0])
    e->name = xasprintf ("%.*s/%.*s", (int) strnlen (h->prefix, sizeof h->prefix), h->prefix,
                         (int) strnlen (h->name, sizeof h->name), h->name);
  else
    e->name = field (h->name, sizeof h->name);
  if (pre->link)
    e->link = xstrdup (pre->link);
  else if (h->linkname[0])
    e->link = field (h->linkname, sizeof h->linkname);
  return 0;
}

int
brig_tar_read_header (struct brig_tar *t, struct brig_tar_entry *e, brig_error *err)
{
  struct brig_tar_entry pre = { .uid = (uid_t) -1, .gid = (gid_t) -1 };
  bool has_size = false, has_mtime = false;
  int r;

  brig_tar_entry_clear (e);
  /* what is left of the entry before */
  if ((r = skip (t, t->left + t->pad)) < 0)
    return brig_error_set (err, -r, "tar entry %llu: read its data", t->entries);
  t->left = t->pad = 0;
  for (;;)
    {
      struct ustar h;
      uint64_t size;
      char *meta = NULL;

      r = fill (t, BLOCK);
      if (r == 0)
        break;      /* no end blocks: accepted, as GNU tar does */
      if (r < 0)
        goto bad;
      memcpy (&h, t->buf + t->pos, BLOCK);
      t->pos += BLOCK;
      if (all_zero ((unsigned char *) &h))
        break;
      if (h.type != 'x' && h.type != 'g' && h.type != 'L' && h.type != 'K')
        {
          r = decode (&h, e, &pre, has_size, has_mtime);
          if (r < 0)
            goto bad;
          brig_tar_entry_clear (&pre);
          if (e->type != BRIG_TAR_FILE && e->type != '7')
            e->size = e->type == BRIG_TAR_DIR || e->type == BRIG_TAR_SYMLINK
                      || e->type == BRIG_TAR_HARDLINK ? 0 : e->size;
          t->entries++;
          t->left = e->size;
          t->pad = (BLOCK - e->size % BLOCK) % BLOCK;
          if (e->name == NULL || e->name[0] == '\0' || strlen (e->name) >= 4096
              || (e->link && strlen (e->link) >= 4096))
            {
              r = -ENAMETOOLONG;
              goto bad;
            }
          return 1;
        }
      if (!sum_ok (&h) || !number (h.size, sizeof h.size, &size))
        {
          r = -EBADMSG;
          goto bad;
        }
      if ((r = read_meta (t, size, &meta)) < 0)
        {
          free (meta);
          goto bad;
        }
      if (h.type == 'x')
        r = pax_apply (meta, size, &pre, &has_size, &has_mtime);
      else if (h.type == 'L')
        free (pre.name), pre.name = xstrdup (meta);
      else if (h.type == 'K')
        free (pre.link), pre.link = xstrdup (meta);
      free (meta);
      if (r < 0)
        goto bad;
    }
  brig_tar_entry_clear (&pre);
  return 0;
bad:
  brig_tar_entry_clear (&pre);
  brig_tar_entry_clear (e);
  /* numbered as the entries a reader of the archive sees (pax and GNU
   * long-name headers belong to the entry after them) */
  return brig_error_set (err, -r, "tar entry %llu: %s", t->entries + 1,
                         r == -EPROTO ? "the archive ends inside it"
                         : r == -EBADMSG ? "a damaged header" : "read it");
}

ssize_t
brig_tar_read_data (struct brig_tar *t, void *p, size_t n, brig_error *err)
{
  size_t k;
  int r;

  if (t->left == 0)
    return 0;
  if (t->pos == t->len && (r = fill (t, 1)) <= 0)
    return brig_error_set (err, r == 0 ? EPROTO : -r, "tar entry %llu: the archive ends "
                           "inside its data", t->entries);
  k = t->len - t->pos;
  if (k > n)
    k = n;
  if (k > t->left)
    k = (size_t) t->left;
  memcpy (p, t->buf + t->pos, k);
  t->pos += k;
  t->left -= k;
  return (ssize_t) k;
}
