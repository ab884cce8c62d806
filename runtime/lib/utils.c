/* Small helpers shared by libbrig (utils.h): allocation that cannot fail,
 * file I/O, /proc/PID/stat, clocks and sleeps, the pid file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "utils.h"

/* Larger than any real /etc/passwd, small enough to read in a moment. */
#define BRIG_PASSWD_MAX (16 << 20)

void brig_freep (void *p) { free (*(void **) p); }

void
brig_closep (int *fd)
{
  if (*fd >= 0)
    {
      int saved = errno;
      close (*fd);
      errno = saved;
    }
  *fd = -1;
}

void brig_fclosep (FILE **f) { if (*f) fclose (*f); }
void brig_closedirp (DIR **d) { if (*d) closedir (*d); }

void
brig_strv_free (char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free (*p);
  free (v);
}

void brig_strv_freep (char ***v) { brig_strv_free (*v); }

void *
xmalloc0 (size_t size)
{
  void *p = calloc (1, size ? size : 1);
  if (p == NULL)
    abort ();
  return p;
}

void *
xrealloc (void *p, size_t size)
{
  p = realloc (p, size ? size : 1);
  if (p == NULL)
    abort ();
  return p;
}

char *
xstrdup (const char *s)
{
  char *r;
  if (s == NULL)
    return NULL;
  r = strdup (s);
  if (r == NULL)
    abort ();
  return r;
}

char *
xasprintf (const char *fmt, ...)
{
  char *r;
  va_list ap;
  va_start (ap, fmt);
  if (vasprintf (&r, fmt, ap) < 0)
    abort ();
  va_end (ap);
  return r;
}

int
brig_read_fd (int fd, char **out, size_t *len, brig_error *err)
{
  size_t cap = 4096, n = 0;
  char *buf = xmalloc0 (cap);

  for (;;)
    {
      ssize_t r;
      if (n + 1 >= cap)
        {
          cap *= 2;
          buf = xrealloc (buf, cap);
        }
      r = read (fd, buf + n, cap - n - 1);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          free (buf);
          return brig_error_errno (err, "read");
        }
      if (r == 0)
        break;
      n += (size_t) r;
    }
  buf[n] = '\0';
  *out = buf;
  if (len)
    *len = n;
  return 0;
}

int
brig_read_file_at (int dirfd, const char *path, char **out, size_t *len, brig_error *err)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return brig_error_errno (err, "open %s", path);
  if (brig_read_fd (fd, out, len, err) < 0)
    return brig_error_wrap (err, "%s", path);
  return 0;
}

int
brig_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t w = write (fd, p, len);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          return -errno;
        }
      p += w;
      len -= (size_t) w;
    }
  return 0;
}

int
brig_write_file_atomic (int dirfd, const char *path, const char *buf, size_t len,
                        mode_t mode, brig_error *err)
{
  _cleanup_free_ char *tmp = xasprintf ("%s.tmp.%d", path, (int) getpid ());
  _cleanup_close_ int fd = -1;
  int r;

  /* The name is predictable and the directory may be someone else's (a
   * --pid-file in a directory a less privileged user can write): never
   * follow or reuse what is there, or a symlink planted under that name
   * makes brig truncate and write any file it can. What is left there (a
   * killed brig's, or planted) is removed, not followed. */
  for (int tries = 0; fd < 0 && tries < 3; tries++)
    {
      fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0 && (errno != EEXIST || unlinkat (dirfd, tmp, 0) < 0))
        break;
    }
  if (fd < 0)
    return brig_error_errno (err, "create %s", tmp);
  r = brig_write_all (fd, buf, len);
  if (r < 0)
    {
      unlinkat (dirfd, tmp, 0);
      return brig_error_set (err, -r, "write %s", tmp);
    }
  if (renameat (dirfd, tmp, dirfd, path) < 0)
    {
      r = errno;
      unlinkat (dirfd, tmp, 0);
      return brig_error_set (err, r, "rename %s", path);
    }
  return 0;
}

int
brig_write_string_at (int dirfd, const char *path, const char *value)
{
  _cleanup_close_ int fd = openat (dirfd, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  return brig_write_all (fd, value, strlen (value));
}

int
brig_mkdir_p (const char *path, mode_t mode)
{
  _cleanup_free_ char *copy = xstrdup (path);
  for (char *p = copy + 1; ; p++)
    {
      if (*p == '/' || *p == '\0')
        {
          char saved = *p;
          *p = '\0';
          if (mkdir (copy, mode) < 0 && errno != EEXIST)
            return -errno;
          *p = saved;
          if (saved == '\0')
            break;
        }
    }
  return 0;
}

char *
brig_passwd_field (uid_t uid, int field)
{
  /* A buffer of ours: stdio would fstat the file again to size its own. */
  char buf[4096];
  _cleanup_fclose_ FILE *f = NULL;
  char line[1024];
  struct stat st;
  int fd;

  if (field < 0 || field > 6)
    return NULL;
  /* The container's file, read by brig before its execve (create, exec,
   * reset): a FIFO there would block the open for ever and /dev/zero or a
   * huge sparse file keep the loop reading, with the state lock held. Only
   * a regular file of a sane size is read. */
  fd = open ("/etc/passwd", O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_size > BRIG_PASSWD_MAX
      || (f = fdopen (fd, "r")) == NULL)
    {
      close (fd);
      return NULL;
    }
  setvbuf (f, buf, _IOFBF, sizeof buf);
  while (fgets (line, sizeof line, f))
    {
      char *fields[7] = { NULL };
      char *s = line, *end;
      int n = 0;
      unsigned long v;

      line[strcspn (line, "\n")] = '\0';
      for (; n < 7 && s; n++)
        {
          fields[n] = s;
          s = strchr (s, ':');
          if (s)
            *s++ = '\0';
        }
      if (n <= field || n < 3)
        continue;
      v = strtoul (fields[2], &end, 10);
      if (end == fields[2] || *end != '\0' || v != uid)
        continue;
      return xstrdup (fields[field]);
    }
  return NULL;
}

void
brig_json_write_string (FILE *f, const char *s)
{
  fputc ('"', f);
  for (const unsigned char *p = (const unsigned char *) s; p && *p; p++)
    {
      if (*p == '"' || *p == '\\')
        fprintf (f, "\\%c", *p);
      else if (*p < 0x20)
        fprintf (f, "\\u%04x", *p);
      else
        fputc (*p, f);
    }
  fputc ('"', f);
}

int
brig_proc_stat (pid_t pid, char *state, unsigned long long *start_time)
{
  char path[64], buf[1024];
  _cleanup_close_ int fd = -1;
  char *p;
  ssize_t n;

  snprintf (path, sizeof path, "/proc/%d/stat", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  n = read (fd, buf, sizeof buf - 1);
  if (n <= 0)
    return n < 0 ? -errno : -EIO;
  buf[n] = '\0';
  /* The command name may hold spaces and parentheses: skip to the last ')'. */
  p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ' || p[2] == '\0')
    return -EIO;
  p += 2;
  if (state)
    *state = *p;
  /* Fields after ") " start at 3 (state); starttime is field 22. */
  for (int field = 3; field < 22 && p; field++)
    {
      p = strchr (p, ' ');
      if (p)
        p++;
    }
  if (p == NULL)
    return -EIO;
  if (start_time)
    *start_time = strtoull (p, NULL, 10);
  return 0;
}

int64_t
brig_mono_ms (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double
brig_mono_ms_f (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

void
brig_sleep_us (long us)
{
  struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

void
brig_sleep_ms (long ms)
{
  struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

int
brig_write_pid_file (const char *path, pid_t pid, const char *what, brig_error *err)
{
  char buf[32];
  int n = snprintf (buf, sizeof buf, "%d", (int) pid);
  int r = brig_write_file_atomic (AT_FDCWD, path, buf, (size_t) n, 0644, err);
  if (r < 0)
    return brig_error_wrap (err, "%s", what);
  return 0;
}

int
brig_cmp_pid (const void *a, const void *b)
{
  pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;
  return (x > y) - (x < y);
}
