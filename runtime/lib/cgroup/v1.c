/* cgroup v1 hierarchies: directory creation (cpuset needs its cpus and
 * mems filled in before a task may join) and the freezer. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup/internal.h"
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

static int walk (const char *mountpoint, bool cpuset, const char *path, char **created,
                 brig_error *err);

/* The cpuset leaf: its parent's cpus and mems, each read once, written into
 * it. Under a parent with cgroup.clone_children (every cgroup of a
 * hierarchy mounted with that option) the kernel copies both at mkdir,
 * together: one read of the child's cpus shows it, and nothing is written.
 * brig never sets the flag on a parent (it would change, for every runtime
 * and for the nested cgroups of containers, what a new cpuset holds), and
 * reading it costs what it saves where it is off: only the mount option,
 * known from mountinfo, chooses that order. 1 when done, 0 when the walk
 * must make it (the parent is missing or still empty: another create may
 * have just made it and not filled it yet; or the directory exists), or
 * -errno (*created set: remove it). */
static int
cpuset_leaf (const char *mountpoint, const char *path, const char *dir, bool clone_children,
             char **created, brig_error *err)
{
  static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
  _cleanup_free_ char *parent = xstrdup (dir);
  char values[2][4096];
  int r;

  *strrchr (parent, '/') = '\0';
  if (clone_children)
    {
      if (mkdir (dir, BRIG_CGROUP_LEAF_MODE) < 0)
        return 0;
      *created = xstrdup (dir);
      if (read_small (dir, files[0], values[0], sizeof values[0]) == 0 && values[0][0] != '\0')
        return 1;
      /* the flag was cleared below the mount, or a sibling is exclusive */
    }
  for (size_t i = 0; i < 2; i++)
    if (read_small (parent, files[i], values[i], sizeof values[i]) < 0 || values[i][0] == '\0')
      {
        _cleanup_free_ char *none = NULL;
        if (*created == NULL)
          return 0;
        r = walk (mountpoint, true, path, &none, err);
        return r < 0 ? r : 1;
      }
  if (*created == NULL)
    {
      if (mkdir (dir, BRIG_CGROUP_LEAF_MODE) < 0)
        return 0;
      *created = xstrdup (dir);
    }
  for (size_t i = 0; i < 2; i++)
    if ((r = brig_cgroup_write (dir, files[i], values[i], err)) < 0)
      return r;
  return 1;
}

int
brig_cgroup_v1_mkdir_leaf (const char *mountpoint, const char *controllers, const char *path,
                           bool clone_children, char **created, brig_error *err)
{
  _cleanup_free_ char *dir = xasprintf ("%s/%s", mountpoint, path + strspn (path, "/"));

  /* A fresh cpuset has empty cpus and mems, and takes no task until both
   * are set. */
  if (brig_cgroup_list_has (controllers, "cpuset"))
    return cpuset_leaf (mountpoint, path, dir, clone_children, created, err);
  if (mkdir (dir, BRIG_CGROUP_LEAF_MODE) < 0)
    return 0;
  *created = brig_steal_ptr (dir);
  return 1;
}

/* Make every missing level of path (the last one with the leaf's mode);
 * cpuset: fill each level's empty cpus and mems from its parent. */
static int
walk (const char *mountpoint, bool cpuset, const char *path, char **created, brig_error *err)
{
  _cleanup_free_ char *dir = xstrdup (mountpoint);
  _cleanup_free_ char *copy = xstrdup (path);
  char *save = NULL, *tok;

  *created = NULL;
  for (tok = strtok_r (copy, "/", &save); tok; tok = strtok_r (NULL, "/", &save))
    {
      char *parent = dir;
      bool last = save == NULL || save[strspn (save, "/")] == '\0';
      int r;
      dir = xasprintf ("%s/%s", parent, tok);
      /* mkdir's EEXIST says what a stat before it would */
      if (mkdir (dir, last ? BRIG_CGROUP_LEAF_MODE : 0755) == 0)
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
brig_cgroup_v1_mkdir_walk (const char *mountpoint, const char *controllers, const char *path,
                           char **created, brig_error *err)
{
  return walk (mountpoint, brig_cgroup_list_has (controllers, "cpuset"), path, created, err);
}

int
brig_cgroup_v1_mkdir (const char *mountpoint, const char *controllers, const char *path,
                      brig_error *err)
{
  _cleanup_free_ char *created = NULL;
  return brig_cgroup_v1_mkdir_walk (mountpoint, controllers, path, &created, err);
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
          return brig_error_say (err, EBUSY, "%s: freezer.state is %s, wanted %s", dir, state,
                                 want);
        }
      brig_sleep_us (delay);
      waited += delay;
      delay = delay < 10000 ? delay * 2 : 10000;
    }
}
