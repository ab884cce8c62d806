/* The cgroupfs manager: brig writes the cgroup files itself, in every v1
 * hierarchy (v1), in the v1 hierarchies plus the unified one (hybrid, as
 * runc does), or in the unified hierarchy alone (v2). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

static bool
rootless_denied (const brig_cgroup *cg, int r)
{
  return cg->rootless && (r == -EACCES || r == -EPERM || r == -EROFS);
}

/* Drop dirs[i] (rootless without permission there). */
static void
drop_dir (brig_cgroup *cg, size_t i)
{
  if (cg->unified == cg->dirs[i].path)
    cg->unified = NULL;
  free (cg->dirs[i].controllers);
  free (cg->dirs[i].mountpoint);
  free (cg->dirs[i].path);
  memmove (&cg->dirs[i], &cg->dirs[i + 1], (cg->n_dirs - i - 1) * sizeof *cg->dirs);
  cg->n_dirs--;
}

/* On a hybrid host, the v2 controllers brig needs in the unified hierarchy:
 * those the config asks for and v1 does not mount (hugetlb here). */
static const char *
hybrid_v2_wants (const brig_cgroup *cg, const oci_resources *r)
{
  if (r && r->hugepage_limits_len > 0 && brig_cgroup_v1_dir (cg, "hugetlb") == NULL)
    return "hugetlb";
  return NULL;
}

int
brig_cgroup_fs_apply (brig_cgroup *cg, const oci_resources *r, bool update, brig_error *err)
{
  int ret;
  if (r == NULL)
    return 0;
  if (cg->mode == BRIG_CGROUP_V2)
    return cg->unified ? brig_cgroup_v2_apply (cg, cg->unified, r, update, err) : 0;
  ret = brig_cgroup_v1_apply (cg, r, update, err);
  if (ret < 0)
    return ret;
  if (cg->unified && hybrid_v2_wants (cg, r))
    {
      /* create holds the hierarchy's lock from making the directory on
       * (brig_cgroup_fs_setup); update takes it here, so that no delete
       * takes the controller back before the limits are written */
      _cleanup_close_ int lock = -1;
      if (update)
        {
          const char *mp = cg->dirs[cg->n_dirs - 1].mountpoint;
          lock = brig_cgroup_v2_lock (mp);
          brig_cgroup_v2_enable (mp, cg->path, "hugetlb", NULL);
          brig_cgroup_v2_need (cg->unified, "hugetlb");
        }
      return brig_cgroup_v2_apply_hugetlb (cg->unified, r, err);
    }
  return 0;
}

/* Resolve cgroupsPath into cg->path for the cgroupfs manager. */
static int
fs_resolve (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err)
{
  const char *cp = cfg->cgroups_path;
  _cleanup_free_ char *own = NULL;

  if (cp && *cp != '/' && strchr (cp, ':'))
    {
      /* "slice:prefix:name" without the systemd manager: use the path
       * systemd would have given it, so the same config lands in the same
       * place with either manager. */
      _cleanup_free_ char *slice = NULL, *unit = NULL;
      return brig_cgroup_systemd_names (cp, cfg->id, &slice, &unit, &cg->path, err);
    }
  if (cp && *cp && *cp != '/')
    {
      _cleanup_free_ char *text = NULL;
      if (brig_read_file_at (AT_FDCWD, "/proc/self/cgroup", &text, NULL, err) < 0)
        return brig_error_wrap (err, "cgroup");
      own = brig_cgroup_own_path (text);
    }
  return brig_cgroup_resolve_path (cp, own, cfg->id, &cg->path, err);
}

/* Make dirs[i]. The usual case, a hierarchy whose parent cgroup exists,
 * takes one mkdir; otherwise every level is made, noting the first one
 * that was missing (*created: what a failed create removes). */
static int
make_dir (brig_cgroup *cg, size_t i, const oci_resources *res, char **created,
          brig_error *err)
{
  const char *mp = cg->dirs[i].mountpoint, *ctl = cg->dirs[i].controllers;
  const char *want = cg->mode == BRIG_CGROUP_HYBRID ? hybrid_v2_wants (cg, res) : NULL;
  int r = ctl ? brig_cgroup_v1_mkdir_leaf (mp, ctl, cg->path, cg->dirs[i].clone_children, created,
                                           err) : 0;

  if (r != 0)
    return r < 0 ? r : 0;
  if (ctl)
    return brig_cgroup_v1_mkdir_walk (mp, ctl, cg->path, created, err);
  if (cg->mode == BRIG_CGROUP_HYBRID && want == NULL)
    {
      /* a hybrid host's cgroup2 hierarchy with no controller to enable:
       * one mkdir when the parent exists, as for v1 */
      _cleanup_free_ char *dir = xasprintf ("%s%s", mp, cg->path);
      if (mkdir (dir, BRIG_CGROUP_LEAF_MODE) == 0)
        {
          *created = brig_steal_ptr (dir);
          return 0;
        }
      if (errno == EEXIST)
        return 0;
    }
  if (cg->mode == BRIG_CGROUP_V2 && cg->unit == NULL)
    return brig_cgroup_v2_mkdir_walk (mp, cg->path, true, NULL, created, err);
  if (cg->mode == BRIG_CGROUP_V2)
    /* systemd owns the ancestors and enabled what a delegated unit needs */
    return brig_cgroup_v2_mkdir_walk (mp, cg->path, false, NULL, created, err);
  r = brig_cgroup_v2_mkdir_walk (mp, cg->path, false, want, created, err);
  if (r == 0 && want)
    brig_cgroup_v2_need (cg->dirs[i].path, want);
  return r;
}

int
brig_cgroup_fs_setup (brig_cgroup *cg, const oci_resources *res,
                      const struct brig_cgroup_config *cfg, brig_error *err)
{
  const struct brig_cgroup_host *host = brig_cgroup_host_get ();
  _cleanup_close_ int v2lock = -1;
  bool found = false;
  char **created;
  int r;

  /* res was validated at create (fs_create, the systemd manager's create),
   * before anything was recorded or made */
  if (cg->dirs == NULL)
    brig_cgroup_fill_dirs (cg, host);
  /* controllers enabled for the container in a hybrid host's cgroup2
   * ancestors stay until its limits are written (cgroup/delegate.c) */
  if (cg->mode == BRIG_CGROUP_HYBRID && cg->unified && hybrid_v2_wants (cg, res))
    v2lock = brig_cgroup_v2_lock (cg->dirs[cg->n_dirs - 1].mountpoint);

  created = xmalloc0 ((cg->n_dirs + 1) * sizeof *created);
  r = 0;
  for (size_t i = 0; i < cg->n_dirs;)
    {
      r = make_dir (cg, i, res, &created[i], err);
      if (r < 0 && rootless_denied (cg, r))
        {
          brig_debug ("cgroup: rootless, skipping %s: %s", cg->dirs[i].path, err->msg);
          brig_error_clear (err);
          free (created[i]);
          memmove (&created[i], &created[i + 1], (cg->n_dirs - i - 1) * sizeof *created);
          drop_dir (cg, i);
          r = 0;
          continue;
        }
      /* Every level existed: the directory is not brig's. */
      if (r == 0 && cfg && created[i] == NULL && cg->dirs[i].made)
        {
          found = true;
          r = brig_cgroup_found (cg, i, cfg->shared, err);
        }
      if (r < 0)
        break;
      i++;
    }
  /* What was found is written down before anything is done in it. */
  if (r == 0 && found && cfg->before_make)
    r = cfg->before_make (cg, cfg->before_make_data, err);
  if (r == 0)
    {
      /* no resources still means the default device rules */
      static const oci_resources none;
      r = brig_cgroup_fs_apply (cg, res ? res : &none, false, err);
    }
  if (r == 0 && cfg && cfg->realtime_policy && cg->mode != BRIG_CGROUP_V2)
    r = brig_cgroup_v1_rt_for_sched (cg, res, cfg->realtime_policy, err);
  if (r < 0)
    {
      for (size_t i = 0; i < cg->n_dirs; i++)
        if (created[i])
          brig_cgroup_rmdir_tree (created[i], NULL);
      if (v2lock >= 0)
        {
          /* what was enabled for this container goes back with it */
          close (brig_steal_fd (v2lock));
          brig_cgroup_v2_release (cg->dirs[cg->n_dirs - 1].mountpoint, cg->path);
        }
    }
  for (size_t i = 0; i < cg->n_dirs; i++)
    free (created[i]);
  free (created);
  return r;
}

static int
fs_create (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err)
{
  int r = fs_resolve (cg, cfg, err);
  if (r < 0)
    return r;
  if (cfg->resources)
    {
      /* a bad value is refused before anything is recorded or made */
      r = brig_cgroup_resources_validate (cg, cfg->resources, err);
      if (r < 0)
        return r;
    }
  brig_cgroup_fill_dirs (cg, brig_cgroup_host_get ());
  brig_cgroup_scope (cg, cfg);
  return brig_cgroup_plan (cg, cfg, err);
}

static int
fs_make (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err)
{
  return brig_cgroup_fs_setup (cg, cfg->resources, cfg, err);
}

/* Wait (bounded) until no process of the container is left in the
 * cgroup: a killed process leaves it only once it has exited. */
static void
wait_gone (brig_cgroup *cg)
{
  long delay = 1, waited = 0;
  while (brig_cgroup_busy (cg) && waited < 2000)
    {
      struct timespec ts = { 0, delay * 1000000L };
      nanosleep (&ts, NULL);
      waited += delay;
      delay = delay < 32 ? delay * 2 : 32;
    }
}

int
brig_cgroup_fs_enter (brig_cgroup *cg, pid_t pid, brig_error *err)
{
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      int r = brig_cgroup_writef (cg->dirs[i].path, "cgroup.procs", err, "%d", (int) pid);
      /* Rootless: a directory create could not make (no delegation) is
         in the record but not on disk; the init is not in it either. */
      if (r < 0 && (rootless_denied (cg, r) || (cg->rootless && r == -ENOENT)))
        {
          brig_error_clear (err);
          continue;
        }
      if (r < 0)
        return r;
    }
  return 0;
}

int
brig_cgroup_fs_freeze (brig_cgroup *cg, bool freeze, brig_error *err)
{
  const char *d = brig_cgroup_v1_dir (cg, "freezer");
  if (d)
    return brig_cgroup_v1_freeze (d, freeze, err);
  if (cg->unified)
    return brig_cgroup_v2_freeze (cg->unified, freeze, err);
  return brig_error_set (err, 0, "%s: no freezer cgroup is mounted",
                         freeze ? "pause" : "resume");
}

int
brig_cgroup_fs_is_frozen (brig_cgroup *cg)
{
  _cleanup_free_ char *file = brig_cgroup_dirs_freeze_file (cg);
  return file ? brig_cgroup_freeze_file_frozen (file) : 0;
}

/* What brig gave the container's ancestors, taken back where none needs it
 * any more: a hybrid host's cgroup2 controllers (cgroup/delegate.c), v1
 * realtime budgets (cgroup/rt.c). */
void
brig_cgroup_fs_release (brig_cgroup *cg)
{
  if (cg->path == NULL || cg->mode == BRIG_CGROUP_V2)
    return;
  brig_cgroup_v1_rt_release (cg);
  if (cg->mode != BRIG_CGROUP_HYBRID || cg->unified == NULL)
    return;
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].controllers == NULL)
      brig_cgroup_v2_release (cg->dirs[i].mountpoint, cg->path);
}

int
brig_cgroup_fs_destroy (brig_cgroup *cg, bool kill, brig_error *err)
{
  bool left_busy = false;
  int ret = 0;

  /* A frozen task cannot exit, and SIGKILL waits for the thaw. A shared
   * cgroup is frozen only by its other users (pause refuses it): theirs. */
  if (!cg->shared && !cg->no_kill && brig_cgroup_fs_is_frozen (cg) == 1)
    brig_cgroup_fs_freeze (cg, false, NULL);
  if (kill && !cg->no_kill)
    {
      brig_cgroup_signal_own (cg, SIGKILL, NULL);
      wait_gone (cg);
    }
  for (size_t i = 0; i < cg->n_dirs; i++)
    {
      brig_error tmp = { 0 };
      int r = 0;
      /* never a directory brig found rather than made */
      if (!cg->dirs[i].made)
        continue;
      /* once one stayed busy past rmdir_tree's wait, one try each */
      if (left_busy && rmdir (cg->dirs[i].path) < 0 && errno != ENOENT)
        r = -errno;
      else if (!left_busy && cg->no_kill)
        /* maybe another container's: not even its empty child cgroups */
        r = brig_cgroup_rmdir_leaf (cg->dirs[i].path, &tmp);
      else if (!left_busy)
        r = brig_cgroup_rmdir_tree (cg->dirs[i].path, &tmp);
      if (r < 0 && cg->no_kill && (r == -EBUSY || r == -ENOTEMPTY))
        {
          /* maybe another container's, found by a create killed before
           * it could say so: left in place */
          brig_warn ("cgroup %s still holds processes: left in place", cg->dirs[i].path);
          brig_error_clear (&tmp);
          left_busy = true;
          r = 0;
        }
      if (r == -EBUSY && kill && !cg->no_kill)
        {
          /* something forked while we were killing: once more */
          brig_error_clear (&tmp);
          brig_cgroup_signal_own (cg, SIGKILL, NULL);
          r = brig_cgroup_rmdir_tree (cg->dirs[i].path, &tmp);
        }
      if (r < 0 && ret == 0)
        {
          ret = r;
          brig_error_set_raw (err, tmp.code, tmp.msg);
        }
      brig_error_clear (&tmp);
    }
  brig_cgroup_fs_release (cg);
  return ret;
}

static int
fs_update (brig_cgroup *cg, const oci_resources *res, brig_error *err)
{
  int r = brig_cgroup_resources_validate (cg, res, err);
  if (r < 0)
    return r;
  return brig_cgroup_fs_apply (cg, res, true, err);
}

const struct brig_cgroup_ops brig_cgroup_fs_ops = {
  .name = "cgroupfs",
  .create = fs_create,
  .make = fs_make,
  .enter = brig_cgroup_fs_enter,
  .destroy = brig_cgroup_fs_destroy,
  .freeze = brig_cgroup_fs_freeze,
  .is_frozen = brig_cgroup_fs_is_frozen,
  .update = fs_update,
};
