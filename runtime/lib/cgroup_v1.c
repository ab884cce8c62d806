/* cgroup v1 hierarchies: directory creation (cpuset needs its cpus and
 * mems filled in before a task may join) and the freezer. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup_internal.h"
#include "log.h"
#include "utils.h"

/* A fresh cpuset has empty cpuset.cpus and cpuset.mems, and the kernel
 * refuses tasks until both are set: copy them from the parent. */
static int
cpuset_fill (const char *parent, const char *dir, brig_error *err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (files); i++)
    {
      _cleanup_free_ char *cur = NULL, *up = NULL;
      int r = brig_cgroup_read (dir, files[i], &cur);
      if (r < 0)
        return brig_error_set (err, -r, "read %s/%s", dir, files[i]);
      if (*cur != '\0')
        continue;
      r = brig_cgroup_read (parent, files[i], &up);
      if (r < 0)
        return brig_error_set (err, -r, "read %s/%s", parent, files[i]);
      r = brig_cgroup_write (dir, files[i], up, err);
      if (r < 0)
        return r;
    }
  return 0;
}

/* A small cgroup file in one read(2) (cpuset lists fit in a page): 0 with
 * buf holding the value without its newline, or -errno; -EFBIG when it did
 * not fit. */
static int
read_small (const char *dir, const char *file, char *buf, size_t size)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s", dir, file);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -errno;
  do
    n = read (fd, buf, size);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if ((size_t) n >= size)
    return -EFBIG;
  while (n > 0 && buf[n - 1] == '\n')
    n--;
  buf[n] = '\0';
  return 0;
}

/* The cpuset fast path: the parent's cpus and mems, each read once, are
 * written into the new leaf. 1 when done, 0 when the walk must do it (the
 * parent is missing or still empty: another create may have just made it
 * and not filled it yet), or -errno. */
static int
cpuset_leaf (const char *dir, char **created, brig_error *err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  _cleanup_free_ char *parent = xstrdup (dir);
  char values[2][4096];
  int r;

  *strrchr (parent, '/') = '\0';
  for (size_t i = 0; i < 2; i++)
    if (read_small (parent, files[i], values[i], sizeof values[i]) < 0 || values[i][0] == '\0')
      return 0;
  if (mkdir (dir, 0755) < 0)
    return 0;
  *created = xstrdup (dir);
  for (size_t i = 0; i < 2; i++)
    if ((r = brig_cgroup_write (dir, files[i], values[i], err)) < 0)
      return r;
  return 1;
}

int
brig_cgroup_v1_mkdir_leaf (const char *mountpoint, const char *controllers, const char *path,
                           char **created, brig_error *err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s", mountpoint, path + strspn (path, "/"));

  /* A fresh cpuset has empty cpus and mems, and takes no task until both
   * are set. */
  if (brig_cgroup_list_has (controllers, "cpuset"))
    return cpuset_leaf (dir, created, err);
  if (mkdir (dir, 0755) < 0)
    return 0;
  *created = brig_steal_ptr (dir);
  return 1;
}

int
brig_cgroup_v1_mkdir_walk (const char *mountpoint, const char *controllers, const char *path,
                           char **created, brig_error *err)
{
  bool cpuset = brig_cgroup_list_has (controllers, "cpuset");
  _cleanup_free_ char *dir = xstrdup (mountpoint);
  _cleanup_free_ char *copy = xstrdup (path);
  char *save = NULL, *tok;

  *created = NULL;
  for (tok = strtok_r (copy, "/", &save); tok; tok = strtok_r (NULL, "/", &save))
    {
      char *parent = dir;
      int r;
      dir = xasprintf ("%s/%s", parent, tok);
      /* mkdir's EEXIST says what a stat before it would */
      if (mkdir (dir, 0755) == 0)
        {
          if (*created == NULL)
            *created = xstrdup (dir);
        }
      else if (errno != EEXIST)
        {
          r = brig_error_errno (err, "mkdir %s", dir);
          free (parent);
          return r;
        }
      r = cpuset ? cpuset_fill (parent, dir, err) : 0;
      free (parent);
      if (r < 0)
        return r;
    }
  return 0;
}

int
brig_cgroup_v1_mkdir (const char *mountpoint, const char *controllers, const char *path,
                      brig_error *err)
{
  _cleanup_free_ char *created = NULL;
  return brig_cgroup_v1_mkdir_walk (mountpoint, controllers, path, &created, err);
}

static void
sleep_us (long us)
{
  struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
  while (nanosleep (&ts, &ts) < 0 && errno == EINTR)
    ;
}

/* Writing FROZEN starts freezing; the state reads FREEZING until every task
 * has stopped. A task stuck in the kernel can keep it there, so write again
 * now and then, and give up (thawing) after a few seconds. */
int
brig_cgroup_v1_freeze (const char *dir, bool freeze, brig_error *err)
{
  const char *want = freeze ? "FROZEN" : "THAWED";
  long waited = 0, delay = 100;
  int r;

  for (int tries = 0;; tries++)
    {
      _cleanup_free_ char *state = NULL;
      if (tries % 10 == 0)
        {
          r = brig_cgroup_write (dir, "freezer.state", want, err);
          if (r < 0)
            return r;
        }
      r = brig_cgroup_read (dir, "freezer.state", &state);
      if (r < 0)
        return brig_error_set (err, -r, "read %s/freezer.state", dir);
      if (strcmp (state, want) == 0)
        return 0;
      if (waited > 5000000)
        {
          if (freeze)
            brig_cgroup_write (dir, "freezer.state", "THAWED", NULL);
          return brig_error_set (err, EBUSY, "%s: freezer.state is %s, wanted %s", dir, state,
                                 want);
        }
      sleep_us (delay);
      waited += delay;
      delay = delay < 10000 ? delay * 2 : 10000;
    }
}
