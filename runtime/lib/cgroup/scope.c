/* Which hierarchies a container is in. On v1 and hybrid hosts every
 * hierarchy costs a mkdir, a cgroup.procs write and an rmdir per
 * container; a few v1 ones hold nothing a container gets unless its config
 * asks for it, and are left out when nothing could be inherited there
 * (docs/cgroups.md, "Which hierarchies": the table and the reasons). A
 * hybrid host's cgroup2 hierarchy is always joined (with CLONE_INTO_CGROUP,
 * no cgroup.procs write); a record of an older brig may have left it out.
 * `update` that sets a value of a left-out hierarchy makes it and moves
 * every process of the container into it first (cgroup/grow.c). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

/* v1 controllers whose cgroup a container gets nothing from by default:
 * no limit is set, no engine reads their statistics, brig needs none of
 * them for pause, kill or ps. */
static const char *const optional_v1[] = { "net_cls", "net_prio", "perf_event", "rdma", "misc" };

bool
brig_cgroup_dir_optional (const char *controllers)
{
  _cleanup_free_ char *copy = NULL;
  char *save = NULL, *tok;
  bool any = false;

  /* the cgroup2 hierarchy of a hybrid host: always, as runc joins it;
   * tools read the "0::" line of /proc/PID/cgroup to find a container's
   * cgroup (issue #26 item 5), and systemd as PID 1 tracks processes
   * there */
  if (controllers == NULL)
    return false;
  /* a named hierarchy (name=systemd) is how systemd, also one inside the
   * container, tracks processes: always */
  copy = xstrdup (controllers);
  for (tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      bool found = false;
      for (size_t i = 0; i < BRIG_ARRAY_SIZE (optional_v1); i++)
        if (strcmp (tok, optional_v1[i]) == 0)
          found = true;
      if (!found)
        return false;
      any = true;
    }
  return any;
}

bool
brig_cgroup_dir_used (const char *controllers, const oci_resources *r, bool v1_hugetlb)
{
  if (r == NULL)
    return false;
  if (controllers == NULL)
    return r->hugepage_limits_len > 0 && !v1_hugetlb;
  if (brig_cgroup_list_has (controllers, "net_cls") && r->network && r->network->has_class_id)
    return true;
  if (brig_cgroup_list_has (controllers, "net_prio") && r->network
      && r->network->priorities_len > 0)
    return true;
  return brig_cgroup_list_has (controllers, "rdma") && r->rdma_len > 0;
}

/* True when the first directory of cgroupsPath exists in the hierarchy:
 * someone organised cgroups there, and what they set on the ancestors (limits, a
 * net_cls class, BPF programs, firewall rules matching the cgroup path)
 * must reach the container as it would with every hierarchy joined. When
 * it does not exist, the container's would-be ancestors are the root's,
 * whose settings apply below it either way. */
static bool
top_exists (const struct brig_cgroup_dir *d, const char *path)
{
  const char *p = path + strspn (path, "/");
  _cleanup_free_ char *top = xasprintf ("%s/%.*s", d->mountpoint, (int) strcspn (p, "/"), p);
  struct stat st;
  return stat (top, &st) == 0 || errno != ENOENT;
}

void
brig_cgroup_skip (brig_cgroup *cg, size_t i)
{
  if (cg->unified == cg->dirs[i].path)
    cg->unified = NULL;
  cg->skipped = xrealloc (cg->skipped, (cg->n_skipped + 1) * sizeof *cg->skipped);
  cg->skipped[cg->n_skipped++] = cg->dirs[i];
  memmove (&cg->dirs[i], &cg->dirs[i + 1], (cg->n_dirs - i - 1) * sizeof *cg->dirs);
  cg->n_dirs--;
}

void
brig_cgroup_unskip (brig_cgroup *cg, size_t k)
{
  struct brig_cgroup_dir d = cg->skipped[k];
  size_t at = cg->n_dirs;

  memmove (&cg->skipped[k], &cg->skipped[k + 1], (cg->n_skipped - k - 1) * sizeof d);
  cg->n_skipped--;
  /* v1 hierarchies first, then the cgroup2 one (fs_apply relies on it) */
  if (d.controllers && cg->n_dirs > 0 && cg->dirs[cg->n_dirs - 1].controllers == NULL)
    at = cg->n_dirs - 1;
  /* dirs has room: fill_dirs sized it for every hierarchy; the unified
   * pointer follows its entry when that moves up */
  cg->dirs = xrealloc (cg->dirs, (cg->n_dirs + 1) * sizeof *cg->dirs);
  memmove (&cg->dirs[at + 1], &cg->dirs[at], (cg->n_dirs - at) * sizeof d);
  cg->dirs[at] = d;
  cg->n_dirs++;
  cg->unified = NULL;
  for (size_t i = 0; i < cg->n_dirs; i++)
    if (cg->dirs[i].controllers == NULL)
      cg->unified = cg->dirs[i].path;
}

void
brig_cgroup_scope (brig_cgroup *cg, const struct brig_cgroup_config *cfg)
{
  bool v1_hugetlb = brig_cgroup_v1_dir (cg, "hugetlb") != NULL;
  bool brig_default = cfg->cgroups_path == NULL || *cfg->cgroups_path == '\0';

  /* pure v2 is one directory joined by clone3; a shared cgroup is someone
   * else's layout; rootless drops what it may not write anyway */
  if ((cg->mode != BRIG_CGROUP_V1 && cg->mode != BRIG_CGROUP_HYBRID) || cfg->shared
      || cfg->rootless)
    return;
  for (size_t i = 0; i < cg->n_dirs;)
    {
      const struct brig_cgroup_dir *d = &cg->dirs[i];
      bool keep = !brig_cgroup_dir_optional (d->controllers)
                  || brig_cgroup_dir_used (d->controllers, cfg->resources, v1_hugetlb)
                  /* a hierarchy the container sees through a cgroup mount
                   * would show the tree of brig's own cgroup */
                  || !cfg->no_cgroup_mount
                  /* brig's own /brig/ID (no cgroupsPath): nobody placed
                   * the container, brig never configures /brig */
                  || (!brig_default && top_exists (d, cg->path));
      if (keep)
        {
          i++;
          continue;
        }
      brig_debug ("cgroup: %s: not used by the config, left out", d->path);
      brig_cgroup_skip (cg, i);
    }
}

bool
brig_cgroup_joined (const brig_cgroup *cg, const char *controller)
{
  if (controller == NULL)
    return cg->unified != NULL;
  return brig_cgroup_v1_dir (cg, controller) != NULL;
}
