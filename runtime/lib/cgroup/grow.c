/* `update` that sets a value of a hierarchy the container was left out of
 * at create (cgroup/scope.c says which and why): the directory is made, every
 * process of the container moved into it, then the update goes through the
 * dispatcher. Above the backends: it calls the cgroupfs freeze and the
 * dispatcher's update. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

/* Move every process of the container into dir. Frozen (unless it is
 * already, or there is no freezer) so that nothing forks behind the walk;
 * the passes repeat until one finds nothing left to move, which also
 * catches a child forked without a freezer. */
static int
join_all (brig_cgroup *cg, const char *dir, brig_error *err)
{
  _cleanup_free_ char *procs = xasprintf ("%s/cgroup.procs", dir);
  _cleanup_close_ int fd = open (procs, O_WRONLY | O_CLOEXEC);
  bool froze = false;
  int r = 0;

  if (fd < 0)
    return brig_error_errno (err, "open %s", procs);
  if (!cg->shared && brig_cgroup_fs_is_frozen (cg) == 0)
    froze = brig_cgroup_fs_freeze (cg, true, NULL) == 0;
  for (int pass = 0;; pass++)
    {
      _cleanup_free_ pid_t *all = NULL, *in = NULL;
      size_t n_all = 0, n_in = 0, moved = 0;

      if ((r = brig_cgroup_own_pids (cg, &all, &n_all, err)) < 0
          || (r = brig_cgroup_read_pids (dir, &in, &n_in, err)) < 0)
        break;
      for (size_t i = 0; i < n_all; i++)
        {
          char buf[32];
          bool there = false;
          for (size_t j = 0; j < n_in && !there; j++)
            there = in[j] == all[i];
          if (there)
            continue;
          snprintf (buf, sizeof buf, "%d", (int) all[i]);
          if (write (fd, buf, strlen (buf)) < 0)
            {
              if (errno == ESRCH)
                continue;   /* it exited meanwhile */
              r = brig_error_errno (err, "write %s = \"%s\"", procs, buf);
              break;
            }
          moved++;
        }
      if (r < 0 || moved == 0)
        break;
      if (pass == 10)
        {
          r = brig_error_say (err, EAGAIN, "%s: the container's processes keep forking; "
                              "pause it and retry", dir);
          break;
        }
    }
  if (froze)
    {
      brig_error tmp = { 0 };
      int r2 = brig_cgroup_fs_freeze (cg, false, &tmp);
      if (r2 < 0 && r == 0)
        {
          brig_error_set_raw (err, tmp.code, tmp.msg);
          r = r2;
        }
      brig_error_clear (&tmp);
    }
  return r;
}

/* Make skipped[k] (recorded first), move the container into it, and count
 * it among the joined hierarchies. */
static int
grow (brig_cgroup *cg, size_t k, const oci_resources *res,
      int (*record) (const char *dir, void *data, brig_error *err), void *data, brig_error *err)
{
  struct brig_cgroup_dir *d = &cg->skipped[k];
  _cleanup_free_ char *created = NULL;
  struct stat st;
  int r;

  /* never a directory someone else made: brig removes what it made only */
  if (stat (d->path, &st) == 0)
    return brig_error_say (err, EEXIST, "cgroup %s: the container is not in it, and brig "
                           "did not make it", d->path);
  if (record && (r = record (d->path, data, err)) < 0)
    return r;
  brig_debug ("cgroup: update needs %s: making it", d->path);
  if (d->controllers)
    r = brig_cgroup_v1_mkdir_walk (d->mountpoint, d->controllers, cg->path, &created, err);
  else
    {
      /* under the hierarchy's lock, as create enables it (cgroup/delegate.c) */
      _cleanup_close_ int lock = brig_cgroup_v2_lock (d->mountpoint);
      if (lock < 0)
        brig_debug ("cgroup: lock %s: %s", d->mountpoint, strerror (-lock));
      r = brig_cgroup_v2_mkdir_walk (d->mountpoint, cg->path, false,
                                     res->hugepage_limits_len > 0 ? "hugetlb" : NULL, &created,
                                     err);
    }
  if (r == 0)
    r = join_all (cg, d->path, err);
  if (r < 0)
    {
      if (created)
        brig_cgroup_rmdir_tree (created, NULL);
      return r;
    }
  d->made = true;
  brig_cgroup_unskip (cg, k);
  return 0;
}

int
brig_cgroup_update_grow (brig_cgroup *cg, const oci_resources *res,
                         int (*record) (const char *dir, void *data, brig_error *err),
                         void *data, brig_error *err)
{
  bool v1_hugetlb;
  int r;

  if (res == NULL)
    return 0;
  if (cg->ops != &brig_cgroup_fs_ops || cg->n_skipped == 0)
    return brig_cgroup_update (cg, res, err);
  /* a bad value is refused before anything is made */
  r = brig_cgroup_resources_validate (cg, res, err);
  if (r < 0)
    return r;
  v1_hugetlb = brig_cgroup_v1_dir (cg, "hugetlb") != NULL;
  for (size_t k = 0; k < cg->n_skipped;)
    {
      if (!brig_cgroup_dir_used (cg->skipped[k].controllers, res, v1_hugetlb))
        {
          k++;
          continue;
        }
      r = grow (cg, k, res, record, data, err);
      if (r < 0)
        return r;
    }
  return brig_cgroup_update (cg, res, err);
}
