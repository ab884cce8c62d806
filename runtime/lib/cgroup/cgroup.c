/* The cgroup manager: the dispatcher above the backends. It picks the
 * backend (cgroupfs v1/hybrid/v2 in fs.c, systemd in systemd.c, or the
 * disabled one below) and every public operation goes through its ops; the
 * backends never call back up here (they use files.c and owner.c below
 * them). Host detection: cgroup/host.c. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

/* ---- dispatch ---- */

static const struct brig_cgroup_ops *
ops_by_name (const char *name, brig_error *err)
{
  if (name == NULL || *name == '\0' || strcmp (name, "cgroupfs") == 0)
    return &brig_cgroup_fs_ops;
  if (strcmp (name, "disabled") == 0)
    return &brig_cgroup_disabled_ops;
  if (strcmp (name, "systemd") == 0)
    {
#ifdef HAVE_SYSTEMD
      return &brig_cgroup_systemd_ops;
#else
      brig_error_set (err, 0, "cgroup manager systemd: brig was built without systemd support");
      return NULL;
#endif
    }
  brig_error_set (err, 0, "unknown cgroup manager \"%s\"", name);
  return NULL;
}

int
brig_cgroup_create (const struct brig_cgroup_config *cfg, brig_cgroup **out, brig_error *err)
{
  const struct brig_cgroup_host *host = brig_cgroup_host_get ();
  const char *name = cfg->manager;
  const struct brig_cgroup_ops *ops;
  brig_cgroup *cg;
  int r;

  *out = NULL;
  if (name == NULL)
    name = cfg->systemd ? "systemd" : host->mode == BRIG_CGROUP_NONE ? "disabled" : "cgroupfs";
  ops = ops_by_name (name, err);
  if (ops == NULL)
    return -ENOTSUP;
  cg = xmalloc0 (sizeof *cg);
  cg->clone_fd = -1;
  cg->ops = ops;
  cg->mode = host->mode;
  cg->rootless = cfg->rootless;
  r = ops->create (cg, cfg, err);
  /* Written down before anything is made: a create killed from here on
   * leaves a record that delete can undo. */
  if (r == 0 && cfg->before_make)
    r = cfg->before_make (cg, cfg->before_make_data, err);
  if (r == 0 && ops->make)
    r = ops->make (cg, cfg, err);
  if (r < 0)
    {
      brig_cgroup_free (cg);
      return r;
    }
  *out = cg;
  return 0;
}

int
brig_cgroup_load (const char *manager, const char *path, brig_cgroup **out, brig_error *err)
{
  const struct brig_cgroup_host *host = brig_cgroup_host_get ();
  const struct brig_cgroup_ops *ops;
  brig_cgroup *cg;

  *out = NULL;
#ifndef HAVE_SYSTEMD
  /* Without sd-bus a systemd scope can still be removed through cgroupfs. */
  if (manager && strcmp (manager, "systemd") == 0)
    manager = "cgroupfs";
#endif
  ops = ops_by_name (manager, err);
  if (ops == NULL)
    return -EINVAL;
  cg = xmalloc0 (sizeof *cg);
  cg->clone_fd = -1;
  cg->ops = ops;
  cg->mode = host->mode;
  if (ops != &brig_cgroup_disabled_ops)
    {
      if (path == NULL || path[0] != '/' || strstr (path, "/..") || path[1] == '\0')
        {
          brig_cgroup_free (cg);
          return brig_error_set (err, 0, "cgroup path \"%s\" in the state is not valid",
                                 path ? path : "");
        }
      cg->path = xstrdup (path);
      brig_cgroup_fill_dirs (cg, host);
      /* Without a record (a container of an older brig) every directory
       * counts as made, as it always did. */
      for (size_t i = 0; i < cg->n_dirs; i++)
        cg->dirs[i].made = true;
#ifdef HAVE_SYSTEMD
      if (ops == &brig_cgroup_systemd_ops)
        {
          const char *base = strrchr (path, '/') + 1;
          cg->unit = xstrdup (base);
        }
#endif
    }
  *out = cg;
  return 0;
}

int
brig_cgroup_enter (brig_cgroup *cg, pid_t pid, brig_error *err)
{
  return cg->ops->enter (cg, pid, err);
}

int
brig_cgroup_enter_memory (brig_cgroup *cg, pid_t pid, brig_error *err)
{
  /* One hierarchy: on a v1 host each cgroup.procs write waits for an RCU
   * grace period (~20 ms here), and only the memory charge matters. */
  const char *d = brig_cgroup_v1_dir (cg, "memory");

  if (d == NULL)
    d = brig_cgroup_unified_dir (cg);
  return d ? brig_cgroup_writef (d, "cgroup.procs", err, "%d", (int) pid) : 0;
}

char *
brig_cgroup_freeze_file (brig_cgroup *cg)
{
  if (cg->ops == &brig_cgroup_disabled_ops)
    return NULL;
  return brig_cgroup_dirs_freeze_file (cg);
}

enum brig_cgroup_mode
brig_cgroup_mode (const brig_cgroup *cg)
{
  return cg->ops == &brig_cgroup_disabled_ops ? BRIG_CGROUP_NONE : cg->mode;
}

int
brig_cgroup_destroy (brig_cgroup *cg, bool kill, brig_error *err)
{
  return cg->ops->destroy (cg, kill, err);
}

/* The directory whose cgroup.procs lists the container's processes. */
static const char *
procs_dir (brig_cgroup *cg)
{
  const char *d;
  if (cg->mode == BRIG_CGROUP_V2)
    return cg->unified;
  if ((d = brig_cgroup_v1_dir (cg, "freezer")) || (d = brig_cgroup_v1_dir (cg, "pids"))
      || (d = brig_cgroup_v1_dir (cg, "memory")))
    return d;
  return cg->n_dirs ? cg->dirs[0].path : NULL;
}

int
brig_cgroup_pids (brig_cgroup *cg, pid_t **pids, size_t *n, brig_error *err)
{
  const char *dir = cg->ops == &brig_cgroup_disabled_ops ? NULL : procs_dir (cg);
  *pids = NULL;
  *n = 0;
  if (dir == NULL)
    return 0;
  if (cg->n_foreign)
    return brig_cgroup_own_pids (cg, pids, n, err);
  return brig_cgroup_read_pids (dir, pids, n, err);
}

int
brig_cgroup_kill_all (brig_cgroup *cg, int sig, brig_error *err)
{
  if (cg->ops == &brig_cgroup_disabled_ops)
    return brig_error_set (err, 0, "kill all: the container has no cgroup (cgroups are disabled)");
  return brig_cgroup_signal_own (cg, sig, err);
}

int
brig_cgroup_freeze (brig_cgroup *cg, bool freeze, brig_error *err)
{
  return cg->ops->freeze (cg, freeze, err);
}

int
brig_cgroup_is_frozen (brig_cgroup *cg)
{
  return cg->ops->is_frozen (cg);
}

int
brig_cgroup_update (brig_cgroup *cg, const oci_resources *res, brig_error *err)
{
  if (res == NULL)
    return 0;
  return cg->ops->update (cg, res, err);
}

/* ---- the disabled manager: no cgroup at all ---- */

static int
disabled_create (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err)
{
  if (cfg->resources && (cfg->resources->memory || cfg->resources->cpu || cfg->resources->pids
                         || cfg->resources->block_io || cfg->resources->hugepage_limits
                         || cfg->resources->unified))
    brig_warn ("cgroups are disabled: linux.resources are not applied");
  return 0;
}

static int
disabled_enter (brig_cgroup *cg, pid_t pid, brig_error *err)
{
  return 0;
}

static int
disabled_destroy (brig_cgroup *cg, bool kill, brig_error *err)
{
  return 0;
}

static int
disabled_freeze (brig_cgroup *cg, bool freeze, brig_error *err)
{
  return brig_error_set (err, 0, "%s: the container has no cgroup (cgroups are disabled)",
                         freeze ? "pause" : "resume");
}

static int
disabled_is_frozen (brig_cgroup *cg)
{
  return 0;
}

static int
disabled_update (brig_cgroup *cg, const oci_resources *res, brig_error *err)
{
  return brig_error_set (err, 0, "update: the container has no cgroup (cgroups are disabled)");
}

const struct brig_cgroup_ops brig_cgroup_disabled_ops = {
  .name = "disabled",
  .create = disabled_create,
  .make = NULL,
  .enter = disabled_enter,
  .destroy = disabled_destroy,
  .freeze = disabled_freeze,
  .is_frozen = disabled_is_frozen,
  .update = disabled_update,
};
