/* Joining the cgroup without cgroup.procs (docs/cgroups.md "Joining"): the
 * cgroup2 directory fd for clone3's CLONE_INTO_CGROUP, and the v1 `tasks`
 * files a child writes "0" to, opened by the child itself (or, for one in
 * a new user namespace, by the parent), then closed together. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "paths.h"
#include "utils.h"

int
brig_cgroup_clone_fd (brig_cgroup *cg)
{
  if (cg == NULL || cg->ops != &brig_cgroup_fs_ops || cg->unified == NULL
      || (cg->mode != BRIG_CGROUP_V2 && !(cg->mode == BRIG_CGROUP_HYBRID && cg->self_join)))
    return -1;
  /* O_RDONLY rather than O_PATH: kernels before 6.x take no O_PATH fd here */
  if (cg->clone_fd < 0)
    cg->clone_fd = open (cg->unified, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return cg->clone_fd;
}

/* The `tasks` file of a v1 directory, in buf; false when it does not fit. */
static bool
tasks_path (const char *dir, char *buf, size_t size)
{
  return (size_t) snprintf (buf, size, "%s/tasks", dir) < size;
}

/* The v1 directories of cg into s, each with fd -1 (not open yet); false
 * when the child cannot join by itself. */
static bool
self_list (brig_cgroup *cg, struct brig_cgroup_self *s)
{
  char tasks[PATH_MAX];

  s->n = 0;
  s->close_inherited = false;
  if (cg == NULL || cg->ops != &brig_cgroup_fs_ops || cg->rootless
      || (cg->mode != BRIG_CGROUP_V1 && cg->mode != BRIG_CGROUP_HYBRID))
    return false;
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      if (cg->dirs[i].path == cg->unified)
        continue;
      if (s->n == BRIG_CGROUP_SELF_MAX || !tasks_path (cg->dirs[i].path, tasks, sizeof tasks))
        return false;
      s->dir[s->n] = cg->dirs[i].path;
      s->fd[s->n++] = -1;
    }
  return true;
}

bool
brig_cgroup_self_open (brig_cgroup *cg, struct brig_cgroup_self *s)
{
  if (!self_list (cg, s))
    {
      s->n = 0;
      return false;
    }
  for (size_t i = 0; i < s->n; i++)
    {
      /* tasks and not cgroup.procs: only a thread moving itself ("0" to
       * tasks) skips the global lock */
      /* One open of the file by its full path: the same walk and the same
       * O_NOFOLLOW on "tasks" as a directory fd and an openat from it, two
       * calls (and a close) fewer per hierarchy. */
      char tasks[PATH_MAX];
      tasks_path (s->dir[i], tasks, sizeof tasks);
      s->fd[i] = open (tasks, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      if (s->fd[i] < 0)
        {
          brig_cgroup_self_close (cg, s);
          return false;
        }
    }
  cg->self_join = true;
  return true;
}

bool
brig_cgroup_self_prepare (brig_cgroup *cg, struct brig_cgroup_self *s, bool child_opens)
{
  bool ok;
  if (!child_opens)
    ok = brig_cgroup_self_open (cg, s);
  else if ((ok = self_list (cg, s)))
    cg->self_join = true;
  else
    s->n = 0;
  /* once self_join is set: a hybrid host's cgroup2 directory too */
  s->close_inherited = true;
  s->inherited = cg ? brig_cgroup_clone_fd (cg) : -1;
  return ok;
}

/* What brig_cgroup_self_join joined, in this process (the child). */
static const char *joined[BRIG_CGROUP_SELF_MAX];
static size_t n_joined;

bool
brig_cgroup_self_joined (const char *mountpoint, const char **rel)
{
  size_t l = strlen (mountpoint);
  for (size_t i = 0; i < n_joined; i++)
    if (strncmp (joined[i], mountpoint, l) == 0 && joined[i][l] == '/')
      {
        *rel = joined[i] + l;
        return true;
      }
  return false;
}

int
brig_cgroup_self_join (struct brig_cgroup_self *s, brig_error *err)
{
  struct brig_fd_batch opened = { .n = 0 };
  int r = 0;

  /* the parent's cgroup2 directory (CLONE_INTO_CGROUP): not the
   * container's to hold, and its number is free for the files below */
  if (s->close_inherited && s->inherited >= 0)
    close (s->inherited);
  s->close_inherited = false;
  for (size_t i = 0; i < s->n; i++)
    {
      int fd = s->fd[i];
      if (r == 0 && fd < 0)
        {
          /* brig_cgroup_self_prepare: opened here, with the rights and the
           * mounts of the parent the child still has (no user namespace,
           * nothing joined or unshared yet), O_NOFOLLOW as there */
          char tasks[PATH_MAX];
          tasks_path (s->dir[i], tasks, sizeof tasks);
          fd = open (tasks, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
          if (fd < 0)
            r = brig_error_errno (err, "join cgroup %s (open tasks)", s->dir[i]);
        }
      if (r == 0 && write (fd, "0", 1) != 1)
        r = brig_error_errno (err, "join cgroup %s (tasks)", s->dir[i]);
      if (r == 0)
        joined[n_joined++] = s->dir[i];
      brig_fd_batch_add (&opened, fd);
    }
  /* Closed at once, before anything of the container runs: one
   * close_range per run of consecutive numbers rather than a close each.
   * They are close-on-exec, but an init waiting for `start` would hold
   * host cgroup files opened with brig's rights meanwhile. */
  brig_fd_batch_close (&opened);
  s->n = 0;
  return r;
}

void
brig_cgroup_self_close (brig_cgroup *cg, struct brig_cgroup_self *s)
{
  struct brig_fd_batch b = { .n = 0 };
  for (size_t i = 0; i < s->n; i++)
    brig_fd_batch_add (&b, s->fd[i]);
  brig_fd_batch_close (&b);
  s->n = 0;
  if (cg)
    cg->self_join = false;
}
